"""Compiled lookahead tree builder shared by ACT, LSID3 and ICET.

ACT prices every candidate split by growing whole sample trees under each
child (thousands per fit), so they are grown here, in numba, on an encoded
copy of the data: each numeric feature is replaced by the rank of its value
among the training values and each nominal feature by its category position
(-1 = missing).

A sample tree is not materialised: :func:`grow` returns what its callers
score it by (ALGORITHMS.md §4):

* ``cost``: ``sum_internal m * c + sum_leaves mcost(l)`` (``Total * |E|``),
* ``errors``: the sum of the leaves' expected errors ``EE``, and
* ``leaves``: the number of leaves (LSID3's size);

on request it also records the tree it grew (ICET's fitness walks it).

One definition with the tree package
------------------------------------
Growth is the tree package's builder (:mod:`learners.tree._builder`), to the
bit: C4.5's fractional cases for missing values, a split needs two branches
with ``min_leaf`` known weight, a nominal test splits once per path.  The
numeric threshold sweep and the nominal gain are the tree package's kernels
(:func:`learners.tree._kernels.numeric_sweep`,
:func:`~learners.tree._kernels.nominal_information`), fed the node's cases in
the same order; the ranking key (zero-cost rule included) and the leaf label
are :mod:`learners.tree._formulas` compiled from the same function objects;
the exact pessimistic error is the tree package's compiled function.  So
greedy EG2 grown here with error-based pruning and the exact EE is the tree
:class:`~learners.tree.EG2Classifier` grows (``tests/learners/test_icet.py``
compares them node by node), which is what lets ICET score genomes here and
ship the EG2 tree.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.core import types
from numba.experimental import structref

from ..tree import _formulas
from ..tree._kernels import (  # noqa: F401 - the split helpers are re-exported for _growth
    MODE_INFORMATION,
    SplitRule,
    all_ones,
    branch_cases,
    branch_of,
    branch_totals,
    class_counts,
    fill_branch,
    nominal_information,
    numeric_sweep,
    xlogx_table,
)
from ._estimates import (  # noqa: F401 - re-exported for the growth code and tests
    expected_errors,
    leaf_label,
    leaf_mcost,
    next_uniform,
)
from ._pricing import marginal_cost, mark_done  # noqa: F401 - re-exported

SELECT_EG2 = 0
SELECT_SEG2 = 1
SELECT_ID3 = 2
SELECT_SID3 = 3

PRUNE_NONE = 0
PRUNE_COST = 1  # ACT's cost-sensitive pruning
PRUNE_ERROR = 2  # C4.5's error-based pruning

#: grow's status: done, or out of room for the recorded tree or the depth (grow again bigger)
GROWN = 0
OUT_OF_ROOM = 1
#: ``Growth.max_depth`` of a tree grown without a depth limit (the tree package's EG2)
UNLIMITED_DEPTH = 1 << 30


class Ranked(NamedTuple):
    """One training set as the engine reads it: :func:`._encoding.encode_data`'s arrays."""

    ranks: np.ndarray  #: ``R[case, feature]``: rank of the value, or category position; -1 missing
    y: np.ndarray  #: class code of every case
    nominal: np.ndarray  #: whether each feature is nominal
    n_values: np.ndarray  #: distinct values (numeric) or categories (nominal) of each feature


class Costs(NamedTuple):
    """The prices a tree is grown with (each price table from :func:`._encoding.encode_prices`)."""

    select: tuple  #: what choosing a split sees (ICET's biased prices)
    charge: tuple  #: what a test costs (the true prices)
    matrix: np.ndarray  #: ``M[actual, predicted]``


class Growth(NamedTuple):
    """How :func:`grow` grows and scores a tree, besides its data, prices and sampler."""

    rule: SplitRule  #: MODE_INFORMATION, ``min_leaf``, the entropy table of the training set
    w: float  #: EG2's cost exponent
    prune: int  #: PRUNE_NONE, PRUNE_COST or PRUNE_ERROR
    coeff: float  #: ``z_CF^2`` of C4.5's normal approximation (negative: the exact ``EE``)
    cf: float  #: the pruning confidence
    laplace: bool  #: leaves label by Laplace's probabilities
    max_depth: int


