"""A worker killed with -9 mid-training: the next worker to start finishes the training."""

from __future__ import annotations

import time

import pytest
from celery_workers import (
    TIMEOUT,
    kill_worker,
    require_services,
    start_worker,
    stop_worker,
    wait_until_finished,
    worker_database_url,
    xor_dataset,
)

from diagnosis.training.models import TrainedModel
from diagnosis.training.services.training import request_training

pytestmark = [pytest.mark.celery_worker, pytest.mark.slow]

# Short limits for the workers of this test, so it takes seconds rather than minutes.
# The sweeps' waits, shortened so a lost message or a dead worker is acted on within the test
# (the send grace: a queued message younger than it may still be on its way to the broker).
QUICK_RECOVERY = {
    "TRAINING_STALE_SECONDS": "3",
    "TRAINING_RESEND_SECONDS": "2",
    "TRAINING_SEND_GRACE_SECONDS": "2",
}


@pytest.mark.django_db(transaction=True)
def test_a_training_whose_worker_is_killed_is_finished_by_the_next_worker(model_admin, tmp_path):
    """kill -9 during a fit, then a new worker: it re-queues and runs it (attempt 2), no beat."""
    broker = require_services()
    from config.celery import app

    app.control.purge()
    url = worker_database_url()
    dataset = xor_dataset("XOR to be killed")
    first = start_worker(
        database_url=url,
        broker=broker,
        log=tmp_path / "first.log",
        name="doomed",
        env=QUICK_RECOVERY,
    )
    try:
        trained = request_training(
            user=model_admin,
            dataset=dataset,
            learner="icet",
            params={"population": 20, "generations": 40},
            error_matrix=dataset.error_matrices.get(),
        )
        deadline = time.monotonic() + TIMEOUT
        while trained.status != TrainedModel.RUNNING:
            assert time.monotonic() < deadline, "the first worker never started the training"
            time.sleep(0.2)
            trained.refresh_from_db()
        time.sleep(1.0)
        trained.refresh_from_db()
        assert trained.status == TrainedModel.RUNNING, "the fit ended before it could be killed"
    finally:
        kill_worker(first)
    time.sleep(4)  # the heartbeat is now older than TRAINING_STALE_SECONDS
    second = start_worker(
        database_url=url,
        broker=broker,
        log=tmp_path / "second.log",
        name="rescuer",
        env=QUICK_RECOVERY,
    )
    try:
        trained = wait_until_finished(trained, tmp_path / "second.log")
    finally:
        stop_worker(second)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    assert trained.attempts == 2 and trained.model_json


@pytest.mark.django_db(transaction=True)
def test_a_queued_training_lost_with_the_broker_is_sent_again_when_a_worker_starts(
    model_admin, toy_dataset, tmp_path
):
    """The broker forgot the message (Redis restarted): a starting worker re-sends and runs it."""
    broker = require_services()
    from config.celery import app

    trained = request_training(user=model_admin, dataset=toy_dataset, learner="eg2", params={})
    trained.refresh_from_db()
    assert trained.enqueued_at is not None
    app.control.purge()  # what a Redis restart does to a queue it keeps only in memory
    time.sleep(2.5)  # older than this test's TRAINING_RESEND_SECONDS and send grace
    worker = start_worker(
        database_url=worker_database_url(),
        broker=broker,
        log=tmp_path / "w.log",
        name="fresh",
        env=QUICK_RECOVERY,
    )
    try:
        trained = wait_until_finished(trained, tmp_path / "w.log")
    finally:
        stop_worker(worker)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    assert trained.attempts == 1
