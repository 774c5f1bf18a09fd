"""The one greedy tree builder, parameterised by a split criterion.

Growth follows C4.5: nominal features split one branch per category seen in
training, numeric features split in two at a threshold; cases with a missing
value go down every branch with weights proportional to the branch's known
weight (fractional cases); a split needs at least two branches holding
``min_leaf`` known weight.  Error-based pruning (C4.5, without subtree
raising) is applied afterwards on request.  The result is a
:class:`~learners.tree._structure.TreeStructure`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ._criteria import Candidate, Criterion
from ._kernels import (
    MODE_COST,
    Scan,
    SplitRule,
    TrainingSet,
    misclassification_cost,
    scan_nominal,
    scan_numeric,
    split_cases,
    xlogx_table,
)
from ._structure import LEAF, TreeStructure
from .pessimistic import expected_error

if TYPE_CHECKING:
    from ..costs import CostModel

__all__ = ["grow_tree", "prune_tree", "GrowingTree"]

_EPS = 1e-9


class GrowingTree:
    """Mutable node lists used while growing and pruning, before flattening."""

    def __init__(self, n_classes: int) -> None:
        self.n_classes = n_classes
        self.feature: list[int] = []
        self.threshold: list[float] = []
        self.class_weight: list[np.ndarray] = []
        self.edges: list[list[tuple[int, float, float]]] = []
        self.empty: list[bool] = []

    def add(self, class_weight: np.ndarray, empty: bool = False) -> int:
        """Append a leaf and return its id."""
        self.feature.append(LEAF)
        self.threshold.append(np.nan)
        self.class_weight.append(class_weight)
        self.edges.append([])
        self.empty.append(empty)
        return len(self.feature) - 1

    def preorder(self) -> list[int]:
        """Ids of the nodes reachable from the root, in the order :meth:`to_structure`
        numbers them (its node ``i`` is ``preorder()[i]``)."""
        order: list[int] = []
        stack = [0]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(child for child, _, _ in reversed(self.edges[node]))
        return order

    def collapse(self, node: int) -> None:
        """Make ``node`` a leaf (its subtree becomes unreachable)."""
        self.feature[node] = LEAF
        self.threshold[node] = np.nan
        self.edges[node] = []

    def to_structure(self) -> TreeStructure:
        """Flatten the nodes reachable from the root, numbered in preorder."""
        order = self.preorder()
        new_id = {old: new for new, old in enumerate(order)}
        feature: list[int] = []
        threshold: list[float] = []
        edge_start: list[int] = []
        n_edges: list[int] = []
        child: list[int] = []
        branch_value: list[float] = []
        branch_weight: list[float] = []
        for old in order:
            feature.append(self.feature[old])
            threshold.append(self.threshold[old])
            edge_start.append(len(child))
            n_edges.append(len(self.edges[old]))
            for c, value, weight in self.edges[old]:
                child.append(new_id[c])
                branch_value.append(value)
                branch_weight.append(weight)
        class_weight = np.array([self.class_weight[old] for old in order], dtype=float)
        return TreeStructure(
            feature=np.array(feature, dtype=np.int64),
            threshold=np.array(threshold, dtype=float),
            edge_start=np.array(edge_start, dtype=np.int64),
            n_edges=np.array(n_edges, dtype=np.int64),
            class_weight=class_weight.reshape(len(order), self.n_classes),
            child=np.array(child, dtype=np.int64),
            branch_value=np.array(branch_value, dtype=float),
            branch_weight=np.array(branch_weight, dtype=float),
        )


def grow_tree(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    criterion: Criterion,
    cost_model,
    cost_matrix: np.ndarray,
    categories: Mapping[int, np.ndarray],
    min_leaf: float = 2.0,
    max_depth: int | None = None,
    sample_weight: np.ndarray | None = None,
) -> GrowingTree:
    """Grow a tree greedily on ``X`` (float, NaN = missing) and class codes ``y``.

    Parameters
    ----------
    criterion : Criterion
        Picks the split at each node (or none).
    cost_model : CostModel
        Prices tests in the node's context: the tests on the path are done.
    cost_matrix : (K, K) array
        ``M[actual, predicted]``; used by the cost-based criterion (DTMC).
    categories : mapping feature -> sorted category codes
        The nominal features; every other feature is numeric.
    sample_weight : (n_samples,) array, optional
        Case weights (boosting); None gives every case weight 1.  ``min_leaf``
        and the class weights are in the same units, so weights that sum to
        the number of cases keep C4.5's MINOBJS meaning.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    cost_matrix = np.ascontiguousarray(cost_matrix, dtype=np.float64)
    n_samples, n_features = X.shape
    numeric = np.array([f for f in range(n_features) if f not in categories], dtype=np.int64)
    # Presort once; children inherit sorted order by stable filtering.
    order = np.ascontiguousarray(np.argsort(X[:, numeric], axis=0, kind="stable").T)
    code_index = {f: _category_index(X[:, f], cats) for f, cats in categories.items()}
    nominal = np.array(sorted(categories), dtype=np.int64)
    codes = np.zeros((len(nominal), n_samples), dtype=np.int64)
    for r, f in enumerate(nominal.tolist()):
        codes[r] = code_index[f]
    data = TrainingSet(
        XT=np.ascontiguousarray(X.T),
        codes=codes,
        n_branches=np.array([len(categories[f]) for f in nominal], dtype=np.int64),
        y=y,
        n_classes=int(n_classes),
    )
    rule = SplitRule(int(criterion.scan_mode), cost_matrix, float(min_leaf), xlogx_table(n_samples))
    scans = _Scans(Scan(data, rule), rule.mode == MODE_COST, numeric, nominal, cost_model)

    tree = GrowingTree(n_classes)
    if sample_weight is None:
        root_weights = np.ones(n_samples)
    else:
        root_weights = np.array(sample_weight, dtype=np.float64)
        if root_weights.shape != (n_samples,):
            raise ValueError(f"sample_weight must have one weight per case ({n_samples})")
        if not np.isfinite(root_weights).all() or (root_weights < 0).any():
            raise ValueError("sample_weight must be finite and non-negative")
    root = tree.add(np.bincount(y, weights=root_weights, minlength=n_classes).astype(float))
    # a path is the tuple of its split features (a numeric one may repeat)
    # (node, cases, case weights, per-feature case order, path, depth)
    Frame = tuple[int, np.ndarray, np.ndarray, np.ndarray, tuple[int, ...], int]
    stack: list[Frame] = [(root, np.arange(n_samples), root_weights, order, (), 0)]
    while stack:
        node, cases, weights, node_order, path, depth = stack.pop()
        class_weight = tree.class_weight[node]
        total = float(class_weight.sum())
        if (
            total + _EPS < 2.0 * min_leaf
            or class_weight.max() >= total - _EPS
            or (max_depth is not None and depth >= max_depth)
        ):
            continue
        node_cost = misclassification_cost(class_weight, cost_matrix)
        candidates = _numeric_splits(scans, cases, weights, node_order, path)
        candidates.extend(_nominal_splits(scans, cases, weights, path))
        chosen = criterion.choose(candidates, node_cost, total)
        if chosen is None:
            continue
        f = chosen.feature
        if f in code_index:
            branch = code_index[f][cases]
            values = categories[f].astype(float)
            tree.threshold[node] = np.nan
        else:
            column = X[cases, f]
            branch = np.where(np.isnan(column), -1, np.where(column <= chosen.threshold, 0, 1))
            values = np.array([np.nan, np.nan])
            tree.threshold[node] = chosen.threshold
        branch = branch.astype(np.int64, copy=False)
        known = branch >= 0
        branch_total = np.bincount(branch[known], weights=weights[known], minlength=len(values))
        shares = branch_total / branch_total.sum()
        tree.feature[node] = f
        child_done = path + (f,)
        children: list[Frame] = []
        for b in range(len(values)):
            if shares[b] <= 0.0:
                leaf = tree.add(class_weight.copy(), empty=True)
                tree.edges[node].append((leaf, float(values[b]), 0.0))
                continue
            child_cases, child_weights, child_order, cw = split_cases(
                cases, weights, branch, b, float(shares[b]), node_order, y, n_classes
            )
            child = tree.add(cw)
            tree.edges[node].append((child, float(values[b]), float(shares[b])))
            children.append((child, child_cases, child_weights, child_order, child_done, depth + 1))
        stack.extend(reversed(children))
    return tree


