"""Compiled (numba) pieces of BudgetRF: growing one GreedyTree, and the forest's acquisition.

- :func:`grow_greedy_tree`: paper 002's GreedyTree (ALGORITHMS.md §6) on
  weighted cases (bootstrap counts as weights; a case whose value of the split
  feature is missing goes down both branches with the known cases' shares, as
  C4.5 does and as :meth:`TreeStructure.reach` walks it).  The impurities are
  :mod:`._impurity`'s own functions compiled; the price of a test is
  :func:`learners.act._pricing.marginal_cost`, the compiled copy of
  ``CostModel.marginal_cost`` tested equal to it.
- :func:`forest_acquisition`: what the forest's policy buys for each row,
  walking each tree on the row's own values as the tests are bought (the
  shares of :meth:`TreeStructure.node_mass`, the one walk; memory grows with
  the nodes plus the rows): the compiled copy of
  ``BudgetRFClassifier.next_action``'s ordering rule, tested equal to it by
  running :func:`learners.evaluate`.
- :func:`forest_acquisition_added`: the same, for a forest one tree larger
  than a forest already priced, from that forest's runs (each row's
  purchases and how many trees waited on each test then): a row's run is
  replayed with the new tree until the tree changes a purchase, and only
  from there is the policy run on every tree.  Equal to
  :func:`forest_acquisition` to the bit (tested on random trees and cost
  models); fitting under a budget prices the forest after every tree.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..act._pricing import marginal_cost, mark_done
from ..tree._structure_kernels import TreeArrays
from ._impurity import PAIRS, pairs_impurity, powers_impurity

__all__ = [
    "Columns",
    "Forest",
    "Runs",
    "describe_columns",
    "forest_acquisition",
    "forest_acquisition_added",
    "grow_greedy_tree",
    "impurity_jit",
]

_pairs = njit(cache=True, nogil=True)(pairs_impurity)
_powers = njit(cache=True, nogil=True)(powers_impurity)

#: Longest root-to-leaf path GreedyTree grows (a guard; real trees stay far below).
MAX_DEPTH = 200
#: Share of a case below which a missing-value copy is dropped (it no longer counts).
MIN_WEIGHT = 1e-6
#: Most stumps :func:`_stump` draws (``_n_stumps``' 80), plus the bin above them.
_MAX_BINS = 81


class Columns(NamedTuple):
    """What :func:`grow_greedy_tree` reads of the training rows ``X``, whatever their weights
    (:func:`describe_columns`): the same for every tree grown on ``X``."""

    XT: np.ndarray  #: ``X`` transposed: a feature's values are one contiguous row
    two_valued: np.ndarray  #: features with at most two known values: no sort of their stumps
    complete: np.ndarray  #: features with no missing value: no gathering of the known cases
    low: np.ndarray  #: a two-valued feature's lower value
    high: np.ndarray  #: and its higher one


class Impurity(NamedTuple):
    """How GreedyTree measures a node: :func:`impurity_jit` (``kind``, ``alpha``, ``power``)
    of its ``n_classes`` class weights, and the least reduction that counts (``tol``)."""

    n_classes: int
    kind: int
    alpha: float
    power: float
    tol: float


class StumpScratch(NamedTuple):
    """Work arrays of :func:`_stump`, reused across a tree's nodes (see :func:`_stump_scratch`)."""

    values: np.ndarray  #: the node's values of the feature
    known: np.ndarray  #: positions of its known ones
    cuts: np.ndarray  #: the drawn stumps
    hist: np.ndarray  #: class weights per bin between stumps
    hist_n: np.ndarray  #: cases per bin
    missing: np.ndarray  #: class weights of the cases missing the feature
    known_total: np.ndarray  #: and of the known ones
    left: np.ndarray  #: known class weights left of a stump
    l_child: np.ndarray  #: the left child's class weights, missing cases shared in
    r_child: np.ndarray  #: the right child's


@njit(cache=True, nogil=True)
def _stump_scratch(n, n_classes):
    """A :class:`StumpScratch` for nodes of up to ``n`` cases."""
    return StumpScratch(
        np.empty(n),
        np.empty(n, dtype=np.int64),
        np.empty(_MAX_BINS),
        np.empty((_MAX_BINS, n_classes)),
        np.empty(_MAX_BINS, dtype=np.int64),
        np.empty(n_classes),
        np.empty(n_classes),
        np.empty(n_classes),
        np.empty(n_classes),
        np.empty(n_classes),
    )


@njit(cache=True, nogil=True)
def impurity_jit(counts, kind, alpha, power):
    """Compiled :func:`._impurity.impurity`."""
    if kind == PAIRS:
        return _pairs(counts, alpha)
    return _powers(counts, power)


@njit(cache=True, nogil=True)
def _n_stumps(size):
    """Random stumps tried per feature: 80 / 40 / 20 for > 2000 / > 500 / fewer cases."""
    if size > 2000.0:
        return 80
    if size > 500.0:
        return 40
    return 20