class Lookahead(NamedTuple):
    """How :func:`candidate_score` scores a split by sample trees under its children."""

    growth: Growth
    first: int  #: the sampler of each child's first sample (SELECT_EG2 or SELECT_ID3)
    other: int  #: the sampler of the others (SELECT_SEG2 or SELECT_SID3)
    by_size: bool  #: a sample scores its leaves (LSID3), not its cost (ACT)
    mean_of_samples: bool  #: a child scores the mean of its samples, not the least


@structref.register
class _ScorerType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class Scorer(structref.StructRefProxy):
    """What scoring a candidate split reads besides the node, the same for a whole tree: the
    :class:`Ranked` data, the :class:`Costs` and the :class:`Lookahead`.

    A numba structref, not a named tuple: it is passed from Python for every candidate, and
    numba types a structref by its type alone where it types every array of a named tuple
    again at each call (10 us a call instead of 3 us for the spelled-out arguments).
    """

    def __new__(cls, data: Ranked, costs: Costs, how: Lookahead):
        return _new_scorer(data, costs, how)


structref.define_proxy(Scorer, _ScorerType, ["data", "costs", "how"])


@njit(cache=True)
def _new_scorer(data, costs, how):
    """A :class:`Scorer`, built by a cached compiled function (numba's own constructor of a
    structref compiles again in every process: most of a second)."""
    return Scorer(data, costs, how)


class Workspace(NamedTuple):
    """Scratch arrays of :func:`scan_feature` (see :func:`workspace`)."""

    rank_count: np.ndarray  #: cases per rank
    touched: np.ndarray  #: ranks present
    ordered: tuple  #: (key, cls, wt): the known cases by rank, for ``numeric_sweep``
    branch_table: np.ndarray  #: branch x class (nominal)
    branch_total: np.ndarray  #: branch known weight (nominal)
    vectors: np.ndarray  #: known, missing, left, right, side


class Record(NamedTuple):
    """A tree :func:`grow` recorded, in preorder (see :func:`new_record`)."""

    feature: np.ndarray  #: -1: leaf
    boundary: np.ndarray  #: last rank going left
    upper: np.ndarray  #: first rank at the node going right
    parent: np.ndarray
    share: np.ndarray  #: the parent's branch weight
    class_weight: np.ndarray
    empty: np.ndarray  #: an empty branch
    size: np.ndarray  #: ``size[0]``: the number of nodes


_EPS = 1e-9

# the tree package's one definition of the ranking key, compiled from the same functions
_split_key = njit(cache=True, nogil=True)(_formulas.split_key)
_ranking_cost = njit(cache=True, nogil=True)(_formulas.ranking_cost)
_key_beats = njit(cache=True, nogil=True)(_formulas.key_beats)
_eg2_icf = njit(cache=True, nogil=True)(_formulas.eg2_icf)
_smoothed_row = njit(cache=True, nogil=True)(_formulas.smoothed_row)


# ------------------------------------------------------------------ splits
@njit(cache=True, nogil=True)
def workspace(n_cases, n_values, n_classes):
    """Scratch arrays of :func:`scan_feature` for nodes of up to ``n_cases`` cases."""
    u_max = 1
    for g in range(n_values.shape[0]):
        u_max = max(u_max, n_values[g])
    ordered = (
        np.zeros(n_cases + 1),  # key: ranks in ascending order
        np.zeros(n_cases + 1, dtype=np.int64),  # cls
        np.zeros(n_cases + 1),  # wt
    )
    return Workspace(
        np.zeros(u_max, dtype=np.int64),
        np.zeros(n_cases + 1, dtype=np.int64),
        ordered,
        np.zeros((u_max, n_classes)),
        np.zeros(u_max),
        np.zeros((5, n_classes)),
    )