def prune_tree(
    tree: GrowingTree, leaf_label: Callable[[np.ndarray], int], cf: float = 0.25
) -> GrowingTree:
    """C4.5 error-based pruning, in place (subtree raising is not done).

    A subtree becomes a leaf when the leaf's ``EE(n, e, CF)`` is at most the
    sum of its leaves' ``EE``; ``e`` counts the weight not of the class the
    leaf would decide (``leaf_label``), so errors follow the cost-based label.
    Leaves of empty branches count zero.
    """
    n_nodes = len(tree.feature)
    estimate = np.zeros(n_nodes)
    for node in range(n_nodes - 1, -1, -1):  # children always have larger ids
        if tree.empty[node]:
            continue
        cw = tree.class_weight[node]
        n = float(cw.sum())
        as_leaf = expected_error(n, n - float(cw[leaf_label(cw)]), cf)
        if tree.feature[node] == LEAF:
            estimate[node] = as_leaf
            continue
        as_subtree = sum(estimate[child] for child, _, _ in tree.edges[node])
        if as_leaf <= as_subtree + 1e-9:
            tree.collapse(node)
            estimate[node] = as_leaf
        else:
            estimate[node] = as_subtree
    return tree


def _shared_price(cost_model, f: int, path) -> float:
    """``f``'s own price shared by the thresholds the path takes from it, this one included.

    ``path`` lists the path's split features (a tuple, with repeats).
    """
    return cost_model.marginal_cost(f) / (1 + sum(1 for t in path if t == f))


