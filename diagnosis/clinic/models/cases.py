"""A clinician's diagnosis of one patient, saved one step at a time."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from diagnosis.catalog.models.datasets import DiagnosticTest
from diagnosis.shared.advice import Advice
from diagnosis.training.models.training import TrainedModel


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
    #: The error matrix the case is decided with, copied from its model's matrix in force when
    #: the case started (``selectors.matrices``); never rewritten. Empty: the model's own.
    matrix_snapshot = models.JSONField(
        null=True,
        blank=True,
        help_text="Error matrix in force when the case started; empty = the model's own.",
    )

    class Meta:
        db_table = "diagnosis_diagnosiscase"
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
    #: the advice shown when the step was taken: ``Advice.to_json()`` (read: ``shown_advice``)
    advice = models.JSONField(null=True, blank=True)
    followed_advice = models.BooleanField(default=False)
    label = models.IntegerField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="diagnosis_steps"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    #: Why the clinician chose something other than the advice (optional; shown in the audit).
    overrule_reason = models.TextField(blank=True, default="")
    # A corrected or undone step stays in the record, marked; it no longer counts
    # towards what is known about the patient (its price stays paid).
    CORRECTED = "corrected"
    UNDONE = "undone"
    # A corrected value whose correction was undone: it counts again, and keeps the
    # correction's record (who, when, why, the replacement, itself marked undone).
    RESTORED = "restored"
    CORRECTION_CHOICES = [
        (CORRECTED, "Value corrected"),
        (UNDONE, "Undone"),
        (RESTORED, "Correction undone"),
    ]
    #: The value was outside its test's plausible range and the clinician confirmed it; the
    #: range shown then is kept (``{"min": .., "max": .., "unit": ..}``), whatever it is now.
    implausible_confirmed = models.BooleanField(default=False)
    plausible_range = models.JSONField(null=True, blank=True)
    correction = models.CharField(max_length=12, choices=CORRECTION_CHOICES, blank=True, default="")
    #: The step that replaces this one (a corrected value, or one restored since: that step
    #: is then undone); empty for an undone step.
    superseded_by = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="supersedes"
    )
    corrected_at = models.DateTimeField(null=True, blank=True)
    corrected_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="corrected_diagnosis_steps",
    )
    correction_reason = models.TextField(blank=True, default="")

    class Meta:
        db_table = "diagnosis_diagnosisstep"
        ordering = ["case_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["case", "position"], name="unique_step_position"),
            # A mark says when; only a corrected value names its replacement.
            models.CheckConstraint(
                condition=(
                    models.Q(correction="", corrected_at__isnull=True, superseded_by__isnull=True)
                    | models.Q(
                        correction="undone", corrected_at__isnull=False, superseded_by__isnull=True
                    )
                    | models.Q(
                        correction__in=["corrected", "restored"],
                        corrected_at__isnull=False,
                        superseded_by__isnull=False,
                    )
                ),
                name="step_correction_marked",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.case} step {self.position}: {self.kind}"

    @property
    def shown_advice(self) -> Advice | None:
        """The advice on screen when the step was taken (``advice`` read and checked; None for
        a step taken with none, such as a value computed by a formula)."""
        return Advice.from_json(self.advice) if self.advice else None

    @property
    def is_active(self) -> bool:
        """Whether the step still counts (not corrected, not undone; a restored value counts)."""
        return self.correction in ("", self.RESTORED)
