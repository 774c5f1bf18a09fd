"""Training through a REAL Celery worker process, REAL Redis and the machine's PostgreSQL.

Run with ``bin/test tests/diagnosis/test_celery_worker.py`` (it sets
DATABASE_URL and REDIS_URL).  Never skipped: a missing service fails loudly
with the command that starts it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.conf import settings
from django.db import connection, transaction

from diagnosis.models import TrainedModel
from diagnosis.services.training import request_training

pytestmark = [pytest.mark.celery_worker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
HOW_TO_RUN = (
    "Run with real services: DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test "
    "REDIS_URL=redis://127.0.0.1:6379/15 python -m pytest tests/diagnosis/test_celery_worker.py "
    "(or simply bin/test, which also starts them)."
)
START_POSTGRES = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
START_REDIS = 'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no'
TIMEOUT = 120


def _port_open(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=2).close()
        return True
    except OSError:
        return False


def _require_services() -> str:
    """The broker URL, after checking PostgreSQL and Redis are configured and reachable."""
    if connection.vendor != "postgresql":
        pytest.fail(
            f"The Celery worker test needs PostgreSQL, not {connection.vendor}. {HOW_TO_RUN}"
        )
    broker = settings.CELERY_BROKER_URL
    if not broker.startswith("redis://"):
        pytest.fail(
            f"The Celery worker test needs Redis as the broker (got {broker!r}). {HOW_TO_RUN}"
        )
    db = connection.settings_dict
    if not _port_open(db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432)):
        pytest.fail(f"PostgreSQL is not reachable; start it with: {START_POSTGRES}")
    url = urlparse(broker)
    if not _port_open(url.hostname or "127.0.0.1", url.port or 6379):
        pytest.fail(f"Redis is not reachable at {broker}; start it with: {START_REDIS}")
    return broker


@pytest.fixture(scope="module")
def celery_worker(django_db_setup, django_db_blocker, tmp_path_factory):
    """A `celery -A config worker` subprocess using the test database and the test Redis."""
    with django_db_blocker.unblock():
        broker = _require_services()
        db = connection.settings_dict
        test_db_url = (
            f"postgresql://{db['USER']}{':' + db['PASSWORD'] if db.get('PASSWORD') else ''}"
            f"@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"
        )
    from config.celery import app

    app.control.purge()  # leftovers from earlier runs would refer to rows that no longer exist
    log = tmp_path_factory.mktemp("celery") / "worker.log"
    env = {
        **os.environ,
        "DATABASE_URL": test_db_url,
        "REDIS_URL": broker,
        "CELERY_BROKER_URL": broker,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DIAGNOSIS_VAR_DIR": str(log.parent),
    }
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--concurrency=1",
                "-l",
                "info",
                "--without-mingle",
                "--without-gossip",
                "-n",
                f"test-{os.getpid()}@%h",
            ],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    while "ready." not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(
                f"the Celery worker did not start:\n{log.read_text(errors='replace')[-3000:]}"
            )
        time.sleep(0.5)
    yield process, log
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _wait_until_finished(trained: TrainedModel, log: Path) -> TrainedModel:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        trained.refresh_from_db()
        if trained.is_finished:
            return trained
        time.sleep(0.5)
    pytest.fail(
        f"training {trained.pk} still {trained.status} after {TIMEOUT}s; worker log:\n"
        + log.read_text(errors="replace")[-3000:]
    )


@pytest.mark.django_db(transaction=True)
def test_worker_trains_a_queued_model(celery_worker, toy_dataset, model_admin):
    """A model requested via the service is fitted by the worker, ends succeeded with metrics."""
    _, log = celery_worker
    trained = request_training(
        user=model_admin,
        dataset=toy_dataset,
        learner="eg2",
        params={"w": 1.0},
        error_matrix=toy_dataset.error_matrices.get(name="Uniform 100"),
    )
    trained = _wait_until_finished(trained, log)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    assert (
        trained.progress == 1.0
        and trained.model_json
        and trained.started_at
        and trained.heartbeat_at
    )
    assert trained.metrics["n_test_cases"] == 36
    assert trained.celery_task_id in log.read_text(errors="replace")


@pytest.mark.django_db(transaction=True)
def test_worker_reports_why_a_training_failed(celery_worker, toy_dataset, model_admin):
    """A training that cannot fit ends failed with the reason stored on the model."""
    _, log = celery_worker
    with transaction.atomic():
        trained = request_training(user=model_admin, dataset=toy_dataset, learner="eg2", params={})
        # Prices for 2 tests on a 3-test dataset: the estimator refuses to fit.
        broken = dict(
            trained.cost_snapshot,
            costs=[1.0, 1.0],
            discounted=[1.0, 1.0],
            groups=[None, None],
            delayed=[False, False],
            free=[],
        )
        TrainedModel.objects.filter(pk=trained.pk).update(cost_snapshot=broken)
    trained = _wait_until_finished(trained, log)
    assert trained.status == TrainedModel.FAILED
    assert "2 tests but X has 3 features" in trained.error


def _xor_dataset(name: str, n: int = 600, d: int = 8):
    """Noisy XOR over two of ``d`` priced features: ACT's rounds take seconds, not milliseconds."""
    import numpy as np

    from diagnosis.services.datasets import create_dataset

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (n, d)).round(3)
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.5)).astype(int)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    return create_dataset(
        name=name,
        class_labels=["a", "b"],
        tests=[
            {"name": f"x{j}", "label": f"X{j}", "price": 5.0, "discounted_price": 5.0}
            for j in range(d)
        ],
        rows=X.tolist(),
        labels=y.tolist(),
        error_matrices=[{"name": "Uniform 100", "matrix": [[0, 100], [100, 0]]}],
    )


