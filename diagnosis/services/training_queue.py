"""Getting a training to a worker, and back again when a worker or the queue loses it.

The database is the outbox: a training is queued there first, then handed to Celery. Nothing
is ever lost for good, because a sweep (Celery beat every minute, and every worker as it
starts) re-sends what the queue never took or lost, and re-queues a run whose worker died.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ..models import TrainedModel
from . import broker, learner_registry

__all__ = ["Recovered", "claim", "recover_trainings", "release_lost", "send"]

log = logging.getLogger(__name__)

UNREACHABLE = "The task queue cannot be reached; the training will be sent when it is back"


def send(trained_model_id: int) -> bool:
    """Hand a queued training to Celery; if the broker is down it stays queued for the sweep."""
    task_id = (
        TrainedModel.objects.filter(pk=trained_model_id, status=TrainedModel.QUEUED)
        .values_list("celery_task_id", flat=True)
        .first()
    )
    if task_id is None:  # started, finished or cancelled meanwhile
        return False
    try:
        broker.send(broker.TRAIN_MODEL, args=[trained_model_id], task_id=task_id or None)
    except Exception as exc:  # any broker failure: the row stays queued and is sent later
        log.warning("could not queue training %s: %s", trained_model_id, exc)
        TrainedModel.objects.filter(pk=trained_model_id, status=TrainedModel.QUEUED).update(
            enqueued_at=None, progress_message=UNREACHABLE
        )
        return False
    sent = TrainedModel.objects.filter(pk=trained_model_id, status=TrainedModel.QUEUED)
    sent.update(enqueued_at=timezone.now())
    sent.filter(progress_message=UNREACHABLE).update(progress_message="Waiting for a worker")
    return True


def claim(*, trained_model_id: int, stale_seconds: float, max_attempts: int) -> int | None:
    """Start a training for this worker: its attempt number, or None when it is not ours to run.

    A queued training is claimed; so is a running one whose worker stopped beating (the queue
    re-delivered a killed worker's task). Exactly one of several copies of a task wins.
    """
    now = timezone.now()
    stalled = Q(
        status=TrainedModel.RUNNING, heartbeat_at__lt=now - timedelta(seconds=stale_seconds)
    )
    with transaction.atomic():
        trained = (
            TrainedModel.objects.select_for_update()
            .filter(Q(status=TrainedModel.QUEUED) | stalled, pk=trained_model_id)
            .first()
        )
        if trained is None:
            return None
        if trained.attempts >= max_attempts:
            _give_up(trained, now)
            return None
        attempt = trained.attempts + 1
        TrainedModel.objects.filter(pk=trained.pk).update(
            status=TrainedModel.RUNNING,
            started_at=now,
            heartbeat_at=now,
            progress=0.0,
            progress_message="Starting" if attempt == 1 else f"Starting again (attempt {attempt})",
            error="",
            attempts=attempt,
        )
    return attempt


@dataclass(frozen=True)
class Recovered:
    """What one sweep did."""

    requeued: int  # running, worker gone: queued again
    kept: int  # anytime runs ended with their best model so far
    failed: int  # out of attempts
    sent: int  # queued rows handed (again) to the broker


def recover_trainings(
    *, stale_seconds: float, resend_after_seconds: float, max_attempts: int
) -> Recovered:
    """Re-queue runs whose worker stopped beating, and re-send what the queue never took."""
    if stale_seconds <= 0 or resend_after_seconds <= 0 or max_attempts < 1:
        raise ValueError("the limits must be positive")
    now = timezone.now()
    requeued = kept = failed = 0
    anytime = [key for key, spec in learner_registry.LEARNERS.items() if spec.anytime]
    with transaction.atomic():
        stalled = TrainedModel.objects.select_for_update(skip_locked=True).filter(
            status=TrainedModel.RUNNING, heartbeat_at__lt=now - timedelta(seconds=stale_seconds)
        )
        for trained in stalled:
            if trained.learner in anytime and trained.model_json:
                # An anytime training stores its best model as it goes: that model is kept.
                TrainedModel.objects.filter(pk=trained.pk).update(
                    status=TrainedModel.SUCCEEDED,
                    progress=1.0,
                    finished_at=now,
                    error=f"{_stopped(stale_seconds)}; the best model so far is kept.",
                    progress_message="Interrupted; using the best model so far",
                )
                kept += 1
            elif trained.attempts >= max_attempts:
                _give_up(trained, now)
                failed += 1
            else:
                TrainedModel.objects.filter(pk=trained.pk).update(
                    status=TrainedModel.QUEUED,
                    enqueued_at=None,
                    progress=0.0,
                    progress_message=(
                        f"{_stopped(stale_seconds)}; queued again "
                        f"(attempt {trained.attempts + 1} of {max_attempts})"
                    ),
                )
                requeued += 1
    unsent = TrainedModel.objects.filter(status=TrainedModel.QUEUED).filter(
        Q(enqueued_at__isnull=True)
        | Q(enqueued_at__lt=now - timedelta(seconds=resend_after_seconds))
    )
    sent = sum(send(pk) for pk in unsent.values_list("pk", flat=True))
    return Recovered(requeued=requeued, kept=kept, failed=failed, sent=sent)


LOST = "The worker process running it was killed (kill -9, or out of memory)"


def release_lost(*, trained_model_id: int, task_id: str, max_attempts: int) -> str:
    """The pool process running this training died: make the redelivered task run it at once.

    Called by the worker's main process when its child is lost (``tasks.TrainingRequest``),
    before Celery puts the message back in the queue.  Waiting for the heartbeat to go stale
    would leave the training "running" with no one running it, since the redelivered copy
    finds it claimed.  Queued again (the attempt counts), or, with no attempt left, failed
    saying why; an anytime training keeps its best model so far.  Only the attempt of
    ``task_id`` is touched.  Returns what was done: requeued / kept / failed / not ours.
    """
    now = timezone.now()
    with transaction.atomic():
        trained = (
            TrainedModel.objects.select_for_update()
            .filter(pk=trained_model_id, status=TrainedModel.RUNNING)
            .first()
        )
        if trained is None or (task_id and trained.celery_task_id not in ("", task_id)):
            return "not ours"
        spec = learner_registry.LEARNERS.get(trained.learner)
        rows = TrainedModel.objects.filter(pk=trained.pk)
        if spec is not None and spec.anytime and trained.model_json:
            rows.update(
                status=TrainedModel.SUCCEEDED,
                progress=1.0,
                finished_at=now,
                error=f"{LOST}; the best model so far is kept.",
                progress_message="Interrupted; using the best model so far",
            )
            return "kept"
        if trained.attempts >= max_attempts:
            rows.update(
                status=TrainedModel.FAILED,
                finished_at=now,
                error=(
                    f"{LOST} during attempt {trained.attempts} of {max_attempts}; no attempt "
                    "is left: start the training again (with a smaller dataset or settings if "
                    "memory ran out)."
                ),
                progress_message="Failed",
            )
            return "failed"
        rows.update(
            status=TrainedModel.QUEUED,
            enqueued_at=now,  # the message goes straight back to the queue
            progress=0.0,
            progress_message=(
                f"{LOST}; queued again (attempt {trained.attempts + 1} of {max_attempts})"
            ),
        )
        return "requeued"


def _stopped(stale_seconds: float) -> str:
    return (
        f"The worker stopped reporting for more than {stale_seconds:g} seconds "
        "(it was probably restarted or killed)"
    )


def _give_up(trained: TrainedModel, now) -> None:
    TrainedModel.objects.filter(pk=trained.pk).update(
        status=TrainedModel.FAILED,
        finished_at=now,
        error=(
            f"The training was started {trained.attempts} times and its worker stopped each "
            "time (killed, or out of memory?); start the training again."
        ),
        progress_message="Failed",
    )
