"""Training models: request (web), run (Celery worker), cancel or stop."""

from __future__ import annotations

import logging
import time
import traceback
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from diagnosis.catalog.models import Dataset, ErrorMatrix
from diagnosis.catalog.selectors.costs import cost_snapshot
from diagnosis.catalog.selectors.datasets import dataset_arrays
from diagnosis.permissions import require_model_admin
from diagnosis.shared import learner_registry
from diagnosis.shared.validation import clean_matrix, clean_reject_cost
from learners.selection import CostSelectedClassifier

from ..models import TrainedModel
from . import approval, selection_fanout, training_memory, training_queue, warmup
from .anytime import AnytimeStopped, fit_anytime, held_out_report
from .training_data import RANDOM_STATE, baseline_metrics, split_indices
from .training_progress import Heartbeat, ProgressWriter

__all__ = [
    "cancel_training",
    "create_training",
    "request_stop",
    "request_training",
    "run_training",
]

log = logging.getLogger(__name__)

MIN_CASES = 10


@transaction.atomic
def request_training(
    *,
    user,
    dataset: Dataset,
    learner: str,
    params: Mapping[str, Any] | None,
    error_matrix: ErrorMatrix | None = None,
    name: str = "",
) -> TrainedModel:
    """Queue a training with the dataset's current prices and the chosen error matrix."""
    trained = create_training(
        user=user,
        dataset=dataset,
        learner=learner,
        params=params,
        error_matrix=error_matrix,
        name=name,
    )
    transaction.on_commit(lambda: training_queue.send(trained.pk))
    return trained


@transaction.atomic
def create_training(
    *,
    user,
    dataset: Dataset,
    learner: str,
    params: Mapping[str, Any] | None,
    error_matrix: ErrorMatrix | None = None,
    name: str = "",
) -> TrainedModel:
    """A validated "queued" TrainedModel with snapshots, not yet sent to a worker.

    ``request_training`` queues it; the demo-data command runs it in-process.
    """
    require_model_admin(user)
    spec = learner_registry.get_spec(learner)
    cleaned = learner_registry.clean_params(learner, params)
    n_cases = dataset.cases.count()
    if n_cases < MIN_CASES:
        raise ValidationError(
            f"Dataset {dataset.name!r} has {n_cases} cases; at least {MIN_CASES} are needed."
        )
    snapshot = cost_snapshot(dataset)
    training_memory.check_estimate(
        learner=learner,
        n_cases=n_cases,
        n_tests=len(snapshot.names),
        limit_mb=settings.TRAINING_MEMORY_LIMIT_MB,
    )
    if spec.check is not None:
        problems = spec.check(snapshot.prices, cleaned)
        if problems:
            raise ValidationError(problems)
    k = len(dataset.class_labels)
    if error_matrix is not None:
        if error_matrix.dataset_id != dataset.pk:
            raise ValidationError(
                f"Error matrix {error_matrix.name!r} belongs to another dataset "
                f"than {dataset.name!r}."
            )
        matrix = clean_matrix(error_matrix.matrix, dataset.class_labels)
        reject_cost = clean_reject_cost(error_matrix.reject_cost)
    else:
        matrix = [[0.0 if i == j else 1.0 for j in range(k)] for i in range(k)]
        reject_cost = None
    task_id = str(uuid.uuid4())
    trained = TrainedModel.objects.create(
        dataset=dataset,
        name=name.strip() or f"{spec.label} on {dataset.name}",
        learner=learner,
        params=cleaned,
        error_matrix=error_matrix,
        cost_snapshot=snapshot.to_json(),
        matrix_snapshot=matrix,
        reject_cost_snapshot=reject_cost,
        status=TrainedModel.QUEUED,
        approval=TrainedModel.DRAFT,  # a clinician sees it only once a model admin approves it
        progress_message="Waiting for a worker",
        created_by=user,
        celery_task_id=task_id,
    )
    return trained


