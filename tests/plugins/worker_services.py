"""Each pytest-xdist worker gets a Redis database of its own (loaded by bin/test: ``-p``), and
waits for bin/test's kernel warm-up before its first test.

pytest-django already gives each worker its own PostgreSQL database (``test_<name>_gw0``,
``test_<name>_gw1``, ...).  Redis is shared by name, so worker ``gwN`` is moved to the database
numbered the base one of ``REDIS_URL`` plus N.  This must happen in the environment before
pytest-django imports the settings (the Django cache, the Celery broker and every Celery worker
a test starts read ``REDIS_URL``), which is before any conftest.py is read: hence a plugin
named on the command line.  xdist sets ``PYTEST_XDIST_WORKER`` before a worker loads plugins.
"""

from __future__ import annotations

import fcntl
import os
from urllib.parse import urlsplit, urlunsplit

import pytest

#: Redis's default number of databases (0 to 15).
REDIS_DATABASES = 16
#: The settings that name the Redis server the app, its cache and its Celery workers use.
REDIS_SETTINGS = ("REDIS_URL", "CELERY_BROKER_URL")
#: Those settings as bin/test gave them, before this worker's database was put in.
BASE_URLS = {name: os.environ[name] for name in REDIS_SETTINGS if name in os.environ}


def redis_database(url: str) -> int:
    """The database number of a ``redis://host:port/N`` URL (0 when it names none)."""
    path = urlsplit(url).path.strip("/")
    return int(path) if path else 0


def with_database(url: str, database: int) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{database}"))


def worker_index() -> int | None:
    """N of the xdist worker ``gwN`` this process is, None outside xdist's workers."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return int(worker.removeprefix("gw")) if worker else None


def _move_to_the_workers_redis_database() -> None:
    index = worker_index()
    if index is None:
        return
    for name in REDIS_SETTINGS:
        url = os.environ.get(name, "")
        if not url.startswith(("redis://", "rediss://")):
            continue
        database = redis_database(url) + index
        if database >= REDIS_DATABASES:
            raise pytest.UsageError(
                f"test worker gw{index} would need Redis database {database} of {url}: "
                f"give a lower base database in TEST_REDIS_URL, or fewer workers (-n)"
            )
        os.environ[name] = with_database(url, database)


_move_to_the_workers_redis_database()


# tryfirst: xdist answers this hook itself (the CPU count), and the first answer wins
@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker per core this process may run on, as far as Redis databases
    from the base one of ``REDIS_URL`` go.

    One more worker than the cores kept the cores busier (vmstat: 4% idle against 14%) but not
    the run shorter: from fresh clones of this 2-core machine, .ci/run's test step took 704 s
    and 770 s with 3 workers, 766 s and 730 s with 2, so the quieter 2 stay.
    """
    workers = len(os.sched_getaffinity(0))
    url = os.environ.get("REDIS_URL", "")
    if not url.startswith(("redis://", "rediss://")):
        return workers
    return max(1, min(workers, REDIS_DATABASES - redis_database(url)))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """A process that runs tests waits, before the first, for bin/test's kernel warm-up (started
    beside pytest, holding ``TEST_KERNELS_LOCK`` until it ends): no test compiles a kernel the
    warm-up is compiling or has still to write to numba's cache."""
    lock = os.environ.get("TEST_KERNELS_LOCK")
    if not lock or session.config.getoption("numprocesses", None):
        return  # no warm-up, or xdist's controller, which runs no test
    with open(lock) as held:
        fcntl.flock(held, fcntl.LOCK_SH)  # granted once the warm-up's exclusive lock is gone
