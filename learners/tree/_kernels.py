"""Compiled inner loops of the tree builder: the numeric threshold scan.

Kept apart so the builder reads as plain Python.  The scan walks each numeric
feature's cases in presorted order, accumulating class weights, and scores
every boundary between adjacent distinct values in one pass.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.core import types
from numba.experimental import structref

_INV_LN2 = 1.0 / math.log(2.0)

#: Scan objectives: information (C4.5/ID3 family) or misclassification cost (DTMC).
MODE_INFORMATION = 0
MODE_COST = 1


class SplitRule(NamedTuple):
    """How the scans judge a node's splits: one per grown tree, built where its arrays are."""

    mode: int  #: MODE_INFORMATION or MODE_COST
    cost_matrix: np.ndarray  #: ``M[actual, predicted]``, read in MODE_COST (else may be empty)
    min_leaf: float  #: known weight each of two branches must hold
    table: np.ndarray  #: :func:`xlogx_table` up to the number of training cases


class TrainingSet(NamedTuple):
    """The training cases as the builder's scans read them, laid out once per tree."""

    XT: np.ndarray  #: (n_features, n_samples) float, NaN = missing: a feature is one row
    codes: np.ndarray  #: (n_nominal, n_samples) category index of each case, -1 = missing
    n_branches: np.ndarray  #: categories of each nominal feature (row of ``codes``)
    y: np.ndarray  #: class code of every training case
    n_classes: int


@structref.register
class _ScanType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class Scan(structref.StructRefProxy):
    """A tree's :class:`TrainingSet` and :class:`SplitRule`, as :func:`scan_numeric` and
    :func:`scan_nominal` read them at every node.

    A numba structref, not a named tuple: the builder passes it from Python at every node, and
    numba types a structref by its type alone where it types every array of a named tuple
    again at each call (10 us a call instead of 3 us for the spelled-out arguments).
    """

    def __new__(cls, data: TrainingSet, rule: SplitRule):
        return _new_scan(data, rule)


structref.define_proxy(Scan, _ScanType, ["data", "rule"])


@njit(cache=True)
def _new_scan(data, rule):
    """A :class:`Scan`, built by a cached compiled function (numba's own constructor of a
    structref compiles again in every process: most of a second)."""
    return Scan(data, rule)


@njit(cache=True, nogil=True)
def branch_of(rank, boundary, nominal):
    """Branch a known rank/code takes (-1 when missing): a nominal test's code is its
    branch; a numeric rank at or below ``boundary`` goes to branch 0, above it to 1.
    The one rule for ACT's compiled engine and the least-cost shallow tree's search."""
    if rank < 0:
        return -1
    if nominal:
        return rank
    return 0 if rank <= boundary else 1


@njit(cache=True, nogil=True)
def branch_totals(R, f, boundary, nominal, n_branches, cases, weights):
    """Known weight going down each branch (accumulated in case order)."""
    totals = np.zeros(n_branches)
    for p in range(cases.shape[0]):
        b = branch_of(R[cases[p], f], boundary, nominal)
        if b >= 0:
            totals[b] += weights[p]
    return totals


@njit(cache=True, nogil=True)
def branch_cases(R, f, boundary, nominal, b, share, cases, weights):
    """Cases of branch ``b``: its known cases plus every missing one times ``share``."""
    count = 0
    for p in range(cases.shape[0]):
        a = branch_of(R[cases[p], f], boundary, nominal)
        if a == b or a < 0:
            count += 1
    out_cases = np.empty(count, dtype=np.int64)
    out_weights = np.empty(count)
    fill_branch(R, f, boundary, nominal, b, share, cases, weights, out_cases, out_weights)
    return out_cases, out_weights


@njit(cache=True, nogil=True)
def fill_branch(R, f, boundary, nominal, b, share, cases, weights, out_cases, out_weights):
    """Write branch ``b``'s cases (missing ones weighted by ``share``); return their number."""
    q = 0
    for p in range(cases.shape[0]):
        a = branch_of(R[cases[p], f], boundary, nominal)
        if a == b:
            out_cases[q] = cases[p]
            out_weights[q] = weights[p]
            q += 1
        elif a < 0:
            out_cases[q] = cases[p]
            out_weights[q] = weights[p] * share
            q += 1
    return q


@njit(cache=True, nogil=True)
def class_counts(y, cases, weights, n_classes):
    """Weight of each class among ``cases``."""
    counts = np.zeros(n_classes)
    for p in range(cases.shape[0]):
        counts[y[cases[p]]] += weights[p]
    return counts


