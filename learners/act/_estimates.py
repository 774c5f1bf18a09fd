"""Compiled estimates shared by the sample-tree builder: pessimistic error, a
leaf's label and misclassification cost, and a small random generator.

``EE(n, e, CF)`` is C4.5's normal approximation (``coeff = z_CF^2``) or, with a
negative ``coeff``, the exact binomial limit: the very compiled function the
tree package prunes with (:func:`learners.tree.pessimistic.expected_error_value`).
The leaf label is :func:`learners.tree._formulas.least_cost_class` compiled
from the same function object (``learners.policy.best_class`` on the leaf's
Laplace or frequency probabilities).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..tree import _formulas
from ..tree.pessimistic import expected_error_value

#: the leaf label, compiled from the tree package's one definition
leaf_label = njit(cache=True, nogil=True)(_formulas.least_cost_class)


@njit(cache=True, nogil=True)
def _extra_errors(n, e, coeff, cf):
    # C4.5's AddErrs: the normal approximation of the binomial upper limit
    # (written without recursion: numba cannot cache recursive functions).
    zero = n * (1.0 - np.exp(np.log(cf) / n))
    if e < 1e-6:
        return zero
    if e < 0.9999:
        return zero + e * (_extra_errors_from_one(n, coeff) - zero)
    if e + 0.5 >= n:
        return 0.67 * (n - e)
    pr = (
        e + 0.5 + coeff / 2.0 + np.sqrt(coeff * ((e + 0.5) * (1.0 - (e + 0.5) / n) + coeff / 4.0))
    ) / (n + coeff)
    return n * pr - e


@njit(cache=True, nogil=True)
def _extra_errors_from_one(n, coeff):
    if 1.5 >= n:
        return 0.67 * (n - 1.0)
    pr = (1.5 + coeff / 2.0 + np.sqrt(coeff * (1.5 * (1.0 - 1.5 / n) + coeff / 4.0))) / (n + coeff)
    return n * pr - 1.0


@njit(cache=True, nogil=True)
def expected_errors(n, e, coeff, cf):
    """``EE(n, e, CF)``: C4.5's normal approximation (``coeff = z_CF^2``), or the
    exact binomial limit of the tree package when ``coeff`` is negative."""
    if n <= 0.0:
        return 0.0
    if e > n:
        e = n
    if coeff < 0.0:
        return expected_error_value(n, e, cf)
    return e + _extra_errors(n, e, coeff, cf)


@njit(cache=True, nogil=True)
def leaf_mcost(counts, label, cost_matrix, coeff, cf):
    """``EE(n, n - n_c, cf) * sum_{i != c} (n_i + 1)/(n - n_c + K - 1) * M[i, c]``."""
    k = counts.shape[0]
    n = 0.0
    for i in range(k):
        n += counts[i]
    if n <= 0.0:
        return 0.0
    e = max(n - counts[label], 0.0)
    denominator = e + k - 1.0
    penalty = 0.0
    for i in range(k):
        if i != label:
            penalty += (counts[i] + 1.0) / denominator * cost_matrix[i, label]
    return expected_errors(n, e, coeff, cf) * penalty


@njit(cache=True, nogil=True)
def next_uniform(state):
    """xorshift64* step: a float in [0, 1) from the one-word ``state``."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return float((x * np.uint64(2685821657736338717)) >> np.uint64(11)) / 9007199254740992.0
