"""Nothing stuck past 60 s (issue 29), with real processes and the settings' defaults.

A Redis server of the test's own (on a free port, so it can be restarted empty without touching
the shared one), real Celery workers with beat embedded, and the real database. Each test
prints how long the fault took to be answered.
"""

from __future__ import annotations

import socket
import subprocess
import time

import pytest
from celery_workers import (
    TIMEOUT,
    kill_worker,
    start_worker,
    stop_worker,
    wait_until_finished,
    worker_database_url,
    xor_dataset,
)
from django.db import connection

from diagnosis.training.models import TrainedModel
from diagnosis.training.services import broker
from diagnosis.training.services.training import request_training

pytestmark = [pytest.mark.celery_worker, pytest.mark.slow]

#: What the issue asks: every stuck case answered within this many seconds.
LIMIT = 60.0


class OwnRedis:
    """A redis-server process of this test (in memory only): ``restart`` starts it empty."""

    def __init__(self) -> None:
        with socket.socket() as probe:  # a free port: never the shared Redis
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "the test's redis-server did not start"
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def restart(self) -> None:
        """Stop it and start it again: nothing it held survives (no file is saved)."""
        self.stop()
        self.start()


@pytest.fixture
def own_redis():
    """The test's own Redis as this process's broker too (Celery's pools reopened on it)."""
    from config.celery import app

    if connection.vendor != "postgresql":
        pytest.fail("these fault tests need PostgreSQL (run them with bin/test)")
    redis = OwnRedis()
    before = app.conf.broker_url

    def reconnect(url: str) -> None:
        app.conf.broker_url = url
        app._pool = None  # Celery caches its connection and producer pools
        app.amqp._producer_pool = None

    reconnect(redis.url)
    try:
        yield redis
    finally:
        reconnect(before)
        redis.stop()


def _tail(log) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-60:])


def _queue() -> str:
    return broker.queue_of(broker.TRAIN_MODEL)


@pytest.mark.django_db(transaction=True)
def test_a_queued_training_lost_in_a_redis_restart_runs_within_60_s(
    model_admin, toy_dataset, tmp_path, own_redis
):
    """Worker stopped, training queued, Redis restarted empty, worker back: trained in < 60 s."""
    trained = request_training(user=model_admin, dataset=toy_dataset, learner="eg2", params={})
    trained.refresh_from_db()
    assert trained.enqueued_at is not None
    assert trained.celery_task_id in broker.held_task_ids(_queue())
    own_redis.restart()
    assert broker.held_task_ids(_queue()) == frozenset(), "the restart must lose the message"
    started = time.monotonic()
    log = tmp_path / "after-restart.log"
    worker = start_worker(
        database_url=worker_database_url(),
        broker=own_redis.url,
        log=log,
        name="after-restart",
        env={"REDIS_URL": own_redis.url},
        beat=True,
    )
    ready = time.monotonic() - started
    try:
        trained = wait_until_finished(trained, log)
    finally:
        stop_worker(worker)
    took = time.monotonic() - started
    fit = (trained.finished_at - trained.started_at).total_seconds()
    print(
        f"\nlost message: trained {took:.1f} s after Redis came back empty (worker ready after "
        f"{ready:.1f} s, the fit itself {fit:.1f} s)"
    )
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    assert trained.attempts == 1
    assert took < LIMIT, f"the lost training waited {took:.0f} s:\n{_tail(log)}"


def _worker_that_received(task_id: str, logs: dict) -> str:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        for name, log in logs.items():
            if f"[{task_id}] received" in log.read_text(errors="replace"):
                return name
        time.sleep(0.2)
    pytest.fail("no worker received the training")


@pytest.mark.django_db(transaction=True)
def test_a_killed_workers_anytime_training_is_interrupted_within_60_s(
    model_admin, tmp_path, own_redis
):
    """kill -9 of the whole worker after a round stored a model: the other worker's sweep ends it
    "interrupted" (not succeeded) within 60 s, saying at which round the worker died."""
    dataset = xor_dataset("XOR whose worker dies")
    url = worker_database_url()
    env = {"REDIS_URL": own_redis.url}
    logs = {name: tmp_path / f"{name}.log" for name in ("first", "second")}
    workers = {
        name: start_worker(
            database_url=url, broker=own_redis.url, log=log, name=name, env=env, beat=True
        )
        for name, log in logs.items()
    }
    try:
        trained = request_training(
            user=model_admin,
            dataset=dataset,
            learner="lsid3",  # anytime, and rounds of seconds (ACT's inner CV takes minutes)
            params={"r": 256},
            error_matrix=dataset.error_matrices.get(),
        )
        doomed = _worker_that_received(trained.celery_task_id, logs)
        deadline = time.monotonic() + TIMEOUT
        while not trained.anytime_round:  # a round stored its model
            assert time.monotonic() < deadline, "no round of the training finished"
            assert trained.status in (TrainedModel.QUEUED, TrainedModel.RUNNING), trained.error
            time.sleep(0.2)
            trained.refresh_from_db()
        kill_worker(workers[doomed])
        killed = time.monotonic()
        trained.refresh_from_db()
        assert trained.status == TrainedModel.RUNNING, "the training ended before the kill"
        survivor = "second" if doomed == "first" else "first"
        trained = wait_until_finished(trained, logs[survivor])
        took = time.monotonic() - killed
    finally:
        for worker in workers.values():
            stop_worker(worker)
    print(f"\nwhole-worker kill -9: noticed {took:.1f} s after the kill")
    assert trained.status == TrainedModel.INTERRUPTED, (trained.status, trained.error)
    assert not trained.is_ready and trained.model_json
    assert f"The worker stopped (died) at {trained.anytime_round} of 256" in trained.error
    assert "this model was cut short" in trained.error
    assert took < LIMIT, (
        f"the dead worker's training stayed running for {took:.0f} s:\n{_tail(logs[survivor])}"
    )


