"""C4.5's pessimistic error estimate (ALGORITHMS.md §3), shared by every tree learner.

``U_CF(e, n)`` is the upper limit of the one-sided binomial confidence interval
for ``e`` errors observed in ``n`` cases at confidence ``CF``; ``EE(n, e, CF) =
n * U_CF(e, n)`` is the expected number of errors a leaf will make.
"""

from __future__ import annotations

from scipy.special import betaincinv

__all__ = ["expected_error", "upper_confidence_limit"]


def upper_confidence_limit(e: float, n: float, cf: float = 0.25) -> float:
    """Exact binomial upper confidence limit ``U_CF(e, n)`` on the error rate.

    The limit ``p`` solves ``P(X <= e) = CF`` for ``X ~ Binomial(n, p)``,
    written with the regularized incomplete beta function so that fractional
    counts (C4.5's fractional cases) are handled:
    ``p = I^-1_{1-CF}(e + 1, n - e)``.  This is the exact limit, not C4.5's
    normal approximation; for ``e = 0`` both give ``1 - CF**(1/n)``.

    Parameters
    ----------
    e : float
        Number (weight) of errors, ``0 <= e``.
    n : float
        Number (weight) of cases, ``n > 0``.
    cf : float
        Confidence level in ``(0, 1)``; C4.5's default is 0.25.

    Returns
    -------
    float
        The upper limit, in ``[0, 1]``; 1 when ``e >= n``.

    Examples
    --------
    >>> round(upper_confidence_limit(0, 6, 0.25), 3)
    0.206
    """
    _check(e, n, cf)
    if e >= n:
        return 1.0
    return float(betaincinv(e + 1.0, n - e, 1.0 - cf))


def expected_error(n: float, e: float, cf: float = 0.25) -> float:
    """Expected errors ``EE(n, e, CF) = n * U_CF(e, n)`` (a count, not a rate).

    Zero cases give zero expected errors (an empty branch of a nominal split).
    """
    if n <= 0:
        if n < 0:
            raise ValueError(f"n must be non-negative, got {n!r}")
        return 0.0
    return n * upper_confidence_limit(e, n, cf)


def _check(e: float, n: float, cf: float) -> None:
    if not 0.0 < cf < 1.0:
        raise ValueError(f"cf must be in (0, 1), got {cf!r}")
    if not n > 0:
        raise ValueError(f"n must be positive, got {n!r}")
    if not e >= 0:
        raise ValueError(f"e must be non-negative, got {e!r}")
