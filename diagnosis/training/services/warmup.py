"""Compiling the learners' numba kernels before anyone trains: set-up and worker start.

A learner's compiled kernels are built the first time it fits (ACT's lookahead engine took
39 s), then kept in numba's on-disk cache.  :func:`warm_kernels` fits every registered learner
once on a tiny made-up table shaped like the app's data (numeric and nominal tests, missing
values, a group discount, a derived test, with and without a referral cost), through the same
registry the training service uses, so the same kernels are compiled for the same argument
types; ``bin/run``'s set-up (``manage.py warm_kernels``) fills the disk cache and each Celery
pool process loads it into memory as it starts (a background thread, config/celery.py), so no
training waits on the compiler.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection

import numpy as np

from diagnosis.shared import learner_registry
from learners import CostModel, evaluate

__all__ = ["warm_kernels"]

logger = logging.getLogger(__name__)

# Per learner, extra parameter sets whose code paths compile kernels the defaults do not reach.
_VARIANTS: dict[str, tuple[dict, ...]] = {
    "act": ({"stop_rule": "prune"},),
    # A budget prices the growing forest after every tree (forest_acquisition_added).
    "budget_rf": ({"budget": 1e6},),
}
# Small enough to fit in a blink once compiled.
_SMALL: dict[str, dict[str, float]] = {
    "act": {"r": 1},
    "lsid3": {"r": 1},
    "icet": {"population": 4, "generations": 2},
}
#: Per learner, its estimator's own settings beyond the form's (set after the registry built
#: it). The selector has no kernels of its own and its candidates are the other learners,
#: warmed on their own: one candidate on two folds runs its code once (0.4 s, where a
#: one-second budget fitted many candidates for 2 s in every worker process that starts).
_NARROW: dict[str, dict] = {
    "cost_selected": {"candidates": ("c45",), "n_splits": 2, "n_repeats": 1},
}


def _table(seed: int = 0) -> tuple[np.ndarray, np.ndarray, CostModel]:
    """60 made-up patients: two numeric tests (one with gaps), a nominal one, a derived one."""
    rng = np.random.default_rng(seed)
    n = 60
    y = np.arange(n) % 3
    a = rng.normal(y * 2.0, 1.0)
    b = rng.normal(-y, 1.0)
    b[::7] = np.nan
    nominal = (y + rng.integers(0, 2, n)) % 3
    derived = a / np.where(np.isnan(b), 1.0, np.abs(b) + 1.0)
    X = np.column_stack([a, b, nominal, derived]).astype(float)
    costs = CostModel(
        [2.0, 5.0, 0.0, 5.0],
        discounted=[2.0, 3.0, 0.0, 5.0],
        groups=[None, "blood", None, "blood"],
        derived={3: (0, 1)},
        free=[2],
    )
    return X, y, costs


def _params(key: str, extra: dict) -> dict:
    spec = learner_registry.get_spec(key)
    known = {p.name for p in spec.params}
    wanted = {**_SMALL.get(key, {}), **extra}
    return {k: v for k, v in wanted.items() if k in known}


# Set while warm_kernels runs in this process, and once it has finished (a Celery pool process
# warms on a background thread as it starts; see wait_for_warm_up).
_warming = threading.Event()
_warm = threading.Event()


def wait_for_warm_up(timeout: float) -> bool:
    """Wait until this process's warm-up, if one is running, has finished (False on timeout).

    A training waits for it before its memory limit is set: the limit is on the whole process's
    address space, so the warm-up's loading (the learners' kernels, LLVM) would count against
    the training, and a warm-up allocation refused by the limit would fail it.
    """
    if not _warming.is_set() or _warm.is_set():
        return True
    return _warm.wait(timeout)


def warm_kernels(*, learners: Collection[str] | None = None) -> dict[str, float]:
    """Fit and evaluate every registered learner once (or only ``learners``, registry keys);
    seconds per learner (compile included).

    Processes warming disjoint sets share numba's disk cache, so a set-up with two cores can
    compile in two (``manage.py warm_kernels --learners ...`` and ``--skip ...``).

    A learner that fails to warm is logged and skipped: warming is an optimisation and must
    never stop the app or the worker from starting. Logs when it is done.
    """
    _warming.set()
    try:
        seconds = _warm_kernels(learners)
    finally:
        _warm.set()
    logger.info("learners' kernels ready in %.1f s", sum(seconds.values()))
    return seconds


def _warm_kernels(learners: Collection[str] | None) -> dict[str, float]:
    X, y, costs = _table()
    matrix = [[0.0, 40.0, 60.0], [50.0, 0.0, 30.0], [80.0, 40.0, 0.0]]
    seconds: dict[str, float] = {}
    for key in learner_registry.LEARNERS:
        if learners is not None and key not in learners:
            continue
        started = time.perf_counter()
        for extra in ({}, *_VARIANTS.get(key, ())):
            for reject_cost in (None, 25.0):
                try:
                    params = _params(key, extra)
                    model = learner_registry.build_estimator(
                        key,
                        params,
                        cost_model=costs,
                        cost_matrix=matrix,
                        reject_cost=reject_cost,
                        categorical_features=[2],
                        random_state=0,
                    )
                    model.set_params(**_NARROW.get(key, {}))
                    model.fit(X, y)
                    evaluate(model, X[:20], y[:20])
                except Exception:  # see the docstring: never stops a start
                    logger.exception("warming the %s kernels failed", key)
        seconds[key] = time.perf_counter() - started
    return seconds
