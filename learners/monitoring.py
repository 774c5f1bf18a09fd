"""Watching a deployed model: the realized cost of confirmed cases, and a drift alarm.

A case is concluded (a class, or a referral) after some tests; later its diagnosis is
confirmed.  :func:`realized_cost` prices it as :func:`learners.evaluate` prices a held-out
case: the tests paid plus the error matrix's cost of the conclusion against the confirmed
class (``policy.expected_costs`` of a certain belief), or the referral cost.

:func:`sequential_drift` says whether the realized cost per patient has drifted away from the
held-out estimate the model was approved on.  The test, chosen because confirmations arrive
one at a time and are looked at after each one:

* It looks after every ``LOOK_EVERY`` (5) confirmations: at look ``j`` (the first
  ``n = 5 j`` confirmations, in the order they were recorded) a **Welch two-sample
  t-test** (``scipy.stats.ttest_ind_from_stats``, ``equal_var=False``)
  compares the realized costs with the held-out costs (their mean, standard deviation and
  count).  Welch's test, not a one-sample test against the held-out mean, because that mean
  is itself an estimate from a finite held-out set, and the two spreads differ.
* Looking again and again would raise false alarms far more often than ``alpha`` if each
  look were tested at ``alpha``.  The looks spend ``alpha`` as a convergent series, look
  ``j`` at ``alpha_j = alpha * 6 / (pi^2 j^2)`` (sum over all j = alpha): a Bonferroni bound
  over infinitely many looks, so the chance of any false alarm, however long the model is
  watched, stays at most ``alpha``.  It is conservative (it needs a clear shift), which is
  what an alarm shown to clinicians should be; looking every 5 confirmations rather than
  every one spends ``alpha`` on fewer looks (look 6, at 30 confirmations, is tested at
  0.00084 instead of 0.000034), at the price of an alarm up to 4 confirmations later.
* The alarm is raised at the first look where that test rejects *and* the realized mean lies
  outside the held-out estimate's 95% interval (the drift is then both real and large enough
  to leave what the model was approved on).  Once raised it stays raised: a sequential test
  stops at its first crossing.

Pure numpy and scipy: no Django, no files.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from .policy import expected_costs, reject_expected_cost

__all__ = ["LOOK_EVERY", "DriftCheck", "look_alpha", "realized_cost", "sequential_drift"]

#: Confirmations between two looks of the drift test.
LOOK_EVERY = 5


def realized_cost(
    *,
    test_cost: float,
    concluded: int | None,
    confirmed: int,
    cost_matrix,
    reject_cost=None,
) -> float:
    """Tests paid plus the cost of the conclusion once the true class is known.

    ``concluded``: the class position concluded, or None for a referral (charged
    ``reject_cost`` for the confirmed class).  ``cost_matrix[actual][predicted]``.
    """
    matrix = np.asarray(cost_matrix, dtype=float)
    k = matrix.shape[0]
    if matrix.shape != (k, k) or not 0 <= confirmed < k:
        raise ValueError(f"confirmed class {confirmed} is not one of the matrix's {k} classes")
    certain = np.zeros(k)
    certain[confirmed] = 1.0  # the belief of someone who knows the answer
    if concluded is None:
        if reject_cost is None:
            raise ValueError("a referral needs a reject cost to be priced")
        error = reject_expected_cost(certain, reject_cost)
    else:
        if not 0 <= concluded < k:
            raise ValueError(f"concluded class {concluded} is not one of {k} classes")
        error = float(expected_costs(certain, matrix)[concluded])
    return float(test_cost) + error


def look_alpha(j: int, alpha: float = 0.05) -> float:
    """The significance spent at look ``j`` (1-based): ``alpha * 6 / (pi^2 j^2)``."""
    if j < 1:
        raise ValueError("looks are numbered from 1")
    return alpha * 6.0 / (math.pi**2 * j * j)


@dataclass(frozen=True)
class DriftCheck:
    """The state of the drift test after the confirmations so far.

    ``alarm``: the boundary was crossed (at confirmation ``raised_at``, with ``p_value`` below
    ``threshold`` there); otherwise ``p_value`` and ``threshold`` are the latest look's.
    ``direction``: "higher" or "lower" than the estimate (None without an alarm).
    """

    n: int
    realized_mean: float | None
    reference_mean: float
    low: float | None
    high: float | None
    alarm: bool
    raised_at: int | None
    p_value: float | None
    threshold: float | None
    direction: str | None
    test: str = "Welch t-test every 5 confirmations, look j at 6 alpha / (pi^2 j^2)"

    def to_dict(self) -> dict:
        return asdict(self)


def _welch_p(mean: float, sd: float, n: int, ref_mean: float, ref_sd: float, ref_n: int):
    if sd == 0.0 and ref_sd == 0.0:
        return 1.0 if mean == ref_mean else 0.0  # no noise at all: any difference is real
    result = stats.ttest_ind_from_stats(
        mean, sd, n, ref_mean, ref_sd, ref_n, equal_var=False, alternative="two-sided"
    )
    p = float(result.pvalue)
    return p if math.isfinite(p) else None


def sequential_drift(
    costs: Sequence[float],
    *,
    reference_mean: float,
    reference_sd: float,
    reference_n: int,
    low: float | None,
    high: float | None,
    alpha: float = 0.05,
) -> DriftCheck:
    """Whether the realized ``costs`` (in the order they were confirmed) drifted outside the
    held-out estimate (``reference_*``, its interval ``low``..``high``); see the module."""
    x = np.asarray(costs, dtype=float)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise ValueError("costs must be a list of finite numbers")
    if reference_n < 2 or not math.isfinite(reference_sd) or reference_sd < 0:
        raise ValueError("the held-out estimate needs at least 2 cases and a finite spread")
    n_all = len(x)
    # running means and standard deviations (ddof=1) of the first n costs, n = 1..N
    counts = np.arange(1, n_all + 1)
    sums = np.cumsum(x)
    squares = np.cumsum(x * x)
    means = sums / counts if n_all else np.array([])
    p_value = threshold = None
    for n in range(LOOK_EVERY, n_all + 1, LOOK_EVERY):
        mean = float(means[n - 1])
        variance = max(0.0, (squares[n - 1] - n * mean * mean) / (n - 1))
        p_value = _welch_p(mean, math.sqrt(variance), n, reference_mean, reference_sd, reference_n)
        threshold = look_alpha(n // LOOK_EVERY, alpha)
        outside = (low is not None and mean < low) or (high is not None and mean > high)
        if p_value is not None and p_value < threshold and outside:
            return DriftCheck(
                n=n_all,
                realized_mean=float(means[-1]),
                reference_mean=float(reference_mean),
                low=low,
                high=high,
                alarm=True,
                raised_at=n,
                p_value=p_value,
                threshold=threshold,
                direction="higher" if mean > reference_mean else "lower",
            )
    return DriftCheck(
        n=n_all,
        realized_mean=float(means[-1]) if n_all else None,
        reference_mean=float(reference_mean),
        low=low,
        high=high,
        alarm=False,
        raised_at=None,
        p_value=p_value,
        threshold=threshold,
        direction=None,
    )
