"""Compiled test pricing: ``CostModel.marginal_cost`` over a done-count vector.

A path's done tests are counted in an int array (derived tests also count
their inputs), so adding and removing a test on the way down and back up is
O(1).  ``prices`` is the tuple built by :func:`._encoding.encode_prices`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

@njit(cache=True, nogil=True)
def _plain_price(t, done, full, discounted, group, free, derived):
    if done[t] > 0 or free[t]:
        return 0.0
    g = group[t]
    if g >= 0:
        for j in range(group.shape[0]):
            if j != t and group[j] == g and done[j] > 0 and not free[j] and not derived[j]:
                return discounted[t]
    return full[t]


@njit(cache=True, nogil=True)
def marginal_cost(t, done, prices):
    """``CostModel.marginal_cost`` for a done-count vector (closure included)."""
    full, discounted, group, free, derived, source_start, sources = prices
    if done[t] > 0 or free[t]:
        return 0.0
    if not derived[t]:
        return _plain_price(t, done, full, discounted, group, free, derived)
    price = 0.0
    n_sources = source_start[t + 1] - source_start[t]
    bought = np.zeros(n_sources, dtype=np.bool_)
    for j in range(n_sources):
        s = sources[source_start[t] + j]
        if done[s] == 0:
            price += _plain_price(s, done, full, discounted, group, free, derived)
            done[s] += 1
            bought[j] = True
    for j in range(n_sources):
        if bought[j]:
            done[sources[source_start[t] + j]] -= 1
    return price


@njit(cache=True, nogil=True)
def mark_done(t, done, prices, step):
    """Add (step=1) or remove (step=-1) ``t`` and its derived inputs from ``done``."""
    source_start = prices[5]
    sources = prices[6]
    done[t] += step
    for j in range(source_start[t], source_start[t + 1]):
        done[sources[j]] += step