@njit(cache=True, nogil=True)
def _stump(XT, node, f, F, k, rule, scratch, column):
    """The stump on feature ``f`` with the largest minimax reduction.

    ``k`` thresholds are the values of ``k`` known cases drawn at random; a
    stump sends ``x <= threshold`` left.  Returns ``(reduction, value,
    left_share)`` where reduction is ``min over the two outcomes of
    F(S) - F(S_outcome)`` (0 when no stump separates the known cases).
    ``node`` is ``(yn, idx, wt)``: the node's cases ``idx``, their classes and
    weights; ``F`` its impurity under ``rule`` (an :class:`Impurity`);
    ``scratch`` a :class:`StumpScratch`.  ``column`` is ``(two_valued,
    low_value, high_value, complete)`` of feature ``f`` (:class:`Columns`):
    ``two_valued`` features (every value ``low_value`` or ``high_value``) skip
    the sort of their stumps; ``complete`` ones (no missing value) skip
    gathering their values.  The draws and sums are the same either way.
    """
    yn, idx, wt = node
    two_valued, low_value, high_value, complete = column
    values, known, cuts, hist, hist_n, missing, known_total, left, l_child, r_child = scratch
    n_classes, kind, alpha, power, tol = rule
    n = idx.shape[0]
    if complete:
        # No missing value: case i is the i-th known one (same draws, no gathering pass).
        n_known = n
        if n_known < 2:
            return 0.0, np.nan, 0.0
        for s in range(k):
            cuts[s] = XT[f, idx[np.random.randint(n_known)]]
    else:
        n_known = 0
        for i in range(n):
            v = XT[f, idx[i]]
            values[i] = v
            if not np.isnan(v):
                known[n_known] = i
                n_known += 1
        if n_known < 2:
            return 0.0, np.nan, 0.0
        for s in range(k):
            cuts[s] = values[known[np.random.randint(n_known)]]
    # The stumps are the d distinct drawn values, in increasing order (a drawn value
    # repeated is one stump).
    if two_valued:
        low = high = False
        for s in range(k):
            if cuts[s] == low_value:
                low = True
            else:
                high = True
        d = 0
        if low:
            cuts[d] = low_value
            d += 1
        if high:
            cuts[d] = high_value
            d += 1
    else:
        cuts[:k].sort()
        d = 1
        for s in range(1, k):
            if cuts[s] != cuts[d - 1]:
                cuts[d] = cuts[s]
                d += 1
    for j in range(d + 1):
        hist_n[j] = 0
        for c in range(n_classes):
            hist[j, c] = 0.0
    for c in range(n_classes):
        missing[c] = 0.0
        known_total[c] = 0.0
        left[c] = 0.0
    for i in range(n):
        v = XT[f, idx[i]] if complete else values[i]
        c = yn[i]
        if np.isnan(v):
            missing[c] += wt[i]
            continue
        # A case goes to bin b = the number of stumps below its value, i.e. to the first
        # stump with v <= stump (the last bin: above every stump), without branches.
        b = 0
        if d <= 8:
            for j in range(d):
                b += cuts[j] < v
        else:
            size = d
            while size > 1:
                half = size >> 1
                b += half * (cuts[b + half] < v)
                size -= half
            b += cuts[b] < v
        hist[b, c] += wt[i]
        hist_n[b] += 1
        known_total[c] += wt[i]
    known_weight = 0.0
    for c in range(n_classes):
        known_weight += known_total[c]
    n_left = 0
    best = 0.0
    best_value = np.nan
    best_share = 0.0
    for j in range(d):
        left_weight = 0.0
        for c in range(n_classes):
            left[c] += hist[j, c]
            left_weight += left[c]
        n_left += hist_n[j]
        if n_left == 0 or n_left == n_known:
            continue
        if left_weight <= 0.0 or left_weight >= known_weight:
            continue
        share = left_weight / known_weight
        for c in range(n_classes):
            l_child[c] = left[c] + missing[c] * share
            r_child[c] = known_total[c] - left[c] + missing[c] * (1.0 - share)
        reduction = min(
            F - impurity_jit(l_child, kind, alpha, power),
            F - impurity_jit(r_child, kind, alpha, power),
        )
        if reduction > best + tol:
            best = reduction
            best_value = cuts[j]
            best_share = share
    return best, best_value, best_share


@njit(cache=True, nogil=True)
def _best_stump(
    XT, yn, idx, wt, f, n_classes, F, kind, alpha, power, k, tol,
    values, known, cuts, hist, hist_n, missing, known_total, left, l_child, r_child,
    two_valued, low_value, high_value, complete,
):  # fmt: skip
    """:func:`_stump` with its bundles given piece by piece: the form
    ``tests/learners/test_budget_rf.py`` checks against its numpy reference."""
    scratch = StumpScratch(
        values, known, cuts, hist, hist_n, missing, known_total, left, l_child, r_child
    )
    rule = Impurity(n_classes, kind, alpha, power, tol)
    column = (two_valued, low_value, high_value, complete)
    return _stump(XT, (yn, idx, wt), f, F, k, rule, scratch, column)


