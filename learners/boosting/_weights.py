"""The weight updates of Boosting and Cost-Boosting (paper 004, ALGORITHMS.md §7).

Plain functions of the weight vector, so each rule is checked by hand in
``tests/learners/test_boosting.py``.  Weights sum to 1 (paper 004's
``w_k(n)``); the trees are grown on ``N w_k(n)`` so that C4.5's counts
(MINOBJS, the pessimistic error) keep their meaning.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "MAX_RESETS",
    "RESET_NOISE",
    "adaboost_alpha",
    "adaboost_update",
    "check_unity",
    "cost_boosting_update",
    "needs_reset",
    "reset_weights",
    "unit_error_scale",
    "weighted_error",
]

#: Half-width of the uniform noise of a reset: ``w(n) = (1 + u_n) / Z``, ``u_n ~ U(-0.1, 0.1)``.
#: Paper 004 says "set equal and perturbed with uniform noise" without the size.
RESET_NOISE = 0.1
#: Resets allowed in a row for one trial.  Paper 004 retries until the error is in (0, 0.5),
#: which never ends when every tree is perfect on the training cases (separable data): after
#: this many resets in a row boosting stops with the trees it has (a perfect first tree is
#: kept alone, with weight 1).
MAX_RESETS = 3


def weighted_error(weights, misclassified) -> float:
    """``eps_k = sum_n w_k(n) d(n)`` (paper 004, equation 1)."""
    w = np.asarray(weights, dtype=float)
    d = np.asarray(misclassified, dtype=bool)
    return float(w[d].sum())


def needs_reset(eps: float) -> bool:
    """Paper 004's reset rule: the weights are reset when ``eps >= 0.5`` or ``eps = 0``."""
    return eps >= 0.5 or eps <= 0.0


def adaboost_alpha(eps: float) -> float:
    """A tree's vote ``alpha_k = 1/2 ln((1 - eps_k) / eps_k)`` (equation 3), ``0 < eps < 0.5``."""
    if not 0.0 < eps < 0.5:
        raise ValueError(f"alpha needs an error in (0, 0.5), got {eps!r}; reset the weights")
    return 0.5 * math.log((1.0 - eps) / eps)


def adaboost_update(weights, misclassified, eps: float) -> np.ndarray:
    """``w_{k+1}(n) = w_k(n) exp(-alpha_k (-1)^{d(n)}) / z_k`` (equations 2 and 3).

    A misclassified case is multiplied by ``exp(alpha_k)``, a correct one by
    ``exp(-alpha_k)``; ``z_k = 2 sqrt((1 - eps_k) eps_k)`` is the sum of the
    products when the weights sum to 1, so the new weights sum to 1 too (the
    sum is divided out, which equals ``z_k`` up to rounding).
    """
    w = np.asarray(weights, dtype=float)
    d = np.asarray(misclassified, dtype=bool)
    alpha = adaboost_alpha(eps)
    updated = w * np.where(d, math.exp(alpha), math.exp(-alpha))
    return updated / updated.sum()


def cost_boosting_update(weights, actual, predicted, cost_matrix) -> np.ndarray:
    """Cost-Boosting's update (equations 5 and 6), normalized to sum 1.

    The model passes :func:`unit_error_scale` of its matrix, so the weights do not
    depend on the scale of the error costs.

    ``w'(n) = M[actual(n), predicted(n)]`` for a misclassified case and
    ``N w_k(n)`` for a correct one; ``M[actual, predicted]`` is the cost
    matrix (paper 004's ``cost(i, j)``: the cost of predicting ``j`` for a
    class-``i`` case).
    """
    w = np.asarray(weights, dtype=float)
    actual = np.asarray(actual, dtype=np.int64)
    predicted = np.asarray(predicted, dtype=np.int64)
    matrix = np.asarray(cost_matrix, dtype=float)
    updated = np.where(actual != predicted, matrix[actual, predicted], w.shape[0] * w)
    return updated / updated.sum()


def unit_error_scale(cost_matrix) -> np.ndarray:
    """``cost_matrix`` divided by its smallest off-diagonal cost: the matrix Cost-Boosting
    updates its weights with.

    Paper 004's update gives a misclassified case the weight ``cost(actual,
    predicted)`` against ``N w(n)`` for a correct one (1 on average), and
    asks for the unity condition (every error costs at least 1) so that no
    error weighs less than a correct case.  The paper's matrices have their
    cheapest error at exactly 1 (integers 1..10); a matrix stated in money
    does not: at uniform error costs of 10,000 every misclassified case would
    weigh 10,000 times an average correct one, the next tree would be grown on
    the errors alone, and the weights would grow with the scale of the prices.
    Dividing by the smallest off-diagonal cost puts the cheapest error at
    exactly 1, the unity condition met with equality, and keeps every ratio
    between errors (what the update is about), so the weights are the same
    for ``M`` and ``c * M`` at any scale ``c > 0``: a uniform matrix becomes
    the 0/1 matrix.  A matrix already in the paper's form (cheapest error 1)
    is unchanged.

    Raises
    ------
    ValueError
        When some off-diagonal cost is 0 (a free error cannot set the scale;
        :func:`check_unity` refuses such a matrix for Cost-Boosting anyway).
    """
    matrix = np.asarray(cost_matrix, dtype=float)
    off = ~np.eye(matrix.shape[0], dtype=bool)
    if not off.any():
        return matrix
    smallest = float(matrix[off].min())
    if smallest <= 0.0:
        raise ValueError("every error must cost more than 0 to scale the matrix to unit errors")
    return matrix / smallest


def reset_weights(n: int, rng: np.random.Generator) -> np.ndarray:
    """Equal weights perturbed by uniform noise (:data:`RESET_NOISE`), normalized to sum 1."""
    noisy = 1.0 + rng.uniform(-RESET_NOISE, RESET_NOISE, size=n)
    return noisy / noisy.sum()


def check_unity(cost_matrix) -> np.ndarray:
    """``cost_matrix`` if it meets paper 004's unity condition (every off-diagonal cost >= 1).

    Raises
    ------
    ValueError
        Naming the entry below 1 and why Cost-Boosting needs the condition.
    """
    matrix = np.asarray(cost_matrix, dtype=float)
    off = ~np.eye(matrix.shape[0], dtype=bool)
    low = off & (matrix < 1.0)
    if not low.any():
        return matrix
    i, j = (int(v) for v in np.argwhere(low)[0])
    smallest = float(matrix[off].min())
    remedy = (
        f"divide the matrix by its smallest off-diagonal cost ({smallest:g}), or "
        if smallest > 0
        else "give every error a positive cost, or "
    )
    raise ValueError(
        f"Cost-Boosting needs the unity condition (paper 004): every error must cost at least "
        f"1, but cost_matrix[{i}, {j}] = {matrix[i, j]:g}. Its update gives a misclassified "
        "case the weight cost(actual, predicted) against N w(n) for a correct one (1 on "
        "average), so an error costing less than 1 would weigh less than a correct case. "
        f"To fix it, {remedy}use plain Boosting (cost_sensitive=False), which takes any matrix."
    )
