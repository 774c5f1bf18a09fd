"""Growing the final tree of ACT and LSID3: each split chosen by sampled lookahead trees.

At a node, every candidate split (a nominal feature, or one of the ``r``
best thresholds of a numeric feature) is scored by growing sample trees
under each of its children in the compiled builder (:mod:`._engine`):

* ACT: ``c(test | path) + sum_k best_k / |E|`` where ``best_k`` is the least
  ``Total * |E_k|`` among ``r`` samples (1 EG2 + ``r - 1`` SEG2) for a nominal
  feature; a numeric feature's ``r`` best thresholds share those ``r``
  samples (one EG2 tree per child each once it has ``r`` thresholds);
* LSID3: ``sum_k`` of the fewest leaves among the samples (1 ID3 + ``r - 1``
  SID3; one ID3 tree per child of a numeric threshold).

The result is a :class:`~learners.tree._builder.GrowingTree`, so the tree
package flattens, walks and serializes it exactly as its own trees.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..tree._builder import GrowingTree
from ..tree._kernels import MODE_INFORMATION, SplitRule
from ..tree._structure import TreeStructure
from . import _engine as engine
from ._encoding import EncodedData

__all__ = [
    "GrowthSettings",
    "grow_lookahead_tree",
    "cost_prune",
    "estimated_total",
    "structure_record",
    "padded_values",
]

_EPS = 1e-9
#: depth limit of the sample trees (bounds the builder's per-level buffers)
_LOOKAHEAD_DEPTH = 40


@dataclass
class GrowthSettings:
    """Everything the growth needs besides the data (see ``ACTClassifier``)."""

    r: int
    by_size: bool  # LSID3 scores by leaves, ACT by cost
    w: float
    cf: float
    coeff: float
    laplace: bool
    min_leaf: float
    max_depth: int
    prune_lookahead: bool
    stop_at_leaf_cost: bool
    n_jobs: int
    samples_per_threshold: bool = False  # every numeric threshold gets all r samples
    mean_of_samples: bool = False  # a child scores the mean of its samples, not the least


def grow_lookahead_tree(
    data: EncodedData,
    y: np.ndarray,
    n_classes: int,
    prices: tuple,
    cost_matrix: np.ndarray,
    settings: GrowthSettings,
    rng: np.random.Generator,
    progress: Callable[[float, str], None] | None = None,
) -> tuple[GrowingTree, dict[int, float]]:
    """Grow the tree top-down; return it and each internal node's test price on its path."""
    n_samples = y.shape[0]
    tree = GrowingTree(n_classes)
    weights = np.ones(n_samples)
    tree.add(np.bincount(y, weights=weights, minlength=n_classes).astype(float))
    node_price: dict[int, float] = {}
    n_features = data.nominal.shape[0]
    stack = [
        (
            0,
            np.arange(n_samples, dtype=np.int64),
            weights,
            np.zeros(n_features, dtype=np.int64),
            np.zeros(n_features, dtype=np.int64),
            0,
        )
    ]
    finished = 0.0
    pool = ThreadPoolExecutor(settings.n_jobs) if settings.n_jobs > 1 else None
    ranked = engine.Ranked(data.ranks, y, data.nominal, data.n_values)
    how = _lookahead(settings, n_samples)
    grower = _Grower(
        data=data,
        ranked=ranked,
        scorer=engine.Scorer(ranked, engine.Costs(prices, prices, cost_matrix), how),
        prices=prices,
        cost_matrix=cost_matrix,
        settings=settings,
        pool=pool,
    )
    try:
        while stack:
            node, cases, weights, done, on_path, depth = stack.pop()
            split = _choose_split(
                grower, cases, weights, done, on_path, depth, tree.class_weight[node], rng
            )
            if split is None:
                finished += float(tree.class_weight[node].sum())
                if progress is not None:
                    progress(min(finished / n_samples, 1.0), f"{len(tree.feature)} nodes grown")
                continue
            f, boundary = split
            node_price[node] = float(engine.marginal_cost(f, done, prices))
            children = _apply_split(tree, node, grower, cases, weights, f, boundary)
            child_done = done.copy()
            engine.mark_done(f, child_done, prices, 1)
            child_path = on_path.copy()
            child_path[f] += 1
            stack.extend(
                (child, c_cases, c_weights, child_done, child_path, depth + 1)
                for child, c_cases, c_weights in reversed(children)
            )
    finally:
        if pool is not None:
            pool.shutdown()
    return tree, node_price


def _lookahead(settings: GrowthSettings, n_samples: int) -> engine.Lookahead:
    """The engine's :class:`~._engine.Lookahead` for ``settings``, on ``n_samples`` cases."""
    if settings.by_size:
        first, other = engine.SELECT_ID3, engine.SELECT_SID3
        prune = engine.PRUNE_NONE
    else:
        first, other = engine.SELECT_EG2, engine.SELECT_SEG2
        prune = engine.PRUNE_COST if settings.prune_lookahead else engine.PRUNE_NONE
    rule = SplitRule(
        MODE_INFORMATION, np.empty((0, 0)), float(settings.min_leaf), engine.xlogx_table(n_samples)
    )
    growth = engine.Growth(
        rule=rule,
        w=float(settings.w),
        prune=prune,
        coeff=float(settings.coeff),
        cf=float(settings.cf),
        laplace=bool(settings.laplace),
        max_depth=int(min(settings.max_depth, _LOOKAHEAD_DEPTH)),
    )
    return engine.Lookahead(
        growth, first, other, bool(settings.by_size), bool(settings.mean_of_samples)
    )


