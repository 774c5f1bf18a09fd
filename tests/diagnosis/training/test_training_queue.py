"""The training outbox: claims, re-queues of dead workers' runs, re-sends of lost messages."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import timezone

from diagnosis.clinic.selectors.models import models_for_user
from diagnosis.clinic.services import cases
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors.models import visible_model
from diagnosis.training.services import training, training_queue


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


def test_a_killed_anytime_run_keeps_its_model_as_interrupted_never_succeeded(
    toy_dataset, model_admin
):
    """A stalled anytime run that stored a model ends "interrupted" (cut short), not succeeded."""
    old = timezone.now() - timedelta(seconds=200)
    trained = training.create_training(
        user=model_admin, dataset=toy_dataset, learner="act", params={"r": 8}
    )
    TrainedModel.objects.filter(pk=trained.pk).update(
        status="running", heartbeat_at=old, model_json='{"fake": 1}', anytime_round="r=1"
    )
    assert _recover().kept == 1
    trained.refresh_from_db()
    assert trained.status == TrainedModel.INTERRUPTED and trained.is_finished
    assert not trained.is_ready and trained.model_json == '{"fake": 1}'
    assert "The worker stopped (died) at r=1 of 8; this model was cut short" in trained.error
    assert trained.progress_message.startswith("Interrupted at r=1 of 8: the worker died")


def test_an_interrupted_model_is_offered_to_no_clinician(
    toy_dataset, model_admin, clinician, trained_model
):
    """Cut short: kept for the admin, but not listed, found or startable for a clinician."""
    TrainedModel.objects.filter(pk=trained_model.pk).update(status=TrainedModel.INTERRUPTED)
    interrupted = TrainedModel.objects.get(pk=trained_model.pk)
    assert interrupted.model_json and not interrupted.is_ready
    clinicians = models_for_user(user=clinician)
    assert interrupted.pk not in {m.pk for m in clinicians}
    assert visible_model(user=clinician, pk=interrupted.pk) is None
    assert interrupted.pk in {m.pk for m in models_for_user(user=model_admin)}
    with pytest.raises(ValidationError, match="not ready"):
        cases.start_case(user=clinician, trained_model=interrupted)


def test_a_killed_pool_process_of_an_anytime_run_ends_it_interrupted(toy_dataset, model_admin):
    """release_lost (the pool child died) keeps a stored anytime model as interrupted too."""
    trained = training.create_training(
        user=model_admin, dataset=toy_dataset, learner="act", params={"r": 4}
    )
    TrainedModel.objects.filter(pk=trained.pk).update(
        status="running", model_json='{"fake": 1}', anytime_round="r=2", attempts=1
    )
    done = training_queue.release_lost(
        trained_model_id=trained.pk, task_id=trained.celery_task_id, max_attempts=3
    )
    trained.refresh_from_db()
    assert done == "kept" and trained.status == TrainedModel.INTERRUPTED
    assert "killed" in trained.error and "at r=2 of 4; this model was cut short" in trained.error


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


def test_a_queued_training_whose_message_redis_lost_is_sent_again_at_once(
    toy_dataset, model_admin, broker_queue
):
    """Sent seconds ago but gone from Redis: re-sent by the next sweep, not 15 minutes later;
    one whose message is still in Redis is left alone (no duplicate)."""
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    waiting = _queued(toy_dataset, model_admin)
    lost = _queued(toy_dataset, model_admin)
    assert training_queue.send(waiting.pk) and training_queue.send(lost.pk)
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    for raw in client.lrange(queue, 0, -1):
        if lost.celery_task_id.encode() in raw:
            client.lrem(queue, 1, raw)  # what a Redis restart did to this one message
    assert broker_queue() == 1
    just_after = timezone.now() - timedelta(seconds=11)  # past the grace after a send
    TrainedModel.objects.filter(pk__in=[waiting.pk, lost.pk]).update(enqueued_at=just_after)
    recovered = training_queue.recover_trainings(
        stale_seconds=30, resend_after_seconds=900, max_attempts=3, send_grace_seconds=10
    )
    assert recovered.sent == 1 and broker_queue() == 2
    held = training_queue.broker.held_task_ids(settings.CELERY_TASK_DEFAULT_QUEUE)
    assert {waiting.celery_task_id, lost.celery_task_id} <= held


def test_a_message_a_worker_holds_unacknowledged_counts_as_live(
    toy_dataset, model_admin, broker_queue
):
    """A task delivered to a worker and not yet acknowledged (Redis's unacked hash) is live."""
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    trained = _queued(toy_dataset, model_admin)
    assert training_queue.send(trained.pk)
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    raw = client.rpop(queue)  # as a worker's BRPOP takes it, then kombu files it as unacked
    tag = "test-delivery-tag"
    client.hset("unacked", tag, json.dumps([json.loads(raw), queue, queue]))
    try:
        assert trained.celery_task_id in training_queue.broker.held_task_ids(queue)
        TrainedModel.objects.filter(pk=trained.pk).update(
            enqueued_at=timezone.now() - timedelta(seconds=60)
        )
        assert _recover().sent == 0 and broker_queue() == 0
    finally:
        client.hdel("unacked", tag)


def test_a_queued_row_without_a_task_id_is_resent_by_age_only(
    toy_dataset, model_admin, broker_queue
):
    """No task id to look for in Redis: re-sent after TRAINING_RESEND_SECONDS, not every sweep."""
    recent = _queued(
        toy_dataset,
        model_admin,
        celery_task_id="",
        enqueued_at=timezone.now() - timedelta(seconds=60),
    )
    old = _queued(
        toy_dataset,
        model_admin,
        celery_task_id="",
        enqueued_at=timezone.now() - timedelta(seconds=1000),
    )
    assert _recover().sent == 1 and broker_queue() == 1
    recent.refresh_from_db()
    old.refresh_from_db()
    assert recent.enqueued_at < timezone.now() - timedelta(seconds=59)
    assert old.enqueued_at > timezone.now() - timedelta(seconds=60)
