"""Bearer tokens for programs (an electronic health record) calling /api/v1 as a user."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A secret a program presents as ``Authorization: Bearer <token>``; only its hash is kept."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, help_text="Which system uses it (e.g. 'ward EHR').")
    key_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token.")
    prefix = models.CharField(max_length=12, help_text="The token's first characters, to tell it.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        related_name="issued_api_tokens",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # the table it has had since before the integration was an app of its own
        db_table = "diagnosis_apitoken"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) for {self.user}"
