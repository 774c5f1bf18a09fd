"""The filesystem broker (bin/run without Redis): a lost training message is seen missing from
its queue folder and re-sent by the next sweep, not after TRAINING_RESEND_SECONDS."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from celery import Celery
from django.conf import settings
from django.utils import timezone

from config import celery_app
from diagnosis.training.models import TrainedModel
from diagnosis.training.services import broker, training, training_queue


@pytest.fixture
def folder_broker(tmp_path):
    """A Celery app on kombu's filesystem transport in ``tmp_path/celery`` (as
    config/settings.py configures it without REDIS_URL, with DIAGNOSIS_VAR_DIR=tmp_path),
    current for the test; its queue folder."""
    root = tmp_path / "celery"
    queue = root / "queue"
    for sub in ("queue", "processed", "control"):
        (root / sub).mkdir(parents=True)
    app = Celery("folder-broker-test", set_as_current=False)
    app.conf.update(
        broker_url="filesystem://",
        broker_transport_options={
            "data_folder_in": str(queue),
            "data_folder_out": str(queue),
            "processed_folder": str(root / "processed"),
            "store_processed": False,
            "control_folder": str(root / "control"),
        },
        task_default_queue=settings.CELERY_TASK_DEFAULT_QUEUE,
        task_routes=celery_app.conf.task_routes,
    )
    app.set_current()
    try:
        yield queue
    finally:
        celery_app.set_current()
        app.close()


def _files(queue: Path) -> list[Path]:
    return sorted(queue.glob(f"*.{settings.CELERY_TASK_DEFAULT_QUEUE}.msg"))


def _sent_seconds_ago(toy_dataset, model_admin, seconds: float) -> TrainedModel:
    trained = training.create_training(
        user=model_admin, dataset=toy_dataset, learner="eg2", params={}
    )
    assert trained.celery_task_id and training_queue.send(trained.pk)  # a message file
    TrainedModel.objects.filter(pk=trained.pk).update(
        enqueued_at=timezone.now() - timedelta(seconds=seconds)
    )
    trained.refresh_from_db()
    return trained


def _sweep():
    """One sweep with the product's own limits (beat runs it every TRAINING_SWEEP_SECONDS)."""
    return training_queue.recover_trainings(
        stale_seconds=settings.TRAINING_STALE_SECONDS,
        resend_after_seconds=settings.TRAINING_RESEND_SECONDS,
        max_attempts=settings.TRAINING_MAX_ATTEMPTS,
        send_grace_seconds=settings.TRAINING_SEND_GRACE_SECONDS,
    )


def test_the_queue_folder_is_read_as_the_broker_state(folder_broker):
    """A message file in the folder is a held task id; other queues' files, half-written and
    unreadable files are not; an empty folder holds nothing (not "unknown")."""
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    assert broker.held_task_ids(queue) == frozenset()
    broker.send(broker.TRAIN_MODEL, args=[1], task_id="folder-held-1")
    broker.send(broker.RUN_EXPERIMENT_TASK, args=[2], task_id="on-the-experiments-queue")
    (folder_broker / f"9_half.{queue}.msg").write_text('{"headers": {"id": "half')
    (folder_broker / f"9_empty.{queue}.msg").write_bytes(b"")
    assert len(_files(folder_broker)) == 3
    assert broker.held_task_ids(queue) == frozenset({"folder-held-1"})


def test_a_lost_message_file_is_sent_again_by_the_next_sweep(
    folder_broker, toy_dataset, model_admin
):
    """Two queued trainings sent past the grace: the one whose file is still in the folder is
    left alone; the one whose file was lost is sent again at once (a new file with its task id),
    though TRAINING_RESEND_SECONDS (900) has not passed."""
    grace = settings.TRAINING_SEND_GRACE_SECONDS
    assert grace + settings.TRAINING_SWEEP_SECONDS <= 60  # a lost message is re-sent within 60 s
    waiting = _sent_seconds_ago(toy_dataset, model_admin, grace + 1)
    lost = _sent_seconds_ago(toy_dataset, model_admin, grace + 1)
    files = _files(folder_broker)
    assert len(files) == 2
    for path in files:
        if lost.celery_task_id in path.read_text():
            path.unlink()  # what emptying var/celery/queue/ (or a lost disk write) does
    assert settings.TRAINING_RESEND_SECONDS > grace + 1
    assert _sweep().sent == 1
    held = broker.held_task_ids(settings.CELERY_TASK_DEFAULT_QUEUE)
    assert held == frozenset({waiting.celery_task_id, lost.celery_task_id})
    assert _sweep().sent == 0  # both held now: no duplicate


def test_a_message_just_sent_is_given_the_grace(folder_broker, toy_dataset, model_admin):
    """A send younger than TRAINING_SEND_GRACE_SECONDS whose file is not (yet or any more) in
    the folder, as when a worker is taking it, is not sent twice."""
    trained = _sent_seconds_ago(toy_dataset, model_admin, 0)
    for path in _files(folder_broker):
        path.unlink()  # a worker took the file and has not claimed the training yet
    assert _sweep().sent == 0
    TrainedModel.objects.filter(pk=trained.pk).update(
        enqueued_at=timezone.now() - timedelta(seconds=settings.TRAINING_SEND_GRACE_SECONDS + 1)
    )
    assert _sweep().sent == 1


@pytest.mark.celery_worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_on_the_folder_runs_a_training_whose_message_was_lost_within_60_s(
    folder_broker, toy_dataset, model_admin, tmp_path
):
    """bin/run without Redis: a queued training's message file is lost before any worker takes
    it; a real worker with beat (the settings' sweep and grace) sends it again and trains it,
    within 60 s of the loss."""
    import time

    from celery_workers import start_worker, stop_worker, wait_until_finished, worker_database_url
    from django.db import connection

    from diagnosis.training.services.training import request_training

    if connection.vendor != "postgresql":
        pytest.fail("this test needs PostgreSQL (run it with bin/test)")
    trained = request_training(user=model_admin, dataset=toy_dataset, learner="eg2", params={})
    files = _files(folder_broker)
    assert len(files) == 1 and trained.celery_task_id in files[0].read_text()
    files[0].unlink()  # lost: what emptying var/celery/queue/ does
    lost_at = time.monotonic()
    log = tmp_path / "folder-worker.log"
    worker = start_worker(
        database_url=worker_database_url(),
        broker="filesystem://",
        log=log,
        name="folder-worker",
        env={"REDIS_URL": "", "DIAGNOSIS_VAR_DIR": str(tmp_path)},
        beat=True,
    )
    try:
        trained = wait_until_finished(trained, log)
        took = time.monotonic() - lost_at
    finally:
        stop_worker(worker)
    print(f"\nfilesystem broker: the lost training finished {took:.1f} s after the loss")
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    assert took < 60, f"{took:.0f} s:\n{log.read_text(errors='replace')[-3000:]}"