@njit(cache=True, nogil=True)
def scan_feature(data, f, cases, weights, counts, n_total, counted, rule, ws, found):
    """Information gain of ``f``'s best split at a node (C4.5 known fraction applied).

    Returns ``(gain, boundary, n_boundaries)``: gain is -1 when no split is
    valid; boundary is the last rank going left (numeric) or -1 (nominal).
    ``found`` is ``(all_gains, all_bounds)``: when non-empty, every valid
    numeric boundary's gain and rank are written there, in rank order, and
    their number returned.  ``counts`` are the node's class weights,
    ``n_total`` their sum, and ``counted`` says every weight is 1 (the tree
    package's table look-up).  ``data`` is the :class:`Ranked` training set,
    ``rule`` the tree package's :class:`~learners.tree._kernels.SplitRule`
    (MODE_INFORMATION) and ``ws`` a :class:`Workspace`.
    """
    R, y, nominal, n_values = data
    count, touched = ws.rank_count, ws.touched
    key, cls, wt = ws.ordered
    branch_table, branch_total = ws.branch_table, ws.branch_total
    all_gains, all_bounds = found
    known = ws.vectors[0]
    min_leaf = rule.min_leaf
    if nominal[f]:
        b_count = n_values[f]
        branch_table[:b_count, :] = 0.0
        branch_total[:b_count] = 0.0
        for p in range(cases.shape[0]):
            b = R[cases[p], f]
            if b >= 0:
                branch_table[b, y[cases[p]]] += weights[p]
                branch_total[b] += weights[p]
        gain = nominal_information(branch_table, branch_total, b_count, n_total, min_leaf, known)
        if np.isnan(gain):
            return -1.0, -1, 0
        return gain, -1, 0
    # counting sort of the known cases by rank, case order kept within a rank: the
    # order of the tree package's presorted scan
    n_touched = 0
    n_known = 0
    for p in range(cases.shape[0]):
        r = R[cases[p], f]
        if r < 0:
            continue
        if count[r] == 0:
            touched[n_touched] = r
            n_touched += 1
        count[r] += 1
        n_known += 1
    if n_touched < 2:
        for i in range(n_touched):
            count[touched[i]] = 0
        return -1.0, -1, 0
    u = n_values[f]
    if n_touched * 16 < u:
        ranks = np.sort(touched[:n_touched])
    else:
        ranks = np.empty(n_touched, dtype=np.int64)
        q = 0
        for r in range(u):
            if count[r] > 0:
                ranks[q] = r
                q += 1
    start = 0
    for i in range(n_touched):
        r = ranks[i]
        c = count[r]
        count[r] = start  # from here on: the next free slot of rank r
        start += c
    for p in range(cases.shape[0]):
        r = R[cases[p], f]
        if r < 0:
            continue
        i = count[r]
        key[i] = r
        cls[i] = y[cases[p]]
        wt[i] = weights[p]
        count[r] = i + 1
    for i in range(n_touched):
        count[ranks[i]] = 0
    all_index = np.empty(all_gains.shape[0], dtype=np.int64)
    best_i, best, _, _, base, n_found = numeric_sweep(
        ws.ordered, n_known, counts, n_total, counted, rule, ws.vectors, (all_gains, all_index)
    )
    for j in range(n_found):
        all_gains[j] = max(base - all_gains[j], 0.0) / n_total
        all_bounds[j] = int(key[all_index[j]])
    if best_i < 0:
        return -1.0, -1, n_found
    return max(base - best, 0.0) / n_total, int(key[best_i]), n_found


