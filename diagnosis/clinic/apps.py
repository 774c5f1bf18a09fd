"""The clinic's Django app."""

from django.apps import AppConfig


class ClinicConfig(AppConfig):
    """Cases step by step, the advice and its words, who read them, teams, the model pages."""

    name = "diagnosis.clinic"
    label = "clinic"
    verbose_name = "The clinic (cases)"
    default_auto_field = "django.db.models.BigAutoField"
