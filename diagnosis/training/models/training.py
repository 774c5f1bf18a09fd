"""A trained model: what was asked for, the prices it was trained with, its fit and report."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from diagnosis.catalog.models.datasets import Dataset, ErrorMatrix
from diagnosis.shared.costs import CostSnapshot


class TrainedModel(models.Model):
    """One training run and, once it succeeded, the fitted model as JSON."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    # Its worker died (killed, out of memory, restarted) after an anytime round had stored a
    # model: that partial model is kept for an admin to review, never offered as a success.
    INTERRUPTED = "interrupted"
    STATUS_CHOICES = [
        (QUEUED, "Queued"),
        (RUNNING, "Running"),
        (SUCCEEDED, "Succeeded"),
        (FAILED, "Failed"),
        (CANCELLED, "Cancelled"),
        (INTERRUPTED, "Interrupted (cut short)"),
    ]
    FINISHED = (SUCCEEDED, FAILED, CANCELLED, INTERRUPTED)

    DRAFT = "draft"
    APPROVED = "approved"
    RETIRED = "retired"
    APPROVAL_CHOICES = [(DRAFT, "Draft"), (APPROVED, "Approved"), (RETIRED, "Retired")]

    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="trained_models")
    name = models.CharField(max_length=200, blank=True)
    learner = models.CharField(max_length=50, help_text="Key in the learner registry.")
    params = models.JSONField(default=dict, blank=True)
    error_matrix = models.ForeignKey(
        ErrorMatrix, null=True, blank=True, on_delete=models.SET_NULL, related_name="trained_models"
    )
    #: read and written through :class:`~diagnosis.shared.costs.CostSnapshot` (``snapshot``)
    cost_snapshot = models.JSONField(
        default=dict, blank=True, help_text="CostModel.to_dict() plus test names, at training time."
    )
    matrix_snapshot = models.JSONField(default=list, blank=True)
    reject_cost_snapshot = models.FloatField(null=True, blank=True)
    status = models.CharField(max_length=12, choices=STATUS_CHOICES, default=QUEUED)
    progress = models.FloatField(default=0.0)
    progress_message = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="trained_models",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    fit_seconds = models.FloatField(null=True, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    model_json = models.TextField(blank=True)
    error = models.TextField(blank=True)
    celery_task_id = models.CharField(max_length=100, blank=True)
    enqueued_at = models.DateTimeField(
        null=True, blank=True, help_text="Last handed to the task queue; empty = not yet (outbox)."
    )
    attempts = models.PositiveIntegerField(
        default=0, help_text="Times a worker has started this training (a killed one is retried)."
    )
    stop_requested = models.BooleanField(
        default=False,
        help_text="An anytime training ends at the next check and keeps its best model so far.",
    )
    anytime_round = models.CharField(
        max_length=100,
        blank=True,
        help_text='The anytime round whose model is in use (e.g. "r=4"); blank otherwise.',
    )
    # Approval is apart from ``status`` (how the training went): only an approved model reaches
    # a clinician.  Changed by services/approval.py only, each change logged as a ModelDecision.
    approval = models.CharField(
        max_length=10,
        choices=APPROVAL_CHOICES,
        default=DRAFT,
        help_text="Draft until a model administrator approves it; retired when withdrawn.",
    )
    approval_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="approval_changes",
    )
    approval_at = models.DateTimeField(null=True, blank=True)
    approval_reason = models.TextField(blank=True)
    cut_short = models.BooleanField(
        default=False,
        help_text="Approved although its training was cut short by a dead worker.",
    )
    replaces = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="replacements",
        help_text="The approved model this retrain would replace (approving it retires that one).",
    )
    replacement_comparison = models.JSONField(
        default=dict,
        blank=True,
        help_text="This model and the one it replaces on the same held-out patients, "
        "priced with this model's prices and matrix.",
    )

    class Meta:
        db_table = "diagnosis_trainedmodel"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name or f"{self.learner} on {self.dataset} (#{self.pk})"

    @property
    def snapshot(self) -> CostSnapshot:
        """The prices, test names, words and formulas it was trained with (``cost_snapshot``
        read and checked; ModelDocumentError, a ValueError, when it is malformed or empty).

        Read once per value of the column: a step asks for it several times, and reading it
        checks every field.  The column is replaced whole, never edited in place (a new value,
        assigned or read from the database, is read again).
        """
        stored = self.cost_snapshot
        kept = self.__dict__.get("_snapshot_read")
        if kept is not None and kept[0] is stored:
            return kept[1]
        snapshot = CostSnapshot.from_json(stored)
        self.__dict__["_snapshot_read"] = (stored, snapshot)
        return snapshot

    @property
    def is_ready(self) -> bool:
        """Succeeded and holds a fitted model: usable for clinicians' cases.

        Only a SUCCEEDED training is usable; every list offered to clinicians filters on that
        status too (``selectors.models_for_user``, ``visible_model``, the preload, the API). An
        INTERRUPTED one holds a model cut short by a dead worker: it is kept for an admin's
        review and is not usable unless approved knowing it was cut short.

        A row read without its JSON (``defer``: pages and steps take the fitted model from the
        estimator cache) asks the database whether it has one instead of reading it.
        """
        if self.status != self.SUCCEEDED:
            return False
        annotated = self.__dict__.get("has_fitted_json")  # selectors.models_for_user's answer
        if annotated is not None:
            return bool(annotated)
        if "model_json" in self.get_deferred_fields():
            if not hasattr(self, "_has_fitted_model"):  # asked once per instance
                fitted = type(self).objects.filter(pk=self.pk).exclude(model_json="")
                self._has_fitted_model = fitted.exists()
            return self._has_fitted_model
        return bool(self.model_json)

    @property
    def holds_partial_model(self) -> bool:
        """Interrupted with a model of the rounds finished before its worker died: an admin
        may approve it, knowing it was cut short (``services.approval.approve_model``)."""
        if self.status != self.INTERRUPTED:
            return False
        if "model_json" in self.get_deferred_fields():
            return type(self).objects.filter(pk=self.pk).exclude(model_json="").exists()
        return bool(self.model_json)

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def is_approved(self) -> bool:
        return self.approval == self.APPROVED


class TrainingCheckpoint(models.Model):
    """An intermediate model of an anytime learner, with its estimated cost."""

    trained_model = models.ForeignKey(
        TrainedModel, on_delete=models.CASCADE, related_name="checkpoints"
    )
    elapsed_seconds = models.FloatField()
    estimated_cost = models.FloatField(null=True, blank=True)
    label = models.CharField(max_length=100, blank=True)
    model_json = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "diagnosis_trainingcheckpoint"
        ordering = ["trained_model_id", "elapsed_seconds", "id"]

    def __str__(self) -> str:
        return f"{self.trained_model} @ {self.elapsed_seconds:.1f}s"
