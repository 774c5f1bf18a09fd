"""Compiled lookahead tree builder shared by ACT, LSID3 and ICET.

ACT prices every candidate split by growing whole sample trees under each
child (thousands per fit), so they are grown here, in numba, on an encoded
copy of the data: each numeric feature is replaced by the rank of its value
among the training values and each nominal feature by its category position
(-1 = missing).  A node scans every feature with one class-weight histogram
per rank, so no sorting happens below the root.

A sample tree is never materialised: :func:`grow` returns what its callers
score it by (ALGORITHMS.md §4):

* ``cost``: ``sum_internal m * c + sum_leaves mcost(l)`` (``Total * |E|``),
* ``errors``: the sum of the leaves' expected errors ``EE``,
* ``eval``: the total true cost of held-out cases routed through the tree
  (ICET's fitness), and
* ``leaves``: the number of leaves (LSID3's size).

Growth follows the tree package's builder: C4.5's fractional cases for
missing values, a split needs two branches with ``min_leaf`` known weight,
EG2 ranks a zero-cost test before any priced one, ties go to the lowest
feature index.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._estimates import (  # noqa: F401 - re-exported for the growth code and tests
    expected_errors,
    info_mass,
    leaf_label,
    leaf_mcost,
    next_uniform,
)
from ._estimates import _info_mass_rest
from ._pricing import marginal_cost, mark_done  # noqa: F401 - re-exported

SELECT_EG2 = 0
SELECT_SEG2 = 1
SELECT_ID3 = 2
SELECT_SID3 = 3

PRUNE_NONE = 0
PRUNE_COST = 1  # ACT's cost-sensitive pruning
PRUNE_ERROR = 2  # C4.5's error-based pruning

_EPS = 1e-9



# ------------------------------------------------------------------ splits
@njit(cache=True, nogil=True)
def branch_of(rank, boundary, nominal):
    """Branch a known rank/code takes (-1 when missing)."""
    if rank < 0:
        return -1
    if nominal:
        return rank
    return 0 if rank <= boundary else 1


@njit(cache=True, nogil=True)
def branch_totals(R, f, boundary, nominal, n_branches, cases, weights):
    """Known weight going down each branch."""
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
    return out_cases, out_weights


@njit(cache=True, nogil=True)
def class_counts(y, cases, weights, n_classes):
    counts = np.zeros(n_classes)
    for p in range(cases.shape[0]):
        counts[y[cases[p]]] += weights[p]
    return counts


@njit(cache=True, nogil=True)
def _fill_histogram(R, y, f, cases, weights, hist, seen, touched):
    n_touched = 0
    for p in range(cases.shape[0]):
        r = R[cases[p], f]
        if r < 0:
            continue
        if not seen[r]:
            seen[r] = True
            touched[n_touched] = r
            n_touched += 1
        hist[r, y[cases[p]]] += weights[p]
    return n_touched


@njit(cache=True, nogil=True)
def _clear_histogram(hist, seen, touched, n_touched):
    for i in range(n_touched):
        r = touched[i]
        seen[r] = False
        hist[r, :] = 0.0


@njit(cache=True, nogil=True)
def scan_feature(R, y, f, nominal, n_values, cases, weights, n_total, min_leaf,
                 hist, seen, touched, all_gains, all_bounds):
    """Information gain of ``f``'s best split at a node (C4.5 known fraction applied).

    Returns ``(gain, boundary, n_boundaries)``: gain is -1 when no split is
    valid; boundary is the last rank going left (numeric) or -1 (nominal).
    When ``all_gains`` is non-empty, every valid numeric boundary's gain and
    rank are written there, in rank order, and their number returned.
    """
    k = hist.shape[1]
    n_touched = _fill_histogram(R, y, f, cases, weights, hist, seen, touched)
    known = np.zeros(k)
    for i in range(n_touched):
        for c in range(k):
            known[c] += hist[touched[i], c]
    w_known = known.sum()
    gain = -1.0
    boundary = -1
    n_found = 0
    if nominal:
        valid = 0
        children = 0.0
        for i in range(n_touched):
            row = hist[touched[i]]
            if row.sum() + _EPS >= min_leaf:
                valid += 1
            children += info_mass(row)
        if valid >= 2:
            gain = max(info_mass(known) - children, 0.0) / n_total
    elif n_touched >= 2 and w_known + _EPS >= 2.0 * min_leaf:
        u = n_values[f]
        if n_touched * 16 < u:
            ranks = np.sort(touched[:n_touched])
        else:
            ranks = np.empty(n_touched, dtype=np.int64)
            q = 0
            for r in range(u):
                if seen[r]:
                    ranks[q] = r
                    q += 1
        base = info_mass(known)
        left = np.zeros(k)
        w_left = 0.0
        best = np.inf
        for i in range(n_touched - 1):
            r = ranks[i]
            for c in range(k):
                left[c] += hist[r, c]
                w_left += hist[r, c]
            w_right = w_known - w_left
            if w_right + _EPS < min_leaf:
                break
            if w_left + _EPS < min_leaf:
                continue
            objective = info_mass(left) + _info_mass_rest(known, left)
            if all_gains.shape[0] > 0:
                all_gains[n_found] = max(base - objective, 0.0) / n_total
                all_bounds[n_found] = ranks[i]
                n_found += 1
            if boundary < 0 or objective < best - 1e-10 * (1.0 + abs(best)):
                best = objective
                boundary = ranks[i]
        if boundary >= 0:
            gain = max(base - best, 0.0) / n_total
    _clear_histogram(hist, seen, touched, n_touched)
    return gain, boundary, n_found


# ------------------------------------------------------------------ growth
@njit(cache=True, nogil=True)
def _choose(gains, bounds, costs, select, w, rng):
    """Feature picked by the sampler among features with positive gain (-1: none)."""
    n = gains.shape[0]
    if select == SELECT_EG2 or select == SELECT_ID3:
        best = -1
        best_free = False
        best_value = -np.inf
        for f in range(n):
            if gains[f] <= 1e-12:
                continue
            if select == SELECT_ID3:
                free, value = False, gains[f]
            elif costs[f] <= 0.0:
                free, value = True, gains[f]
            else:
                free, value = False, (2.0 ** gains[f] - 1.0) / (costs[f] + 1.0) ** w
            if best < 0 or (free and not best_free) or (free == best_free and value > best_value):
                best, best_free, best_value = f, free, value
        return best
    weights = np.zeros(n)
    total = 0.0
    for f in range(n):
        if gains[f] <= 1e-12:
            continue
        if select == SELECT_SID3:
            weights[f] = gains[f]
        else:
            weights[f] = (2.0 ** gains[f] - 1.0) / (costs[f] + 1.0) ** w
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
def _eval_leaf(y, ecases, eweights, label, cost_matrix):
    total = 0.0
    for p in range(ecases.shape[0]):
        total += eweights[p] * cost_matrix[y[ecases[p]], label]
    return total


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
def grow(R, y, nominal, n_values, cases, weights, ecases, eweights, done,
         select_prices, charge_prices, cost_matrix, select, w, prune, coeff, cf,
         laplace, min_leaf, max_depth, rng, hist, seen, touched):
    """Grow one sample tree on ``cases`` and score it (see the module docstring).

    Depth-first with an explicit stack (numba cannot cache recursive
    functions).  ``done`` counts the tests on the path; it is modified during
    the call and restored on return.  ``select_prices`` price tests for
    choosing (ICET's biased costs), ``charge_prices`` for accounting.
    Returns ``(cost, errors, eval, leaves)``.
    """
    k = cost_matrix.shape[0]
    n_features = nominal.shape[0]
    levels = max_depth + 1
    n0 = cases.shape[0]
    e0 = ecases.shape[0]
    buf_c = np.empty((levels, max(n0, 1)), dtype=np.int64)
    buf_w = np.empty((levels, max(n0, 1)))
    buf_ec = np.empty((levels, max(e0, 1)), dtype=np.int64)
    buf_ew = np.empty((levels, max(e0, 1)))
    max_branches = 2
    for g in range(n_features):
        if nominal[g]:
            max_branches = max(max_branches, n_values[g])
    totals = np.zeros((levels, max_branches))
    split_f = np.full(levels, -1, dtype=np.int64)
    split_b = np.full(levels, -1, dtype=np.int64)
    n_branches = np.zeros(levels, dtype=np.int64)
    next_branch = np.zeros(levels, dtype=np.int64)
    m = np.zeros(levels, dtype=np.int64)
    em = np.zeros(levels, dtype=np.int64)
    labels = np.zeros(levels, dtype=np.int64)
    leaf_c = np.zeros(levels)
    leaf_e = np.zeros(levels)
    leaf_v = np.zeros(levels)
    acc_c = np.zeros(levels)
    acc_e = np.zeros(levels)
    acc_v = np.zeros(levels)
    acc_l = np.zeros(levels)
    gains = np.empty(n_features)
    bounds = np.empty(n_features, dtype=np.int64)
    costs = np.zeros(n_features)
    no_list = np.empty(0)
    no_bounds = np.empty(0, dtype=np.int64)
    m[0] = n0
    em[0] = e0
    buf_c[0, :n0] = cases
    buf_w[0, :n0] = weights
    buf_ec[0, :e0] = ecases
    buf_ew[0, :e0] = eweights
    level = 0
    fresh = True
    while True:
        have_result = False
        r_c = 0.0
        r_e = 0.0
        r_v = 0.0
        r_l = 0.0
        c_arr = buf_c[level, : m[level]]
        w_arr = buf_w[level, : m[level]]
        ec_arr = buf_ec[level, : em[level]]
        ew_arr = buf_ew[level, : em[level]]
        if fresh:
            counts = class_counts(y, c_arr, w_arr, k)
            n = counts.sum()
            label = leaf_label(counts, cost_matrix, laplace)
            labels[level] = label
            leaf_c[level] = leaf_mcost(counts, label, cost_matrix, coeff, cf)
            leaf_e[level] = expected_errors(n, n - counts[label], coeff, cf)
            leaf_v[level] = _eval_leaf(y, ec_arr, ew_arr, label, cost_matrix)
            f = -1
            cheapest = np.inf
            if not (n + _EPS < 2.0 * min_leaf or counts.max() >= n - _EPS or level >= max_depth):
                for g in range(n_features):
                    gains[g] = -1.0
                    bounds[g] = -1
                    costs[g] = 0.0
                    if nominal[g] and done[g] > 0:
                        continue
                    gain, bound, _ = scan_feature(R, y, g, nominal[g], n_values, c_arr, w_arr, n,
                                                  min_leaf, hist, seen, touched, no_list, no_bounds)
                    gains[g] = gain
                    bounds[g] = bound
                    if gain > 1e-12:
                        costs[g] = marginal_cost(g, done, select_prices)
                        cheapest = min(cheapest, marginal_cost(g, done, charge_prices))
                # Under cost pruning a subtree costs at least n * (its root test's
                # price), so a leaf no dearer than that is what pruning would keep.
                if prune != PRUNE_COST or leaf_c[level] > n * cheapest + 1e-9 * (1.0 + n * cheapest):
                    f = _choose(gains, bounds, costs, select, w, rng)
            if f < 0:
                have_result = True
                r_c = leaf_c[level]
                r_e = leaf_e[level]
                r_v = leaf_v[level]
                r_l = 1.0
            else:
                split_f[level] = f
                split_b[level] = bounds[f]
                nb = n_values[f] if nominal[f] else 2
                n_branches[level] = nb
                totals[level, :nb] = branch_totals(R, f, bounds[f], nominal[f], nb, c_arr, w_arr)
                price = marginal_cost(f, done, charge_prices)
                acc_c[level] = n * price
                acc_e[level] = 0.0
                acc_v[level] = price * ew_arr.sum()
                acc_l[level] = 0.0
                mark_done(f, done, charge_prices, 1)
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
                em[level + 1] = fill_branch(R, f, split_b[level], nominal[f], b, share,
                                            ec_arr, ew_arr, buf_ec[level + 1], buf_ew[level + 1])
                if totals[level, b] <= 0.0:
                    # an empty branch is a leaf that decides like its parent
                    acc_v[level] += _eval_leaf(y, buf_ec[level + 1, : em[level + 1]],
                                               buf_ew[level + 1, : em[level + 1]],
                                               labels[level], cost_matrix)
                    acc_l[level] += 1.0
                    continue
                m[level + 1] = fill_branch(R, f, split_b[level], nominal[f], b, share,
                                           c_arr, w_arr, buf_c[level + 1], buf_w[level + 1])
                level += 1
                fresh = True
                continue
            mark_done(f, done, charge_prices, -1)
            have_result = True
            r_c = acc_c[level]
            r_e = acc_e[level]
            r_v = acc_v[level]
            r_l = acc_l[level]
            if (prune == PRUNE_COST and leaf_c[level] <= r_c + 1e-9 * (1.0 + abs(r_c))) or (
                prune == PRUNE_ERROR and leaf_e[level] <= r_e + 1e-9
            ):
                r_c = leaf_c[level]
                r_e = leaf_e[level]
                r_v = leaf_v[level]
                r_l = 1.0
        if have_result:
            if level == 0:
                return r_c, r_e, r_v, r_l
            level -= 1
            acc_c[level] += r_c
            acc_e[level] += r_e
            acc_v[level] += r_v
            acc_l[level] += r_l
            fresh = False


@njit(cache=True, nogil=True)
def candidate_score(R, y, nominal, n_values, cases, weights, done, prices, cost_matrix,
                    f, boundary, n_samples, first_select, other_select, w, prune, coeff, cf,
                    laplace, min_leaf, max_depth, seed, by_size):
    """Sum over the children of split ``(f, boundary)`` of their best sample's score.

    Each child with training weight gets ``n_samples`` sample trees (the first
    built by ``first_select``, the rest by ``other_select``) in the context of
    the path plus ``f``; a child's score is the least ``cost`` (or, when
    ``by_size``, the fewest leaves) among its samples.  An empty branch scores
    0 (or one leaf).
    """
    k = cost_matrix.shape[0]
    u_max = 1
    for g in range(n_values.shape[0]):
        u_max = max(u_max, n_values[g])
    hist = np.zeros((u_max, k))
    seen = np.zeros(u_max, dtype=np.bool_)
    touched = np.zeros(cases.shape[0] + 1, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)
    rng[0] = np.uint64(seed) | np.uint64(1)
    path = done.copy()
    is_nominal = nominal[f]
    n_branches = n_values[f] if is_nominal else 2
    totals = branch_totals(R, f, boundary, is_nominal, n_branches, cases, weights)
    known = totals.sum()
    no_cases = np.empty(0, dtype=np.int64)
    no_weights = np.empty(0)
    mark_done(f, path, prices, 1)
    total = 0.0
    for b in range(n_branches):
        if totals[b] <= 0.0:
            if by_size:
                total += 1.0
            continue
        c_cases, c_weights = branch_cases(R, f, boundary, is_nominal, b, totals[b] / known,
                                          cases, weights)
        best = np.inf
        for s in range(n_samples):
            select = first_select if s == 0 else other_select
            c_cost, _, _, c_leaves = grow(
                R, y, nominal, n_values, c_cases, c_weights, no_cases, no_weights, path,
                prices, prices, cost_matrix, select, w, prune, coeff, cf, laplace, min_leaf,
                max_depth, rng, hist, seen, touched)
            value = c_leaves if by_size else c_cost
            if value < best:
                best = value
        total += best
    return total


@njit(cache=True, nogil=True)
def numeric_boundaries(R, y, f, nominal, n_values, cases, weights, n_total, min_leaf):
    """Every valid boundary of numeric ``f`` at a node and its gain, in rank order."""
    k = 0
    for p in range(cases.shape[0]):
        k = max(k, y[cases[p]] + 1)
    hist = np.zeros((max(n_values[f], 1), max(k, 1)))
    seen = np.zeros(max(n_values[f], 1), dtype=np.bool_)
    touched = np.zeros(cases.shape[0] + 1, dtype=np.int64)
    gains = np.zeros(cases.shape[0] + 1)
    bounds = np.zeros(cases.shape[0] + 1, dtype=np.int64)
    _, _, found = scan_feature(R, y, f, False, n_values, cases, weights, n_total, min_leaf,
                               hist, seen, touched, gains, bounds)
    return gains[:found], bounds[:found]


@njit(cache=True, nogil=True)
def fitness(R, y, nominal, n_values, train, test, select_prices, charge_prices, cost_matrix,
            w, cf, coeff, laplace, min_leaf, max_depth):
    """ICET's fitness: mean true cost on ``test`` of the pruned EG2 tree grown on ``train``."""
    k = cost_matrix.shape[0]
    u_max = 1
    for g in range(n_values.shape[0]):
        u_max = max(u_max, n_values[g])
    hist = np.zeros((u_max, k))
    seen = np.zeros(u_max, dtype=np.bool_)
    touched = np.zeros(train.shape[0] + 1, dtype=np.int64)
    rng = np.ones(1, dtype=np.uint64)
    done = np.zeros(nominal.shape[0], dtype=np.int64)
    _, _, evaluation, _ = grow(
        R, y, nominal, n_values, train, np.ones(train.shape[0]), test, np.ones(test.shape[0]),
        done, select_prices, charge_prices, cost_matrix, SELECT_EG2, w, PRUNE_ERROR, coeff, cf,
        laplace, min_leaf, max_depth, rng, hist, seen, touched)
    return evaluation / max(test.shape[0], 1)