@njit(cache=True, nogil=True)
def _skip_stumps(XT, idx, f, k, complete):
    """Draw the ``k`` random numbers :func:`_stump` would draw for feature ``f``."""
    n_known = idx.shape[0]
    if not complete:
        n_known = 0
        for i in range(idx.shape[0]):
            if not np.isnan(XT[f, idx[i]]):
                n_known += 1
    if n_known < 2:
        return
    for _ in range(k):
        np.random.randint(n_known)


@njit(cache=True, nogil=True)
def describe_columns(X):
    """What :func:`grow_greedy_tree` reads of the training rows ``X`` whatever their weights.

    Returns :class:`Columns`: ``X`` transposed, the features with at most two
    known values (flags: their stumps skip the sort) and those two values, and
    the features with no missing value (their stumps skip gathering the known
    cases).  The same for every tree grown on ``X``, so a forest computes it
    once.
    """
    n, m = X.shape
    XT = np.ascontiguousarray(X.T)
    two_valued = np.zeros(m, dtype=np.bool_)
    complete = np.ones(m, dtype=np.bool_)
    low_values = np.zeros(m)
    high_values = np.zeros(m)
    for f in range(m):
        low = np.inf
        high = -np.inf
        others = False
        for i in range(n):
            v = XT[f, i]
            if np.isnan(v):
                complete[f] = False
                continue
            if v == low or v == high:
                continue
            if low == np.inf:
                low = v
                high = v
            elif not others and low == high:
                if v < low:
                    low = v
                else:
                    high = v
            else:
                others = True
        two_valued[f] = not others and low != np.inf
        low_values[f] = low
        high_values[f] = high
    return Columns(XT, two_valued, complete, low_values, high_values)