def _category_index(column: np.ndarray, categories: np.ndarray) -> np.ndarray:
    """Position of each value in ``categories`` (every known value is one); -1 for missing."""
    index = np.searchsorted(categories, column)  # NaN sorts past the end
    index[np.isnan(column)] = -1
    return index.astype(np.int64, copy=False)


@dataclass(frozen=True)
class _Scans:
    """What scoring a node's candidate splits reads besides the node: the same for the tree."""

    scan: Scan  # the kernels' TrainingSet and SplitRule
    cost_mode: bool  # the rule's mode is MODE_COST (DTMC): candidates carry child costs
    numeric: np.ndarray  # feature of each row of the presorted order
    nominal: np.ndarray  # feature of each row of the training set's ``codes``
    cost_model: CostModel


def _numeric_splits(scans: _Scans, cases, weights, node_order, path) -> list[Candidate]:
    """The node's valid numeric splits as candidates (``path``: its split features)."""
    if scans.numeric.size == 0:
        return []
    score, threshold, split_info, _, _ = scan_numeric(
        scans.scan, cases, weights, node_order, scans.numeric
    )
    return _candidates(scans, scans.numeric, score, split_info, threshold, path)


def _nominal_splits(scans: _Scans, cases, weights, path) -> list[Candidate]:
    """The node's valid nominal splits as candidates (``path``: its split features)."""
    nominal = scans.nominal
    if nominal.size == 0:
        return []
    # A nominal test on the path already fixed its value below it.
    active = np.array([f not in path for f in nominal.tolist()])
    score, split_info = scan_nominal(scans.scan, cases, weights, active)
    return _candidates(scans, nominal, score, split_info, None, path)


def _nominal_candidates(
    codes,
    nominal,
    n_branches,
    cases,
    weights,
    y,
    n_classes,
    criterion,
    cost_model,
    cost_matrix,
    min_leaf,
    path,
) -> list[Candidate]:
    """:func:`_nominal_splits` with the tree's arrays given one by one, not as a tree's
    :class:`_Scans` (the form ``tests/learners/test_tree_c45.py`` calls with Quinlan's
    golf data): the nominal ``codes`` and no numeric feature."""
    data = TrainingSet(np.empty((0, codes.shape[1])), codes, n_branches, y, int(n_classes))
    rule = SplitRule(int(criterion.scan_mode), cost_matrix, float(min_leaf), np.zeros(1))
    numeric = np.empty(0, dtype=np.int64)
    scans = _Scans(Scan(data, rule), rule.mode == MODE_COST, numeric, nominal, cost_model)
    return _nominal_splits(scans, cases, weights, path)


def _candidates(scans: _Scans, features, score, split_info, threshold, path) -> list[Candidate]:
    """The valid splits of a scan (``score`` not NaN) of ``features`` as candidates: a
    numeric split at ``threshold``, a nominal one (``threshold`` None) one branch a category."""
    cost_model = scans.cost_model
    done = frozenset(path)
    cost_mode = scans.cost_mode
    done_closure = cost_model.done_closure(done)
    candidates = []
    for r in np.flatnonzero(~np.isnan(score)):
        f = int(features[r])
        candidates.append(
            Candidate(
                feature=f,
                gain=0.0 if cost_mode else float(score[r]),
                split_info=float(split_info[r]),
                cost=cost_model.marginal_cost(f, done),
                child_cost=float(score[r]) if cost_mode else 0.0,
                threshold=np.nan if threshold is None else float(threshold[r]),
                on_path=f in done_closure,
                own_price=_shared_price(cost_model, f, path),
            )
        )
    return candidates
