"""Parallel test workers (pytest-xdist) each use their own PostgreSQL and Redis database."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.db import connection


def _plugin(request):
    plugin = request.config.pluginmanager.get_plugin("worker_services")
    assert plugin is not None, "bin/test loads tests/plugins/worker_services.py (-p)"
    return plugin


def test_a_redis_url_is_moved_to_another_database_and_kept_otherwise(request):
    """The database of a Redis URL is read (0 when it names none) and replaced, nothing else."""
    plugin = _plugin(request)
    assert plugin.redis_database("redis://127.0.0.1:6379/3") == 3
    assert plugin.redis_database("redis://127.0.0.1:6379") == 0
    assert plugin.with_database("redis://:pw@example:6380/3", 5) == "redis://:pw@example:6380/5"
    assert plugin.with_database("redis://127.0.0.1:6379", 2) == "redis://127.0.0.1:6379/2"


def test_this_worker_has_its_own_redis_database(request):
    """Worker gwN's broker, cache and Celery workers use the base Redis database plus N."""
    plugin = _plugin(request)
    index = plugin.worker_index()
    base = plugin.BASE_URLS.get("REDIS_URL")
    if index is None or base is None:  # one process (-n 0), or no Redis: nothing is moved
        assert os.environ.get("PYTEST_XDIST_WORKER") is None or base is None
        return
    expected = plugin.with_database(base, plugin.redis_database(base) + index)
    assert os.environ["REDIS_URL"] == expected
    assert settings.REDIS_URL == expected
    assert settings.CELERY_BROKER_URL == expected
    assert settings.CACHES["default"]["LOCATION"] == expected


def test_auto_runs_one_worker_per_core_within_the_redis_databases_and_the_plugin_answers(
    request,
):
    """-n auto asks the hook; this plugin's answer (the cores, within the Redis databases left)
    comes before xdist's own (the CPU count), which answered alone before."""
    plugin = _plugin(request)
    cores = len(os.sched_getaffinity(0))
    base = plugin.BASE_URLS.get("REDIS_URL", os.environ.get("REDIS_URL", ""))
    expected = cores
    if base.startswith(("redis://", "rediss://")):
        expected = max(1, min(expected, plugin.REDIS_DATABASES - plugin.redis_database(base)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REDIS_URL", base)  # as bin/test gave it, before this worker's move
        assert request.config.hook.pytest_xdist_auto_num_workers(config=request.config) == (
            expected
        )
    # A base database near the last one leaves fewer databases than cores: the plugin's bound.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REDIS_URL", f"redis://127.0.0.1:6379/{plugin.REDIS_DATABASES - 1}")
        assert request.config.hook.pytest_xdist_auto_num_workers(config=request.config) == 1


@pytest.mark.django_db
def test_this_worker_has_its_own_postgresql_database():
    """pytest-django names the test database after the worker (test_<name>_gwN)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    name = connection.settings_dict["NAME"]
    if connection.vendor == "postgresql":
        assert name.startswith("test_"), name
        assert name.endswith(f"_{worker}") if worker else not name.endswith("_gw0"), name


_HOLD = """
import fcntl, sys, time
held = open(sys.argv[1])
fcntl.flock(held, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_a_test_process_waits_for_the_kernel_warm_up(request, tmp_path, monkeypatch):
    """Before its first test a process waits while the warm-up holds its lock, not after."""
    plugin = _plugin(request)
    lock = tmp_path / "warm-kernels.lock"
    lock.touch()
    monkeypatch.setenv("TEST_KERNELS_LOCK", str(lock))
    session = SimpleNamespace(config=SimpleNamespace(getoption=lambda name, default=None: None))
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(lock), "1.5"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "held\n"
        started = time.monotonic()
        plugin.pytest_collection_finish(session)
        waited = time.monotonic() - started
    finally:
        holder.wait(timeout=30)
    assert waited >= 1.0, f"went on after {waited:.2f} s while the warm-up held the lock"
    started = time.monotonic()
    plugin.pytest_collection_finish(session)
    assert time.monotonic() - started < 1.0, "waited though nothing held the lock"
