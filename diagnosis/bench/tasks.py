"""The bench's Celery tasks: thin wrappers over ``bench.services.runner`` (ids in), on the
"experiments" queue (``config.celery`` routes them by the names ``services.broker`` defines)."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as BrokerError

from diagnosis.bench.services import runner as experiment_runner
from diagnosis.training.services import broker

__all__ = ["dispatch_experiment", "recover_experiments", "run_experiment_task"]


@shared_task(
    name=broker.RUN_EXPERIMENT_TASK,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    time_limit=settings.EXPERIMENT_TASK_TIME_LIMIT + 60,
    soft_time_limit=settings.EXPERIMENT_TASK_TIME_LIMIT,
    autoretry_for=(OperationalError, InterfaceError, BrokerError),
    retry_backoff=True,
    max_retries=3,
)
def run_experiment_task(self, task_id: int) -> str:
    """Compute one (learner, repeat, fold, matrix) task of an experiment (routed to the
    "experiments" queue; a task already done or running elsewhere is skipped)."""
    return experiment_runner.run_task(task_id=task_id, worker=self.request.hostname or "")


@shared_task(
    name=broker.DISPATCH_EXPERIMENT,
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=True,
    time_limit=900,
    autoretry_for=(OperationalError, InterfaceError, BrokerError),
    retry_backoff=True,
    max_retries=3,
)
def dispatch_experiment(experiment_id: int) -> int:
    """Send an experiment's unsent tasks to the experiments queue (after it was created)."""
    return experiment_runner.send_pending(experiment_id=experiment_id, only_unsent=True)


# The name beat's schedule and any message already queued use (from before the bench was an app).
@shared_task(name="diagnosis.tasks.recover_experiments", ignore_result=True, time_limit=300)
def recover_experiments() -> dict[str, int]:
    """Re-queue experiment tasks whose worker died and re-send those the queue lost."""
    recovered = experiment_runner.recover_experiments(
        stale_seconds=settings.EXPERIMENT_STALE_SECONDS,
        resend_after_seconds=settings.EXPERIMENT_RESEND_SECONDS,
        max_attempts=settings.EXPERIMENT_MAX_ATTEMPTS,
    )
    return vars(recovered)


@worker_ready.connect
def recover_experiments_when_a_worker_starts(sender=None, **_kwargs) -> None:
    """A (re)started worker sweeps the experiments at once, so recovery never waits for beat."""
    recover_experiments.delay()