# ------------------------------------------------------------------ growth
@njit(cache=True, nogil=True)
def _choose(gains, costs, on_path, own_prices, select, w, rng):
    """Feature picked by the sampler among features with positive gain (-1: none).

    EG2 and ID3 take the largest :func:`learners.tree._formulas.split_key`,
    ties to the lowest feature (as the tree package's criteria); SEG2 and
    SID3 draw with probability proportional to ICF or gain.
    """
    n = gains.shape[0]
    if select == SELECT_EG2 or select == SELECT_ID3:
        code = _formulas.EG2 if select == SELECT_EG2 else _formulas.ID3
        best = -1
        best_tier = 0
        best_value = 0.0
        for f in range(n):
            if gains[f] <= 1e-12:
                continue
            cost = _ranking_cost(code, costs[f], on_path[f] > 0, own_prices[f])
            tier, value = _split_key(code, gains[f], cost, w)
            if best < 0 or _key_beats(tier, value, best_tier, best_value):
                best, best_tier, best_value = f, tier, value
        return best
    weights = np.zeros(n)
    total = 0.0
    for f in range(n):
        if gains[f] <= 1e-12:
            continue
        if select == SELECT_SID3:
            weights[f] = gains[f]
        else:
            weights[f] = _eg2_icf(gains[f], costs[f], w)
        total += weights[f]
    if total <= 0.0:
        return -1
    target = next_uniform(rng) * total
    last = -1
    for f in range(n):
        if weights[f] > 0.0:
            last = f
            target -= weights[f]
            if target < 0.0:
                return f
    return last


@njit(cache=True, nogil=True)
def new_record(capacity, n_classes):
    """An empty :class:`Record` for up to ``capacity`` nodes (see :func:`grow`)."""
    return Record(
        np.full(capacity, -1, dtype=np.int64),
        np.full(capacity, -1, dtype=np.int64),
        np.full(capacity, -1, dtype=np.int64),
        np.full(capacity, -1, dtype=np.int64),
        np.zeros(capacity),
        np.zeros((capacity, n_classes)),
        np.zeros(capacity, dtype=np.bool_),
        np.zeros(1, dtype=np.int64),
    )


@njit(cache=True, nogil=True)
def _record_node(rec, parent, share, counts, empty):
    feature, boundary, upper, parents, shares, weights, empties, size = rec
    node = size[0]
    if node >= feature.shape[0]:
        return -1
    feature[node] = -1
    boundary[node] = -1
    upper[node] = -1
    parents[node] = parent
    shares[node] = share
    weights[node, :] = counts
    empties[node] = empty
    size[0] = node + 1
    return node


