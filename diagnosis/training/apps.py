"""The training's Django app."""

from django.apps import AppConfig


class TrainingConfig(AppConfig):
    """Trained models: queue, train on the workers, measure, approve, retire."""

    name = "diagnosis.training"
    label = "training"
    verbose_name = "Training (trained models)"
    default_auto_field = "django.db.models.BigAutoField"
