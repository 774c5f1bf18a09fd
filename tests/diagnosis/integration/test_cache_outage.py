"""/api/v1 through a cache outage: a real redis-server is killed under the API, which keeps
answering with a per-process rate limit and says so once in the log."""

from __future__ import annotations

import logging
import socket
import subprocess
import time

import pytest
import redis
from django.test import Client

from diagnosis.integration import throttling
from diagnosis.integration.services.api_tokens import issue_api_token


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start_redis(port: int) -> subprocess.Popen:
    """A redis-server of this test alone (the shared one on 6379 is never touched)."""
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        + ["--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    for _ in range(100):
        try:
            client.ping()
            return server
        except redis.ConnectionError:
            time.sleep(0.05)
    server.kill()
    raise RuntimeError(f"redis-server did not start on port {port}")


@pytest.fixture
def own_redis(settings, monkeypatch):
    """The cache on a redis-server started for the test; yields (port, server); a fresh
    outage state, so an earlier test's outage is not this one's."""
    port = _free_port()
    server = _start_redis(port)
    settings.CACHES = {
        "default": {
            **settings.CACHES["default"],
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
        }
    }
    monkeypatch.setattr(throttling, "_outage", throttling._RedisOutage())
    servers = [server]
    yield port, servers
    for running in servers:
        running.kill()
        running.wait()


def _outage_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "diagnosis.integration.throttling"]


def test_with_redis_killed_the_api_serves_and_limits_per_process(
    clinician, trained_model, settings, own_redis, caplog
):
    """Redis killed: valid tokens keep getting 200s, the limit is still kept (429 JSON with
    Retry-After, counted in the process), bad tokens get 401 JSON, and the log has one warning
    for the whole outage, not one per call."""
    port, servers = own_redis
    settings.API_RATE_LIMIT = "4/m"
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {plain}")
    assert client.get("/api/v1/models").status_code == 200
    assert redis.Redis(port=port).dbsize() == 1  # counted in this Redis

    servers[0].kill()
    servers[0].wait()
    caplog.set_level(logging.WARNING, logger="diagnosis.integration.throttling")
    started = time.monotonic()
    answers = [client.get("/api/v1/models") for _ in range(5)]
    elapsed = time.monotonic() - started
    assert [a.status_code for a in answers] == [200, 200, 200, 200, 429]
    assert answers[0].json()[0]["id"] == trained_model.pk
    assert int(answers[-1]["Retry-After"]) >= 1 and answers[-1].json()["error"]
    assert elapsed < 5, elapsed  # no call waits on the dead server
    refused = Client(HTTP_AUTHORIZATION="Bearer cad_not-a-token").get("/api/v1/models")
    assert refused.status_code == 401 and refused.json()["error"]
    warnings = _outage_warnings(caplog)
    assert len(warnings) == 1 and "per web process" in warnings[0]


def test_when_redis_answers_again_the_count_is_shared_again(
    clinician, trained_model, settings, own_redis, caplog, monkeypatch
):
    """After the outage, once Redis is back the next retry counts there again and the log says
    the outage ended."""
    port, servers = own_redis
    monkeypatch.setattr(throttling, "REDIS_RETRY_SECONDS", 0.2)
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {plain}")
    servers[0].kill()
    servers[0].wait()
    caplog.set_level(logging.WARNING, logger="diagnosis.integration.throttling")
    assert client.get("/api/v1/models").status_code == 200
    servers.append(_start_redis(port))
    time.sleep(0.3)
    assert client.get("/api/v1/models").status_code == 200
    assert redis.Redis(port=port).dbsize() == 1  # counted in the restarted Redis
    warnings = _outage_warnings(caplog)
    assert len(warnings) == 2 and "answers again" in warnings[1]
