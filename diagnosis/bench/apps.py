"""The bench's Django app."""

from django.apps import AppConfig


class BenchConfig(AppConfig):
    """Experiments: create, run on the workers, compare, deploy a winner."""

    name = "diagnosis.bench"
    label = "bench"
    verbose_name = "The bench (experiments)"
    default_auto_field = "django.db.models.BigAutoField"
