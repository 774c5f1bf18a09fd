"""Celery tasks: thin wrappers; the work and its state live in services and the database."""

from __future__ import annotations

import logging

from billiard.exceptions import WorkerLostError
from celery import shared_task
from celery.signals import worker_ready
from celery.worker.request import Request
from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections
from kombu.exceptions import OperationalError as BrokerError

from .services import broker, training, training_queue

log = logging.getLogger(__name__)

__all__ = [
    "TrainingRequest",
    "measure_selection_candidate",
    "recover_trainings",
    "train_model",
]


class TrainingRequest(Request):
    """A training's request in the worker's main process: when the pool process running it
    dies (kill -9, out of memory), the training is released for the redelivered message
    (``training_queue.release_lost``) before Celery requeues it, so it runs again at once."""

    def on_failure(self, exc_info, send_failed_event=True, return_ok=False):
        exc = getattr(exc_info.exception, "exc", exc_info.exception)
        revoked = getattr(self, "_already_revoked", False) or getattr(
            self, "_already_cancelled", False
        )
        if isinstance(exc, WorkerLostError) or (isinstance(exc, SystemExit) and not revoked):
            try:
                close_old_connections()
                done = training_queue.release_lost(
                    trained_model_id=int(self.args[0]),
                    task_id=self.id or "",
                    max_attempts=settings.TRAINING_MAX_ATTEMPTS,
                )
                log.warning("training %s lost its pool process: %s", self.args[0], done)
            except Exception:  # never stop Celery from requeueing; the sweep is still there
                log.exception("could not release training %s", self.args)
        return super().on_failure(exc_info, send_failed_event, return_ok)


# Celery takes any Task attribute as an option (``Request`` here); celery-types list only some
@shared_task(  # type: ignore[call-overload]
    name=broker.TRAIN_MODEL,
    bind=True,
    acks_late=True,
    Request=TrainingRequest,
    time_limit=settings.TRAINING_TIME_LIMIT + 60,
    soft_time_limit=settings.TRAINING_TIME_LIMIT,
    autoretry_for=(OperationalError, InterfaceError, BrokerError),
    retry_backoff=True,
    max_retries=3,
)
def train_model(self, trained_model_id: int) -> None:
    """Fit the queued TrainedModel ``trained_model_id`` (progress and errors go to the DB)."""
    training.run_training(trained_model_id=trained_model_id, task_id=self.request.id or "")


@shared_task(
    name=broker.MEASURE_CANDIDATE,
    bind=True,
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=False,  # a lost candidate is measured by its training's own worker
    time_limit=settings.TRAINING_TIME_LIMIT + 60,
    soft_time_limit=settings.TRAINING_TIME_LIMIT,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=3,
)
def measure_selection_candidate(self, measurement_id: int) -> str:
    """Measure one candidate of a "let the data choose" training (routed to the experiments
    queue; a candidate already taken, measured or of a stopped training is skipped)."""
    return training.run_candidate_measurement(
        measurement_id=measurement_id, worker=self.request.hostname or "a worker"
    )


# Named as they were queued and scheduled before the tasks moved into the training app.
@shared_task(name="diagnosis.tasks.recover_trainings", ignore_result=True, time_limit=120)
def recover_trainings() -> dict[str, int]:
    """Re-queue trainings whose worker died and re-send those the queue never took or lost."""
    recovered = training_queue.recover_trainings(
        stale_seconds=settings.TRAINING_STALE_SECONDS,
        resend_after_seconds=settings.TRAINING_RESEND_SECONDS,
        max_attempts=settings.TRAINING_MAX_ATTEMPTS,
        send_grace_seconds=settings.TRAINING_SEND_GRACE_SECONDS,
    )
    return vars(recovered)


@worker_ready.connect
def recover_when_a_worker_starts(sender=None, **_kwargs) -> None:
    """A (re)started worker sweeps at once, so recovery never waits for beat."""
    recover_trainings.delay()
