"""Experiments ("the bench"): learners compared on one dataset over the same folds and matrices.

An :class:`Experiment` is what a model administrator asked for, with snapshots of the prices,
the error matrices and the cases it runs on (later edits to the dataset never change it), its
progress and, once its last task landed, the assembled results.  Each
:class:`ExperimentTask` is one (learner, repeat, fold, matrix) cell with its result; a task
whose fitted model serves every matrix (plain Boosting) is computed by its *lead* task, the
(learner, repeat, fold) task of the first matrix, which fits once and fills in its followers.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from diagnosis.catalog.models import Dataset
from diagnosis.shared.costs import CostSnapshot


class Experiment(models.Model):
    """One comparison of learners on a dataset: what was asked, its snapshots and its results."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"
    STATUS_CHOICES = [
        (QUEUED, "Queued"),
        (RUNNING, "Running"),
        (DONE, "Done"),
        (CANCELLED, "Cancelled"),
        (FAILED, "Failed"),
    ]
    FINISHED = (DONE, CANCELLED, FAILED)

    MATRIX_ONE = "matrix"
    MATRIX_UNIFORM = "uniform"
    MATRIX_RATIO = "ratio"
    MATRIX_KINDS = [
        (MATRIX_ONE, "One error matrix"),
        (MATRIX_UNIFORM, "A sweep of uniform error costs"),
        (MATRIX_RATIO, "A sweep of false-positive / false-negative cost ratios"),
    ]

    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="experiments")
    name = models.CharField(max_length=200)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="experiments",
    )
    #: ``[{"key": "eg2", "params": {...cleaned...}, "label": "EG2 (w=1)"}, ...]``
    learners = models.JSONField(default=list)
    matrix_kind = models.CharField(max_length=10, choices=MATRIX_KINDS, default=MATRIX_ONE)
    #: What was asked: ``{"error_matrix_id": 3}``, ``{"costs": [...]}`` or
    #: ``{"ratios": [...], "base": 100, "positive": 1}``, plus ``reject_cost`` for sweeps.
    matrix_spec = models.JSONField(default=dict)
    #: The matrices it ran with: ``[{"label", "x", "matrix", "reject_cost"}, ...]``.
    matrices = models.JSONField(default=list)
    k = models.PositiveIntegerField(help_text="Folds of the cross-validation.")
    repeats = models.PositiveIntegerField(default=1)
    seed = models.IntegerField(default=0)
    #: ``CostModel.to_dict()`` plus names and vocabulary (``selectors.costs.cost_snapshot``),
    #: read and written through :class:`~diagnosis.shared.costs.CostSnapshot` (``snapshot``).
    cost_snapshot = models.JSONField(default=dict)
    #: The ids of the cases it runs on, in order, and the nominal columns.
    case_ids = models.JSONField(default=list)
    categorical = models.JSONField(default=list)
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=QUEUED)
    status_reason = models.TextField(
        blank=True, help_text="Why it failed, was cancelled, or is not moving."
    )
    n_tasks = models.PositiveIntegerField(default=0)
    n_done = models.PositiveIntegerField(default=0)
    n_failed = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    #: Last time any of its tasks was claimed, beat or landed.
    last_activity_at = models.DateTimeField(null=True, blank=True)
    results = models.JSONField(default=dict, blank=True)
    #: The experiment this one re-runs or was cloned from.
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children"
    )

    class Meta:
        # the table it has had since before the bench was an app of its own
        db_table = "diagnosis_experiment"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name or f"Experiment {self.pk}"

    @property
    def snapshot(self) -> CostSnapshot:
        """The prices, test names and words it runs with (``cost_snapshot`` read and checked)."""
        return CostSnapshot.from_json(self.cost_snapshot)

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED


class ExperimentTask(models.Model):
    """One (learner, repeat, fold, matrix) cell: its state and, once done, its result."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    STATUS_CHOICES = [
        (PENDING, "Pending"),
        (RUNNING, "Running"),
        (DONE, "Done"),
        (FAILED, "Failed"),
        (CANCELLED, "Cancelled"),
    ]

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="tasks")
    learner_index = models.PositiveIntegerField()
    repeat = models.PositiveIntegerField()
    fold = models.PositiveIntegerField()
    matrix_index = models.PositiveIntegerField()
    #: Computed by this task's job (one fitted model shared across matrices); null = its own.
    lead = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="followers"
    )
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    claimed_by = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    # The result (null until done).
    normalized_cost = models.FloatField(null=True, blank=True)
    accuracy = models.FloatField(null=True, blank=True)
    mean_test_cost = models.FloatField(null=True, blank=True)
    mean_total_cost = models.FloatField(null=True, blank=True)
    misclassification_cost = models.FloatField(null=True, blank=True)
    reject_rate = models.FloatField(null=True, blank=True)
    n_cases = models.PositiveIntegerField(null=True, blank=True)
    fit_seconds = models.FloatField(null=True, blank=True)
    #: Fraction of the fold's patients who had each test, and the mean each paid for it.
    test_frequency = models.JSONField(default=list, blank=True)
    test_paid = models.JSONField(default=list, blank=True)
    #: Two classes: ``{"fpr": [...], "tpr": [...], "auc": 0.8}``; else empty.
    roc = models.JSONField(default=dict, blank=True)
    #: Anytime learners: ``[{"r", "fit_seconds", "normalized_cost", "mean_total_cost",
    #: "mean_test_cost", "accuracy"}, ...]`` one per round; else empty.
    anytime = models.JSONField(default=list, blank=True)

    class Meta:
        db_table = "diagnosis_experimenttask"
        ordering = ["experiment_id", "learner_index", "matrix_index", "repeat", "fold"]
        constraints = [
            models.UniqueConstraint(
                fields=["experiment", "learner_index", "repeat", "fold", "matrix_index"],
                name="unique_experiment_cell",
            )
        ]
        indexes = [models.Index(fields=["experiment", "status"], name="experiment_task_status")]

    def __str__(self) -> str:
        return (
            f"experiment {self.experiment_id} learner {self.learner_index} repeat {self.repeat} "
            f"fold {self.fold} matrix {self.matrix_index}"
        )
