"""Admin form of a new API token."""

from __future__ import annotations

from django import forms

from diagnosis.integration.models import ApiToken


class IssueTokenForm(forms.ModelForm):
    """A new API token: whose rights it carries, for which system, for how long."""

    valid_days = forms.IntegerField(
        min_value=1, max_value=3650, initial=365, help_text="The token stops working after this."
    )

    class Meta:
        model = ApiToken
        fields = ["user", "name"]