@njit(cache=True, nogil=True)
def info_mass(counts):
    """``W * H(counts)`` in bits, with ``W = sum(counts)`` (0 for an empty vector)."""
    total = 0.0
    acc = 0.0
    for c in counts:
        if c > 0.0:
            total += c
            acc -= c * math.log(c)
    if total <= 0.0:
        return 0.0
    return (total * math.log(total) + acc) * _INV_LN2


@njit(cache=True, nogil=True)
def xlogx_table(n):
    """``k * log2(k)`` for k = 0..n: entropy of whole-number counts without logs."""
    table = np.zeros(n + 1)
    for k in range(2, n + 1):
        table[k] = k * math.log(k) * _INV_LN2
    return table


@njit(cache=True, nogil=True)
def info_mass_counted(counts, table):
    """:func:`info_mass` for whole-number ``counts`` by table look-up."""
    total = 0
    acc = 0.0
    for c in counts:
        k = int(c)
        total += k
        acc -= table[k]
    return table[total] + acc


@njit(cache=True, nogil=True)
def misclassification_cost(counts, cost_matrix):
    """``mc(S) = min_j sum_i n_i M[i, j]`` (DTMC's node cost)."""
    k = counts.shape[0]
    best = np.inf
    for j in range(k):
        s = 0.0
        for i in range(k):
            s += counts[i] * cost_matrix[i, j]
        if s < best:
            best = s
    return best


@njit(cache=True, nogil=True)
def numeric_sweep(ordered, n_known, total, w_total, counted, rule, vectors, found):
    """Best threshold of one numeric feature from its known cases in ascending order.

    The one threshold sweep: :func:`scan_numeric` (the tree builder) and the
    compiled lookahead builder (:mod:`learners.act._engine`) both call it, so
    the two builders compute the same bits and grow the same trees.

    Parameters
    ----------
    ordered : ``(key, cls, wt)``: the value (or value rank) of each known case,
        ascending (equal keys are never separated), and its class code and
        weight, in the same order.
    n_known : how many leading entries of ``key``/``cls``/``wt`` are used.
    total : the node's class weights (known and missing); ``w_total`` their sum.
    counted : every weight at the node is 1, so ``rule.table`` replaces the logs.
    rule : the :class:`SplitRule`.
    vectors : ``(5, n_classes)`` work array (its rows: known, missing, left,
        right, side).
    found : ``(all_objective, all_index)``: when non-empty, every valid
        boundary's objective and the position of its last left case are
        written there.

    Returns
    -------
    (best_i, best, best_left, w_known, base, n_found)
        ``best_i`` is the position of the last case going left (-1: no valid
        threshold), ``best`` its objective (children's information, or their
        summed ``mc`` in MODE_COST), ``best_left`` the known weight going
        left, ``base`` the information of the known cases.
    """
    key, cls, wt = ordered
    known, missing, left, right, side = vectors[0], vectors[1], vectors[2], vectors[3], vectors[4]
    all_objective, all_index = found
    mode, cost_matrix, min_leaf, table = rule
    n_classes = known.shape[0]
    eps = 1e-9
    known[:] = 0.0
    for i in range(n_known):
        known[cls[i]] += wt[i]
    w_known = known.sum()
    n_found = 0
    if n_known < 2 or w_known + eps < 2.0 * min_leaf:
        return -1, np.inf, 0.0, w_known, 0.0, n_found
    for c in range(n_classes):
        missing[c] = total[c] - known[c]
        if missing[c] < 0.0:
            missing[c] = 0.0
    base = info_mass(known)
    left[:] = 0.0
    w_left = 0.0
    best = np.inf
    best_i = -1
    best_left = 0.0
    for i in range(n_known - 1):
        wp = wt[i]
        left[cls[i]] += wp
        w_left += wp
        if not key[i + 1] > key[i]:
            continue
        w_right = w_known - w_left
        if w_right + eps < min_leaf:
            break
        if w_left + eps < min_leaf:
            continue
        for c in range(n_classes):
            right[c] = known[c] - left[c]
        if mode == MODE_INFORMATION:
            if counted:
                objective = info_mass_counted(left, table) + info_mass_counted(right, table)
            else:
                objective = info_mass(left) + info_mass(right)
        else:
            share = w_left / w_known
            for c in range(n_classes):
                side[c] = left[c] + share * missing[c]
            objective = misclassification_cost(side, cost_matrix)
            for c in range(n_classes):
                side[c] = right[c] + (1.0 - share) * missing[c]
            objective += misclassification_cost(side, cost_matrix)
        if all_objective.shape[0] > 0:
            all_objective[n_found] = objective
            all_index[n_found] = i
            n_found += 1
        if best_i < 0 or objective < best - 1e-10 * (1.0 + abs(best)):
            best = objective
            best_i = i
            best_left = w_left
    return best_i, best, best_left, w_known, base, n_found


