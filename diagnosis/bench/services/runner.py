"""Running an experiment's tasks on workers, and getting them back when a worker dies.

The database is the outbox and the record, as for trainings (``services.training_queue``):

* :func:`send_pending` hands pending tasks to Celery ("experiments" queue); a broker that is
  down leaves them pending for the sweep.
* :func:`run_task` claims one task row (``SELECT ... FOR UPDATE``): a task already done, or
  running on a live worker, is never computed again, so a redelivered or retried message is
  harmless.  Its result row is stored the moment it is computed; the last task to land
  assembles the experiment (under the experiment's row lock, so exactly once).
* :func:`recover_experiments` (Celery beat every minute, and every worker as it starts)
  re-queues tasks whose worker stopped beating, gives up on a task after ``max_attempts``
  starts (the experiment then says which task and why), and re-sends tasks the broker lost.

While a task computes, a ``training_progress.Heartbeat`` thread beats its row and the
experiment's ``last_activity_at``; the selectors say an experiment is not moving (and why)
when nothing has beaten for longer than ``EXPERIMENT_STALE_SECONDS``.
"""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Case, Count, F, Q, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from diagnosis.bench.models import Experiment, ExperimentTask
from diagnosis.bench.selectors.results import assemble_results
from diagnosis.catalog.models import DatasetCase
from diagnosis.shared import learner_registry
from diagnosis.shared.baselines import ORDER_EVERYTHING, ORDER_NOTHING
from diagnosis.shared.learner_names import display_label
from diagnosis.training.services import broker
from diagnosis.training.services.training_progress import Heartbeat

__all__ = [
    "Recovered",
    "dispatch",
    "land",
    "recount",
    "recover_experiments",
    "run_task",
    "send_pending",
]

log = logging.getLogger(__name__)

UNREACHABLE = "The task queue cannot be reached; the tasks will be sent when it is back."


def _limits() -> tuple[float, int]:
    return float(settings.EXPERIMENT_STALE_SECONDS), int(settings.EXPERIMENT_MAX_ATTEMPTS)


# ------------------------------------------------------------------ sending
def dispatch(*, experiment_id: int) -> bool:
    """Ask a worker to send the experiment's tasks (``tasks.dispatch_experiment``).

    One message instead of one per task, so launching 10,000 tasks does not hold up the web
    request that created them.  A broker that is down leaves the tasks unsent, and the sweep
    sends them when it is back.
    """
    try:
        broker.send(broker.DISPATCH_EXPERIMENT, args=[experiment_id])
    except Exception as exc:  # any broker failure: the sweep sends the tasks later
        log.warning("could not queue experiment %s: %s", experiment_id, exc)
        Experiment.objects.filter(pk=experiment_id).update(status_reason=UNREACHABLE)
        return False
    return True


def send_pending(*, experiment_id: int, only_unsent: bool = False) -> int:
    """Hand the experiment's pending lead tasks to Celery; how many were sent."""
    experiment = Experiment.objects.filter(pk=experiment_id).first()
    if experiment is None or experiment.status not in (Experiment.QUEUED, Experiment.RUNNING):
        return 0
    pending = experiment.tasks.filter(status=ExperimentTask.PENDING, lead__isnull=True)
    if only_unsent:
        pending = pending.filter(enqueued_at__isnull=True)
    ids = list(pending.order_by("id").values_list("id", flat=True))
    sent: list[int] = []
    try:
        for task_id in ids:
            broker.send(broker.RUN_EXPERIMENT_TASK, args=[task_id])
            sent.append(task_id)
    except Exception as exc:  # any broker failure: the rest stay pending for the sweep
        log.warning("could not queue experiment %s's tasks: %s", experiment_id, exc)
        Experiment.objects.filter(pk=experiment_id).update(status_reason=UNREACHABLE)
    now = timezone.now()
    for start in range(0, len(sent), 1000):
        ExperimentTask.objects.filter(pk__in=sent[start : start + 1000]).update(enqueued_at=now)
    if sent:
        Experiment.objects.filter(pk=experiment_id, status_reason=UNREACHABLE).update(
            status_reason=""
        )
    return len(sent)


