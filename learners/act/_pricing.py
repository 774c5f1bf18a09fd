"""Compiled test pricing: ``CostModel.marginal_cost`` over a done-count vector.

A path's done tests are counted in an int array; marking a test marks the
whole closure it brings (a derived test's inputs, their inputs, ...), so
adding and removing a test on the way down and back up is cheap and
``done[t] > 0`` reads "``t`` is in ``CostModel.done_closure(path)``".
``prices`` is the tuple built by :func:`._encoding.encode_prices`.

:func:`marginal_cost` follows ``CostModel._price`` step by step, derived
tests of any depth included (the recursion unrolled into an explicit stack,
which numba can cache), adding the same numbers in the same order, so the
compiled price equals ``CostModel.marginal_cost`` exactly
(``tests/learners/test_act_pricing.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _plain_price(t, done, full, discounted, group, free, derived):
    """A test that is not derived: 0 when done or free, discounted after a group-mate."""
    if done[t] > 0 or free[t]:
        return 0.0
    g = group[t]
    if g >= 0:
        for j in range(group.shape[0]):
            if j != t and group[j] == g and done[j] > 0 and not free[j] and not derived[j]:
                return discounted[t]
    return full[t]


@njit(cache=True, nogil=True)
def mark_done(t, done, prices, step):
    """Add (step=1) or remove (step=-1) ``t`` and every test its closure brings."""
    closure_start = prices[7]
    closure = prices[8]
    done[t] += step
    for j in range(closure_start[t], closure_start[t + 1]):
        done[closure[j]] += step


@njit(cache=True, nogil=True)
def marginal_cost(t, done, prices):
    """``CostModel.marginal_cost`` for a done-count vector (see the module docstring).

    A derived test buys its inputs in index order, each at its own marginal
    price given what is done so far (a derived input recursively); ``done``
    is restored before returning.
    """
    full, discounted, group, free, derived, source_start, sources = prices[:7]
    if done[t] > 0 or free[t]:
        return 0.0
    if not derived[t]:
        return _plain_price(t, done, full, discounted, group, free, derived)
    n = done.shape[0]
    frame_test = np.empty(n + 1, dtype=np.int64)
    frame_next = np.empty(n + 1, dtype=np.int64)
    frame_sum = np.empty(n + 1)
    marked = np.empty(n + 1, dtype=np.int64)
    n_marked = 0
    top = 0
    frame_test[0] = t
    frame_next[0] = source_start[t]
    frame_sum[0] = 0.0
    while True:
        u = frame_test[top]
        if frame_next[top] < source_start[u + 1]:
            s = sources[frame_next[top]]
            frame_next[top] += 1
            if done[s] > 0:
                continue  # already done: CostModel adds its price, 0
            if derived[s] and not free[s]:
                top += 1
                frame_test[top] = s
                frame_next[top] = source_start[s]
                frame_sum[top] = 0.0
                continue
            frame_sum[top] += _plain_price(s, done, full, discounted, group, free, derived)
            mark_done(s, done, prices, 1)
            marked[n_marked] = s
            n_marked += 1
            continue
        if top == 0:
            break
        value = frame_sum[top]
        top -= 1
        frame_sum[top] += value
        mark_done(u, done, prices, 1)
        marked[n_marked] = u
        n_marked += 1
    for i in range(n_marked):
        mark_done(marked[i], done, prices, -1)
    return frame_sum[0]
