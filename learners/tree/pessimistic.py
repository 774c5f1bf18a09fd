"""C4.5's pessimistic error estimate (ALGORITHMS.md §3), shared by every tree learner.

``U_CF(e, n)`` is the upper limit of the one-sided binomial confidence interval
for ``e`` errors observed in ``n`` cases at confidence ``CF``; ``EE(n, e, CF) =
n * U_CF(e, n)`` is the expected number of errors a leaf will make.

The limit is SciPy's ``betaincinv``, called through its C entry point from
one numba-compiled function, :func:`expected_error_value`.  The Python tree
builder prunes with it (through :func:`expected_error`) and the compiled
lookahead builder of :mod:`learners.act._engine` calls the same compiled
function, so both compute the same bits (numba can cache it: the entry point
is bound by symbol name, not as a pointer baked into the code).
"""

from __future__ import annotations

import llvmlite.binding as llvm
from numba import njit, types
from numba.extending import get_cython_function_address

__all__ = ["expected_error", "expected_error_value", "upper_confidence_limit"]

# scipy.special.cython_special.betaincinv(double a, double b, double y) for doubles;
# the trailing int is Cython's skip-dispatch flag of a cpdef function.
_SYMBOL = "learners_tree_scipy_betaincinv"
llvm.add_symbol(
    _SYMBOL,
    get_cython_function_address("scipy.special.cython_special", "__pyx_fuse_0betaincinv"),
)
_betaincinv = types.ExternalFunction(
    _SYMBOL, types.float64(types.float64, types.float64, types.float64, types.intc)
)


@njit(cache=True, nogil=True)
def upper_limit_value(e, n, cf):
    """``U_CF(e, n)`` without argument checks (see :func:`upper_confidence_limit`)."""
    if e >= n:
        return 1.0
    # Inside njit an ExternalFunction call is a call of the C function; numba's stubs type
    # calling a Type as building a signature from other types.
    return _betaincinv(e + 1.0, n - e, 1.0 - cf, 0)  # type: ignore[call-overload]


@njit(cache=True, nogil=True)
def expected_error_value(n, e, cf):
    """``EE(n, e, CF) = n * U_CF(e, n)`` without argument checks; 0 when ``n <= 0``."""
    if n <= 0.0:
        return 0.0
    return n * upper_limit_value(e, n, cf)


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
    return float(upper_limit_value(float(e), float(n), float(cf)))


def expected_error(n: float, e: float, cf: float = 0.25) -> float:
    """Expected errors ``EE(n, e, CF) = n * U_CF(e, n)`` (a count, not a rate).

    Zero cases give zero expected errors (an empty branch of a nominal split).
    """
    if n <= 0:
        if n < 0:
            raise ValueError(f"n must be non-negative, got {n!r}")
        return 0.0
    _check(e, n, cf)
    return float(expected_error_value(float(n), float(e), float(cf)))


def _check(e: float, n: float, cf: float) -> None:
    if not 0.0 < cf < 1.0:
        raise ValueError(f"cf must be in (0, 1), got {cf!r}")
    if not n > 0:
        raise ValueError(f"n must be positive, got {n!r}")
    if not e >= 0:
        raise ValueError(f"e must be non-negative, got {e!r}")