# ------------------------------------------------------------------ claiming
def _claim(task_id: int, worker: str) -> tuple[int, ExperimentTask] | None:
    """This worker's attempt number and the task (with its experiment), or None when it is
    not ours to compute."""
    stale_seconds, max_attempts = _limits()
    now = timezone.now()
    stalled = Q(
        status=ExperimentTask.RUNNING, heartbeat_at__lt=now - timedelta(seconds=stale_seconds)
    )
    with transaction.atomic():
        task = (
            ExperimentTask.objects.select_for_update(of=("self",))
            .select_related("experiment")
            .filter(Q(status=ExperimentTask.PENDING) | stalled, pk=task_id, lead__isnull=True)
            .first()
        )
        if task is None:
            return None
        experiment = task.experiment
        if experiment.status not in (Experiment.QUEUED, Experiment.RUNNING):
            return None
        if task.attempts >= max_attempts:
            failed = _give_up([task.pk], task.attempts, now)
            transaction.on_commit(lambda: land(experiment_id=experiment.pk, failed=failed))
            return None
        attempt = task.attempts + 1
        ExperimentTask.objects.filter(pk=task.pk).update(
            status=ExperimentTask.RUNNING,
            attempts=attempt,
            claimed_by=worker[:200],
            heartbeat_at=now,
            started_at=now,
            error="",
        )
        Experiment.objects.filter(pk=experiment.pk).update(
            last_activity_at=now,
            status=Case(
                When(status=Experiment.QUEUED, then=Value(Experiment.RUNNING)),
                default=F("status"),
            ),
            started_at=Coalesce(F("started_at"), Value(now)),
        )
        task.status, task.attempts = ExperimentTask.RUNNING, attempt
    return attempt, task


def _give_up(task_ids: list[int], attempts: int, now) -> int:
    """Fail these tasks and their followers; how many rows failed."""
    message = (
        f"Started {attempts} times and its worker stopped each time (killed, restarted or out "
        "of memory?); resume the experiment to try again."
    )
    failed = ExperimentTask.objects.filter(pk__in=task_ids).update(
        status=ExperimentTask.FAILED, finished_at=now, error=message
    )
    return failed + ExperimentTask.objects.filter(
        lead_id__in=task_ids, status=ExperimentTask.PENDING
    ).update(status=ExperimentTask.FAILED, finished_at=now, error=message)


# ------------------------------------------------------------------ running
@lru_cache(maxsize=4)
def _arrays(experiment_id: int, case_ids_key: int) -> tuple[np.ndarray, np.ndarray]:
    """The experiment's cases as ``X``, ``y`` (cached per worker process)."""
    experiment = Experiment.objects.only("case_ids").get(pk=experiment_id)
    wanted = list(experiment.case_ids)
    rows = dict(
        DatasetCase.objects.filter(pk__in=wanted)
        .order_by()
        .values_list("id", "values")
        .iterator(chunk_size=2000)
    )
    labels = dict(DatasetCase.objects.filter(pk__in=wanted).values_list("id", "label"))
    missing = [pk for pk in wanted if pk not in rows]
    if missing:
        raise ValueError(
            f"{len(missing)} of the experiment's {len(wanted)} cases were deleted from the "
            "dataset since it was set up; clone the experiment to run it on today's cases."
        )
    X = np.array([[np.nan if v is None else v for v in rows[pk]] for pk in wanted], dtype=float)
    y = np.array([labels[pk] for pk in wanted], dtype=np.int64)
    return X, y


@lru_cache(maxsize=16)
def _folds(experiment_id: int, y_key: bytes, k: int, seed: int, repeat: int):
    from learners.evaluation import make_folds

    y = np.frombuffer(y_key, dtype=np.int64)
    return make_folds(y, n_splits=k, random_state=seed + repeat)