@njit(cache=True, nogil=True)
def grow_greedy_tree(
    X,
    y,
    weights,
    n_classes,
    kind,
    alpha,
    power,
    prices,
    seed,
    tol,
    skip_losers=True,
    columns=None,
    min_impure_weight=0.0,
    min_copy_weight=0.0,
):
    """GreedyTree on the rows with positive ``weights``; returns flat node arrays.

    At a node with impurity ``F(S) > tol`` every feature ``t`` gets
    ``R(t) = min_stump max_outcome c(t) / (F(S) - F(S_outcome))``, i.e.
    ``c(t) / reduction_t`` with ``reduction_t`` the best stump's minimax
    reduction and ``c(t)`` the marginal price of ``t`` given the tests on the
    path; a test already done on the path ranks at its own price with
    nothing done (the paper's fixed ``c(t)``).  The argmin splits; ties (a
    free test gives 0) go to the larger reduction, then the lower feature
    index.  A node where no stump reduces ``F`` on both sides is a leaf, and so is
    one whose weight outside its largest class is below ``min_impure_weight``
    (BudgetRF passes one case: only fractional copies of cases with a missing value
    are left there; 0, the default, is the paper's F(S) = 0 alone).
    With ``skip_losers`` a feature whose ``c(t) / F(S)`` is already above the
    best ratio (no reduction exceeds ``F(S)``) only has its stumps drawn, not
    judged: the same tree, faster (``False``: judge every feature, for tests).
    ``columns``: :func:`describe_columns` of ``X`` when the caller has it
    (None: computed here).
    A case whose value of the split feature is missing goes down both branches with the
    known cases' shares (C4.5's fractional copies) while its copy here weighs at least
    ``min_copy_weight``; a lighter copy goes down one branch, drawn with the same shares,
    keeping its whole weight (the same weight on each side in expectation).  0, the
    default, splits every copy (down to ``MIN_WEIGHT``): then a case missing the feature
    a tree keeps cutting is copied into nearly every node, and growing a tree takes time
    in nodes x cases (issue 29); with ``min_copy_weight`` w a case of weight c is at most
    about ``2 c / w`` copies at any depth.

    Returns ``(feature, threshold, left, right, left_share, class_weight)``
    indexed by node id (root 0, children numbered after their parent).
    """
    np.random.seed(seed)
    n, m = X.shape
    if columns is None:
        XT, two_valued, complete, low_values, high_values = describe_columns(X)
    else:
        XT, two_valued, complete, low_values, high_values = columns
    rule = Impurity(n_classes, kind, alpha, power, tol)
    scratch = _stump_scratch(n, n_classes)
    side = np.zeros(n, dtype=np.int8)
    root_idx = np.flatnonzero(weights > 0.0)
    root_wt = weights[root_idx].astype(np.float64)
    feature = [-1]
    threshold = [np.nan]
    left_id = [-1]
    right_id = [-1]
    left_share = [0.0]
    class_weight = [np.zeros(n_classes)]
    stack = [(0, root_idx, root_wt, np.empty(0, dtype=np.int64))]
    done = np.zeros(m, dtype=np.int64)
    nothing = np.zeros(m, dtype=np.int64)
    while len(stack) > 0:
        node, idx, wt, path = stack.pop()
        counts = np.zeros(n_classes)
        yn = np.empty(idx.shape[0], dtype=np.int64)
        for i in range(idx.shape[0]):
            yn[i] = y[idx[i]]
            counts[yn[i]] += wt[i]
        class_weight[node] = counts
        F = impurity_jit(counts, kind, alpha, power)
        if F <= tol or path.shape[0] >= MAX_DEPTH:
            continue
        if counts.sum() - counts.max() < min_impure_weight:
            continue
        k = _n_stumps(wt.sum())
        cases = (yn, idx, wt)
        done[:] = 0
        for p in range(path.shape[0]):
            mark_done(path[p], done, prices, 1)
        best_f = -1
        best_ratio = np.inf
        best_reduction = 0.0
        best_value = np.nan
        best_share = 0.0
        for f in range(m):
            if done[f] > 0:
                # A re-read ranks at the test's own price, the paper's fixed c(t): at its
                # marginal price, 0, every split would re-cut the first test bought and
                # never buy a second (and a shared price / k still shrinks towards 0).
                price = marginal_cost(f, nothing, prices)
            else:
                price = marginal_cost(f, done, prices)
            if skip_losers and price / F > best_ratio:
                # No stump can reduce F by more than F, so price / reduction >= price / F
                # is above the best ratio: f cannot win.  Its stumps are still drawn, so
                # the features after it see the same random numbers.
                _skip_stumps(XT, idx, f, k, complete[f])
                continue
            column = (two_valued[f], low_values[f], high_values[f], complete[f])
            reduction, value, share = _stump(XT, cases, f, F, k, rule, scratch, column)
            if reduction <= tol:
                continue
            ratio = price / reduction
            if ratio < best_ratio or (ratio == best_ratio and reduction > best_reduction):
                best_f = f
                best_ratio = ratio
                best_reduction = reduction
                best_value = value
                best_share = share
        if best_f < 0:
            continue
        # Store the split halfway to the next larger value in the node (same partition).
        above = np.inf
        for i in range(idx.shape[0]):
            v = XT[best_f, idx[i]]
            if v > best_value and v < above:
                above = v
        cut = 0.5 * (best_value + above)
        if not (cut < above) or not np.isfinite(cut):
            cut = best_value
        n_left = 0
        n_right = 0
        for i in range(idx.shape[0]):
            v = XT[best_f, idx[i]]
            if np.isnan(v):
                if wt[i] >= min_copy_weight:
                    side[i] = 0  # both branches, by share
                    n_left += 1
                    n_right += 1
                elif np.random.random() < best_share:
                    side[i] = 1  # a light copy: one branch, drawn by share, whole weight
                    n_left += 1
                else:
                    side[i] = 2
                    n_right += 1
            elif v <= cut:
                n_left += 1
            else:
                n_right += 1
        l_idx = np.empty(n_left, dtype=np.int64)
        l_wt = np.empty(n_left)
        r_idx = np.empty(n_right, dtype=np.int64)
        r_wt = np.empty(n_right)
        a = 0
        b = 0
        for i in range(idx.shape[0]):
            v = XT[best_f, idx[i]]
            if np.isnan(v) and side[i] == 1:
                l_idx[a] = idx[i]
                l_wt[a] = wt[i]
                a += 1
            elif np.isnan(v) and side[i] == 2:
                r_idx[b] = idx[i]
                r_wt[b] = wt[i]
                b += 1
            elif np.isnan(v):
                if wt[i] * best_share >= MIN_WEIGHT:
                    l_idx[a] = idx[i]
                    l_wt[a] = wt[i] * best_share
                    a += 1
                if wt[i] * (1.0 - best_share) >= MIN_WEIGHT:
                    r_idx[b] = idx[i]
                    r_wt[b] = wt[i] * (1.0 - best_share)
                    b += 1
            elif v <= cut:
                l_idx[a] = idx[i]
                l_wt[a] = wt[i]
                a += 1
            else:
                r_idx[b] = idx[i]
                r_wt[b] = wt[i]
                b += 1
        child_path = np.empty(path.shape[0] + 1, dtype=np.int64)
        child_path[: path.shape[0]] = path
        child_path[path.shape[0]] = best_f
        first = len(feature)
        for _ in range(2):
            feature.append(-1)
            threshold.append(np.nan)
            left_id.append(-1)
            right_id.append(-1)
            left_share.append(0.0)
            class_weight.append(np.zeros(n_classes))
        feature[node] = best_f
        threshold[node] = cut
        left_id[node] = first
        right_id[node] = first + 1
        left_share[node] = best_share
        stack.append((first + 1, r_idx[:b].copy(), r_wt[:b].copy(), child_path))
        stack.append((first, l_idx[:a].copy(), l_wt[:a].copy(), child_path))
    n_nodes = len(feature)
    weights_out = np.empty((n_nodes, n_classes))
    for i in range(n_nodes):
        weights_out[i] = class_weight[i]
    return (
        np.array(feature, dtype=np.int64),
        np.array(threshold),
        np.array(left_id, dtype=np.int64),
        np.array(right_id, dtype=np.int64),
        np.array(left_share),
        weights_out,
    )