def run_training(
    *,
    trained_model_id: int,
    progress: Callable[[float, str], None] | None = None,
    task_id: str = "",
) -> TrainedModel | None:
    """Fit, evaluate on a held-out 30% and store the model; failures are stored, not raised.

    The stored model is the one fitted on the 70% split, so the held-out
    figures in ``metrics`` describe exactly the model clinicians use.
    """
    attempt = training_queue.claim(
        trained_model_id=trained_model_id,
        stale_seconds=settings.TRAINING_STALE_SECONDS,
        max_attempts=settings.TRAINING_MAX_ATTEMPTS,
    )
    if attempt is None:
        log.warning("training %s is missing, running elsewhere or finished", trained_model_id)
        return TrainedModel.objects.filter(pk=trained_model_id).first()
    trained = TrainedModel.objects.select_related("dataset").get(pk=trained_model_id)
    if task_id and trained.celery_task_id != task_id:
        TrainedModel.objects.filter(pk=trained.pk).update(celery_task_id=task_id)
    writer = ProgressWriter(trained.pk, callback=progress)
    limit_mb = settings.TRAINING_MEMORY_LIMIT_MB
    try:
        # The heartbeat is a thread of its own: a long fit never delays it.
        with Heartbeat(trained.pk, interval=settings.TRAINING_HEARTBEAT_SECONDS):
            # the memory limit is the whole process's: a warm-up still loading kernels here
            # would count against this training, so it finishes first (seconds from the cache)
            if not warmup.wait_for_warm_up(timeout=0):
                writer(0.0, "Waiting for the worker to load the learners' kernels", force=True)
                warmup.wait_for_warm_up(timeout=settings.TRAINING_TIME_LIMIT)
            with training_memory.address_space_limit(limit_mb):
                result = _fit_and_evaluate(trained, writer)
    except AnytimeStopped as exc:
        _finish(trained.pk, attempt, status=TrainedModel.CANCELLED, progress_message=str(exc)[:300])
        return TrainedModel.objects.get(pk=trained.pk)
    except _TooBig as exc:
        _finish(
            trained.pk,
            attempt,
            status=TrainedModel.FAILED,
            error=str(exc),
            progress_message="Failed",
        )
        return TrainedModel.objects.get(pk=trained.pk)
    except MemoryError as exc:
        log.warning("training %s ran out of its memory limit", trained.pk)
        _finish(
            trained.pk,
            attempt,
            status=TrainedModel.FAILED,
            error=training_memory.out_of_memory_reason(limit_mb, exc),
            progress_message="Failed: out of memory",
        )
        return TrainedModel.objects.get(pk=trained.pk)
    except Exception as exc:  # any failure is reported on the model page
        log.exception("training %s failed", trained.pk)
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        _finish(
            trained.pk, attempt, status=TrainedModel.FAILED, error=detail, progress_message="Failed"
        )
        return TrainedModel.objects.get(pk=trained.pk)
    result.setdefault("progress_message", "Done")
    _finish(trained.pk, attempt, status=TrainedModel.SUCCEEDED, progress=1.0, **result)
    approval.record_replacement_comparison(trained_model_id=trained.pk)  # a retrain: old vs new
    return TrainedModel.objects.get(pk=trained.pk)


class _TooBig(Exception):
    """The up-front estimate of the fit's memory is above the worker's limit."""


def _fit_and_evaluate(trained: TrainedModel, writer: ProgressWriter) -> dict:
    writer(0.05, "Loading the cases")
    X, y, categorical = dataset_arrays(trained.dataset)
    try:  # this worker's limit, on the cases there are now: before anything is fitted
        training_memory.check_estimate(
            learner=trained.learner,
            n_cases=len(y),
            n_tests=X.shape[1],
            limit_mb=settings.TRAINING_MEMORY_LIMIT_MB,
        )
    except ValidationError as exc:
        raise _TooBig(" ".join(exc.messages)) from None
    train, test = split_indices(y, test_size=0.3, random_state=RANDOM_STATE)
    cost_model = trained.snapshot.prices
    if learner_registry.get_spec(trained.learner).anytime:
        result = fit_anytime(
            trained,
            writer,
            X=X,
            y=y,
            train=train,
            test=test,
            cost_model=cost_model,
            categorical=categorical,
            random_state=RANDOM_STATE,
        )
        return _with_baselines(result, trained, X, y, train, test, cost_model, categorical)
    estimator = _estimator(trained, cost_model, categorical)
    if "progress_callback" in estimator.get_params(deep=False):
        # Anytime learners report their own progress; it fills the 10%..80% stretch of the bar.
        estimator.set_params(progress_callback=lambda f, message: writer(0.1 + 0.7 * f, message))
    writer(0.1, f"Fitting on {len(train)} cases", force=True)
    started = time.perf_counter()
    if isinstance(estimator, CostSelectedClassifier) and settings.SELECTION_FAN_OUT:
        # Its candidates are measured by this worker and by any worker of the experiments queue.
        selection_fanout.measure_everywhere(
            trained=trained,
            estimator=estimator,
            X=X[train],
            y=y[train],
            progress=lambda f, message: writer(0.1 + 0.7 * f, message),
            heartbeat_seconds=settings.TRAINING_HEARTBEAT_SECONDS,
            stale_seconds=settings.TRAINING_STALE_SECONDS,
        )
    else:
        estimator.fit(X[train], y[train])
    fit_seconds = time.perf_counter() - started
    writer(0.8, f"Evaluating on {len(test)} held-out cases", force=True)
    metrics = held_out_report(estimator, X[test], y[test], trained=trained, cost_model=cost_model)
    metrics["n_training_cases"] = int(len(train))
    metrics["fit_seconds"] = fit_seconds
    writer(0.9, "Comparing with ordering nothing and ordering every test", force=True)
    result = {"model_json": estimator.to_json(), "metrics": metrics, "fit_seconds": fit_seconds}
    result = _with_baselines(result, trained, X, y, train, test, cost_model, categorical)
    writer(0.95, "Saving the model", force=True)
    return result


