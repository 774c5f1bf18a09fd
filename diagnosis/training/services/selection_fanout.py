"""A "let the data choose" training measured by many workers: one row per candidate.

The training's own worker (the coordinator) writes a :class:`CandidateMeasurement` row for
every candidate the selector measures, sends each as a task to the experiments queue, and then
measures candidates itself, one by one, until none is left waiting.  Any worker that takes a
candidate's task first claims its row and measures it there.  So one worker alone measures
everything (nothing waits on a second machine, and bin/run's single-process worker cannot
deadlock on itself), and every worker added to the experiments queue takes a share.  A
candidate whose worker stops beating is measured again by the coordinator.  Once every row is
measured the coordinator chooses (``CostSelectedClassifier.fit_measured``) and refits.

Celery does the distributing: rows are claimed with one conditional UPDATE each, so exactly
one worker measures a candidate, and there is no pool or scheduler of our own.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta

import numpy as np
from django.db import connection, transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from learners.selection import CostSelectedClassifier, FoldCosts

from ..models import CandidateMeasurement, TrainedModel
from . import broker

log = logging.getLogger(__name__)

__all__ = [
    "claim",
    "fingerprint",
    "measure_claimed",
    "measure_everywhere",
    "prepare",
    "release",
    "send",
]

#: The claimant name of the training's own worker (remote claims carry the worker's hostname).
COORDINATOR = "the training's own worker"


def fingerprint(X: np.ndarray, y: np.ndarray) -> str:
    """A hash of the training patients: a worker measures only on the very same rows."""
    digest = hashlib.sha256(np.ascontiguousarray(X, dtype=float).tobytes())
    digest.update(np.ascontiguousarray(y).astype(np.int64).tobytes())
    return digest.hexdigest()


def prepare(
    *, trained: TrainedModel, names: tuple[str, ...], deadline: float | None, rows_hash: str
) -> list[CandidateMeasurement]:
    """One row per candidate of this training (rows of an earlier attempt are kept: a
    candidate already measured is not measured again; one cut short waits again)."""
    with transaction.atomic():
        rows = []
        for position, name in enumerate(names):
            row, _ = CandidateMeasurement.objects.get_or_create(
                trained_model=trained,
                candidate=name,
                defaults={"position": position, "deadline": deadline, "fingerprint": rows_hash},
            )
            rows.append(row)
        CandidateMeasurement.objects.filter(
            trained_model=trained, status=CandidateMeasurement.RUNNING
        ).update(status=CandidateMeasurement.PENDING, claimed_by="")
        CandidateMeasurement.objects.filter(
            trained_model=trained, status=CandidateMeasurement.PENDING
        ).update(deadline=deadline, fingerprint=rows_hash)
        # Measured on other rows (the dataset changed between attempts): measured again.
        CandidateMeasurement.objects.filter(trained_model=trained).exclude(
            fingerprint=rows_hash
        ).update(status=CandidateMeasurement.PENDING, folds={}, fingerprint=rows_hash)
    return rows


def send(rows: list[CandidateMeasurement]) -> int:
    """Send every waiting row as a task to the experiments queue; a broker that cannot be
    reached only means the coordinator measures them all itself."""
    sent = 0
    for row in rows:
        if row.status == CandidateMeasurement.DONE:
            continue
        try:
            broker.send(broker.MEASURE_CANDIDATE, args=[row.pk])
        except Exception as exc:  # any broker failure: the coordinator still measures it
            log.warning("could not send candidate %s to the queue: %s", row.pk, exc)
            return sent
        sent += 1
    return sent


def claim(*, measurement_id: int, worker: str) -> CandidateMeasurement | None:
    """Claim a waiting candidate of a running training, or None (taken, done, or its
    training no longer running)."""
    running = TrainedModel.objects.filter(
        status=TrainedModel.RUNNING, candidate_measurements__pk=measurement_id
    ).exists()
    if not running:
        return None
    # The row's own columns only: a condition through a join makes Django update by
    # "id IN (subquery)", which PostgreSQL does not re-check against a row another worker
    # claimed meanwhile, and both claims would win.
    claimed = CandidateMeasurement.objects.filter(
        pk=measurement_id, status=CandidateMeasurement.PENDING
    ).update(
        status=CandidateMeasurement.RUNNING,
        claimed_by=worker[:200],
        heartbeat_at=timezone.now(),
        attempts=F("attempts") + 1,
    )
    if not claimed:
        return None
    return CandidateMeasurement.objects.get(pk=measurement_id)


def release(row: CandidateMeasurement) -> None:
    """Put a claimed candidate back to wait (for the coordinator or another worker)."""
    CandidateMeasurement.objects.filter(pk=row.pk, status=CandidateMeasurement.RUNNING).update(
        status=CandidateMeasurement.PENDING, claimed_by=""
    )


def measure_claimed(
    row: CandidateMeasurement,
    *,
    estimator: CostSelectedClassifier,
    X: np.ndarray,
    y: np.ndarray,
    heartbeat_seconds: float,
) -> FoldCosts:
    """Measure a claimed candidate and store its fold costs (the row beats while it runs).

    Raises
    ------
    ValueError
        When ``X``/``y`` are not the rows the training's coordinator measures on (the
        dataset changed meanwhile); the row waits again for the coordinator.
    """
    if fingerprint(X, y) != row.fingerprint:
        release(row)
        raise ValueError(f"candidate {row.pk}: the training patients changed; not measured")
    stop = threading.Event()

    def beat() -> None:
        from django.db import close_old_connections

        try:
            while not stop.wait(heartbeat_seconds):
                CandidateMeasurement.objects.filter(
                    pk=row.pk, status=CandidateMeasurement.RUNNING
                ).update(heartbeat_at=timezone.now())
        finally:
            close_old_connections()

    thread = threading.Thread(target=beat, name="candidate-heartbeat", daemon=True)
    if not connection.in_atomic_block:  # inside a transaction the row is ours alone anyway
        thread.start()
    try:
        folds = estimator.measure_candidate(row.candidate, X, y, deadline=row.deadline)
    except BaseException:
        # Failed here (memory, a bug): put it back for the coordinator, which will raise
        # the same error where the training's failure is reported.
        release(row)
        raise
    finally:
        stop.set()
        if thread.is_alive():
            thread.join(timeout=heartbeat_seconds + 5)
    CandidateMeasurement.objects.filter(pk=row.pk, status=CandidateMeasurement.RUNNING).update(
        status=CandidateMeasurement.DONE, folds=folds.to_dict(), finished_at=timezone.now()
    )
    return folds


def measure_everywhere(
    *,
    trained: TrainedModel,
    estimator: CostSelectedClassifier,
    X: np.ndarray,
    y: np.ndarray,
    progress: Callable[[float, str], None],
    heartbeat_seconds: float,
    stale_seconds: float,
    poll_seconds: float = 0.5,
) -> CostSelectedClassifier:
    """Fit ``estimator`` from its candidates measured here and by any other worker.

    ``progress(fraction, message)`` reports how many candidates are measured, and where.
    """
    names = estimator.candidates_to_measure(X, y)
    budget = estimator.time_budget
    deadline = None if budget is None else time.time() + float(budget)
    rows = prepare(trained=trained, names=names, deadline=deadline, rows_hash=fingerprint(X, y))
    send(rows)
    while True:
        if not TrainedModel.objects.filter(pk=trained.pk, status=TrainedModel.RUNNING).exists():
            raise RuntimeError("the training was stopped while its candidates were measured")
        waiting = (
            CandidateMeasurement.objects.filter(
                trained_model=trained, status=CandidateMeasurement.PENDING
            )
            .order_by("position")
            .values_list("pk", flat=True)
        )
        row = next(
            (r for pk in waiting if (r := claim(measurement_id=pk, worker=COORDINATOR))), None
        )
        if row is not None:
            share, tally = _progress(trained)
            progress(share, f"Measuring {row.candidate} ({tally})")
            measure_claimed(row, estimator=estimator, X=X, y=y, heartbeat_seconds=heartbeat_seconds)
            continue
        stale = timezone.now() - timedelta(seconds=stale_seconds)
        revived = CandidateMeasurement.objects.filter(
            trained_model=trained, status=CandidateMeasurement.RUNNING, heartbeat_at__lt=stale
        ).update(status=CandidateMeasurement.PENDING, claimed_by="")
        if revived:
            log.warning("training %s: %s candidate(s) lost their worker", trained.pk, revived)
            continue
        if (
            not CandidateMeasurement.objects.filter(trained_model=trained)
            .exclude(status=CandidateMeasurement.DONE)
            .exists()
        ):
            break
        share, tally = _progress(trained)
        progress(share, f"Waiting for other workers ({tally})")
        time.sleep(poll_seconds)
    measurements = {
        row.candidate: FoldCosts.from_dict(row.folds)
        for row in CandidateMeasurement.objects.filter(trained_model=trained, candidate__in=names)
    }
    share, tally = _progress(trained)
    progress(share, f"Refitting the cheapest candidate ({tally})")
    return estimator.fit_measured(X, y, measurements)


def _progress(trained: TrainedModel) -> tuple[float, str]:
    """(share of candidates measured, "5 of 16 candidates measured, 2 by other workers"), from
    one query."""
    counts = CandidateMeasurement.objects.filter(trained_model=trained).aggregate(
        total=Count("pk"),
        done=Count("pk", filter=Q(status=CandidateMeasurement.DONE)),
        elsewhere=Count(
            "pk",
            filter=Q(status=CandidateMeasurement.DONE) & ~Q(claimed_by=COORDINATOR),
        ),
    )
    total, done, elsewhere = counts["total"], counts["done"], counts["elsewhere"]
    text = f"{done} of {total} candidates measured"
    if elsewhere:
        text += f", {elsewhere} by other workers"
    return (done / total if total else 0.0), text
