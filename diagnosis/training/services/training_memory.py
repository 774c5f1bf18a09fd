"""The memory a training may take: refused up front when its estimate is over the limit, and
held to the limit while it fits, so that an over-limit fit fails with a reason instead of taking
the machine's memory.

The estimate is patients x tests x the learner's bytes per cell (``BYTES_PER_CELL``, peak
resident growth of a fit per training cell measured by ``python -m benchmarks.training_memory``,
with a margin). It is a floor, not a bound: a learner whose memory grows faster than the data
(BudgetRF's walk, nodes x validation rows) is caught by the address-space limit instead.
"""

from __future__ import annotations

import math
import resource
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.exceptions import ValidationError

__all__ = [
    "BYTES_PER_CELL",
    "address_space_limit",
    "check_estimate",
    "estimate_mb",
    "out_of_memory_reason",
]

#: Peak bytes a fit holds per (training patient x test) cell above the process's own size: the
#: larger of ``python -m benchmarks.training_memory``'s figures at 1,000 and 3,000 synthetic
#: patients x 20 tests (the form's defaults; ACT at r=1), doubled for a margin and rounded up.
#: A learner not listed (not measured yet) takes the largest, ``DEFAULT_BYTES_PER_CELL``.
BYTES_PER_CELL: dict[str, float] = {
    "eg2": 120.0,  # measured 57
    "c45": 120.0,  # 59
    "boosting": 760.0,  # 379 (271 at 1,000: grows with the patients)
    "budget_rf": 510.0,  # 254 (145 at 1,000: grows with the patients)
    "dtmc": 40.0,  # 17
    "optimal": 80.0,  # 39
    "idx": 130.0,  # 61
    "csid3": 110.0,  # 52
    "act": 340.0,  # 167
    "lsid3": 100.0,  # 46
    "icet": 160.0,  # 80 (generations=5)
}
DEFAULT_BYTES_PER_CELL = 760.0
#: The share of a dataset's patients a training fits on (the rest is the held-out 30%).
TRAINING_SHARE = 0.7
_MB = 1024 * 1024


def estimate_mb(*, learner: str, n_cases: int, n_tests: int) -> float:
    """The up-front estimate of a training's peak memory above the worker's own size, in MB."""
    if n_cases < 0 or n_tests < 0:
        raise ValueError("counts cannot be negative")
    cells = math.ceil(n_cases * TRAINING_SHARE) * max(n_tests, 1)
    return cells * BYTES_PER_CELL.get(learner, DEFAULT_BYTES_PER_CELL) / _MB


def check_estimate(*, learner: str, n_cases: int, n_tests: int, limit_mb: float) -> None:
    """ValidationError naming the sizes when the estimate is above ``limit_mb`` (0: no limit)."""
    if limit_mb <= 0:
        return
    needed = estimate_mb(learner=learner, n_cases=n_cases, n_tests=n_tests)
    if needed > limit_mb:
        raise ValidationError(
            f"This training would need about {needed:,.3g} MB of memory ({n_cases:,} patients "
            f"x {n_tests} tests with this learner), above the worker's limit of {limit_mb:,g} MB "
            "(TRAINING_MEMORY_LIMIT_MB): train on fewer patients or tests, or choose a lighter "
            "learner."
        )


def out_of_memory_reason(limit_mb: float, exc: BaseException) -> str:
    """What the model page says when a fit ran out of its memory."""
    detail = str(exc).strip()
    return (
        f"The training needed more memory than the worker allows ({limit_mb:,g} MB, "
        "TRAINING_MEMORY_LIMIT_MB) and was stopped before it could take the machine's memory"
        f"{f' ({detail})' if detail else ''}. Train on fewer patients or tests, or choose a "
        "lighter learner or settings."
    )


def _address_space_bytes() -> int:
    """This process's virtual size now (Linux /proc; 0 where unknown)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


@contextmanager
def address_space_limit(limit_mb: float) -> Iterator[int | None]:
    """While inside, this process may grow its address space by at most ``limit_mb`` MB.

    An allocation past it fails at once with MemoryError (numpy's "Unable to allocate", or
    numba's), which the training stores as its reason, instead of the kernel's OOM killer
    taking a process of the machine. Only the soft limit is lowered (and restored after), so
    the process stays free to grow again. Yields the limit set in bytes, or None when none was
    set (``limit_mb`` 0, or the size is unknown).
    """
    base = _address_space_bytes()
    if limit_mb <= 0 or base == 0:
        yield None
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = base + int(limit_mb * _MB)
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    if soft != resource.RLIM_INFINITY:
        wanted = min(wanted, soft)
    resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
    try:
        yield wanted
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
