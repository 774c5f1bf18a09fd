"""Counting /api/v1 calls per token: one atomic round trip to Redis per call.

django-ninja's ``SimpleRateThrottle`` keeps each caller's recent call times as a list in the
cache: it reads the whole list, trims it and writes it back (two round trips, the list
pickled both ways), and two calls at once can both read the same list and count one call
between them.  :class:`SlidingWindowThrottle` keeps the same rule (at most ``N`` calls in
any ``period`` seconds, the window sliding with each call) in a Redis sorted set changed by
one Lua script: trim, count, add, in one atomic step.  With a cache that is not Redis (a
development server without it) it falls back to django-ninja's own counting, which is then
per process anyway.

When Redis does not answer (stopped, restarting, unreachable), the same rule is counted in
this process's memory instead, so the API keeps serving: each web process then allows the
limit on its own (a looser limit, never an error).  The process logs one warning when the
outage starts and one when Redis answers again, not one per call, and asks Redis again only
every :data:`REDIS_RETRY_SECONDS` so a dead server does not cost each call a connection
attempt.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import deque

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest
from ninja.throttling import SimpleRateThrottle
from redis.commands.core import Script
from redis.exceptions import RedisError

__all__ = ["REDIS_RETRY_SECONDS", "SlidingWindowThrottle"]

logger = logging.getLogger(__name__)

# While Redis is out, it is tried again at most this often (per process).
REDIS_RETRY_SECONDS = 5.0


class _RedisOutage:
    """Whether this process found Redis out, shared by every throttle so one outage is
    logged once, and when to try Redis again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.started: float | None = None  # time.monotonic() of the first failure
        self.retry_at = 0.0

    def skip_redis(self) -> bool:
        return self.started is not None and time.monotonic() < self.retry_at

    def failed(self, exc: Exception) -> None:
        with self._lock:
            now = time.monotonic()
            self.retry_at = now + REDIS_RETRY_SECONDS
            if self.started is not None:
                return
            self.started = now
        logger.warning(
            "Redis is not answering (%s); /api/v1 rate limits are counted per web process "
            "until it is back.",
            exc,
        )

    def answered(self) -> None:
        if self.started is None:
            return
        with self._lock:
            started, self.started = self.started, None
        if started is not None:
            logger.warning(
                "Redis answers again after %.0f s; rate limits are shared again.",
                time.monotonic() - started,
            )


_outage = _RedisOutage()


class _LocalWindow:
    """The sliding window counted in this process (while Redis is out): the call times of
    each key, oldest first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, deque[float]] = {}

    def allow(self, key: str, limit: int, window: float) -> tuple[bool, float]:
        """(allowed, seconds until a call is allowed); an allowed call is counted."""
        now = time.monotonic()
        with self._lock:
            calls = self._calls.setdefault(key, deque())
            while calls and calls[0] <= now - window:
                calls.popleft()
            if len(calls) >= limit:
                return False, max(0.001, calls[0] + window - now)
            calls.append(now)
            if len(self._calls) > 10_000:  # forget the keys whose calls all left the window
                self._calls = {k: c for k, c in self._calls.items() if c and c[-1] > now - window}
            return True, 0.0


# KEYS[1]: the caller's calls in the window, scored by the time of each (ms).
# ARGV: now (ms), the window (ms), the limit, a unique name for this call.
# Returns {1, 0} when the call is allowed (and counted), {0, ms until one is allowed} when not.
_CHECK_AND_COUNT = """
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if #oldest == 0 then
    return {0, window}
  end
  return {0, math.max(1, tonumber(oldest[2]) + window - now)}
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window)
return {1, 0}
"""


class SlidingWindowThrottle(SimpleRateThrottle):
    """At most ``num_requests`` calls per ``duration`` seconds for each cache key, counted in
    Redis atomically (see the module); subclasses say what the key is (``get_cache_key``).

    The limit is ``rate`` or, when a subclass names one in ``rate_setting``, that Django
    setting read at every call, so the limit follows the settings (and tests can lower it).
    """

    rate_setting: str | None = None

    def __init__(self, rate: str | None = None) -> None:
        super().__init__(rate if rate is not None else self._setting_rate())
        self._script: Script | None = None
        self._waits = threading.local()  # one throttle object serves every thread
        self._clients: dict[int, tuple[object, object]] = {}  # id(pool) -> (pool, client)
        self._local = _LocalWindow()  # the count while Redis is out

    def allow_request(self, request: HttpRequest) -> bool:
        """Count this call and allow it if the window has room; else refuse it, uncounted."""
        self._waits.seconds = None
        if self.rate_setting is not None:
            self.rate = self._setting_rate()
            self.num_requests, self.duration = self.parse_rate(self.rate)
        backend = caches["default"]
        if not isinstance(backend, RedisCache):
            return super().allow_request(request)
        key = self.get_cache_key(request)
        if key is None:
            return True
        redis_key = backend.make_and_validate_key(key)
        if _outage.skip_redis():
            return self._allow_locally(redis_key)
        client = self._client(backend, redis_key)
        if self._script is None:
            self._script = client.register_script(_CHECK_AND_COUNT)
        assert self.num_requests is not None and self.duration is not None  # a rate is set
        now = int(time.time() * 1000)
        args: list[int | str] = [
            now,
            int(self.duration * 1000),
            self.num_requests,
            uuid.uuid4().hex,
        ]
        try:
            allowed, wait_ms = self._script(keys=[redis_key], args=args, client=client)
        except RedisError as exc:  # connection refused, timed out, server loading...
            _outage.failed(exc)
            return self._allow_locally(redis_key)
        _outage.answered()
        if not allowed:
            self._waits.seconds = int(wait_ms) / 1000
        return bool(allowed)

    def _allow_locally(self, key: str) -> bool:
        assert self.num_requests is not None and self.duration is not None  # a rate is set
        allowed, wait = self._local.allow(key, self.num_requests, self.duration)
        if not allowed:
            self._waits.seconds = wait
        return allowed

    def _setting_rate(self) -> str | None:
        return None if self.rate_setting is None else getattr(settings, self.rate_setting)

    def _client(self, backend: RedisCache, redis_key: str):
        """A Redis client on the cache's writing pool, made once per pool: Django's
        ``get_client`` builds a new client (its ~170 response callbacks) on every call; a
        client is safe to share between threads, each command taking a pooled connection."""
        # ``_cache``: Django's client wrapper of the RedisCache, private and so not in the stubs
        pool = backend._cache._get_connection_pool(write=True)  # type: ignore[attr-defined]
        made = self._clients.get(id(pool))
        if made is None or made[0] is not pool:
            made = (pool, backend._cache.get_client(redis_key, write=True))  # type: ignore[attr-defined]
            self._clients[id(pool)] = made
        return made[1]

    def wait(self) -> float | None:
        """Seconds until a call is allowed again (the Retry-After header)."""
        seconds = getattr(self._waits, "seconds", None)
        return seconds if seconds is not None else super().wait()
