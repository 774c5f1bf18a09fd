"""Top-level pytest fixtures and the database choice.

The database is whatever ``DATABASE_URL`` names (``bin/test`` sets the
machine's PostgreSQL; pytest-django then creates ``test_<name>``).  Without
it, Django's SQLite test database is used, which is enough for everything
except the Celery worker tests: those fail (never skip) and say how to run them.
"""

from __future__ import annotations

import pytest

POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"
REDIS_TEST_URL = "redis://127.0.0.1:6379/15"


@pytest.fixture(autouse=True)
def _fresh_model_cache():
    """Each test starts with an empty in-memory estimator cache."""
    from diagnosis.selectors import model_cache

    model_cache.clear()
    yield
    model_cache.clear()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Users are created in many tests; a fast hasher keeps them quick (never in production)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