def _checkpoint_costs(trained: TrainedModel) -> list[float]:
    return [c.estimated_cost for c in trained.checkpoints.order_by("elapsed_seconds", "id")]


@pytest.mark.django_db(transaction=True)
def test_worker_runs_anytime_act_round_by_round(celery_worker, toy_dataset, model_admin):
    """ACT through the worker: checkpoints of falling cost, the last one is the model in use."""
    _, log = celery_worker
    trained = request_training(
        user=model_admin,
        dataset=toy_dataset,
        learner="act",
        params={"r": 4},
        error_matrix=toy_dataset.error_matrices.get(name="Uniform 100"),
    )
    trained = _wait_until_finished(trained, log)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    costs = _checkpoint_costs(trained)
    assert costs and costs == sorted(costs, reverse=True)
    last = trained.checkpoints.order_by("elapsed_seconds", "id").last()
    assert trained.model_json == last.model_json and trained.anytime_round == last.label
    assert trained.metrics["anytime"]["ended"] == "finished"


@pytest.mark.django_db(transaction=True)
def test_worker_stops_anytime_act_on_request_and_keeps_the_best(celery_worker, model_admin):
    """A stop requested after the first checkpoint ends the worker's run with that best model."""
    from diagnosis.services.training import request_stop

    _, log = celery_worker
    dataset = _xor_dataset("XOR for stopping")
    trained = request_training(
        user=model_admin,
        dataset=dataset,
        learner="act",
        params={"r": 64},
        error_matrix=dataset.error_matrices.get(),
    )
    deadline = time.monotonic() + TIMEOUT
    while not trained.checkpoints.exists():
        trained.refresh_from_db()
        if trained.is_finished or time.monotonic() > deadline:
            pytest.fail(f"no checkpoint before the run ended: {trained.status} {trained.error}")
        time.sleep(0.2)
    request_stop(user=model_admin, trained_model=trained)
    trained = _wait_until_finished(trained, log)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    assert trained.metrics["anytime"]["ended"] == "stopped on request"
    assert trained.anytime_round != "r=64", "the run stopped before its last round"
    last = trained.checkpoints.order_by("elapsed_seconds", "id").last()
    assert trained.model_json == last.model_json
    assert _checkpoint_costs(trained) == sorted(_checkpoint_costs(trained), reverse=True)


@pytest.mark.django_db(transaction=True)
def test_worker_ends_anytime_act_at_its_time_budget(celery_worker, model_admin):
    """With a 2 s budget the worker ends a long ACT run early and keeps its best model."""
    _, log = celery_worker
    dataset = _xor_dataset("XOR for a budget")
    trained = request_training(
        user=model_admin,
        dataset=dataset,
        learner="act",
        params={"r": 64, "time_budget_seconds": 2},
        error_matrix=dataset.error_matrices.get(),
    )
    trained = _wait_until_finished(trained, log)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    info = trained.metrics["anytime"]
    assert info["ended"] == "time budget reached" and info["round"] != "r=64"
    assert trained.checkpoints.exists() and trained.model_json