@njit(cache=True, nogil=True)
def grow(data, cases, weights, done, on_path, costs, select, growth, levels, rng, ws, rec):
    """Grow one sample tree on ``cases`` and score it (see the module docstring).

    Depth-first with an explicit stack (numba cannot cache recursive
    functions).  ``data`` is the :class:`Ranked` training set; ``done``
    counts the tests done on the path (closures included) and ``on_path``
    the tests split on along it; both are modified during the call and
    restored on return.  ``costs.select`` price tests for choosing (ICET's
    biased costs), ``costs.charge`` for accounting.  ``select`` is the
    sampler (SELECT_*), ``growth`` the :class:`Growth` settings.  ``levels``
    bounds the depth the buffers hold (at least ``growth.max_depth + 1``
    unless recording).  ``rec`` (from :func:`new_record`; capacity 0 = no
    recording) receives the tree in preorder, pruned subtrees removed, as
    the tree package numbers its nodes.

    Returns ``(status, cost, errors, leaves)``; ``status`` is
    :data:`OUT_OF_ROOM` when the record or the depth buffers were too small
    (``done`` and ``on_path`` are then left dirty: grow again on fresh ones).
    """
    R, y, nominal, n_values = data
    select_prices, charge_prices, cost_matrix = costs
    rule, w, prune, coeff, cf, laplace, max_depth = growth
    min_leaf = rule.min_leaf
    k = cost_matrix.shape[0]
    n_features = nominal.shape[0]
    recording = rec.feature.shape[0] > 0
    n0 = cases.shape[0]
    buf_c = np.empty((levels, max(n0, 1)), dtype=np.int64)
    buf_w = np.empty((levels, max(n0, 1)))
    max_branches = 2
    for g in range(n_features):
        if nominal[g]:
            max_branches = max(max_branches, n_values[g])
    totals = np.zeros((levels, max_branches))
    level_counts = np.zeros((levels, k))
    split_f = np.full(levels, -1, dtype=np.int64)
    split_b = np.full(levels, -1, dtype=np.int64)
    n_branches = np.zeros(levels, dtype=np.int64)
    next_branch = np.zeros(levels, dtype=np.int64)
    node_id = np.full(levels, -1, dtype=np.int64)
    m = np.zeros(levels, dtype=np.int64)
    leaf_c = np.zeros(levels)
    leaf_e = np.zeros(levels)
    acc_c = np.zeros(levels)
    acc_e = np.zeros(levels)
    acc_l = np.zeros(levels)
    share_in = np.zeros(levels)
    gains = np.empty(n_features)
    split_costs = np.zeros(n_features)
    bounds = np.empty(n_features, dtype=np.int64)
    own_prices = np.zeros(n_features)
    nothing_found = (np.empty(0), np.empty(0, dtype=np.int64))
    m[0] = n0
    buf_c[0, :n0] = cases
    buf_w[0, :n0] = weights
    share_in[0] = 1.0
    level = 0
    fresh = True
    while True:
        have_result = False
        r_c = 0.0
        r_e = 0.0
        r_l = 0.0
        c_arr = buf_c[level, : m[level]]
        w_arr = buf_w[level, : m[level]]
        if fresh:
            counts = class_counts(y, c_arr, w_arr, k)
            level_counts[level, :] = counts
            n = counts.sum()
            if recording:
                parent = node_id[level - 1] if level > 0 else -1
                node_id[level] = _record_node(rec, parent, share_in[level], counts, False)
                if node_id[level] < 0:
                    return OUT_OF_ROOM, 0.0, 0.0, 0.0
            label = leaf_label(counts, cost_matrix, laplace)
            leaf_c[level] = leaf_mcost(counts, label, cost_matrix, coeff, cf)
            leaf_e[level] = expected_errors(n, n - counts[label], coeff, cf)
            f = -1
            cheapest = np.inf
            if not (n + _EPS < 2.0 * min_leaf or counts.max() >= n - _EPS or level >= max_depth):
                if level + 1 >= levels:
                    return OUT_OF_ROOM, 0.0, 0.0, 0.0
                counted = all_ones(w_arr)
                for g in range(n_features):
                    gains[g] = -1.0
                    bounds[g] = -1
                    split_costs[g] = 0.0
                    if nominal[g] and on_path[g] > 0:
                        continue  # its value is fixed below its own split
                    gain, bound, _ = scan_feature(
                        data, g, c_arr, w_arr, counts, n, counted, rule, ws, nothing_found
                    )
                    gains[g] = gain
                    bounds[g] = bound
                    if gain > 1e-12:
                        split_costs[g] = marginal_cost(g, done, select_prices)
                        cheapest = min(cheapest, marginal_cost(g, done, charge_prices))
                # Under cost pruning a subtree costs at least n * (its root test's
                # price), so a leaf no dearer than that is what pruning would keep.
                if prune != PRUNE_COST or leaf_c[level] > n * cheapest + 1e-9 * (
                    1.0 + n * cheapest
                ):
                    # own_prices only matter to IDX and CS-ID3, which the engine does not grow
                    f = _choose(gains, split_costs, done, own_prices, select, w, rng)
            if f < 0:
                have_result = True
                r_c = leaf_c[level]
                r_e = leaf_e[level]
                r_l = 1.0
            else:
                split_f[level] = f
                split_b[level] = bounds[f]
                nb = n_values[f] if nominal[f] else 2
                n_branches[level] = nb
                totals[level, :nb] = branch_totals(R, f, bounds[f], nominal[f], nb, c_arr, w_arr)
                if recording:
                    node = node_id[level]
                    rec.feature[node] = f
                    rec.boundary[node] = bounds[f]
                    if not nominal[f]:
                        upper = -1
                        for p in range(c_arr.shape[0]):
                            r = R[c_arr[p], f]
                            if r > bounds[f] and (upper < 0 or r < upper):
                                upper = r
                        rec.upper[node] = upper
                price = marginal_cost(f, done, charge_prices)
                acc_c[level] = n * price
                acc_e[level] = 0.0
                acc_l[level] = 0.0
                mark_done(f, done, charge_prices, 1)
                on_path[f] += 1
                next_branch[level] = 0
                fresh = False
                continue
        else:
            f = split_f[level]
            nb = n_branches[level]
            if next_branch[level] < nb:
                b = next_branch[level]
                next_branch[level] += 1
                known = totals[level, :nb].sum()
                share = totals[level, b] / known
                if totals[level, b] <= 0.0:
                    # an empty branch is a leaf that decides like its parent
                    if recording:
                        if _record_node(rec, node_id[level], 0.0, level_counts[level], True) < 0:
                            return OUT_OF_ROOM, 0.0, 0.0, 0.0
                    acc_l[level] += 1.0
                    continue
                m[level + 1] = fill_branch(
                    R, f, split_b[level], nominal[f], b, share, c_arr, w_arr,
                    buf_c[level + 1], buf_w[level + 1],
                )  # fmt: skip
                share_in[level + 1] = share
                level += 1
                fresh = True
                continue
            mark_done(f, done, charge_prices, -1)
            on_path[f] -= 1
            have_result = True
            r_c = acc_c[level]
            r_e = acc_e[level]
            r_l = acc_l[level]
            if (prune == PRUNE_COST and leaf_c[level] <= r_c + 1e-9 * (1.0 + abs(r_c))) or (
                prune == PRUNE_ERROR and leaf_e[level] <= r_e + 1e-9
            ):
                r_c = leaf_c[level]
                r_e = leaf_e[level]
                r_l = 1.0
                if recording:
                    node = node_id[level]
                    rec.feature[node] = -1
                    rec.boundary[node] = -1
                    rec.upper[node] = -1
                    rec.size[0] = node + 1  # drop the subtree (it follows in preorder)
        if have_result:
            if level == 0:
                return GROWN, r_c, r_e, r_l
            level -= 1
            acc_c[level] += r_c
            acc_e[level] += r_e
            acc_l[level] += r_l
            fresh = False


