"""Admin forms: a new API token, a CDS Hooks client."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from diagnosis.integration.models import ApiToken, CdsClient, SmartClient
from diagnosis.integration.services.cds_clients import clean_client


class IssueTokenForm(forms.ModelForm):
    """A new API token: whose rights it carries, for which system, for how long."""

    valid_days = forms.IntegerField(
        min_value=1, max_value=3650, initial=365, help_text="The token stops working after this."
    )

    class Meta:
        model = ApiToken
        fields = ["user", "name"]


class CdsClientForm(forms.ModelForm):
    """A CDS Hooks client: every field checked by ``services.cds_clients.clean_client``."""

    jwks_url = forms.URLField(
        label="JWKS URL",
        required=False,
        max_length=500,
        assume_scheme="https",
        help_text="Where the EHR serves its JWKS.",
    )

    class Meta:
        model = CdsClient
        fields = [
            "name",
            "issuer",
            "jwks",
            "jwks_url",
            "allowed_origins",
            "fhir_servers",
            "clinician",
            "active",
        ]
        labels = {
            "jwks": "JWKS",
            "jwks_url": "JWKS URL",
            "fhir_servers": "FHIR servers",
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # a new client's keys start empty, not as the JSON "null" an admin would have to erase
        self.fields["jwks"].widget.attrs["placeholder"] = '{"keys": [...]}'
        if not self.is_bound and self.instance.jwks is None:
            self.initial["jwks"] = forms.fields.InvalidJSONInput("")

    def _post_clean(self) -> None:
        super()._post_clean()  # type: ignore[misc]  # ModelForm's own, untyped in the stubs
        try:
            clean_client(self.instance)
        except ValidationError as exc:
            self.add_error(None, exc)


class SmartClientForm(forms.ModelForm):
    """An EHR that launches the case screen (SMART): its FHIR base URL is the launch's iss."""

    iss = forms.URLField(
        max_length=500, assume_scheme="https", help_text=SmartClient.iss.field.help_text
    )

    class Meta:
        model = SmartClient
        fields = ["name", "iss", "client_id", "trained_model"]
