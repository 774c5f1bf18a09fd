"""Getting a training to a worker, and back again when a worker or the queue loses it.

The database is the outbox: a training is queued there first, then handed to Celery. Nothing
is ever lost for good, because a sweep (Celery beat every few seconds, and every worker as it
starts) re-sends what the queue never took or lost (its task id is nowhere in the broker's
own state), and re-queues a run whose worker died. A dead worker's anytime run that had stored
a model ends "interrupted": the partial model is kept for review, never called a success.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from diagnosis.shared import learner_registry

from ..models import TrainedModel
from . import broker

__all__ = ["Recovered", "claim", "cut_short", "recover_trainings", "release_lost", "send"]

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
    *,
    stale_seconds: float,
    resend_after_seconds: float,
    max_attempts: int,
    send_grace_seconds: float = 10.0,
) -> Recovered:
    """Re-queue runs whose worker stopped beating, and re-send what the queue never took or lost.

    A queued training is sent again when it never was, or when its task id is neither waiting
    in the broker nor held by a worker (``broker.held_task_ids``) ``send_grace_seconds`` after
    it was sent (Redis and the filesystem queue are both read). Where the broker's state cannot
    be read, after ``resend_after_seconds``.
    """
    if stale_seconds <= 0 or resend_after_seconds <= 0 or max_attempts < 1:
        raise ValueError("the limits must be positive")
    if send_grace_seconds < 0:
        raise ValueError("the grace after a send cannot be negative")
    # The broker first: a message sent after this read is younger than the grace.
    held = _held_training_ids()
    now = timezone.now()
    requeued = kept = failed = 0
    anytime = [key for key, spec in learner_registry.LEARNERS.items() if spec.anytime]
    with transaction.atomic():
        stalled = TrainedModel.objects.select_for_update(skip_locked=True).filter(
            status=TrainedModel.RUNNING, heartbeat_at__lt=now - timedelta(seconds=stale_seconds)
        )
        for trained in stalled:
            if trained.learner in anytime and trained.model_json:
                # An anytime training stores its best model as it goes: it is kept, cut short.
                cut_short(trained, reason=_stopped(stale_seconds), now=now)
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
    queued = TrainedModel.objects.filter(status=TrainedModel.QUEUED)
    aged = Q(enqueued_at__lt=now - timedelta(seconds=resend_after_seconds))
    if held is None:
        unsent = Q(enqueued_at__isnull=True) | aged
    else:
        # a row without a task id cannot be looked for in the broker: the age rule for it
        lost = (
            Q(enqueued_at__lt=now - timedelta(seconds=send_grace_seconds))
            & ~Q(celery_task_id="")
            & ~Q(celery_task_id__in=held)
        )
        unsent = Q(enqueued_at__isnull=True) | lost | (Q(celery_task_id="") & aged)
    sent = sum(send(pk) for pk in queued.filter(unsent).values_list("pk", flat=True))
    return Recovered(requeued=requeued, kept=kept, failed=failed, sent=sent)


def _held_training_ids() -> frozenset[str] | None:
    """The task ids the broker holds on the trainings' queue; None when it cannot tell."""
    try:
        return broker.held_task_ids(broker.queue_of(broker.TRAIN_MODEL))
    except Exception as exc:  # broker down: sending fails too, and is retried next sweep
        log.warning("could not read the task queue's state: %s", exc)
        return None


def cut_short(trained: TrainedModel, *, reason: str, now=None) -> None:
    """End a running anytime training whose worker died after it stored a model: "interrupted".

    Its partial model (the best round finished) is kept for an admin to review; it is not
    usable for cases (``TrainedModel.is_ready``). The page says at which round the worker
    died out of how many were asked, and that the model was cut short.
    """
    at = _round_reached(trained)
    TrainedModel.objects.filter(pk=trained.pk).update(
        status=TrainedModel.INTERRUPTED,
        finished_at=now or timezone.now(),
        error=(
            f"{reason}. The worker stopped (died) at {at}; this model was cut short: it is "
            "kept for review and is not offered to clinicians."
        ),
        progress_message=f"Interrupted at {at}: the worker died; this model was cut short",
    )


def _round_reached(trained: TrainedModel) -> str:
    """ "r=1 of 8": the anytime round whose model was stored, of the value asked for."""
    spec = learner_registry.LEARNERS.get(trained.learner)
    knob = spec.anytime_param if spec is not None else ""
    target = (trained.params or {}).get(knob)
    if target is None and spec is not None:
        try:
            target = learner_registry.clean_params(trained.learner, trained.params).get(knob)
        except Exception:  # an old row's parameters: say what is known
            target = None
    reached = trained.anytime_round or "its first round"
    return f"{reached} of {target}" if target is not None else reached


LOST = "The worker process running it was killed (kill -9, or out of memory)"


def release_lost(*, trained_model_id: int, task_id: str, max_attempts: int) -> str:
    """The pool process running this training died: make the redelivered task run it at once.

    Called by the worker's main process when its child is lost (``tasks.TrainingRequest``),
    before Celery puts the message back in the queue.  Waiting for the heartbeat to go stale
    would leave the training "running" with no one running it, since the redelivered copy
    finds it claimed.  Queued again (the attempt counts), or, with no attempt left, failed
    saying why; an anytime training that stored a model ends "interrupted" with it.  Only the
    attempt of ``task_id`` is touched.  Returns what was done: requeued / kept / failed / not ours.
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
            cut_short(trained, reason=LOST, now=now)
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
