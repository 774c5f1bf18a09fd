"""The scalar formulas of the greedy split criteria and the leaf label (ALGORITHMS.md §2).

ONE definition, in plain Python written so numba can compile it: the
criteria of :mod:`learners.tree._criteria` call these functions as they are,
and the compiled lookahead builder of :mod:`learners.act._engine` compiles the
very same function objects with ``numba.njit``.  A compiled copy is therefore
generated from this code, never re-typed.

The zero-cost rule
------------------
IDX ranks by ``DeltaI / c`` and CS-ID3 by ``DeltaI^2 / c``; both are undefined
at ``c = 0``.  §2 resolves this with a tier: a test of zero cost ranks before
any priced test, and zero-cost tests rank among themselves by ``DeltaI``.  EG2's
``(2^DeltaI - 1) / (c + 1)^w`` is defined at ``c = 0``, so EG2 (and ID3, which
ignores costs) needs no tier and always ranks by its formula.

Which cost ``c`` a ratio criterion divides by is :func:`ranking_cost`: the
test's marginal cost in the node's context, except for a test already done on
the path.  Such a test costs nothing to re-read, but that zero is not a
price: it is the price already paid for the measurement, which every
threshold taken from it shares.  Ranking it in the zero tier made IDX and
CS-ID3 re-split a numeric test on the path for the slightest gain, at every
node below, slivering one feature instead of using the informative ones (the
tree then fell below 0.83 training accuracy on easy blobs).  A re-read
therefore ranks at the measurement's own price (its price with nothing done)
shared equally among the thresholds the path takes from it, this one
included: the ``k``-th threshold of a test ranks at ``price / k``.  The ratio
stays defined, a re-read stays cheaper than buying the test afresh (more so
the more the measurement has already been used), and only a test free in
itself (own price 0, e.g. a questionnaire answer) is in the zero tier.  EG2
keeps the true marginal cost 0 (its formula is defined there).  The deployed
policy still charges a re-read nothing: this is only how the criterion ranks
it.  On Turney's heart and hepatitis prices (``python -m
benchmarks.compare_trees --datasets heart,hepatitis``) the mean total cost
moved by at most $1.5 per case at mc = 10 (the slivers were cheap) and fell
at mc >= 1000 (CS-ID3 on hepatitis, mc = 10000: 1873 -> 1682).

The leaf label
--------------
:func:`least_cost_class` is :func:`learners.policy.best_class` applied to the
leaf's Laplace or frequency probabilities, written out as loops so numba can
compile it (``tests/learners/test_split_formulas.py`` checks the two agree).
"""

from __future__ import annotations

import math

import numpy as np
from numba.extending import register_jitable

__all__ = [
    "ID3",
    "EG2",
    "IDX",
    "CSID3",
    "eg2_icf",
    "idx_ratio",
    "csid3_ratio",
    "ranking_cost",
    "split_key",
    "least_cost_class",
    "smoothed_row",
]

_LN2 = math.log(2.0)

#: criterion codes shared by the Python criteria and the compiled builder
ID3 = 0
EG2 = 1
IDX = 2
CSID3 = 3


@register_jitable
def eg2_icf(gain, cost, w):
    """EG2's information cost function ``(2^DeltaI - 1) / (c + 1)^w`` (Núñez 1991).

    Written with ``expm1``/``exp``/``log1p`` rather than ``**``: numba lowers a
    power to LLVM's ``pow``, which differs from CPython's in the last bit for
    some inputs, while these functions give the same bits compiled or not (so
    the engine and the Python builder rank candidates identically).
    """
    return math.expm1(gain * _LN2) / math.exp(w * math.log1p(cost))


@register_jitable
def idx_ratio(gain, cost):
    """IDX (Norton 1989): ``DeltaI / c`` (``c > 0``)."""
    return gain / cost


@register_jitable
def csid3_ratio(gain, cost):
    """CS-ID3 (Tan 1993): ``DeltaI^2 / c`` (``c > 0``)."""
    return gain * gain / cost


@register_jitable
def ranking_cost(criterion, cost, on_path, own_price):
    """The cost ``c`` the criterion divides by (see the module docstring).

    ``cost`` is the marginal cost in the node's context, ``on_path`` whether
    the test is already done on the path, ``own_price`` its price with
    nothing done shared among the thresholds the path takes from it
    (``price / k`` for the ``k``-th; the caller counts them).  IDX and CS-ID3
    rank a re-read at ``own_price``; EG2 and ID3 use the marginal cost.
    """
    if (criterion == IDX or criterion == CSID3) and on_path:
        return own_price
    return cost


@register_jitable
def split_key(criterion, gain, cost, w):
    """Ranking key ``(tier, value)`` of a split with gain ``DeltaI`` and ranking cost ``c``.

    Larger keys win (tier first); ties go to the lowest feature index, which
    the callers ensure by scanning features in order and replacing the best
    only on a strictly larger key.  Tier 1 is the zero-cost rule of the
    ratio criteria (IDX, CS-ID3), whose formulas are undefined at ``c = 0``.
    """
    if criterion == ID3:
        return 0, gain
    if criterion == EG2:
        return 0, eg2_icf(gain, cost, w)
    if cost <= 0.0:
        return 1, gain
    if criterion == IDX:
        return 0, idx_ratio(gain, cost)
    return 0, csid3_ratio(gain, cost)


@register_jitable
def key_beats(tier, value, best_tier, best_value):
    """Whether key ``(tier, value)`` is strictly larger than the best so far."""
    return tier > best_tier or (tier == best_tier and value > best_value)


@register_jitable
def smoothed_row(counts, laplace, out):
    """Write a node's class probabilities ``(n_c + s) / sum_i (n_i + s)`` into ``out``.

    ``s = 1`` (Laplace) or 0 (frequency; uniform when the node has no
    weight): :func:`learners.tree._structure.smoothed_proba`, same arithmetic.
    """
    k = counts.shape[0]
    s = 1.0 if laplace else 0.0
    total = 0.0
    for i in range(k):
        out[i] = counts[i] + s
        total += out[i]
    for i in range(k):
        out[i] = out[i] / total if total > 0.0 else 1.0 / k
    return out


@register_jitable
def least_cost_class(counts, cost_matrix, laplace):
    """Class of least expected cost for a leaf with class weights ``counts``.

    The beliefs are :func:`smoothed_row` (Laplace or frequency); the class is
    ``argmin_j sum_i p_i M[i, j]``, ties to the lowest position, computed as
    :func:`learners.policy.best_class` computes it (a tie broken by rounding
    breaks the same way).
    """
    proba = smoothed_row(counts, laplace, np.empty(counts.shape[0]))
    # ``@`` as in policy.expected_costs: numba's matrix product gives numpy's bits
    return int(np.argmin(proba @ cost_matrix))
