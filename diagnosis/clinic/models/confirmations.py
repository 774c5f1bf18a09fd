"""A confirmed diagnosis recorded on a closed case, later: what the patient turned out to have."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from .cases import DiagnosisCase


class ConfirmedDiagnosis(models.Model):
    """One recording of a case's confirmed diagnosis; the latest one of a case is in force.

    Rows are only ever added (a correction is a new row), so the record of who confirmed
    what and when is never rewritten; the case's steps and costs are never touched.
    ``label`` is the class code as the case's model learned it (its vocabulary snapshot),
    ``label_name`` the word it meant when recorded.
    """

    CASE_SCREEN = "case"
    API = "api"
    CSV = "csv"
    SOURCE_CHOICES = [
        (CASE_SCREEN, "case screen"),
        (API, "API"),
        (CSV, "CSV upload"),
    ]

    case = models.ForeignKey(DiagnosisCase, on_delete=models.PROTECT, related_name="confirmations")
    label = models.IntegerField(help_text="Class code in the model's vocabulary snapshot.")
    label_name = models.CharField(max_length=200)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="confirmed_diagnoses"
    )
    recorded_at = models.DateTimeField(default=timezone.now)
    source = models.CharField(max_length=8, choices=SOURCE_CHOICES)

    class Meta:
        db_table = "diagnosis_confirmeddiagnosis"
        ordering = ["case_id", "-recorded_at", "-id"]
        verbose_name_plural = "confirmed diagnoses"
        indexes = [models.Index(fields=["case", "recorded_at"], name="confirmed_case_at")]

    def __str__(self) -> str:
        return f"{self.case}: confirmed {self.label_name}"