@njit(cache=True, nogil=True)
def all_ones(weights):
    """Whether every weight is exactly 1 (no fractional case: entropies by table look-up)."""
    for p in range(weights.shape[0]):
        if weights[p] != 1.0:
            return False
    return True


@njit(cache=True)
def scan_numeric(scan, cases, weights, order, features):
    """Best binary threshold of every numeric feature at one node.

    Parameters
    ----------
    scan : the tree's :class:`Scan`: its ``data`` (the :class:`TrainingSet`,
        whose ``XT`` is feature-major, so a scan reads one contiguous row) and
        its ``rule`` (the :class:`SplitRule`).
    cases, weights : the node's cases (global row ids) and their weights.
    order : (n_numeric, n_node) local positions sorted by each feature's
        value, missing values last.
    features : feature index of each row of ``order``.
    ``rule``: MODE_INFORMATION maximizes information
        gain; MODE_COST minimizes the children's summed misclassification cost
        (missing cases shared out in proportion to the known weights, as they
        will be at growth).  Each side must receive at least ``min_leaf`` known
        weight.  ``table`` is used when every weight at the node is 1 (no
        fractional cases), which replaces the logarithms of the scan by
        look-ups.

    Returns
    -------
    score : per feature, the information gain ``DeltaI`` (known fraction
        applied) for MODE_INFORMATION, or the children's summed ``mc`` for
        MODE_COST; NaN when no valid threshold exists.
    threshold : the midpoint between the two adjacent values (or the lower
        value when the midpoint rounds up to the upper one).
    split_info : C4.5's split information, counting missing as its own branch.
    left_weight, known_weight : known weight going left, and in all.
    """
    data, rule = scan.data, scan.rule
    XT, y, n_classes = data.XT, data.y, data.n_classes
    n_rows = order.shape[0]
    m = order.shape[1]
    score = np.full(n_rows, np.nan)
    threshold = np.full(n_rows, np.nan)
    split_info = np.zeros(n_rows)
    left_weight = np.zeros(n_rows)
    known_weight = np.zeros(n_rows)
    total = np.zeros(n_classes)
    for p in range(m):
        total[y[cases[p]]] += weights[p]
    w_total = total.sum()
    counted = w_total < rule.table.shape[0] and all_ones(weights)
    vectors = np.zeros((5, n_classes))
    key = np.empty(m)
    cls = np.empty(m, np.int64)
    wt = np.empty(m)
    ordered = (key, cls, wt)
    nothing_found = (np.empty(0), np.empty(0, np.int64))
    for r in range(n_rows):
        f = features[r]
        n_known = 0
        for i in range(m):
            p = order[r, i]
            v = XT[f, cases[p]]
            if np.isnan(v):
                break
            key[i] = v
            cls[i] = y[cases[p]]
            wt[i] = weights[p]
            n_known += 1
        best_i, best, best_left, w_known, base, _ = numeric_sweep(
            ordered, n_known, total, w_total, counted, rule, vectors, nothing_found
        )
        if best_i < 0:
            continue
        lo = key[best_i]
        hi = key[best_i + 1]
        mid = lo + (hi - lo) / 2.0
        if not mid < hi:
            mid = lo
        threshold[r] = mid
        left_weight[r] = best_left
        known_weight[r] = w_known
        if rule.mode == MODE_INFORMATION:
            score[r] = max(base - best, 0.0) / w_total
        else:
            score[r] = best
        info = 0.0
        for part in (best_left, w_known - best_left, w_total - w_known):
            if part > 0.0:
                q = part / w_total
                info -= q * np.log2(q)
        split_info[r] = info
    return score, threshold, split_info, left_weight, known_weight


@njit(cache=True, nogil=True)
def nominal_information(table, branch_total, b_count, w_total, min_leaf, known):
    """Information gain of a multiway split from its branch-by-class weights (NaN: invalid).

    ``table[b, c]`` and ``branch_total[b]`` hold the known weight of branch
    ``b`` (accumulated in case order); a split needs two branches with
    ``min_leaf`` known weight.  Shared by :func:`scan_nominal` and the
    compiled lookahead builder.
    """
    n_classes = known.shape[0]
    eps = 1e-9
    big = 0
    for b in range(b_count):
        if branch_total[b] + eps >= min_leaf:
            big += 1
    if big < 2:
        return np.nan
    for c in range(n_classes):
        s = 0.0
        for b in range(b_count):
            s += table[b, c]
        known[c] = s
    children = 0.0
    for b in range(b_count):
        children += info_mass(table[b])
    return max(info_mass(known) - children, 0.0) / w_total


