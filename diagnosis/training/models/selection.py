"""One candidate of a "let the data choose" training, measured by whichever worker takes it."""

from __future__ import annotations

from django.db import models

from .training import TrainedModel


class CandidateMeasurement(models.Model):
    """A selector candidate's held-out cost on each fold of one training's patients.

    The training's own worker measures candidates one by one and, meanwhile, every candidate
    is also sent as a task to the experiments queue: any worker that takes one first claims
    its row and measures it (more worker machines, a faster choice). ``folds`` holds
    ``learners.selection.FoldCosts.to_dict()`` once done.
    """

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    STATUS_CHOICES = [(PENDING, "Waiting"), (RUNNING, "Being measured"), (DONE, "Measured")]

    trained_model = models.ForeignKey(
        TrainedModel, on_delete=models.CASCADE, related_name="candidate_measurements"
    )
    candidate = models.CharField(max_length=50)
    position = models.PositiveIntegerField(help_text="Order in the selector's candidate table.")
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    claimed_by = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    deadline = models.FloatField(
        null=True, blank=True, help_text="Unix time after which no fold starts (the time budget)."
    )
    fingerprint = models.CharField(
        max_length=64, blank=True, help_text="Hash of the training patients the folds are drawn on."
    )
    folds = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "diagnosis_candidatemeasurement"
        ordering = ["trained_model", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["trained_model", "candidate"], name="one_measurement_per_candidate"
            )
        ]

    def __str__(self) -> str:
        return f"{self.candidate} of training {self.trained_model_id} ({self.status})"
