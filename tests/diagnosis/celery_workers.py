"""Starting and stopping a REAL Celery worker process against the test database and Redis."""

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
from django.db import connection

from diagnosis.training.models import TrainedModel

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


def require_services() -> str:
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


def worker_database_url() -> str:
    """The URL of the database pytest-django made, for a worker in another process."""
    db = connection.settings_dict
    password = ":" + db["PASSWORD"] if db.get("PASSWORD") else ""
    host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
    return f"postgresql://{db['USER']}{password}@{host}:{port}/{db['NAME']}"


def start_worker(
    *,
    database_url: str,
    broker: str,
    log: Path,
    name: str,
    env: dict[str, str] | None = None,
    queues: str | None = None,
    beat: bool = False,
) -> subprocess.Popen:
    """``celery -A config worker`` in its own process group; returns once it says ready.

    ``queues`` (e.g. "experiments") is its ``-Q``; by default it takes every queue. ``beat``
    embeds Celery beat (``-B``, the schedule file beside the log): the sweeps run on time.
    """
    full_env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": broker,
        "CELERY_BROKER_URL": broker,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DIAGNOSIS_VAR_DIR": str(log.parent),
        **(env or {}),
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
                f"{name}-{os.getpid()}@%h",
                *(["-Q", queues] if queues else []),
                *(["-B", "-s", str(log.with_suffix(".beat"))] if beat else []),
            ],
            cwd=REPO,
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: kill_worker reaches the pool too
        )
    deadline = time.monotonic() + 60
    while "ready." not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(
                f"the Celery worker did not start:\n{log.read_text(errors='replace')[-3000:]}"
            )
        time.sleep(0.5)
    return process


def stop_worker(process: subprocess.Popen) -> None:
    """A warm shutdown (TERM), killed if it has not stopped within 30 s."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        kill_worker(process)


def kill_worker(process: subprocess.Popen) -> None:
    """kill -9 of the worker and its pool children, as an out-of-memory killer would."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def wait_until_finished(trained: TrainedModel, log: Path, timeout: float = TIMEOUT) -> TrainedModel:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        trained.refresh_from_db()
        if trained.is_finished:
            return trained
        time.sleep(0.5)
    pytest.fail(
        f"training {trained.pk} still {trained.status} ({trained.progress_message}) after "
        f"{timeout:g}s; worker log:\n" + log.read_text(errors="replace")[-3000:]
    )


def xor_dataset(name: str, n: int = 600, d: int = 8):
    """Noisy XOR over two of ``d`` priced features: ACT's rounds take seconds, not milliseconds."""
    import numpy as np

    from diagnosis.catalog.services.datasets import create_dataset

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