@njit(cache=True)
def scan_nominal(scan, cases, weights, active):
    """Multiway split of every nominal feature at one node (one branch per category).

    Parameters
    ----------
    scan : the tree's :class:`Scan` (its data's ``codes`` and ``n_branches``).
    active : whether each nominal feature may split here (not yet on the path).
    Other parameters as in :func:`scan_numeric` (``rule.table`` unused).

    Returns
    -------
    score : information gain (known fraction applied) or, in MODE_COST, the
        children's summed ``mc`` with missing cases shared out; NaN when fewer
        than two branches hold ``min_leaf`` known weight.
    split_info : C4.5's split information, missing counted as a branch.
    """
    data = scan.data
    codes, n_branches, y, n_classes = data.codes, data.n_branches, data.y, data.n_classes
    mode, cost_matrix, min_leaf, _ = scan.rule
    n_rows = codes.shape[0]
    m = cases.shape[0]
    score = np.full(n_rows, np.nan)
    split_info = np.zeros(n_rows)
    total = np.zeros(n_classes)
    for p in range(m):
        total[y[cases[p]]] += weights[p]
    w_total = total.sum()
    max_branches = 1
    for r in range(n_rows):
        if n_branches[r] > max_branches:
            max_branches = n_branches[r]
    table = np.zeros((max_branches, n_classes))
    branch_total = np.zeros(max_branches)
    known = np.zeros(n_classes)
    missing = np.zeros(n_classes)
    side = np.zeros(n_classes)
    for r in range(n_rows):
        if not active[r]:
            continue
        b_count = n_branches[r]
        table[:b_count, :] = 0.0
        branch_total[:b_count] = 0.0
        for p in range(m):
            b = codes[r, cases[p]]
            if b >= 0:
                table[b, y[cases[p]]] += weights[p]
                branch_total[b] += weights[p]
        w_known = 0.0
        for b in range(b_count):
            w_known += branch_total[b]
        gain = nominal_information(table, branch_total, b_count, w_total, min_leaf, known)
        if np.isnan(gain):
            continue
        for c in range(n_classes):
            missing[c] = max(total[c] - known[c], 0.0)
        if mode == MODE_INFORMATION:
            score[r] = gain
        else:
            cost = 0.0
            for b in range(b_count):
                share = branch_total[b] / w_known
                for c in range(n_classes):
                    side[c] = table[b, c] + share * missing[c]
                cost += misclassification_cost(side, cost_matrix)
            score[r] = cost
        info = 0.0
        for b in range(b_count + 1):
            part = branch_total[b] if b < b_count else w_total - w_known
            if part > 0.0:
                q = part / w_total
                info -= q * np.log2(q)
        split_info[r] = info
    return score, split_info


@njit(cache=True)
def split_cases(cases, weights, branch, b, share, order, y, n_classes):
    """The cases, weights, sorted orders and class weights of child ``b``.

    Cases whose ``branch`` is ``b`` keep their weight; cases with a missing
    value (``branch < 0``) join every child with their weight times ``share``
    (C4.5's fractional cases).  ``order`` rows stay sorted: they are filtered,
    never re-sorted.
    """
    m = cases.shape[0]
    position = np.empty(m, np.int64)
    count = 0
    for p in range(m):
        if branch[p] == b or (branch[p] < 0 and share > 0.0):
            position[p] = count
            count += 1
        else:
            position[p] = -1
    child_cases = np.empty(count, np.int64)
    child_weights = np.empty(count)
    class_weight = np.zeros(n_classes)
    for p in range(m):
        q = position[p]
        if q >= 0:
            w = weights[p] * share if branch[p] < 0 else weights[p]
            child_cases[q] = cases[p]
            child_weights[q] = w
            class_weight[y[cases[p]]] += w
    n_rows = order.shape[0]
    child_order = np.empty((n_rows, count), np.int64)
    for r in range(n_rows):
        k = 0
        for i in range(m):
            q = position[order[r, i]]
            if q >= 0:
                child_order[r, k] = q
                k += 1
    return child_cases, child_weights, child_order, class_weight
