"""Admin: the bearer tokens of /api/v1, issued and revoked by superusers."""

from __future__ import annotations

from django.contrib import admin, messages

from diagnosis.integration.forms import IssueTokenForm
from diagnosis.integration.models import ApiToken
from diagnosis.integration.services import api_tokens


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