def run_task(*, task_id: int, worker: str = "") -> str:
    """Compute one experiment task (and its followers) unless it is done or running elsewhere.

    Returns what happened: "done", "failed", "skipped".
    """
    claimed = _claim(task_id, worker)
    if claimed is None:
        log.info("experiment task %s is done, running elsewhere or cancelled", task_id)
        return "skipped"
    attempt, task = claimed
    experiment = task.experiment
    targets = [task]
    entry = experiment.learners[task.learner_index]
    if (
        len(experiment.matrices) > 1
        and not entry.get("baseline")
        and learner_registry.takes_matrix_at_prediction(entry["key"], entry["params"])
    ):
        targets += list(
            task.followers.filter(status=ExperimentTask.PENDING).order_by("matrix_index")
        )

    def beat() -> None:
        now = timezone.now()
        ExperimentTask.objects.filter(pk=task_id, status=ExperimentTask.RUNNING).update(
            heartbeat_at=now
        )
        Experiment.objects.filter(pk=experiment.pk).update(last_activity_at=now)

    try:
        with Heartbeat(None, interval=_heartbeat_interval(), beat=beat):
            results = _compute(experiment, task, targets)
    except Exception as exc:  # stored on the task; the experiment reports it
        from celery.exceptions import SoftTimeLimitExceeded

        if isinstance(exc, SoftTimeLimitExceeded):
            detail = (
                f"Took longer than the per-task limit ({settings.EXPERIMENT_TASK_TIME_LIMIT} s, "
                "EXPERIMENT_TASK_TIME_LIMIT)."
            )
        else:
            log.exception("experiment task %s failed", task_id)
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        failed = _store_failure(task, targets, attempt, detail)
        if failed:
            land(experiment_id=experiment.pk, failed=failed)
        return "failed"
    stored = _store_results(task, attempt, results)
    if stored:
        land(experiment_id=experiment.pk, done=stored)
    return "done" if stored else "skipped"


def _heartbeat_interval() -> float:
    return max(1.0, min(10.0, float(settings.EXPERIMENT_STALE_SECONDS) / 3))


def _compute(experiment: Experiment, task: ExperimentTask, targets) -> dict[int, dict]:
    """Fit on the fold's training cases and ``evaluate`` on its test cases, per target matrix."""
    X, y = _arrays(experiment.pk, hash(tuple(experiment.case_ids)))
    folds = _folds(experiment.pk, y.tobytes(), experiment.k, experiment.seed, task.repeat)
    train, test = folds[task.fold]
    entry = experiment.learners[task.learner_index]
    cost_model = experiment.snapshot.prices
    first = experiment.matrices[task.matrix_index]
    random_state = experiment.seed + task.repeat
    if entry.get("baseline"):
        started = time.perf_counter()
        model = _fit_baseline(
            entry["key"], X[train], y[train], cost_model, first, experiment, random_state
        )
        result = _result_fields(
            _evaluate(model, X[test], y[test], cost_model, first), n_tests=X.shape[1]
        )
        result["fit_seconds"] = time.perf_counter() - started
        result["anytime"] = []
        return {task.pk: result}
    spec = learner_registry.get_spec(entry["key"])

    def fit(params) -> tuple[object, float]:
        estimator = learner_registry.build_estimator(
            entry["key"],
            params,
            cost_model=cost_model,
            cost_matrix=first["matrix"],
            reject_cost=first["reject_cost"],
            categorical_features=experiment.categorical,
            random_state=random_state,
        )
        started = time.perf_counter()
        estimator.fit(X[train], y[train])
        return estimator, time.perf_counter() - started

    anytime: list[dict] = []
    if spec.anytime and spec.anytime_param:
        from diagnosis.training.services.anytime import round_schedule

        target_r = int(entry["params"].get(spec.anytime_param) or 0)
        model = None
        fit_seconds = 0.0
        for r in round_schedule(target_r):
            model, seconds = fit({**entry["params"], spec.anytime_param: r})
            fit_seconds = seconds
            report = _evaluate(model, X[test], y[test], cost_model, first)
            anytime.append(
                {
                    "r": r,
                    "fit_seconds": seconds,
                    "normalized_cost": _num(report.normalized_cost),
                    "mean_total_cost": _num(report.mean_total_cost),
                    "mean_test_cost": _num(report.mean_test_cost),
                    "accuracy": _num(report.accuracy),
                }
            )
    else:
        model, fit_seconds = fit(entry["params"])
    results: dict[int, dict] = {}
    for target in targets:
        matrix = experiment.matrices[target.matrix_index]
        if target.pk != task.pk:
            model.set_cost_matrix(matrix["matrix"])  # a shared fit: plain Boosting
        report = _evaluate(model, X[test], y[test], cost_model, matrix)
        result = _result_fields(report, n_tests=X.shape[1])
        result["fit_seconds"] = fit_seconds
        result["anytime"] = anytime if target.pk == task.pk else []
        results[target.pk] = result
    return results


