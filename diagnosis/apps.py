"""App configuration."""

from django.apps import AppConfig


class DiagnosisConfig(AppConfig):
    """The diagnosis app (project and app share the package)."""

    name = "diagnosis"
    verbose_name = "Cost-aware diagnosis"
    default_auto_field = "django.db.models.BigAutoField"
