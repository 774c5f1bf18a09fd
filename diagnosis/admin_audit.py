"""The audit's and the teams' admin pages (imported by ``diagnosis/admin.py``).

* The dataset's **History** page lists every change of its catalog (prices, groups, error
  matrices, class labels, choices) with old and new values, by django-simple-history, for
  model administrators and superusers (:class:`CatalogHistoryMixin`).
* The **case access log** is read-only, for superusers (or whoever a superuser gives
  ``diagnosis.view_caseaccess``); model administrators never see it: it says who read
  which patient's case.
* **Teams** decide which cases a lead clinician reads, so only superusers see and edit them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin

from .admin_users import UserLinksMixin
from .models import CaseAccess, Team
from .selectors.catalog_history import catalog_history

__all__ = ["CaseAccessAdmin", "CatalogHistoryMixin", "TeamAdmin"]

if TYPE_CHECKING:
    # The admin the mixin is combined with, so mypy knows super()'s methods; at run time it
    # stays a plain mixin.
    _ModelAdminBase = admin.ModelAdmin[Any]
else:
    _ModelAdminBase = object


class CatalogHistoryMixin(_ModelAdminBase):
    """Adds the catalog's recorded changes (old → new, who, when) to the admin's History page."""

    object_history_template = "admin/diagnosis/dataset/object_history.html"

    def history_view(self, request, object_id, extra_context=None):
        dataset = self.get_object(request, object_id)
        if dataset is not None and self.has_view_or_change_permission(request, dataset):
            extra_context = {
                **(extra_context or {}),
                "catalog_changes": catalog_history(user=request.user, dataset=dataset),
            }
        return super().history_view(request, object_id, extra_context)


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
    return bool(
        user.is_active and (user.is_superuser or user.has_perm("diagnosis.view_caseaccess"))
    )


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