@njit(cache=True, nogil=True)
def candidate_score(scorer, cases, weights, done, on_path, f, boundary, n_samples, seed):
    """Sum over the children of split ``(f, boundary)`` of their best sample's score.

    Each child with training weight gets ``n_samples`` sample trees (the first
    built by ``how.first``, the rest by ``how.other``) in the context of the
    path plus ``f``; a child's score is the least ``cost`` (or, when
    ``how.by_size``, the fewest leaves) among its samples.  An empty branch
    scores 0 (or one leaf).  With ``how.mean_of_samples`` a child scores the
    mean of its samples instead of the least (no optimism that grows with
    ``n_samples``).  ``scorer`` is the tree's :class:`Scorer`, ``how`` its
    :class:`Lookahead`; the samples grow to ``how.growth.max_depth``.
    """
    data, costs, how = scorer.data, scorer.costs, scorer.how
    R, _, nominal, n_values = data
    by_size = how.by_size
    k = costs.matrix.shape[0]
    ws = workspace(cases.shape[0], n_values, k)
    rec = new_record(0, k)
    rng = np.zeros(1, dtype=np.uint64)
    rng[0] = np.uint64(seed) | np.uint64(1)
    path = done.copy()
    split = on_path.copy()
    is_nominal = nominal[f]
    n_branches = n_values[f] if is_nominal else 2
    totals = branch_totals(R, f, boundary, is_nominal, n_branches, cases, weights)
    known = totals.sum()
    mark_done(f, path, costs.charge, 1)
    split[f] += 1
    total = 0.0
    for b in range(n_branches):
        if totals[b] <= 0.0:
            if by_size:
                total += 1.0
            continue
        c_cases, c_weights = branch_cases(
            R, f, boundary, is_nominal, b, totals[b] / known, cases, weights
        )
        best = np.inf
        summed = 0.0
        for s in range(n_samples):
            select = how.first if s == 0 else how.other
            _, c_cost, _, c_leaves = grow(
                data, c_cases, c_weights, path, split, costs, select, how.growth,
                how.growth.max_depth + 1, rng, ws, rec,
            )  # fmt: skip
            value = c_leaves if by_size else c_cost
            summed += value
            if value < best:
                best = value
        total += summed / max(n_samples, 1) if how.mean_of_samples else best
    return total