class Forest(NamedTuple):
    """A forest's trees as :func:`forest_acquisition` walks them."""

    trees: TreeArrays  #: the trees' arrays concatenated (global node and edge ids)
    offset: np.ndarray  #: tree ``j``'s nodes are ``offset[j]`` to ``offset[j + 1] - 1``, root first


class Runs(NamedTuple):
    """Every row's run of the forest policy (:func:`forest_acquisition_added`)."""

    start: np.ndarray  #: row ``r``'s steps are ``start[r]`` to ``start[r + 1] - 1``
    bought: np.ndarray  #: the test bought at each step
    paid: np.ndarray  #: its price
    counts: np.ndarray  #: per step and test, how many trees waited on it (int16)


class Scratch(NamedTuple):
    """Work arrays of one row's run of the policy, allocated once per call (:func:`_scratch`)."""

    done: np.ndarray  #: the tests done (closures included)
    waiting: np.ndarray  #: how many trees wait on each test
    stamp: np.ndarray  #: the last tree (or step) that counted each test
    front: np.ndarray  #: tree ``j``'s frontier from ``offset[j]``: the nodes its walk waits at
    stack: np.ndarray  #: the nodes :func:`_settle` has still to walk
    length: np.ndarray  #: each tree's frontier size
    front_share: np.ndarray  #: the row's share at each frontier node
    shares: np.ndarray  #: its share at each node of ``stack``


@njit(cache=True, nogil=True, inline="always")
def _settle(j, r, forest, X, scratch):
    """Move tree ``j``'s frontier past every node whose test is done (leaves drop out).

    ``scratch.front[offset[j]:offset[j] + length[j]]`` holds the (global) nodes
    where tree ``j``'s walk of the row ``X[r]`` waits, ``scratch.front_share``
    the row's share there; a node whose test is done is replaced by the
    children row ``r`` reaches, recursively: a known value takes one edge with
    the whole share (``here * 1``), a missing one every edge with ``here * (0 +
    branch_weight)``, and a child whose share is 0 is not reached: exactly
    :func:`walk_rows`' arithmetic, so the children reached are the nodes where
    ``TreeStructure.node_mass`` is > 0, read off the row itself (no node x row
    table).
    """
    feature, threshold, edge_start, n_edges, child, branch_weight = forest.trees
    done, _, _, front, stack, length, front_share, shares = scratch
    base = forest.offset[j]
    top = 0
    for i in range(length[j]):
        stack[top] = front[base + i]
        shares[top] = front_share[base + i]
        top += 1
    n = 0
    while top > 0:
        top -= 1
        node = stack[top]
        here = shares[top]
        f = feature[node]
        if f < 0:
            continue
        if done[f] == 0:
            front[base + n] = node
            front_share[base + n] = here
            n += 1
            continue
        first = edge_start[node]
        value = X[r, f]
        if value != value:
            for e in range(first + n_edges[node] - 1, first - 1, -1):
                share = 0.0 + here * (0.0 + branch_weight[e])
                if share > 0.0:
                    stack[top] = child[e]
                    shares[top] = share
                    top += 1
        else:
            stack[top] = child[first] if value <= threshold[node] else child[first + 1]
            shares[top] = 0.0 + here * 1.0
            top += 1
    length[j] = n


@njit(cache=True, nogil=True, inline="always")
def _waits_on_done(j, feature, offset, front, length, done):
    """Whether tree ``j``'s frontier holds a node whose test is now done (then
    :func:`_settle` it; else its frontier stands).  Given the arrays, not the bundles:
    asked for every tree after every purchase, where each array taken out of a bundle
    would cost atomic reference counts."""
    for i in range(offset[j], offset[j] + length[j]):
        if done[feature[front[i]]] > 0:
            return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _buy(test, price, n, cost, run, done, prices):
    """Purchase ``n`` of a row's ``run`` (``test`` at ``price``): ``(n + 1, cost + price)``."""
    bought, paid, _ = run
    bought[n] = test
    paid[n] = price
    mark_done(test, done, prices, 1)
    return n + 1, cost + price


@njit(cache=True, nogil=True)
def _goes_first(count, price, test, other_count, other_price, other):
    """The forest policy's order: whether ``test`` goes before ``other``.

    The test more trees wait on first; then the lower marginal price; then
    the lower index (``BudgetRFClassifier.next_action``'s ``min`` over
    ``(-waiting, price, index)``).
    """
    if count != other_count:
        return count > other_count
    if price != other_price:
        return price < other_price
    return test < other