def _estimator(trained: TrainedModel, cost_model, categorical):
    """The unfitted estimator a training asked for, with its snapshotted prices and matrix."""
    return learner_registry.build_estimator(
        trained.learner,
        trained.params,
        cost_model=cost_model,
        cost_matrix=trained.matrix_snapshot,
        reject_cost=trained.reject_cost_snapshot,
        categorical_features=categorical,
        random_state=RANDOM_STATE,
    )


def run_candidate_measurement(*, measurement_id: int, worker: str) -> str:
    """Measure one selector candidate of a running training on this worker, if still waiting.

    The patients, split, prices and selector are the training's own, so the folds are the
    ones its coordinator draws.  Returns what happened, for the worker's log.
    """
    # As for a training, the process-wide memory limit comes after the kernels' warm-up; it
    # is awaited before the claim, so no claimed row sits silent meanwhile.
    warmup.wait_for_warm_up(timeout=settings.TRAINING_TIME_LIMIT)
    row = selection_fanout.claim(measurement_id=measurement_id, worker=worker)
    if row is None:
        return "skipped: taken, measured, or its training is no longer running"
    trained = TrainedModel.objects.select_related("dataset").get(pk=row.trained_model_id)
    X, y, categorical = dataset_arrays(trained.dataset)
    train, _ = split_indices(y, test_size=0.3, random_state=RANDOM_STATE)
    estimator = _estimator(trained, trained.snapshot.prices, categorical)
    try:
        with training_memory.address_space_limit(settings.TRAINING_MEMORY_LIMIT_MB):
            selection_fanout.measure_claimed(
                row,
                estimator=estimator,
                X=X[train],
                y=y[train],
                heartbeat_seconds=settings.TRAINING_HEARTBEAT_SECONDS,
            )
    except ValueError as exc:  # the patients changed: the coordinator measures it on its rows
        return f"released: {exc}"
    return f"measured {row.candidate} of training {trained.pk}"


def _with_baselines(result: dict, trained, X, y, train, test, cost_model, categorical) -> dict:
    """``result`` with the two simple strategies' figures on the same held-out cases."""
    result["metrics"]["baselines"] = baseline_metrics(
        X_train=X[train],
        y_train=y[train],
        X_test=X[test],
        y_test=y[test],
        cost_model=cost_model,
        cost_matrix=trained.matrix_snapshot,
        reject_cost=trained.reject_cost_snapshot,
        categorical=categorical,
        random_state=RANDOM_STATE,
    )
    return result


def _finish(trained_model_id: int, attempt: int, *, status: str, **fields) -> None:
    """Store the outcome unless the training was cancelled, or re-run elsewhere, meanwhile."""
    now = timezone.now()
    TrainedModel.objects.filter(
        pk=trained_model_id, status=TrainedModel.RUNNING, attempts=attempt
    ).update(status=status, finished_at=now, heartbeat_at=now, **fields)


@transaction.atomic
def request_stop(*, user, trained_model: TrainedModel) -> TrainedModel:
    """Ask a running anytime training to stop and keep its best model so far.

    The worker checks the flag between rounds and during a round; a training
    still queued is cancelled at once (it has no model to keep).
    """
    require_model_admin(user)
    locked = TrainedModel.objects.select_for_update().get(pk=trained_model.pk)
    if locked.is_finished:
        raise ValidationError(f"The training already {locked.status}; there is nothing to stop.")
    spec = learner_registry.LEARNERS.get(locked.learner)
    if spec is None or not spec.anytime:
        raise ValidationError(
            f"{spec.label if spec else locked.learner} cannot keep a partial model; "
            "cancel the training instead."
        )
    locked.stop_requested = True
    fields = ["stop_requested"]
    if locked.status == TrainedModel.QUEUED:
        locked.status = TrainedModel.CANCELLED
        locked.finished_at = timezone.now()
        locked.progress_message = f"Stopped by {user.get_username()} before it started"
        fields += ["status", "finished_at", "progress_message"]
    else:
        locked.progress_message = (
            f"Stop requested by {user.get_username()}; keeping the best model so far"
        )[:300]
        fields.append("progress_message")
    locked.save(update_fields=fields)
    return locked


@transaction.atomic
def cancel_training(*, user, trained_model: TrainedModel) -> TrainedModel:
    """Cancel a queued or running training (its result, if any arrives, is discarded)."""
    require_model_admin(user)
    locked = TrainedModel.objects.select_for_update().get(pk=trained_model.pk)
    if locked.is_finished:
        raise ValidationError(f"The training already {locked.status}; there is nothing to cancel.")
    locked.status = TrainedModel.CANCELLED
    locked.finished_at = timezone.now()
    locked.progress_message = f"Cancelled by {user.get_username()}"
    locked.save(update_fields=["status", "finished_at", "progress_message"])
    return locked