@njit(cache=True, nogil=True)
def numeric_boundaries(scorer, f, cases, weights):
    """Every valid boundary of numeric ``f`` at a node and its gain, in rank order (the data
    and split rule of the tree's :class:`Scorer`)."""
    data, rule = scorer.data, scorer.how.growth.rule
    y, n_values = data.y, data.n_values
    k = 0
    for p in range(cases.shape[0]):
        k = max(k, y[cases[p]] + 1)
    k = max(k, 1)
    counts = class_counts(y, cases, weights, k)
    ws = workspace(cases.shape[0], n_values, k)
    found = (np.zeros(cases.shape[0] + 1), np.zeros(cases.shape[0] + 1, dtype=np.int64))
    _, _, n_found = scan_feature(
        data, f, cases, weights, counts, counts.sum(), all_ones(weights), rule, ws, found
    )
    return found[0][:n_found], found[1][:n_found]


# ------------------------------------------------------------------ ICET
@njit(cache=True, nogil=True)
def grow_eg2(data, train, costs, growth):
    """Greedy EG2 on ``train``, recorded (see :func:`grow`); returns the record.

    ``costs.select`` both choose and charge (what the tree is grown with);
    ``growth`` as ICET grows it: C4.5's error-based pruning and, as the tree
    package's EG2, no depth limit (:data:`UNLIMITED_DEPTH`).  The record and
    the depth buffers start small and double until the tree fits.
    """
    k = costs.matrix.shape[0]
    n_features = data.nominal.shape[0]
    grown_with = Costs(costs.select, costs.select, costs.matrix)
    ws = workspace(train.shape[0], data.n_values, k)
    rng = np.ones(1, dtype=np.uint64)
    weights = np.ones(train.shape[0])
    capacity = 64
    levels = 32
    while True:
        rec = new_record(capacity, k)
        done = np.zeros(n_features, dtype=np.int64)
        on_path = np.zeros(n_features, dtype=np.int64)
        status, _, _, _ = grow(
            data, train, weights, done, on_path, grown_with, SELECT_EG2, growth, levels, rng,
            ws, rec,
        )  # fmt: skip
        if status == GROWN:
            return rec
        if rec.size[0] >= capacity:
            capacity *= 2
        else:
            levels *= 2


@njit(cache=True, nogil=True)
def _walk_bound(values, f, boundary, upper):
    """Largest rank whose value is at most the node's threshold (the tree package's midpoint)."""
    lo = values[f, boundary]
    hi = values[f, upper]
    mid = lo + (hi - lo) / 2.0
    if not mid < hi:
        mid = lo
    r = boundary
    while r + 1 < upper and values[f, r + 1] <= mid:
        r += 1
    return r


