"""Admin: the bearer tokens of /api/v1 and the CDS Hooks clients (superusers), the catalog's
FHIR codes (model admins) and the CDS cards' feedback (superusers, read-only)."""

from __future__ import annotations

from django.contrib import admin, messages

from diagnosis.integration.forms import CdsClientForm, IssueTokenForm, SmartClientForm
from diagnosis.integration.models import (
    ApiToken,
    CdsClient,
    CdsFeedback,
    ClassCode,
    SmartClient,
    TestCode,
)
from diagnosis.integration.services import api_tokens
from diagnosis.permissions import is_model_admin


def _revoke_tokens(modeladmin, request, tokens) -> None:
    """End the chosen tokens at once (they stay listed, marked revoked)."""
    for token in tokens:
        api_tokens.revoke_api_token(user=request.user, token=token)
    modeladmin.message_user(request, f"Revoked {len(tokens)} token(s).", messages.SUCCESS)


_revoke_tokens.short_description = "Revoke the selected tokens"  # type: ignore[attr-defined]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Bearer tokens for /api/v1: superusers issue them (shown once) and revoke them.

    A token carries its user's rights exactly; only the SHA-256 of it is stored, so a lost
    token cannot be shown again: revoke it and issue another.
    """

    form = IssueTokenForm
    list_display = [
        "name",
        "user",
        "prefix",
        "created_at",
        "expires_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["revoked_at"]
    actions = [_revoke_tokens]
    readonly_fields = [
        "user",
        "name",
        "prefix",
        "created_by",
        "created_at",
        "expires_at",
        "last_used_at",
        "revoked_at",
    ]

    def has_module_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # a token is issued or revoked, never edited

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # revoked tokens stay in the record

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj is not None else []

    def get_fields(self, request, obj=None):
        return self.readonly_fields if obj is not None else ["user", "name", "valid_days"]

    def save_model(self, request, obj, form, change) -> None:
        token, plain = api_tokens.issue_api_token(
            issuer=request.user,
            owner=form.cleaned_data["user"],
            name=form.cleaned_data["name"],
            valid_days=form.cleaned_data["valid_days"],
        )
        obj.pk = token.pk
        self.message_user(
            request,
            f"Token for {token.user} ({token.name}): {plain} — copy it now: it is shown only "
            "once. Send it as 'Authorization: Bearer <token>'.",
            messages.WARNING,
        )


class _ModelAdminsOnly(admin.ModelAdmin):
    """Model admins (who keep the catalog) edit it; nobody else sees it."""

    def has_module_permission(self, request) -> bool:
        return is_model_admin(request.user)

    def has_view_permission(self, request, obj=None) -> bool:
        return is_model_admin(request.user)

    def has_add_permission(self, request) -> bool:
        return is_model_admin(request.user)

    def has_change_permission(self, request, obj=None) -> bool:
        return is_model_admin(request.user)

    def has_delete_permission(self, request, obj=None) -> bool:
        return is_model_admin(request.user)


@admin.register(TestCode)
class TestCodeAdmin(_ModelAdminsOnly):
    """A test's LOINC code (or the local system's, saying why in the note) and UCUM unit."""

    list_display = ["test", "system", "code", "display", "unit"]
    list_filter = ["system", "test__dataset"]
    search_fields = ["code", "display", "test__name", "test__label"]
    list_select_related = ["test", "test__dataset"]


@admin.register(ClassCode)
class ClassCodeAdmin(_ModelAdminsOnly):
    """A class's SNOMED CT or ICD-10 code (or the local system's)."""

    list_display = ["dataset", "label_index", "system", "code", "display"]
    list_filter = ["system", "dataset"]
    search_fields = ["code", "display"]


class _SuperusersOnly(admin.ModelAdmin):
    def has_module_permission(self, request) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)


@admin.register(CdsClient)
class CdsClientAdmin(_SuperusersOnly):
    """An EHR calling /cds-services: its issuer, keys, origins and the clinician it acts as.
    A client's calls act with that clinician's rights, so only superusers register them."""

    form = CdsClientForm
    list_display = ["name", "issuer", "clinician", "active", "created_at"]
    list_filter = ["active"]

    def has_add_permission(self, request) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_delete_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)


@admin.register(SmartClient)
class SmartClientAdmin(_SuperusersOnly):
    """An EHR that launches the case screen (SMART): its FHIR base URL, our client id there,
    and the model its patients' cases start with."""

    form = SmartClientForm
    list_display = ["name", "iss", "client_id", "trained_model", "created_at"]

    def has_add_permission(self, request) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)

    def has_delete_permission(self, request, obj=None) -> bool:
        return self.has_module_permission(request)


@admin.register(CdsFeedback)
class CdsFeedbackAdmin(_SuperusersOnly):
    """What clinicians did with the cards (accepted, overridden and why): the case's audit,
    read-only, like the case access log."""

    list_display = ["case", "outcome", "user_comment", "outcome_timestamp", "received_at"]
    list_filter = ["outcome"]
    readonly_fields = [
        "card",
        "case",
        "outcome",
        "accepted_suggestions",
        "override_reason",
        "user_comment",
        "outcome_timestamp",
        "received_at",
    ]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