@dataclass(frozen=True)
class _Grower:
    """What choosing a node's split reads besides the node: the same for the whole tree."""

    data: EncodedData
    ranked: engine.Ranked
    scorer: engine.Scorer  # the engine's view of the ranked data, prices and lookahead
    prices: tuple
    cost_matrix: np.ndarray
    settings: GrowthSettings
    pool: ThreadPoolExecutor | None


def _candidates(grower: _Grower, cases, weights, on_path) -> list[tuple[int, int, int]]:
    """Valid splits at a node as ``(feature, boundary, samples per child)``.

    Each nominal feature gets ``r`` samples; a numeric feature offers its
    ``r`` best thresholds, which share the same ``r`` samples (at least one
    each): with ``r`` or more thresholds, one EG2 tree per child.  With
    ``samples_per_threshold`` every threshold gets all ``r`` samples.
    """
    data, settings = grower.ranked, grower.settings
    result = []
    for f in range(data.nominal.shape[0]):
        if data.nominal[f]:
            if on_path[f] > 0:
                continue  # its value is fixed below its own split (as in the tree package)
            totals = engine.branch_totals(data.ranks, f, -1, True, data.n_values[f], cases, weights)
            if np.count_nonzero(totals + _EPS >= settings.min_leaf) >= 2:
                result.append((f, -1, settings.r))
            continue
        gains, bounds = engine.numeric_boundaries(grower.scorer, f, cases, weights)
        if gains.size:
            best = np.argsort(-gains, kind="stable")[: max(settings.r, 1)]
            # by default the r samples a nominal test gets are shared among the thresholds
            n_trees = (
                settings.r if settings.samples_per_threshold else max(1, settings.r // len(best))
            )
            result.extend((f, int(bounds[i]), n_trees) for i in sorted(best))
    return result


def _choose_split(grower: _Grower, cases, weights, done, on_path, depth, counts, rng):
    settings = grower.settings
    prices, cost_matrix = grower.prices, grower.cost_matrix
    n = float(counts.sum())
    if (
        n + _EPS < 2.0 * settings.min_leaf
        or counts.max() >= n - _EPS
        or depth >= settings.max_depth
    ):
        return None
    candidates = _candidates(grower, cases, weights, on_path)
    if not candidates:
        return None
    # priced here, not in the threads: pricing a derived test briefly marks its inputs in done
    test_prices = [float(engine.marginal_cost(f, done, prices)) for f, _, _ in candidates]
    as_leaf = None
    if settings.stop_at_leaf_cost and not settings.by_size:
        label = engine.leaf_label(counts, cost_matrix, settings.laplace)
        as_leaf = engine.leaf_mcost(counts, label, cost_matrix, settings.coeff, settings.cf) / n
        if min(test_prices) >= as_leaf - 1e-12 * (1.0 + as_leaf):
            return None  # every score is at least its test's price: none can beat the leaf
    seeds = rng.integers(1, 2**62, size=len(candidates))

    def score(i):
        f, boundary, n_trees = candidates[i]
        total = engine.candidate_score(
            grower.scorer, cases, weights, done, on_path, f, boundary, n_trees, int(seeds[i])
        )
        if settings.by_size:
            return total
        return test_prices[i] + total / n

    pool = grower.pool
    indices = range(len(candidates))
    scores = list(pool.map(score, indices)) if pool is not None else [score(i) for i in indices]
    best = int(np.argmin(scores))  # first minimum: lowest feature, then lowest threshold
    if as_leaf is not None and scores[best] >= as_leaf - 1e-12 * (1.0 + as_leaf):
        return None
    return candidates[best][:2]


def _apply_split(tree, node, grower: _Grower, cases, weights, f, boundary):
    """Split ``node`` on ``(f, boundary)``; its children with training weight, as
    ``(child, cases, weights)``."""
    ranked, data = grower.ranked, grower.data
    nominal = bool(ranked.nominal[f])
    n_branches = int(ranked.n_values[f]) if nominal else 2
    totals = engine.branch_totals(ranked.ranks, f, boundary, nominal, n_branches, cases, weights)
    shares = totals / totals.sum()
    if nominal:
        values = data.values[f].astype(float)
        tree.threshold[node] = np.nan
    else:
        node_ranks = ranked.ranks[cases, f]
        upper = int(node_ranks[node_ranks > boundary].min())
        values = np.array([np.nan, np.nan])
        tree.threshold[node] = data.threshold(f, boundary, upper)
    tree.feature[node] = f
    parent_weight = tree.class_weight[node]
    children = []
    for b in range(n_branches):
        if shares[b] <= 0.0:
            leaf = tree.add(parent_weight.copy(), empty=True)
            tree.edges[node].append((leaf, float(values[b]), 0.0))
            continue
        c_cases, c_weights = engine.branch_cases(
            ranked.ranks, f, boundary, nominal, b, shares[b], cases, weights
        )
        counts = np.bincount(ranked.y[c_cases], weights=c_weights, minlength=tree.n_classes).astype(
            float
        )
        child = tree.add(counts)
        tree.edges[node].append((child, float(values[b]), float(shares[b])))
        children.append((child, c_cases, c_weights))
    return children


def cost_prune(tree: GrowingTree, node_price: dict[int, float], cost_matrix, settings) -> float:
    """ACT's cost-sensitive post-pruning, bottom-up, in place; returns ``Total * |E|``.

    A subtree reached by ``m`` cases becomes a leaf when its leaf estimate
    ``mcost`` is at most ``sum_leaves mcost + m * tcost`` (ALGORITHMS.md §4).
    """
    value = np.zeros(len(tree.feature))
    for node in range(len(tree.feature) - 1, -1, -1):  # children have larger ids
        if tree.empty[node]:
            continue
        as_leaf = _leaf_cost(tree.class_weight[node], cost_matrix, settings)
        if tree.feature[node] < 0:
            value[node] = as_leaf
            continue
        subtree = float(tree.class_weight[node].sum()) * node_price[node] + sum(
            value[child] for child, _, _ in tree.edges[node]
        )
        if as_leaf <= subtree + 1e-9 * (1.0 + abs(subtree)):
            tree.feature[node] = -1
            tree.threshold[node] = np.nan
            tree.edges[node] = []
            value[node] = as_leaf
        else:
            value[node] = subtree
    return float(value[0])


def estimated_total(tree: TreeStructure, prices: tuple, cost_matrix, settings) -> float:
    """``Total(T, E)`` of a fitted tree on its training cases, from its node weights.

    ``tcost`` charges each node's test in the context of its path; leaves
    contribute ``mcost / |E|``.
    """
    n_total = float(tree.class_weight[0].sum())
    if n_total <= 0:
        return 0.0
    total = 0.0
    stack = [(0, np.zeros(len(prices[0]), dtype=np.int64))]
    while stack:
        node, done = stack.pop()
        counts = tree.class_weight[node]
        f = int(tree.feature[node])
        if f < 0:
            total += _leaf_cost(counts, cost_matrix, settings)
            continue
        total += float(counts.sum()) * float(engine.marginal_cost(f, done, prices))
        child_done = done.copy()
        engine.mark_done(f, child_done, prices, 1)
        for edge in tree.edges(node):
            if tree.branch_weight[edge] > 0.0:  # an empty branch holds no training case
                stack.append((int(tree.child[edge]), child_done))
    return total / n_total


def _leaf_cost(counts, cost_matrix, settings) -> float:
    counts = np.ascontiguousarray(counts, dtype=float)
    label = engine.leaf_label(counts, cost_matrix, settings.laplace)
    return float(engine.leaf_mcost(counts, label, cost_matrix, settings.coeff, settings.cf))


def padded_values(data: EncodedData) -> np.ndarray:
    """``data.values`` as one array, padded with inf (the engine's walk reads it)."""
    values = np.full((data.ranks.shape[1], int(max(data.n_values.max(), 1))), np.inf)
    for f, distinct in enumerate(data.values):
        values[f, : distinct.size] = distinct
    return values


def structure_record(tree: TreeStructure, data: EncodedData) -> tuple:
    """A fitted tree as the engine's recorded form (:func:`._engine.new_record`), its
    numeric thresholds placed among ``data``'s ranks, so that
    :func:`._engine.policy_case_costs` walks it as ``TreeStructure`` does: a value at
    most the threshold goes left, i.e. a rank at most ``boundary``.

    Raises
    ------
    ValueError
        If a nominal split's branches are not ``data``'s category codes of its
        feature, in order: the compiled walk takes branch ``b`` for code rank
        ``b``, so a tree grown with fewer categories would be walked wrongly.
    """
    n = tree.n_nodes
    rec = engine.new_record(n, tree.class_weight.shape[1])
    feature, boundary, upper, parents, shares, weights, _, size = rec
    feature[:] = tree.feature
    weights[:, :] = tree.class_weight
    for v in range(n):
        f = int(tree.feature[v])
        for e in range(int(tree.edge_start[v]), int(tree.edge_start[v] + tree.n_edges[v])):
            parents[tree.child[e]] = v
            shares[tree.child[e]] = tree.branch_weight[e]
        if f >= 0 and data.nominal[f]:
            codes = tree.branch_value[tree.edges(v)]
            if not np.array_equal(codes, data.values[f]):
                raise ValueError(
                    f"node {v} splits feature {f} on the codes {codes.tolist()}, "
                    f"not on its categories {data.values[f].tolist()}"
                )
        elif f >= 0:
            last = int(np.searchsorted(data.values[f], tree.threshold[v], side="right")) - 1
            boundary[v] = last
            upper[v] = min(last + 1, int(data.n_values[f]) - 1)
    size[0] = n
    return rec
