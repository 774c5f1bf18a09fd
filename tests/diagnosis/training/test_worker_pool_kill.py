"""kill -9 of the Celery POOL process only (the worker's main process lives on) mid-training.

The main process sees its child die (WorkerLostError), puts the training back in the queue
(``training_queue.release_lost``) and the redelivered task runs it again at once, in a fresh
pool process of the same worker: no beat, no new worker, nothing left "running".  When no
attempt is left, the training ends "failed" with the reason instead.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from celery_workers import (
    TIMEOUT,
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

# No sweep can rescue the run here: a heartbeat is stale only after an hour, and no worker
# starts after the kill, so only the worker's own handling of its lost child can.
NO_SWEEP = {"TRAINING_STALE_SECONDS": "3600", "TRAINING_RESEND_SECONDS": "3600"}


def pool_children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (the prefork pool of a worker)."""
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces, so split after its ")".
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            children.append(int(entry.name))
    return children


def _running(trained: TrainedModel) -> TrainedModel:
    deadline = time.monotonic() + TIMEOUT
    while trained.status != TrainedModel.RUNNING:
        assert time.monotonic() < deadline, f"the worker never started training {trained.pk}"
        time.sleep(0.2)
        trained.refresh_from_db()
    time.sleep(1.0)  # well into the fit
    trained.refresh_from_db()
    assert trained.status == TrainedModel.RUNNING, "the fit ended before it could be killed"
    return trained


def _kill_the_pool_process(worker) -> int:
    (child,) = pool_children(worker.pid)  # --concurrency=1: one pool process
    os.kill(child, signal.SIGKILL)
    return child


def _start(tmp_path, name: str, env: dict) -> tuple:
    from config.celery import app

    app.control.purge()
    log = tmp_path / f"{name}.log"
    worker = start_worker(
        database_url=worker_database_url(),
        broker=require_services(),
        log=log,
        name=name,
        env=env,
    )
    return worker, log


def _train(model_admin, name: str) -> TrainedModel:
    dataset = xor_dataset(name)
    return request_training(
        user=model_admin,
        dataset=dataset,
        learner="icet",
        params={"population": 20, "generations": 40},
        error_matrix=dataset.error_matrices.get(),
    )


@pytest.mark.django_db(transaction=True)
def test_a_killed_pool_process_has_its_training_run_again_by_the_same_worker(model_admin, tmp_path):
    """kill -9 of the pool child: same worker, a new child, the training finishes (attempt 2)."""
    worker, log = _start(tmp_path, "pool-kill", NO_SWEEP)
    try:
        trained = _running(_train(model_admin, "XOR pool killed"))
        killed = _kill_the_pool_process(worker)
        trained = wait_until_finished(trained, log)
        assert worker.poll() is None, "the worker's main process must live on"
        assert killed not in pool_children(worker.pid)  # a fresh pool process did the work
    finally:
        stop_worker(worker)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    assert trained.attempts == 2 and trained.model_json and trained.error == ""
    text = log.read_text(errors="replace")
    assert "WorkerLostError" in text or "exited with 'signal 9 (SIGKILL)'" in text


@pytest.mark.django_db(transaction=True)
def test_a_killed_pool_process_with_no_attempt_left_ends_the_training_with_the_reason(
    model_admin, tmp_path
):
    """With one attempt allowed, the kill ends the training "failed", saying why: never stuck."""
    worker, log = _start(tmp_path, "pool-kill-last", {**NO_SWEEP, "TRAINING_MAX_ATTEMPTS": "1"})
    try:
        trained = _running(_train(model_admin, "XOR pool killed once"))
        _kill_the_pool_process(worker)
        trained = wait_until_finished(trained, log)
        time.sleep(2)  # the redelivered task has come and gone: it must not revive the run
        trained.refresh_from_db()
        assert worker.poll() is None
    finally:
        stop_worker(worker)
    assert trained.status == TrainedModel.FAILED and trained.attempts == 1
    assert "process running it was killed" in trained.error, trained.error
