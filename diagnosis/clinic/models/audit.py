"""The case audit: who read or changed which case and when.

:class:`CaseAccess` is one row per request that read or changed a patient's case, written by
the case selectors and services (one INSERT, nothing read first).  It keeps the case id and the
username even if the case or the user is later deleted.  (The catalog's change history is
django-simple-history's, registered in ``diagnosis/catalog/models/audit.py``.)
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class CaseAccess(models.Model):
    """One read or change of a patient's case: who, which case, what, when."""

    VIEW = "view"
    SUMMARY = "summary"
    TREE = "tree"
    API_READ = "api-read"
    STEP = "step"
    RESULTS = "results"
    CORRECT = "correct"
    UNDO = "undo"
    CONFIRM = "confirm"
    CDS_FEEDBACK = "cds-feedback"
    ACTION_CHOICES = [
        (VIEW, "read the case page"),
        (SUMMARY, "read the summary"),
        (TREE, "read the patient's path on the tree"),
        (API_READ, "read through an API"),
        (STEP, "took a step"),
        (RESULTS, "recorded several results"),
        (CORRECT, "corrected a value"),
        (UNDO, "undid a step"),
        (CONFIRM, "recorded a confirmed diagnosis"),
        (CDS_FEEDBACK, "answered a CDS Hooks card (accepted or overridden)"),
    ]
    #: Actions that change the case (the rest only read it).
    CHANGES = (STEP, RESULTS, CORRECT, UNDO, CONFIRM)

    id = models.BigAutoField(primary_key=True)
    at = models.DateTimeField(default=timezone.now)
    # Kept when the case is deleted: the log outlives what it logs.
    case = models.ForeignKey(
        "clinic.DiagnosisCase",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="accesses",
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        related_name="case_accesses",
    )
    username = models.CharField(max_length=150)
    action = models.CharField(max_length=12, choices=ACTION_CHOICES)
    detail = models.CharField(max_length=40, blank=True, help_text="e.g. the step's action.")

    class Meta:
        db_table = "diagnosis_caseaccess"
        ordering = ["-at", "-id"]
        verbose_name = "case access"
        verbose_name_plural = "case access log"
        indexes = [
            models.Index(fields=["case", "at"], name="caseaccess_case_at"),
            models.Index(fields=["user", "at"], name="caseaccess_user_at"),
        ]

    def __str__(self) -> str:
        when = f"{self.at:%Y-%m-%d %H:%M:%S}"
        return f"{self.username} {self.get_action_display()} case {self.case_id} at {when}"

    @property
    def is_change(self) -> bool:
        return self.action in self.CHANGES
