"""Password hashing that never takes the CPU from the steps.

A sign-in spends about half a second of CPU on Django's PBKDF2.  A crowd of sign-ins (a shift
change) on the web workers' threads took the cores from the clinicians' steps: 100 sign-ins at
once made the steps' p95 eleven times slower (``benchmarks/sign_in_load``).  Here the same hash
(same algorithm name, iterations and result: stored passwords are unchanged) is computed on a
small pool of threads of lowered CPU priority (``SIGN_IN_HASH_NICE``, Linux's per-thread nice,
and the SCHED_IDLE policy, under which a waking step preempts the hash at once),
one pool per process with ``SIGN_IN_CONCURRENCY`` threads: when steps and sign-ins both want a
core, the kernel gives it to the step; with no steps waiting the hashes run at full speed.  The
request's thread waits for its hash without using the CPU (PBKDF2 runs in OpenSSL without
Python's lock).
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher

__all__ = ["LowPriorityPBKDF2PasswordHasher"]

log = logging.getLogger(__name__)

_pool: ThreadPoolExecutor | None = None
_pool_pid: int | None = None
_pool_lock = threading.Lock()


def _lower_priority() -> None:
    nice = int(getattr(settings, "SIGN_IN_HASH_NICE", 10))
    if nice <= 0 or not hasattr(os, "setpriority"):
        return
    thread = threading.get_native_id()
    try:  # Linux: a thread id as the "process" sets that thread's nice alone
        os.setpriority(
            os.PRIO_PROCESS, thread, min(os.getpriority(os.PRIO_PROCESS, thread) + nice, 19)
        )
    except OSError as exc:
        log.warning("could not lower the password-hashing thread's priority: %s", exc)
    if hasattr(os, "SCHED_IDLE"):
        # SCHED_IDLE: the hash runs only on a core no step wants, and a waking step preempts it
        # at once (a nice-19 thread still holds a core until the scheduler's next tick).
        try:
            os.sched_setscheduler(thread, os.SCHED_IDLE, os.sched_param(0))
        except OSError as exc:
            log.warning("could not move the password-hashing thread to SCHED_IDLE: %s", exc)


def _hashing_pool() -> ThreadPoolExecutor:
    """This process's pool (a forked gunicorn worker makes its own: threads do not fork)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(
                max_workers=max(int(settings.SIGN_IN_CONCURRENCY), 1),
                thread_name_prefix="password-hash",
                initializer=_lower_priority,
            )
            _pool_pid = os.getpid()
        return _pool


class LowPriorityPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """Django's ``pbkdf2_sha256``, computed on the low-priority hashing threads."""

    def encode(self, password, salt, iterations=None):
        encode = super().encode
        return _hashing_pool().submit(encode, password, salt, iterations).result()