@njit(cache=True, nogil=True)
def policy_case_costs(
    rec, R, y, values, nominal, cases, prices, cost_matrix, reject_cost, laplace, out
):
    """Total true cost of ``cases`` run through the recorded tree's policy, as ``evaluate`` does;
    when ``out`` is not empty, ``out[i]`` receives case ``cases[i]``'s own cost.

    The tree policy of :class:`learners.tree.TreePolicyMixin` and the
    evaluator's :func:`learners.evaluation.run_case`, step by step: walk while
    the node's test is done (a missing value goes down every branch by its
    training share); while some reached node waits on a test, buy the one
    most of the patient waits on (ties: lowest index) at its marginal price
    (a derived test brings its inputs); then mix the reached leaves'
    probabilities and conclude by least expected cost, or refer when
    ``reject_cost`` (one per class; empty: never) is cheaper in expectation.
    """
    feature, boundary, upper, parents, shares, weights, empties, size = rec
    n_nodes = size[0]
    k = cost_matrix.shape[0]
    n_features = nominal.shape[0]
    # children of each node in branch order (preorder ids grow along the branches)
    n_children = np.zeros(n_nodes, dtype=np.int64)
    for c in range(1, n_nodes):
        n_children[parents[c]] += 1
    child_start = np.zeros(n_nodes + 1, dtype=np.int64)
    for v in range(n_nodes):
        child_start[v + 1] = child_start[v] + n_children[v]
    child = np.zeros(max(n_nodes - 1, 1), dtype=np.int64)
    fill = child_start[:n_nodes].copy()
    for c in range(1, n_nodes):
        child[fill[parents[c]]] = c
        fill[parents[c]] += 1
    bound = np.full(n_nodes, -1, dtype=np.int64)
    proba = np.zeros((n_nodes, k))
    for v in range(n_nodes):
        f = feature[v]
        if f >= 0 and not nominal[f]:
            bound[v] = _walk_bound(values, f, boundary[v], upper[v])
        _smoothed_row(weights[v], laplace, proba[v])
    refer = reject_cost.shape[0] > 0
    stack_node = np.empty(n_nodes + 1, dtype=np.int64)
    stack_weight = np.empty(n_nodes + 1)
    reached = np.empty(n_nodes, dtype=np.int64)
    reached_weight = np.empty(n_nodes)
    waiting = np.zeros(n_features)
    done = np.zeros(n_features, dtype=np.int64)
    grand_total = 0.0
    for i in range(cases.shape[0]):
        case = cases[i]
        done[:] = 0
        test_cost = 0.0
        while True:
            waiting[:] = 0.0
            n_waiting = 0
            n_reached = 0
            top = 0
            stack_node[0] = 0
            stack_weight[0] = 1.0
            top = 1
            while top > 0:
                top -= 1
                v = stack_node[top]
                weight = stack_weight[top]
                f = feature[v]
                if f < 0:
                    reached[n_reached] = v
                    reached_weight[n_reached] = weight
                    n_reached += 1
                    continue
                if done[f] == 0:
                    waiting[f] += weight
                    n_waiting += 1
                    continue
                r = R[case, f]
                if r < 0:
                    for e in range(child_start[v + 1] - 1, child_start[v] - 1, -1):
                        share = shares[child[e]]
                        if share > 0.0:
                            stack_node[top] = child[e]
                            stack_weight[top] = weight * share
                            top += 1
                    continue
                if nominal[f]:
                    b = r
                else:
                    b = 0 if r <= bound[v] else 1
                stack_node[top] = child[child_start[v] + b]
                stack_weight[top] = weight
                top += 1
            if n_waiting > 0:
                test = -1
                for g in range(n_features):
                    if waiting[g] > 0.0 and (test < 0 or waiting[g] > waiting[test]):
                        test = g
                test_cost += marginal_cost(test, done, prices)
                mark_done(test, done, prices, 1)
                continue
            # the tree policy's mixture and policy.decide, with numpy's operations
            # (numba's matrix product gives numpy's bits)
            mix = reached_weight[:n_reached].copy()
            belief = mix @ proba[reached[:n_reached]] / mix.sum()
            expected = belief @ cost_matrix
            label = np.argmin(expected)
            outcome = cost_matrix[y[case], label]
            if refer and expected[label] > np.sum(belief * reject_cost):
                outcome = reject_cost[y[case]]
            grand_total += test_cost + outcome
            if out.shape[0] > 0:
                out[i] = test_cost + outcome
            break
    return grand_total


@njit(cache=True, nogil=True)
def fitness(data, values, train, test, costs, reject_cost, growth):
    """ICET's fitness: mean true cost on ``test`` of the pruned EG2 tree grown on ``train``.

    The tree is :func:`grow_eg2`'s (the tree package's EG2 with the biased
    ``costs.select``); every case of ``test`` runs through its policy
    (:func:`policy_case_costs`, ``values`` the data's distinct values, padded)
    and is charged with ``costs.charge`` (the true ones), exactly as
    :func:`learners.evaluation.evaluate` would charge it.
    """
    rec = grow_eg2(data, train, costs, growth)
    R, y, nominal, _ = data
    total = policy_case_costs(
        rec, R, y, values, nominal, test, costs.charge, costs.matrix, reject_cost, growth.laplace,
        np.empty(0),
    )  # fmt: skip
    return total / max(test.shape[0], 1)
