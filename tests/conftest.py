"""Top-level pytest fixtures and the database choice.

The database is whatever ``DATABASE_URL`` names (``bin/test`` sets the
machine's PostgreSQL; pytest-django then creates ``test_<name>``).  Without
it, Django's SQLite test database is used, which is enough for everything
except the Celery worker tests: those fail (never skip) and say how to run them.

Under pytest-xdist (bin/test's default) pytest-django suffixes the database with the worker
(``test_<name>_gw0``) and tests/plugins/worker_services.py gives each worker its own Redis
database, so a worker's Celery queues, cache and broker never meet another's.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"
REDIS_TEST_URL = "redis://127.0.0.1:6379/15"


def pytest_configure(config):
    """xdist workers sharing one Redis database would take each other's Celery messages."""
    if os.environ.get("PYTEST_XDIST_WORKER") and not config.pluginmanager.has_plugin(
        "worker_services"
    ):
        raise pytest.UsageError(
            "parallel runs need each worker's own Redis database: run bin/test, or add "
            "-p worker_services with tests/plugins on PYTHONPATH"
        )


#: Marks of the tests that take seconds each: under xdist they go first.
_LONG = ("slow", "browser", "celery_worker")


def pytest_collection_modifyitems(config, items):
    """Under xdist the long tests go first (each group in its order): a long one then starts
    while the other workers still have short ones to take, rather than running alone at the
    end of the run."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: not any(item.get_closest_marker(m) for m in _LONG))


@pytest.fixture(autouse=True)
def _fresh_model_cache():
    """Each test starts with an empty in-memory estimator cache."""
    from diagnosis.training.selectors import model_cache

    model_cache.clear()
    yield
    model_cache.clear()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Users are created in many tests; a fast hasher keeps them quick (never in production)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# Tests of the pure library and the file readers never render a page.
_NO_PAGES = ("learners", "datasets")


def _renders_no_page(item) -> bool:
    parts = Path(item.path).resolve().relative_to(Path(__file__).resolve().parent).parts
    return bool(parts) and parts[0] in _NO_PAGES


@pytest.fixture(scope="session", autouse=True)
def collected_static(request, tmp_path_factory):
    """collectstatic into a private folder, as bin/run does: pages need the hashed manifest.

    Session-wide and first, so no test's own settings changes can undo it; skipped when the
    run holds only library and reader tests.
    """
    if all(_renders_no_page(item) for item in request.session.items):
        yield None
        return
    from django.core.management import call_command
    from django.test.utils import override_settings

    root = tmp_path_factory.mktemp("static")
    with override_settings(STATIC_ROOT=root):
        call_command("collectstatic", interactive=False, verbosity=0)
        yield root


@pytest.fixture(scope="session")
def live_server(request, collected_static):
    """pytest-django's live server, with /static/ answered by whitenoise as under gunicorn.

    pytest-django's default serves static files from the source folders by their plain names,
    which the hashed names of the manifest are not.
    """
    from pytest_django.live_server_helper import LiveServer

    addr = (
        request.config.getvalue("liveserver")
        or os.getenv("DJANGO_LIVE_TEST_SERVER_ADDRESS")
        or "localhost"
    )
    server = LiveServer(addr, start=False)
    server.thread.static_handler = _whitenoise_serves
    server.start()
    yield server
    server.stop()


def _whitenoise_serves(application):
    """No static handler in front: the app's whitenoise middleware answers /static/."""
    return application
