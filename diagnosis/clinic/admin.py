"""The clinic's admin pages.

* A clinician's own **cases**, read-only (changed only through the clinician's screen).
* The **case access log** is read-only, for superusers (or whoever a superuser gives
  ``clinic.view_caseaccess``); model administrators never see it: it says who read
  which patient's case.
* **Teams** decide which cases a lead clinician reads, so only superusers see and edit them.
"""

from __future__ import annotations

from django.contrib import admin

from diagnosis.admin_users import UserLinksMixin
from diagnosis.permissions import is_clinician

from .models import CaseAccess, DiagnosisCase, DiagnosisStep, Team
from .permissions import can_act_on_case

__all__ = ["CaseAccessAdmin", "DiagnosisCaseAdmin", "TeamAdmin"]


class StepInline(UserLinksMixin, admin.TabularInline):
    model = DiagnosisStep
    user_fields = ("created_by",)
    fields = (
        "position",
        "kind",
        "test",
        "value",
        "price",
        "label",
        "followed_advice",
        "implausible_confirmed",
        "plausible_range",
        "created_by",
        "created_at",
    )
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(DiagnosisCase)
class DiagnosisCaseAdmin(UserLinksMixin, admin.ModelAdmin):
    """A clinician's own cases, read-only (changed only through the clinician's screen).

    Patient data is need-to-know: staff, model administrators and superusers
    see no case here unless they are clinicians, and then only their own,
    whatever Django permissions they hold.  Another clinician's case is
    answered like a missing one.
    """

    list_display = ["__str__", "trained_model", "clinician", "status", "updated_at"]
    user_fields = ("clinician",)
    list_filter = ["status"]
    inlines = [StepInline]
    readonly_fields = [
        "trained_model",
        "clinician",
        "patient_reference",
        "status",
        "final_label",
        "created_at",
        "updated_at",
        "closed_at",
    ]

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        if not is_clinician(request.user):
            return qs.none()
        return qs.filter(clinician=request.user)

    def has_module_permission(self, request) -> bool:
        return is_clinician(request.user)

    def has_view_permission(self, request, obj=None) -> bool:
        return can_act_on_case(request.user, obj) if obj is not None else is_clinician(request.user)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class SuperusersOnly(admin.ModelAdmin):
    def has_module_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_add_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_change_permission(self, request, obj=None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_delete_permission(self, request, obj=None) -> bool:
        return request.user.is_active and request.user.is_superuser


@admin.register(Team)
class TeamAdmin(SuperusersOnly):
    """Care teams: their leads (in the lead-clinicians group) read the members' cases."""

    list_display = ["name", "lead_names", "n_members"]
    search_fields = ["name"]
    filter_horizontal = ["members", "leads"]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("leads", "members")

    @admin.display(description="leads")
    def lead_names(self, team: Team) -> str:
        return ", ".join(u.get_username() for u in team.leads.all()) or "—"

    @admin.display(description="members")
    def n_members(self, team: Team) -> int:
        return len(team.members.all())


def _may_read_log(user) -> bool:
    return bool(user.is_active and (user.is_superuser or user.has_perm("clinic.view_caseaccess")))


@admin.register(CaseAccess)
class CaseAccessAdmin(UserLinksMixin, admin.ModelAdmin):
    """Who read or changed which case and when: read-only, never edited or deleted."""

    list_display = ["at", "username", "action", "case_id", "detail"]
    list_filter = ["action"]
    search_fields = ["username", "=case__id"]
    date_hierarchy = "at"
    list_per_page = 100
    fields = ("at", "username", "user", "action", "detail", "case_id")
    user_fields = ("user",)
    readonly_fields = fields
    show_full_result_count = False  # the log grows large: no COUNT(*) over all of it

    def has_module_permission(self, request) -> bool:
        return _may_read_log(request.user)

    def has_view_permission(self, request, obj=None) -> bool:
        return _may_read_log(request.user)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
