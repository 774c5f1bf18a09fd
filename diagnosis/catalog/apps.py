"""The catalog's Django app."""

from django.apps import AppConfig


class CatalogConfig(AppConfig):
    """Datasets with their priced tests, groups and error matrices, and their history."""

    name = "diagnosis.catalog"
    label = "catalog"
    verbose_name = "The catalog (datasets and prices)"
    default_auto_field = "django.db.models.BigAutoField"
