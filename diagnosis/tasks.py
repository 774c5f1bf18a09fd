"""Celery tasks: thin wrappers; the work and its state live in services and the database."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as BrokerError

from .services import training

__all__ = ["fail_stale_trainings", "train_model"]


@shared_task(
    bind=True,
    acks_late=True,
    time_limit=settings.TRAINING_TIME_LIMIT + 60,
    soft_time_limit=settings.TRAINING_TIME_LIMIT,
    autoretry_for=(OperationalError, InterfaceError, BrokerError),
    retry_backoff=True,
    max_retries=3,
)
def train_model(self, trained_model_id: int) -> None:
    """Fit the queued TrainedModel ``trained_model_id`` (progress and errors go to the DB)."""
    training.run_training(trained_model_id=trained_model_id, task_id=self.request.id or "")


@shared_task
def fail_stale_trainings() -> int:
    """Mark trainings whose heartbeat stopped as failed; returns how many."""
    return training.fail_stale_trainings(older_than_seconds=settings.TRAINING_STALE_SECONDS)
