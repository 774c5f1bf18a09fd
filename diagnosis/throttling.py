"""Counting /api/v1 calls per token: one atomic round trip to Redis per call.

django-ninja's ``SimpleRateThrottle`` keeps each caller's recent call times as a list in the
cache: it reads the whole list, trims it and writes it back (two round trips, the list
pickled both ways), and two calls at once can both read the same list and count one call
between them.  :class:`SlidingWindowThrottle` keeps the same rule (at most ``N`` calls in
any ``period`` seconds, the window sliding with each call) in a Redis sorted set changed by
one Lua script: trim, count, add, in one atomic step.  With a cache that is not Redis (a
development server without it) it falls back to django-ninja's own counting, which is then
per process anyway.
"""

from __future__ import annotations

import threading
import time
import uuid

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest
from ninja.throttling import SimpleRateThrottle

__all__ = ["SlidingWindowThrottle"]

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
        self._script = None
        self._waits = threading.local()  # one throttle object serves every thread
        self._clients: dict[int, tuple[object, object]] = {}  # id(pool) -> (pool, client)

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
        client = self._client(backend, redis_key)
        if self._script is None:
            self._script = client.register_script(_CHECK_AND_COUNT)
        now = int(time.time() * 1000)
        args = [now, int(self.duration * 1000), self.num_requests, uuid.uuid4().hex]
        allowed, wait_ms = self._script(keys=[redis_key], args=args, client=client)
        if not allowed:
            self._waits.seconds = int(wait_ms) / 1000
        return bool(allowed)

    def _setting_rate(self) -> str | None:
        return None if self.rate_setting is None else getattr(settings, self.rate_setting)

    def _client(self, backend: RedisCache, redis_key: str):
        """A Redis client on the cache's writing pool, made once per pool: Django's
        ``get_client`` builds a new client (its ~170 response callbacks) on every call; a
        client is safe to share between threads, each command taking a pooled connection."""
        pool = backend._cache._get_connection_pool(write=True)
        made = self._clients.get(id(pool))
        if made is None or made[0] is not pool:
            made = (pool, backend._cache.get_client(redis_key, write=True))
            self._clients[id(pool)] = made
        return made[1]

    def wait(self) -> float | None:
        """Seconds until a call is allowed again (the Retry-After header)."""
        seconds = getattr(self._waits, "seconds", None)
        return seconds if seconds is not None else super().wait()