@njit(cache=True, nogil=True)
def _row_policy(r, forest, X, prices, scratch, run, n, cost):
    """The forest policy on row ``r`` from step ``n``: what it buys, in order, and what it pays.

    Step ``n`` = 0 starts with nothing done.  Otherwise the run continues
    after the purchases ``bought[:n]``: ``scratch.done`` holds what they did
    and ``cost`` what they cost (their prices added in order).  ``run`` is
    ``(bought, paid, counts)`` (:func:`_row_run`): writes the tests bought to
    ``bought``, their prices to ``paid`` and, for each step ``i``, how many
    trees wait on every test just before it (``counts[i]``: the run that
    :func:`forest_acquisition_added` replays).  Returns ``(cost, n)``, the
    prices added in purchase order and the number of purchases;
    ``scratch.done`` ends as the tests done.  ``forest``, ``X``, ``prices`` as
    :func:`forest_acquisition` takes them.
    """
    feature, offset = forest.trees.feature, forest.offset
    done, waiting, stamp, front, _, length, front_share, _ = scratch
    counts = run[2]
    n_trees = offset.shape[0] - 1
    m = done.shape[0]
    if n == 0:
        cost = 0.0
        done[:] = 0
    for j in range(n_trees):
        front[offset[j]] = offset[j]
        front_share[offset[j]] = 1.0
        length[j] = 1
        _settle(j, r, forest, X, scratch)
    for _ in range(m + 1 - n):
        waiting[:] = 0
        stamp[:] = -1
        for j in range(n_trees):
            for i in range(offset[j], offset[j] + length[j]):
                f = feature[front[i]]
                if stamp[f] != j:
                    stamp[f] = j
                    waiting[f] += 1
        # Only a test with the most trees waiting can go first (the order's first key).
        most = 0
        for f in range(m):
            if waiting[f] > most:
                most = waiting[f]
        if most == 0:
            break
        best = -1
        best_price = 0.0
        for f in range(m):
            if waiting[f] == most:
                price = marginal_cost(f, done, prices)
                if best < 0 or _goes_first(most, price, f, most, best_price, best):
                    best = f
                    best_price = price
        for f in range(m):
            counts[n, f] = waiting[f]
        n, cost = _buy(best, best_price, n, cost, run, done, prices)
        for j in range(n_trees):
            if _waits_on_done(j, feature, offset, front, length, done):
                _settle(j, r, forest, X, scratch)
    return cost, n


@njit(cache=True, nogil=True)
def _scratch(n_nodes, n_trees, m):
    """A :class:`Scratch` for a forest of ``n_nodes`` nodes in ``n_trees`` trees, ``m`` tests."""
    return Scratch(
        np.zeros(m, dtype=np.int64),
        np.zeros(m, dtype=np.int64),
        np.zeros(m, dtype=np.int64),
        np.zeros(n_nodes, dtype=np.int64),
        np.zeros(n_nodes + 1, dtype=np.int64),
        np.zeros(n_trees, dtype=np.int64),
        np.zeros(n_nodes),
        np.zeros(n_nodes + 1),
    )


@njit(cache=True, nogil=True)
def _row_run(m):
    """One row's run, as :func:`_row_policy` writes it: ``(bought, paid, counts)`` for up to
    ``m + 1`` purchases of ``m`` tests."""
    return (
        np.zeros(m + 1, dtype=np.int64),
        np.zeros(m + 1),
        np.zeros((m + 1, m), dtype=np.int16),
    )


@njit(cache=True, nogil=True)
def forest_acquisition(forest, X, prices):
    """Price and number of tests the forest's policy buys for each row.

    ``forest`` is a :class:`Forest`: its trees' :class:`TreeStructure` arrays
    concatenated.  ``X``: the rows; a tree's walk of a row past a done test
    follows the row's value (every branch by share when it is missing:
    :func:`_settle`), so memory grows with the nodes plus the rows, never with
    nodes x rows.  ``prices``: :func:`learners.act._encoding.encode_prices`.

    The policy (``BudgetRFClassifier.next_action``): while some tree waits on
    a test not done, buy the test the most trees wait on (ties: the lower
    marginal price, then the lower index) at its marginal price; a tree
    waits at the first nodes on its walk whose test is not done.  Returns
    ``(cost, n_done)`` per row; ``n_done`` counts the tests done (a derived
    test's inputs included).
    """
    m = prices[0].shape[0]
    n_rows = X.shape[0]
    cost = np.zeros(n_rows)
    n_done = np.zeros(n_rows, dtype=np.int64)
    scratch = _scratch(forest.trees.feature.shape[0], forest.offset.shape[0] - 1, m)
    run = _row_run(m)
    for r in range(n_rows):
        cost[r] = _row_policy(r, forest, X, prices, scratch, run, 0, 0.0)[0]
        n_done[r] = np.count_nonzero(scratch.done)
    return cost, n_done