@pytest.mark.django_db(transaction=True)
def test_a_worker_refuses_a_training_over_its_memory_limit_before_fitting(
    model_admin, toy_dataset, tmp_path, own_redis
):
    """A worker whose TRAINING_MEMORY_LIMIT_MB is below a training's estimate fails it with the
    reason before fitting (the web's limit let it through), and lives on."""
    from diagnosis.training.services import training_memory

    big = xor_dataset("Too big for the small worker")
    estimate = training_memory.estimate_mb(
        learner="eg2", n_cases=big.cases.count(), n_tests=big.tests.count()
    )
    small = training_memory.estimate_mb(
        learner="eg2", n_cases=toy_dataset.cases.count(), n_tests=toy_dataset.tests.count()
    )
    limit = round((small + estimate) / 2, 6)  # below the big training's estimate only
    assert small < limit < estimate, (small, limit, estimate)
    log = tmp_path / "small-worker.log"
    worker = start_worker(
        database_url=worker_database_url(),
        broker=own_redis.url,
        log=log,
        name="small-worker",
        env={"REDIS_URL": own_redis.url, "TRAINING_MEMORY_LIMIT_MB": repr(limit)},
    )
    try:
        started = time.monotonic()
        refused = request_training(user=model_admin, dataset=big, learner="eg2", params={})
        refused = wait_until_finished(refused, log)
        took = time.monotonic() - started
        assert worker.poll() is None, "the worker must live on"
    finally:
        stop_worker(worker)
    print(f"\nmemory limit: refused by the worker {took:.1f} s after the request")
    assert refused.status == TrainedModel.FAILED and refused.model_json == ""
    assert f"above the worker's limit of {limit:,g} MB" in refused.error, refused.error
    assert refused.attempts == 1 and refused.fit_seconds is None


@pytest.mark.django_db(transaction=True)
def test_a_fit_that_grows_past_the_memory_limit_fails_with_the_reason_and_the_worker_lives_on(
    model_admin, toy_dataset, tmp_path, own_redis
):
    """A training whose up-front estimate fits the worker's limit but whose fit outgrows it (a
    1,000-tree BudgetRF: the estimate counts patients x tests, not trees) is stopped by the
    address-space limit and ends failed with the reason; the worker lives on and trains the
    next one."""
    from diagnosis.training.services import training_memory

    limit = 16.0  # MB; the forest's fit needs more (between 16 and 64 MB measured alone)
    # 3,000 patients: each tree's walk (nodes x validation rows) is large, so the forest passes
    # the limit within seconds (600 took 45 s to 2 min), while the estimate stays under it
    big = xor_dataset("Grows past the limit", n=3000)
    estimate = training_memory.estimate_mb(
        learner="budget_rf", n_cases=big.cases.count(), n_tests=big.tests.count()
    )
    assert estimate < limit, (estimate, limit)  # the worker's up-front check lets it through
    log = tmp_path / "limited-worker.log"
    worker = start_worker(
        database_url=worker_database_url(),
        broker=own_redis.url,
        log=log,
        name="limited-worker",
        env={"REDIS_URL": own_redis.url, "TRAINING_MEMORY_LIMIT_MB": repr(limit)},
    )
    try:
        started = time.monotonic()
        grown = request_training(
            user=model_admin, dataset=big, learner="budget_rf", params={"max_trees": 1000}
        )
        # the forest grows tree by tree: on the shared test machine it took 97 to 125 s to
        # reach the limit, so this waits longer than the module's TIMEOUT
        deadline = time.monotonic() + 300
        while not grown.is_finished and time.monotonic() < deadline:
            time.sleep(1)
            grown.refresh_from_db()
        took = time.monotonic() - started
        assert grown.is_finished, f"still {grown.status} after {took:.0f} s:\n{_tail(log)}"
        assert worker.poll() is None, "the worker must live on"
        small = request_training(user=model_admin, dataset=toy_dataset, learner="eg2", params={})
        small = wait_until_finished(small, log)
        assert worker.poll() is None, "the worker must live on"
    finally:
        stop_worker(worker)
    print(f"\nmemory limit: the growing fit failed {took:.1f} s after the request")
    assert grown.status == TrainedModel.FAILED and grown.model_json == "", grown.error
    assert (
        f"The training needed more memory than the worker allows ({limit:,g} MB" in grown.error
    ), grown.error
    assert "stopped before it could take the machine's memory" in grown.error
    assert grown.progress_message == "Failed: out of memory"
    # the cases were loaded and the fit had begun ("Fitting on ... cases", 10%) when it failed
    assert grown.progress >= 0.1, grown.progress
    assert small.status == TrainedModel.SUCCEEDED, (small.error, _tail(log))