def _fit_baseline(key, X, y, cost_model, matrix, experiment, random_state):
    """Ordering nothing, or every test then a C4.5 tree: the model page's two baselines
    (``services.training_data.baseline_metrics``), fitted on the fold's training part."""
    from learners.baselines import OrderEverything, OrderNothing
    from learners.tree import C45Classifier

    shared = {
        "test_costs": cost_model,
        "cost_matrix": np.asarray(matrix["matrix"], dtype=float),
        "reject_cost": matrix["reject_cost"],
    }
    if key == ORDER_NOTHING:
        return OrderNothing(**shared).fit(X, y)
    if key == ORDER_EVERYTHING:
        tree = C45Classifier(
            **shared,
            categorical_features=list(experiment.categorical) or None,
            random_state=random_state,
        ).fit(X, y)
        return OrderEverything(tree)
    raise ValueError(f"unknown baseline {key!r}")


def _evaluate(model, X, y, cost_model, matrix):
    from learners import evaluate

    return evaluate(
        model,
        X,
        y,
        test_costs=cost_model,
        cost_matrix=np.asarray(matrix["matrix"], dtype=float),
        reject_cost=matrix["reject_cost"],
        delayed="path",
    )


def _num(value) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None


def _result_fields(report, *, n_tests: int) -> dict:
    paid = np.zeros(n_tests)
    for case in report.cases:
        for test, _quoted, charged in case.orders:
            paid[int(test)] += float(charged)
    n = max(report.n_cases, 1)
    roc = {}
    if report.roc_fpr:
        roc = {"fpr": list(report.roc_fpr), "tpr": list(report.roc_tpr), "auc": _num(report.auc)}
    return {
        "normalized_cost": _num(report.normalized_cost),
        "accuracy": _num(report.accuracy),
        "mean_test_cost": _num(report.mean_test_cost),
        "mean_total_cost": _num(report.mean_total_cost),
        "misclassification_cost": _num(report.mean_misclassification_cost),
        "reject_rate": _num(report.reject_rate),
        "n_cases": int(report.n_cases),
        "test_frequency": [float(f) for f in np.asarray(report.test_frequency, dtype=float)],
        "test_paid": (paid / n).tolist(),
        "roc": roc,
    }


def _store_results(task: ExperimentTask, attempt: int, results: dict[int, dict]) -> int:
    """Store the rows in one transaction: how many (0 if the task was taken from this worker)."""
    now = timezone.now()
    with transaction.atomic():
        mine = ExperimentTask.objects.filter(
            pk=task.pk, status=ExperimentTask.RUNNING, attempts=attempt
        ).update(status=ExperimentTask.DONE, finished_at=now, heartbeat_at=now, **results[task.pk])
        if not mine:
            return 0
        for pk, fields in results.items():
            if pk != task.pk:
                mine += ExperimentTask.objects.filter(pk=pk, status=ExperimentTask.PENDING).update(
                    status=ExperimentTask.DONE, finished_at=now, heartbeat_at=now, **fields
                )
    return mine


def _store_failure(task, targets, attempt: int, detail: str) -> int:
    """Fail the task and its followers: how many rows (0 if it was taken from this worker)."""
    now = timezone.now()
    with transaction.atomic():
        mine = ExperimentTask.objects.filter(
            pk=task.pk, status=ExperimentTask.RUNNING, attempts=attempt
        )
        if not mine.update(status=ExperimentTask.FAILED, finished_at=now, error=detail[:5000]):
            return 0
        return 1 + ExperimentTask.objects.filter(
            pk__in=[t.pk for t in targets if t.pk != task.pk], status=ExperimentTask.PENDING
        ).update(status=ExperimentTask.FAILED, finished_at=now, error=detail[:5000])


