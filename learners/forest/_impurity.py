"""The admissible impurities of paper 002 (ALGORITHMS.md §6), plain Python.

Both are written once here, as plain functions over a vector of class
weights; :mod:`._kernels` compiles these very functions with numba, so the
compiled and the plain impurity are the same code
(``tests/learners/test_budget_rf.py`` checks them equal on hand-worked tables).

- threshold-Pairs: ``F_a(G) = sum_{i != j} [ [n_i - a]_+ [n_j - a]_+ - a^2 ]_+``
  over ordered pairs of distinct classes ``i, j``;
- Powers: ``F_l(G) = (sum_i n_i)^l - sum_i n_i^l``, ``l >= 2`` (``l = 2`` is
  threshold-Pairs with ``a = 0``).

Both are 0 exactly on a set whose weight is all in one class (Pairs: or
whose classes all stay within ``a`` of the threshold), grow with every case
added (monotone) and are supermodular: the paper's admissibility.
"""

from __future__ import annotations

__all__ = ["PAIRS", "POWERS", "impurity", "pairs_impurity", "powers_impurity"]

#: Impurity codes the compiled builder takes.
PAIRS = 0
POWERS = 1


def pairs_impurity(counts, alpha):
    """threshold-Pairs ``F_alpha`` of class weights ``counts`` (a 1-D array)."""
    total = 0.0
    k = counts.shape[0]
    square = alpha * alpha
    for i in range(k):
        a = counts[i] - alpha
        if a <= 0.0:
            continue
        for j in range(k):
            if j == i:
                continue
            b = counts[j] - alpha
            if b <= 0.0:
                continue  # [a]+ [b]+ = 0 then, and 0 - alpha^2 is clipped to 0
            value = a * b - square
            if value > 0.0:
                total += value
    return total


def powers_impurity(counts, power):
    """Powers ``(sum n_i)^l - sum n_i^l`` of class weights ``counts`` (clipped at 0)."""
    whole = 0.0
    parts = 0.0
    for i in range(counts.shape[0]):
        whole += counts[i]
        parts += counts[i] ** power
    value = whole**power - parts
    return value if value > 0.0 else 0.0


def impurity(counts, kind, alpha, power):
    """Impurity ``kind`` (:data:`PAIRS` with ``alpha`` or :data:`POWERS` with ``power``)."""
    if kind == PAIRS:
        return pairs_impurity(counts, alpha)
    return powers_impurity(counts, power)
