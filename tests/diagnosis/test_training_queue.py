"""The training outbox: claims, re-queues of dead workers' runs, re-sends of lost messages."""

from __future__ import annotations

from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.utils import timezone

from diagnosis.models import TrainedModel
from diagnosis.services import training, training_queue


@pytest.fixture
def broker_queue():
    """The length of the real Redis list Celery's default queue lives in, emptied first."""
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    client.delete(queue)
    yield lambda: client.llen(queue)
    client.delete(queue)


def _queued(toy_dataset, model_admin, **fields) -> TrainedModel:
    trained = training.create_training(
        user=model_admin, dataset=toy_dataset, learner="eg2", params={}
    )
    TrainedModel.objects.filter(pk=trained.pk).update(**fields)
    trained.refresh_from_db()
    return trained


def _recover():
    return training_queue.recover_trainings(
        stale_seconds=120, resend_after_seconds=900, max_attempts=3
    )


def test_send_hands_the_task_to_redis_and_marks_it_enqueued(toy_dataset, model_admin, broker_queue):
    """A queued training sent to the broker is one message in Redis, with enqueued_at set."""
    trained = _queued(toy_dataset, model_admin)
    assert trained.enqueued_at is None
    assert training_queue.send(trained.pk) is True
    trained.refresh_from_db()
    assert broker_queue() == 1 and trained.enqueued_at is not None
    assert trained.progress_message == "Waiting for a worker"


def test_only_one_of_two_copies_of_a_task_claims_the_training(toy_dataset, model_admin):
    """The first claim starts attempt 1; a duplicate message finds it running and does nothing."""
    trained = _queued(toy_dataset, model_admin)
    first = training_queue.claim(trained_model_id=trained.pk, stale_seconds=120, max_attempts=3)
    second = training_queue.claim(trained_model_id=trained.pk, stale_seconds=120, max_attempts=3)
    trained.refresh_from_db()
    assert (first, second) == (1, None)
    assert trained.status == TrainedModel.RUNNING and trained.attempts == 1


def test_a_redelivered_task_of_a_dead_worker_claims_the_stalled_run(toy_dataset, model_admin):
    """A running training whose heartbeat is older than the limit is claimed again (attempt 2)."""
    old = timezone.now() - timedelta(seconds=200)
    trained = _queued(toy_dataset, model_admin, status="running", heartbeat_at=old, attempts=1)
    attempt = training_queue.claim(trained_model_id=trained.pk, stale_seconds=120, max_attempts=3)
    trained.refresh_from_db()
    assert attempt == 2 and trained.progress_message == "Starting again (attempt 2)"


def test_a_zombie_run_cannot_store_its_result_over_the_new_attempt(toy_dataset, model_admin):
    """run_training's outcome is stored only by the attempt that holds the claim."""
    trained = _queued(toy_dataset, model_admin, status="running", attempts=2)
    training._finish(trained.pk, 1, status=TrainedModel.FAILED, error="from attempt 1")
    trained.refresh_from_db()
    assert trained.status == TrainedModel.RUNNING and trained.error == ""
    training._finish(trained.pk, 2, status=TrainedModel.FAILED, error="from attempt 2")
    trained.refresh_from_db()
    assert trained.status == TrainedModel.FAILED and trained.error == "from attempt 2"


def test_a_dead_workers_training_is_queued_again_and_resent(toy_dataset, model_admin, broker_queue):
    """Silent for longer than the limit with attempts left: back to queued and in Redis again."""
    old = timezone.now() - timedelta(seconds=200)
    stalled = _queued(toy_dataset, model_admin, status="running", heartbeat_at=old, attempts=1)
    fresh = _queued(toy_dataset, model_admin, status="running", heartbeat_at=timezone.now())
    recovered = _recover()
    stalled.refresh_from_db()
    fresh.refresh_from_db()
    assert (recovered.requeued, recovered.failed, recovered.sent) == (1, 0, 1)
    assert stalled.status == TrainedModel.QUEUED and stalled.enqueued_at is not None
    assert "stopped reporting for more than 120 seconds" in stalled.progress_message
    assert fresh.status == TrainedModel.RUNNING
    assert broker_queue() == 1


def test_a_training_out_of_attempts_fails_saying_so(toy_dataset, model_admin):
    """A run whose worker died on its last allowed attempt is failed with the count."""
    old = timezone.now() - timedelta(seconds=200)
    trained = _queued(toy_dataset, model_admin, status="running", heartbeat_at=old, attempts=3)
    assert _recover().failed == 1
    trained.refresh_from_db()
    assert trained.status == TrainedModel.FAILED
    assert "started 3 times and its worker stopped each time" in trained.error


def test_a_killed_anytime_run_keeps_its_best_model(toy_dataset, model_admin):
    """A stalled anytime run that stored a model ends succeeded with it instead of re-running."""
    old = timezone.now() - timedelta(seconds=200)
    trained = training.create_training(
        user=model_admin, dataset=toy_dataset, learner="act", params={"r": 2}
    )
    TrainedModel.objects.filter(pk=trained.pk).update(
        status="running", heartbeat_at=old, model_json='{"fake": 1}', anytime_round="r=1"
    )
    assert _recover().kept == 1
    trained.refresh_from_db()
    assert trained.status == TrainedModel.SUCCEEDED and "best model so far" in trained.error


def test_queued_trainings_the_broker_never_took_or_lost_are_sent_again(
    toy_dataset, model_admin, broker_queue
):
    """Never sent (broker was down), or sent long ago and never started: both are re-sent."""
    never_sent = _queued(toy_dataset, model_admin)
    long_ago = timezone.now() - timedelta(seconds=1000)
    lost = _queued(toy_dataset, model_admin, enqueued_at=long_ago)
    recent = _queued(toy_dataset, model_admin, enqueued_at=timezone.now())
    assert _recover().sent == 2
    for trained in (never_sent, lost, recent):
        trained.refresh_from_db()
    assert never_sent.enqueued_at is not None and lost.enqueued_at > long_ago
    assert broker_queue() == 2


def test_a_training_requested_while_the_broker_is_down_waits_queued(
    toy_dataset, model_admin, broker_queue
):
    """Broker unreachable: send() leaves the training queued, saying why; a later sweep sends it."""
    from config.celery import app

    trained = _queued(toy_dataset, model_admin)

    # A broker address where nothing listens: the same refusal a stopped Redis gives.
    def fresh_connections():  # Celery caches its connection and producer pools
        app._pool = None
        app.amqp._producer_pool = None

    app.conf.broker_url = "redis://127.0.0.1:9/0"
    fresh_connections()
    try:
        assert training_queue.send(trained.pk) is False
    finally:
        app.conf.broker_url = settings.CELERY_BROKER_URL
        fresh_connections()
    trained.refresh_from_db()
    assert trained.status == TrainedModel.QUEUED and trained.enqueued_at is None
    assert trained.progress_message == training_queue.UNREACHABLE
    assert _recover().sent == 1 and broker_queue() == 1