# ------------------------------------------------------------------ landing
def recount(experiment_id: int, **also) -> dict[str, int]:
    """Store the experiment's done and failed counts (and ``also``); every status's count."""
    counts = dict(
        ExperimentTask.objects.filter(experiment_id=experiment_id)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    Experiment.objects.filter(pk=experiment_id).update(
        n_done=counts.get(ExperimentTask.DONE, 0),
        n_failed=counts.get(ExperimentTask.FAILED, 0),
        **also,
    )
    return counts


def land(*, experiment_id: int, done: int = 0, failed: int = 0, count: bool = False) -> None:
    """Tasks landed: update the counts and, when the last one is in, assemble the results.

    ``done`` and ``failed`` rows were just stored by the caller: they are added to the
    experiment's counters (one row lock, no scan of the tasks, so landing stays constant-time
    however large the experiment).  ``count``: count the task rows instead (the sweep, a
    resume).  The tasks are always counted before assembling.
    """
    with transaction.atomic():
        experiment = (
            Experiment.objects.select_for_update()
            .only("id", "status", "n_tasks", "n_done", "n_failed")
            .filter(pk=experiment_id)
        ).first()
        if experiment is None:
            return
        now = timezone.now()
        n_done, n_failed = experiment.n_done + done, experiment.n_failed + failed
        if not count and n_done + n_failed < experiment.n_tasks:
            Experiment.objects.filter(pk=experiment_id).update(
                n_done=n_done, n_failed=n_failed, last_activity_at=now
            )
            return
        counts = recount(experiment_id, last_activity_at=now)
        if experiment.status not in (Experiment.QUEUED, Experiment.RUNNING):
            return
        outstanding = sum(
            counts.get(s, 0)
            for s in (ExperimentTask.PENDING, ExperimentTask.RUNNING, ExperimentTask.CANCELLED)
        )
        if outstanding:
            return
        experiment = Experiment.objects.get(pk=experiment_id)
        results = assemble_results(experiment)
        failed = counts.get(ExperimentTask.FAILED, 0)
        if failed:
            first_error = (
                experiment.tasks.filter(status=ExperimentTask.FAILED)
                .order_by("learner_index", "repeat", "fold", "matrix_index")
                .first()
            )
            assert first_error is not None  # counted among the failed above, under the lock
            where = (
                f"{display_label(experiment.learners[first_error.learner_index])}, repeat "
                f"{first_error.repeat + 1}, fold {first_error.fold + 1}, matrix "
                f"{experiment.matrices[first_error.matrix_index]['label']}"
            )
            reason = (
                f"{failed} of {experiment.n_tasks} tasks failed; the results show the rest. "
                f"First failure ({where}): {first_error.error}"
            )
            status = Experiment.FAILED
        else:
            reason = ""
            status = Experiment.DONE
        Experiment.objects.filter(pk=experiment_id).update(
            status=status, status_reason=reason[:5000], finished_at=now, results=results
        )


# ------------------------------------------------------------------ recovery
@dataclass(frozen=True)
class Recovered:
    """What one sweep did."""

    requeued: int  # running, worker gone: pending again
    failed: int  # out of attempts
    sent: int  # pending tasks handed (again) to the broker


def recover_experiments(
    *, stale_seconds: float, resend_after_seconds: float, max_attempts: int
) -> Recovered:
    """Re-queue tasks whose worker stopped beating, and re-send what the queue lost.

    A pending task is sent again only when it never reached the broker, or when its
    experiment has not moved for ``resend_after_seconds`` (a busy experiment's queue is
    long, not lost).
    """
    if stale_seconds <= 0 or resend_after_seconds <= 0 or max_attempts < 1:
        raise ValueError("the limits must be positive")
    now = timezone.now()
    requeued = failed = 0
    touched: set[int] = set()
    with transaction.atomic():
        stalled = ExperimentTask.objects.select_for_update(skip_locked=True).filter(
            status=ExperimentTask.RUNNING,
            heartbeat_at__lt=now - timedelta(seconds=stale_seconds),
            experiment__status__in=(Experiment.QUEUED, Experiment.RUNNING),
        )
        for task in stalled:
            touched.add(task.experiment_id)
            if task.attempts >= max_attempts:
                _give_up([task.pk], task.attempts, now)
                failed += 1
            else:
                ExperimentTask.objects.filter(pk=task.pk).update(
                    status=ExperimentTask.PENDING,
                    enqueued_at=None,
                    error=(
                        f"Its worker ({task.claimed_by or 'unknown'}) stopped reporting for "
                        f"more than {stale_seconds:g} s; queued again (attempt "
                        f"{task.attempts + 1} of {max_attempts})."
                    ),
                )
                requeued += 1
    for experiment_id in touched:
        land(experiment_id=experiment_id, count=True)
    sent = 0
    idle = now - timedelta(seconds=resend_after_seconds)
    active = Experiment.objects.filter(status__in=(Experiment.QUEUED, Experiment.RUNNING))
    for experiment in active.only("pk", "last_activity_at", "created_at"):
        quiet = (experiment.last_activity_at or experiment.created_at) < idle
        if quiet:
            stale_sent = experiment.tasks.filter(
                status=ExperimentTask.PENDING, lead__isnull=True, enqueued_at__lt=idle
            )
            stale_sent.update(enqueued_at=None)
        sent += send_pending(experiment_id=experiment.pk, only_unsent=True)
    return Recovered(requeued=requeued, failed=failed, sent=sent)