@njit(cache=True, nogil=True)
def _replay_row(r, forest, X, prices, runs, scratch, wanted, run):
    """Row ``r``'s run with the last tree added, replayed on its run without it (``runs``).

    Until the added tree changes a purchase, the run with it is the run
    without it: the same tests done, so the members wait where they waited
    and only the added tree's own wishes (one each) join the counts; the
    test bought stays unless a test the added tree waits on now has more
    trees waiting, or as many and a lower price (then the lower index).
    After the members' last purchase only the added tree waits.  Returns
    ``(cost, n, replayed)``; ``replayed`` False: purchase ``n`` would change,
    and the caller goes on with :func:`_row_policy` from step ``n`` (the
    state so far, ``bought[:n]``, ``counts[:n]``, ``scratch.done`` and the
    cost, is the run's with every tree).  Otherwise
    ``bought[:n]``, ``counts[:n]``, the cost (the same prices added in the
    same order) and ``scratch.done`` are exactly :func:`_row_policy`'s
    (``run`` is ``(bought, paid, counts)``, as there).
    """
    feature, offset = forest.trees.feature, forest.offset
    done, _, stamp, front, _, length, front_share, _ = scratch
    counts = run[2]
    run_start, run_bought, run_paid, run_counts = runs
    run_first = run_start[r]
    run_length = run_start[r + 1] - run_first
    j = offset.shape[0] - 2
    m = done.shape[0]
    done[:] = 0
    stamp[:] = -1
    front[offset[j]] = offset[j]
    front_share[offset[j]] = 1.0
    length[j] = 1
    _settle(j, r, forest, X, scratch)
    cost = 0.0
    n = 0
    for _ in range(m + 1):
        n_wanted = 0
        for i in range(offset[j], offset[j] + length[j]):
            f = feature[front[i]]
            if stamp[f] != n:
                stamp[f] = n
                wanted[n_wanted] = f
                n_wanted += 1
        if n < run_length:
            step = run_first + n
            best = run_bought[step]
            best_count = run_counts[step, best]
            if stamp[best] == n:
                best_count += 1
            best_price = run_paid[step]  # the same tests done: the same price
            for q in range(n_wanted):
                f = wanted[q]
                count = run_counts[step, f] + 1
                if f == best or count < best_count:
                    continue  # fewer trees wait on it: it cannot go first, whatever its price
                price = marginal_cost(f, done, prices)
                if _goes_first(count, price, f, best_count, best_price, best):
                    return cost, n, False
            for f in range(m):
                counts[n, f] = run_counts[step, f]
            for q in range(n_wanted):
                counts[n, wanted[q]] += 1
        else:
            if n_wanted == 0:
                break
            # Only the added tree waits: one tree on each test.
            best = -1
            best_price = 0.0
            for q in range(n_wanted):
                f = wanted[q]
                price = marginal_cost(f, done, prices)
                if best < 0 or _goes_first(1, price, f, 1, best_price, best):
                    best = f
                    best_price = price
            counts[n, :] = 0
            for q in range(n_wanted):
                counts[n, wanted[q]] = 1
        n, cost = _buy(best, best_price, n, cost, run, done, prices)
        if _waits_on_done(j, feature, offset, front, length, done):
            _settle(j, r, forest, X, scratch)
    return cost, n, True


@njit(cache=True, nogil=True)
def forest_acquisition_added(forest, X, prices, runs):
    """:func:`forest_acquisition` of the trees of ``forest``, the last one just added.

    ``runs`` (:class:`Runs`): every row's run of the policy on the other trees
    (row ``r``'s steps ``start[r]`` to ``start[r + 1] - 1``: the test bought,
    its price and, per test, how many trees waited on it, an int16: at most
    32767 trees; no steps for no trees).  Each row's run is replayed with the
    added tree (:func:`_replay_row`); from the first purchase it changes, the
    row's run goes on with every tree (:func:`_row_policy`).  Returns
    ``(cost, n_done, runs, n_rerun)``: the same cost and ``n_done`` as
    :func:`forest_acquisition` to the bit, the :class:`Runs` with the added
    tree, and in how many rows it changed a purchase.
    """
    m = prices[0].shape[0]
    n_rows = X.shape[0]
    cost = np.zeros(n_rows)
    n_done = np.zeros(n_rows, dtype=np.int64)
    scratch = _scratch(forest.trees.feature.shape[0], forest.offset.shape[0] - 1, m)
    wanted = np.zeros(m, dtype=np.int64)
    run = _row_run(m)
    bought, paid, counts = run
    start = np.zeros(n_rows + 1, dtype=np.int64)
    capacity = runs.bought.shape[0] + n_rows + 16
    out_bought = np.empty(capacity, dtype=np.int64)
    out_paid = np.empty(capacity)
    out_counts = np.empty((capacity, m), dtype=np.int16)
    n_rerun = 0
    for r in range(n_rows):
        spent, n, replayed = _replay_row(r, forest, X, prices, runs, scratch, wanted, run)
        if not replayed:
            n_rerun += 1
            # The same state as a run with every tree after these n purchases: go on from it.
            spent, n = _row_policy(r, forest, X, prices, scratch, run, n, spent)
        cost[r] = spent
        n_done[r] = np.count_nonzero(scratch.done)
        at = start[r]
        if at + n > capacity:
            capacity = 2 * capacity + n
            grown_bought = np.empty(capacity, dtype=np.int64)
            grown_bought[:at] = out_bought[:at]
            grown_paid = np.empty(capacity)
            grown_paid[:at] = out_paid[:at]
            grown_counts = np.empty((capacity, m), dtype=np.int16)
            grown_counts[:at] = out_counts[:at]
            out_bought = grown_bought
            out_paid = grown_paid
            out_counts = grown_counts
        out_bought[at : at + n] = bought[:n]
        out_paid[at : at + n] = paid[:n]
        out_counts[at : at + n] = counts[:n]
        start[r + 1] = at + n
    end = start[n_rows]
    added = Runs(start, out_bought[:end].copy(), out_paid[:end].copy(), out_counts[:end].copy())
    return cost, n_done, added, n_rerun


