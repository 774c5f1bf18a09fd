"""Compiled search of :mod:`learners.tree.optimal`: the least-cost tree of bounded depth.

The cases are binned once, case-major like ACT's ranks (``bins[case, feature]``): a
numeric feature by its few candidate thresholds
(bin ``k`` holds the values above ``k`` thresholds, so ``x <= t_j`` is
``bin <= j``), a nominal one by its category index; -1 is missing.  A split is
(feature, ``j``): numeric branch 0 is ``bin <= j`` and branch 1 the rest; a
nominal split has one branch per category.  Missing values follow the tree
builder (C4.5): such a case goes down every branch, its weight times the
branch's share of the known weight; a split needs two branches holding
``min_leaf`` known weight.

:func:`subtree_cost` is the exhaustive search: the least of the leaf's cost
(``misclassification_cost``, DTMC's node cost) and, for every valid split,
the node's weight times the test's price on the path plus the children's least
costs one level down.  Prices come from a table the caller fills from
``CostModel.marginal_cost`` (``prices[a, b, f]``: ``f`` after the path's tests
``a`` and ``b``, ``n_features`` meaning none).  A split's branches are the tree
package's shared kernels, the ones ACT's engine uses (``branch_totals``,
``branch_cases``, ``class_counts``); :func:`split_shares` adds the ``min_leaf`` rule.
The search and the driver that builds the chosen tree both use them; the depth-1
level scores splits from per-bin class weights instead, tested equal to them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import branch_cases, branch_totals, class_counts, misclassification_cost

_EPS = 1e-9


@njit(cache=True, nogil=True)
def n_splits(f, nominal, n_bins):
    """How many splits feature ``f`` offers: one per threshold, or one (nominal)."""
    if nominal[f]:
        return 1
    return n_bins[f] - 1


@njit(cache=True, nogil=True)
def split_shares(bins, f, nominal, j, n_branches, cases, weights, min_leaf):
    """(valid, each branch's share of the known weight) of split ``j`` on feature ``f``:
    valid when two branches hold ``min_leaf`` known weight."""
    known = branch_totals(bins, f, j, nominal, n_branches, cases, weights)
    total = known.sum()
    held = 0
    for b in range(n_branches):
        if known[b] + _EPS >= min_leaf:
            held += 1
    if total <= 0.0 or held < 2:
        return False, known
    return True, known / total


@njit(cache=True, nogil=True)
def _stops(cw, total, min_leaf):
    """A node too light to split or pure stays a leaf (as the tree builder)."""
    return total + _EPS < 2.0 * min_leaf or cw.max() >= total - _EPS


@njit(cache=True, nogil=True)
def _fixed_on_path(f, nominal, a, b):
    """A nominal test on the path already fixed its value below it: no second split."""
    return nominal[f] and (f == a or f == b)


@njit(cache=True, nogil=True)
def _better(cost, best):
    """A split must lower the cost by more than rounding (ties keep the simpler tree)."""
    return cost < best - _EPS * (1.0 + abs(best))


@njit(cache=True, nogil=True)
def _last_split(search, cases, weights, a, b, cw, total, leaf):
    """Depth 1: the best single split, scored from each bin's class weights."""
    bins, nominal, n_bins, y, n_classes, prices, matrix, min_leaf = search
    n_features = bins.shape[1]
    best, best_f, best_j = leaf, -1, -1
    for f in range(n_features):
        if _fixed_on_path(f, nominal, a, b):
            continue
        price = prices[a, b, f] * total
        if not _better(price, best):
            continue
        nb = n_bins[f]
        hist = np.zeros((nb, n_classes))
        missing = np.zeros(n_classes)
        for i in range(cases.shape[0]):
            v = bins[cases[i], f]
            if v < 0:
                missing[y[cases[i]]] += weights[i]
            else:
                hist[v, y[cases[i]]] += weights[i]
        known = np.zeros(nb)
        for v in range(nb):
            known[v] = hist[v].sum()
        known_total = known.sum()
        if known_total <= 0.0:
            continue
        if nominal[f]:
            held = 0
            for v in range(nb):
                if known[v] + _EPS >= min_leaf:
                    held += 1
            if held < 2:
                continue
            cost = price
            for v in range(nb):
                share = known[v] / known_total
                if share > 0.0:
                    cost += misclassification_cost(hist[v] + share * missing, matrix)
            if _better(cost, best):
                best, best_f, best_j = cost, f, 0
            continue
        known_classes = hist.sum(axis=0)
        left = np.zeros(n_classes)
        left_known = 0.0
        for j in range(nb - 1):
            left += hist[j]
            left_known += known[j]
            right_known = known_total - left_known
            if left_known + _EPS < min_leaf or right_known + _EPS < min_leaf:
                continue
            share = left_known / known_total
            right = known_classes - left
            cost = (
                price
                + misclassification_cost(left + share * missing, matrix)
                + misclassification_cost(right + (1.0 - share) * missing, matrix)
            )
            if _better(cost, best):
                best, best_f, best_j = cost, f, j
    return best, best_f, best_j


@njit(cache=True, nogil=True)
def subtree_cost(depth, search, cases, weights, a, b):
    """(least cost, split feature, split ``j``) of a tree of at most ``depth`` levels on
    ``cases`` after the path's tests ``a``, ``b``; feature -1 is the leaf.  ``search``
    is (bins, nominal, n_bins, y, n_classes, prices, matrix, min_leaf)."""
    bins, nominal, n_bins, y, n_classes, prices, matrix, min_leaf = search
    cw = class_counts(y, cases, weights, n_classes)
    total = cw.sum()
    leaf = misclassification_cost(cw, matrix)
    if depth <= 0 or _stops(cw, total, min_leaf):
        return leaf, -1, -1
    if depth == 1:
        return _last_split(search, cases, weights, a, b, cw, total, leaf)
    n_features = bins.shape[1]
    best, best_f, best_j = leaf, -1, -1
    for f in range(n_features):
        if _fixed_on_path(f, nominal, a, b):
            continue
        price = prices[a, b, f] * total
        if not _better(price, best):
            continue  # the children cost at least nothing
        next_a, next_b = (f, b) if a == n_features else (a, f)
        branches = n_bins[f] if nominal[f] else 2
        for j in range(n_splits(f, nominal, n_bins)):
            valid, shares = split_shares(bins, f, nominal[f], j, branches, cases, weights, min_leaf)
            if not valid:
                continue
            cost = price
            for br in range(branches):
                if shares[br] <= 0.0:
                    continue  # an empty branch: a leaf of weight 0
                sub_cases, sub_weights = branch_cases(
                    bins, f, j, nominal[f], br, shares[br], cases, weights
                )
                sub, _, _ = subtree_cost(depth - 1, search, sub_cases, sub_weights, next_a, next_b)
                cost += sub
                if not _better(cost, best):
                    break
            if _better(cost, best):
                best, best_f, best_j = cost, f, j
    return best, best_f, best_j
