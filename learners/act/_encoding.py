"""The compact forms the compiled builder works on: ranked data and price arrays."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from ..costs import CostModel

__all__ = ["EncodedData", "encode_data", "encode_prices", "normal_coefficient"]


@dataclass
class EncodedData:
    """``X`` recoded for :mod:`._engine`.

    ``ranks[i, f]`` is the position of ``X[i, f]`` among the sorted distinct
    training values of ``f`` (numeric) or among its category codes (nominal);
    -1 means missing.  ``values[f]`` lists those distinct values.
    """

    ranks: np.ndarray
    nominal: np.ndarray
    n_values: np.ndarray
    values: list[np.ndarray]

    def threshold(self, f: int, boundary: int, upper: int) -> float:
        """Midpoint between ranks ``boundary`` and ``upper`` of ``f`` (C4.5's threshold)."""
        lo = float(self.values[f][boundary])
        hi = float(self.values[f][upper])
        mid = lo + (hi - lo) / 2.0
        return mid if mid < hi else lo


def encode_data(X: np.ndarray, categories: Mapping[int, np.ndarray]) -> EncodedData:
    """Rank-encode ``X`` (NaN = missing); ``categories`` maps nominal features to codes."""
    n_samples, n_features = X.shape
    ranks = np.full((n_samples, n_features), -1, dtype=np.int64)
    nominal = np.zeros(n_features, dtype=bool)
    n_values = np.zeros(n_features, dtype=np.int64)
    values = []
    for f in range(n_features):
        column = X[:, f]
        known = ~np.isnan(column)
        if f in categories:
            distinct = np.asarray(categories[f], dtype=float)
            nominal[f] = True
        else:
            distinct = np.unique(column[known])
        if distinct.size == 0:
            distinct = np.array([0.0])
        ranks[known, f] = np.searchsorted(distinct, column[known])
        n_values[f] = distinct.size
        values.append(distinct)
    return EncodedData(ranks=ranks, nominal=nominal, n_values=n_values, values=values)


def encode_prices(model: CostModel) -> tuple:
    """Price arrays for :func:`._pricing.marginal_cost` and :func:`._pricing.mark_done`.

    ``(full, discounted, group, free, derived, source_start, sources,
    closure_start, closure)``: ``sources[source_start[t]:source_start[t + 1]]``
    are derived test ``t``'s direct inputs in index order, and
    ``closure[closure_start[t]:closure_start[t + 1]]`` every test doing ``t``
    makes done besides ``t`` (``CostModel.done_closure``).  Derived inputs may
    be derived themselves, to any depth, as in ``CostModel``.  To price with
    other full prices (ICET's biased costs), encode a ``CostModel`` holding them.
    """
    n = model.n_features
    full = model.costs.astype(float).copy()
    discounted = model.discounted.astype(float).copy()
    names: dict = {}
    group = np.array(
        [-1 if g is None else names.setdefault(g, len(names)) for g in model.groups],
        dtype=np.int64,
    )
    free = np.zeros(n, dtype=bool)
    free[list(model.free)] = True
    derived = np.zeros(n, dtype=bool)
    source_start = np.zeros(n + 1, dtype=np.int64)
    closure_start = np.zeros(n + 1, dtype=np.int64)
    sources: list[int] = []
    closure: list[int] = []
    for t in range(n):
        inputs = sorted(model.derived.get(t, ()))
        derived[t] = bool(inputs)
        sources.extend(inputs)
        source_start[t + 1] = len(sources)
        closure.extend(sorted(model.done_closure([t]) - {t}))
        closure_start[t + 1] = len(closure)
    return (
        full,
        discounted,
        group,
        free,
        derived,
        source_start,
        np.array(sources, dtype=np.int64),
        closure_start,
        np.array(closure, dtype=np.int64),
    )


def normal_coefficient(cf: float) -> float:
    """``z^2`` of C4.5's normal approximation at confidence ``cf``."""
    return float(norm.ppf(1.0 - cf) ** 2)
