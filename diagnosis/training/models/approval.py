"""The audit of model approval: every approval, retirement and rollback, who, when and why."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from .training import TrainedModel


class ModelDecision(models.Model):
    """One change of a model's approval, written by ``services/approval.py`` only."""

    APPROVE = "approve"
    RETIRE = "retire"
    ROLL_BACK = "roll-back"
    KEEP_OLD = "keep-old"
    ACTION_CHOICES = [
        (APPROVE, "approved"),
        (RETIRE, "retired"),
        (ROLL_BACK, "rolled back to the previously approved model"),
        (KEEP_OLD, "kept the model in use and retired this retrain"),
    ]

    trained_model = models.ForeignKey(
        TrainedModel, on_delete=models.CASCADE, related_name="decisions"
    )
    action = models.CharField(max_length=10, choices=ACTION_CHOICES)
    other_model = models.ForeignKey(
        TrainedModel,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The model retired or approved together with this one.",
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    username = models.CharField(max_length=150)
    at = models.DateTimeField(default=timezone.now)
    reason = models.TextField(blank=True)
    # The figures the decision was taken on (warnings, a retrain's comparison), as shown.
    basis = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "diagnosis_modeldecision"
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        when = f"{self.at:%Y-%m-%d %H:%M}"
        return f"{self.username} {self.get_action_display()} {self.trained_model} at {when}"