@njit(cache=True, nogil=True)
def _walk_shares(X, tree, reached, leaf_row, leaf_mass, class_weight, counts):
    """The one share walk of :func:`walk_rows` and :func:`walk_counts`, writing what each asks
    for: reach bits and leaf shares (``reached``, ``leaf_row``, ``leaf_mass``), or leaf class
    sums (``class_weight``, ``counts``); the others are None, so numba compiles each walk
    without the other's branches.

    Row by row through ``tree`` (its :class:`TreeArrays`), the arithmetic of
    :func:`learners.tree._structure_kernels.numeric_node_mass`: a known value sends the whole
    share down the edge it takes (``here * 1``), a missing one ``here * (0 + branch_weight)``
    down every edge (the left child walked first), and a node with share 0 is not walked on.
    """
    feature, threshold, edge_start, _, child, branch_weight = tree
    n_nodes = feature.shape[0]
    node_stack = np.empty(n_nodes + 1, dtype=np.int64)
    share_stack = np.empty(n_nodes + 1)
    for r in range(X.shape[0]):
        byte = r >> 3
        bit = np.uint8(1 << (7 - (r & 7)))
        node_stack[0] = 0
        share_stack[0] = 1.0
        top = 1
        while top > 0:
            top -= 1
            node = node_stack[top]
            here = share_stack[top]
            if reached is not None:
                if here > 0.0:
                    reached[node, byte] |= bit
            f = feature[node]
            if f < 0:
                if leaf_mass is not None:
                    leaf_mass[leaf_row[node], r] = here
                if counts is not None:
                    if here > 0.0:
                        for c in range(class_weight.shape[1]):
                            counts[r, c] += here * class_weight[node, c]
                continue
            if here == 0.0:
                continue
            first = edge_start[node]
            value = X[r, f]
            if value != value:
                node_stack[top] = child[first + 1]
                share_stack[top] = 0.0 + here * (0.0 + branch_weight[first + 1])
                node_stack[top + 1] = child[first]
                share_stack[top + 1] = 0.0 + here * (0.0 + branch_weight[first])
                top += 2
            elif value <= threshold[node]:
                node_stack[top] = child[first]
                share_stack[top] = 0.0 + here * 1.0
                top += 1
            else:
                node_stack[top] = child[first + 1]
                share_stack[top] = 0.0 + here * 1.0
                top += 1


@njit(cache=True, nogil=True)
def walk_rows(X, tree, leaf_row, reached, leaf_mass):
    """Which nodes each row of ``X`` reaches, and its share at each leaf, without the dense table.

    The same arithmetic as :func:`learners.tree._structure_kernels.numeric_node_mass` (the
    compiled copy of :meth:`TreeStructure.node_mass` for numeric splits), row by row
    (:func:`_walk_shares`) through ``tree`` (its :class:`TreeArrays`).  Instead of the
    ``(n_nodes, n_rows)`` table it writes

    - ``reached[node]``: bit ``r`` set when row ``r``'s share there is > 0, packed as
      ``np.packbits(node_mass(X) > 0, axis=1)`` packs it;
    - ``leaf_mass[leaf_row[node]]``: row shares at each leaf, i.e.
      ``node_mass(X)[feature == LEAF]``,

    both zeroed by the caller.  ``tests/learners/test_budget_rf.py`` checks both equal to the
    bit to what ``node_mass`` gives.
    """
    _walk_shares(X, tree, reached, leaf_row, leaf_mass, None, None)


@njit(cache=True, nogil=True)
def walk_counts(X, tree, class_weight, counts):
    """Add each row's leaf class weights in ``tree`` (its :class:`TreeArrays`), mixed by its
    shares, to ``counts[row]``.

    :func:`walk_rows`' walk (:func:`_walk_shares`, the same shares), summing
    ``share * class_weight[leaf]`` as it reaches each leaf instead of writing a
    ``(leaves, rows)`` table: memory grows with the rows times the classes, never with the
    leaves times the rows.
    """
    _walk_shares(X, tree, None, None, None, class_weight, counts)
