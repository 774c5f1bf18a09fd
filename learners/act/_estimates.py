"""Compiled estimates shared by the sample-tree builder: information, pessimistic
error, a leaf's misclassification cost, and a small random generator.

``EE(n, e, CF)`` is C4.5's normal approximation by default (``coeff = z_CF^2``)
or, with a negative ``coeff``, the exact binomial limit of the tree package.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

@njit(cache=True, nogil=True)
def info_mass(counts):
    """``W * H(counts)`` in bits (0 for an empty vector)."""
    total = 0.0
    acc = 0.0
    for c in counts:
        if c > 0.0:
            total += c
            acc -= c * np.log2(c)
    if total <= 0.0:
        return 0.0
    return total * np.log2(total) + acc


@njit(cache=True, nogil=True)
def _info_mass_rest(known, left):
    """``info_mass(known - left)`` without allocating (the threshold sweep's hot spot)."""
    total = 0.0
    acc = 0.0
    for c in range(known.shape[0]):
        v = known[c] - left[c]
        if v > 0.0:
            total += v
            acc -= v * np.log2(v)
    if total <= 0.0:
        return 0.0
    return total * np.log2(total) + acc


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
        e + 0.5 + coeff / 2.0
        + np.sqrt(coeff * ((e + 0.5) * (1.0 - (e + 0.5) / n) + coeff / 4.0))
    ) / (n + coeff)
    return n * pr - e


@njit(cache=True, nogil=True)
def _extra_errors_from_one(n, coeff):
    if 1.5 >= n:
        return 0.67 * (n - 1.0)
    pr = (1.5 + coeff / 2.0 + np.sqrt(coeff * (1.5 * (1.0 - 1.5 / n) + coeff / 4.0))) / (n + coeff)
    return n * pr - 1.0


@njit(cache=True, nogil=True)
def _beta_fraction(a, b, x):
    # continued fraction of the incomplete beta function (Lentz's method)
    tiny = 1e-300
    qab = a + b
    qap = a + 1.0
    qam = a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < tiny:
        d = tiny
    d = 1.0 / d
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1.0 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1.0 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-12:
            break
    return h


@njit(cache=True, nogil=True)
def regularized_beta(a, b, x):
    """``I_x(a, b)``, the regularized incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = np.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * np.log(x) + b * np.log(1.0 - x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


@njit(cache=True, nogil=True)
def exact_upper_limit(e, n, cf):
    """``U_CF(e, n)``: the ``p`` with ``I_p(e + 1, n - e) = 1 - CF`` (the tree package's limit)."""
    if e >= n:
        return 1.0
    if e <= 0.0:
        return 1.0 - cf ** (1.0 / n)
    lo = 0.0
    hi = 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if regularized_beta(e + 1.0, n - e, mid) < 1.0 - cf:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@njit(cache=True, nogil=True)
def expected_errors(n, e, coeff, cf):
    """``EE(n, e, CF)``: C4.5's normal approximation (``coeff = z_CF^2``), or the
    exact binomial limit when ``coeff`` is negative."""
    if n <= 0.0:
        return 0.0
    if e > n:
        e = n
    if coeff < 0.0:
        return n * exact_upper_limit(e, n, cf)
    return e + _extra_errors(n, e, coeff, cf)


@njit(cache=True, nogil=True)
def leaf_label(counts, cost_matrix, laplace):
    """Class of least expected cost (Laplace or frequency beliefs; ties lowest)."""
    k = counts.shape[0]
    best = np.inf
    label = 0
    for j in range(k):
        s = 0.0
        for i in range(k):
            s += (counts[i] + (1.0 if laplace else 0.0)) * cost_matrix[i, j]
        if j == 0 or s < best - 1e-12 * (1.0 + abs(best)):
            best = s
            label = j
    return label


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
