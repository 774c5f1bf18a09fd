"""The integration's Django app."""

from django.apps import AppConfig


class IntegrationConfig(AppConfig):
    """Other systems' way in: the session step API, /api/v1 and its bearer tokens."""

    name = "diagnosis.integration"
    label = "integration"
    verbose_name = "Integration (API and tokens)"
    default_auto_field = "django.db.models.BigAutoField"
