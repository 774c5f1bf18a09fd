"""A clinician's diagnosis of one patient, saved one step at a time."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .datasets import DiagnosticTest
from .training import TrainedModel


class DiagnosisCase(models.Model):
    """One patient worked through with one trained model."""

    OPEN = "open"
    CLASSIFIED = "classified"
    REFERRED = "referred"
    STATUS_CHOICES = [(OPEN, "Open"), (CLASSIFIED, "Classified"), (REFERRED, "Referred")]

    trained_model = models.ForeignKey(TrainedModel, on_delete=models.PROTECT, related_name="cases")
    clinician = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="diagnosis_cases"
    )
    patient_reference = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=12, choices=STATUS_CHOICES, default=OPEN)
    final_label = models.IntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at", "-id"]

    def __str__(self) -> str:
        return f"Case {self.pk}" + (
            f" ({self.patient_reference})" if self.patient_reference else ""
        )

    @property
    def is_open(self) -> bool:
        return self.status == self.OPEN


class DiagnosisStep(models.Model):
    """One action on a case, saved the moment it is taken, with the advice shown then."""

    RESULT = "result"
    UNAVAILABLE = "unavailable"
    CLASSIFY = "classify"
    REFER = "refer"
    KIND_CHOICES = [
        (RESULT, "Test result"),
        (UNAVAILABLE, "Test unavailable"),
        (CLASSIFY, "Classified"),
        (REFER, "Referred"),
    ]

    case = models.ForeignKey(DiagnosisCase, on_delete=models.CASCADE, related_name="steps")
    position = models.PositiveIntegerField()
    kind = models.CharField(max_length=12, choices=KIND_CHOICES)
    test = models.ForeignKey(
        DiagnosticTest, null=True, blank=True, on_delete=models.PROTECT, related_name="steps"
    )
    value = models.FloatField(null=True, blank=True)
    price = models.FloatField(default=0.0)
    advice = models.JSONField(null=True, blank=True)
    followed_advice = models.BooleanField(default=False)
    label = models.IntegerField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="diagnosis_steps"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["case_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["case", "position"], name="unique_step_position")
        ]

    def __str__(self) -> str:
        return f"{self.case} step {self.position}: {self.kind}"
