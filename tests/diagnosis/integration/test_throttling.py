"""The /api/v1 rate limit counted in Redis: exact under concurrent calls, and a sliding window."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.test import RequestFactory

from diagnosis.integration.throttling import SlidingWindowThrottle

pytestmark = pytest.mark.skipif(
    not isinstance(caches["default"], RedisCache), reason="needs the Redis cache (REDIS_URL)"
)


class OneKey(SlidingWindowThrottle):
    """Every request counted under one fresh key."""

    def __init__(self, rate: str) -> None:
        super().__init__(rate)
        self.key = f"throttle-test-{uuid.uuid4().hex}"

    def get_cache_key(self, request) -> str:
        return self.key


def test_concurrent_calls_are_counted_exactly():
    """40 calls at once from 8 threads against a limit of 25: exactly 25 are allowed."""
    throttle = OneKey("25/m")
    request = RequestFactory().get("/api/v1/models")
    start = threading.Barrier(8)
    allowed: list[bool] = []
    lock = threading.Lock()

    def caller():
        start.wait()
        for _ in range(5):
            result = throttle.allow_request(request)
            with lock:
                allowed.append(result)

    threads = [threading.Thread(target=caller) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(allowed) == 40
    assert sum(allowed) == 25


def test_the_window_slides_and_the_wait_says_when():
    """Past the limit a call is refused with the wait until the oldest call leaves the window;
    after that wait one call is allowed again, and refused calls were never counted."""
    throttle = OneKey("2/s")
    request = RequestFactory().get("/api/v1/models")
    assert throttle.allow_request(request)
    time.sleep(0.3)
    assert throttle.allow_request(request)
    assert not throttle.allow_request(request)
    wait = throttle.wait()
    assert 0 < wait <= 0.71
    assert not throttle.allow_request(request)  # refused calls do not extend the wait
    time.sleep(throttle.wait() + 0.05)
    assert throttle.allow_request(request)  # the first call left the window
    assert not throttle.allow_request(request)  # the second is still in it
