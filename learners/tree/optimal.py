"""The least-cost tree of bounded depth, found by exhaustive search (issue 12).

The greedy trees pick one split at a time; this learner looks at every tree of
at most ``max_depth`` levels (1 to 3) over a few candidate thresholds per
numeric feature (``n_thresholds``, at evenly spaced quantiles of the training
values, or those of highest information gain: ``threshold_rule``) and keeps
the one of least training cost: the tests' prices on each path
(``CostModel.marginal_cost`` given the path's tests, group discounts included)
times the weight of the cases that reach them, plus DTMC's misclassification
cost at the leaves.  A split is kept only where it lowers that cost.  It is
the cost-sensitive counterpart of the optimal shallow trees of STreeD (van der
Linden et al. 2023): coarse thresholds and a small depth keep the search exact
and the tree from fitting noise.  Growth otherwise follows the tree builder:
nominal features split one branch per category, numeric ones in two, missing
values go down every branch as fractional cases, and leaves decide by least
expected cost (``learners.policy``), so prediction, the step-by-step policy
and the JSON state are the greedy trees'.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._estimator import TRAIN_ACCURACY_CHECKS, constraints
from . import _optimal_kernels as kernels
from ._base import GreedyTreeClassifier
from ._builder import GrowingTree, _category_index

__all__ = [
    "OptimalTreeClassifier",
    "candidate_thresholds",
    "gain_thresholds",
    "grow_optimal_tree",
    "search_work",
]

#: the deepest tree the search looks through (the search grows as splits^depth)
MAX_SEARCH_DEPTH = 3
#: the most case visits a search may take (``search_work``): about a minute compiled
MAX_SEARCH_WORK = 2e10


def search_work(n_splits: int, n_features: int, n_samples: int, max_depth: int) -> float:
    """About how many case visits the exhaustive search takes: every split of every level
    above the last (``n_splits ** (max_depth - 1)`` paths), then each feature's pass over
    the cases (ann-thyroid's 7200 cases at depth 3: 3e8, about a second)."""
    return float(n_splits) ** (max_depth - 1) * n_features * n_samples


def candidate_thresholds(column: np.ndarray, n_thresholds: int) -> np.ndarray:
    """Up to ``n_thresholds`` split points of a numeric column (NaN = missing): for
    each quantile ``k / (n_thresholds + 1)`` of the known values, midway between
    that value and the next larger distinct one (C4.5's kind of threshold).  A
    column with few distinct values gets every midpoint."""
    known = np.unique(column[~np.isnan(column)])
    if known.size < 2:
        return np.empty(0)
    values = column[~np.isnan(column)]
    quantiles = np.quantile(
        values, np.arange(1, n_thresholds + 1) / (n_thresholds + 1), method="lower"
    )
    points = []
    for q in np.unique(quantiles):
        upper = np.searchsorted(known, q, side="right")
        if upper >= known.size:
            continue  # the largest value: nothing above it to split off
        lo, hi = float(known[upper - 1]), float(known[upper])
        mid = lo + (hi - lo) / 2.0
        points.append(mid if mid < hi else lo)
    return np.unique(np.asarray(points, dtype=float))


def gain_thresholds(
    column: np.ndarray, y: np.ndarray, n_classes: int, n_thresholds: int
) -> np.ndarray:
    """Up to ``n_thresholds`` split points of a numeric column (NaN = missing): the
    midpoints between adjacent distinct known values of highest information gain on
    the known cases (a class boundary in a tail, which quantiles miss, is found)."""
    known = ~np.isnan(column)
    values, labels = column[known], y[known]
    distinct = np.unique(values)
    if distinct.size < 2:
        return np.empty(0)
    order = np.argsort(values, kind="stable")
    values, labels = values[order], labels[order]
    onehot = np.zeros((values.size, n_classes))
    onehot[np.arange(values.size), labels] = 1.0
    below = np.cumsum(onehot, axis=0)
    ends = np.searchsorted(values, distinct[:-1], side="right") - 1  # last row of each value
    left = below[ends]
    right = below[-1] - left

    def entropy_mass(counts):
        total = counts.sum(axis=-1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(counts > 0, counts / total, 1.0)
        return -(counts * np.log2(p)).sum(axis=-1)

    child = entropy_mass(left) + entropy_mass(right)
    best = np.argsort(child, kind="stable")[:n_thresholds]
    lo, hi = distinct[best], distinct[best + 1]
    mid = lo + (hi - lo) / 2.0
    return np.unique(np.where(mid < hi, mid, lo))


def _price_table(cost_model, n_features: int, max_depth: int) -> np.ndarray:
    """``table[a, b, f]``: ``CostModel.marginal_cost(f)`` after the path's tests ``a``
    and ``b`` (``n_features``: none), for every path a node that may split can have."""
    none = n_features
    table = np.zeros((n_features + 1, n_features + 1, n_features))
    table[none, none] = [cost_model.marginal_cost(f) for f in range(n_features)]
    if max_depth >= 2:
        for a in range(n_features):
            table[a, none] = [cost_model.marginal_cost(f, {a}) for f in range(n_features)]
    if max_depth >= 3:
        for a in range(n_features):
            for b in range(n_features):
                table[a, b] = [cost_model.marginal_cost(f, {a, b}) for f in range(n_features)]
    return table


def grow_optimal_tree(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    cost_model,
    cost_matrix: np.ndarray,
    categories,
    min_leaf: float,
    max_depth: int,
    n_thresholds: int,
    threshold_rule: str = "quantile",
) -> GrowingTree:
    """The least-cost tree of at most ``max_depth`` levels on ``X`` (NaN = missing)
    and class codes ``y`` (see the module docstring)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    matrix = np.ascontiguousarray(cost_matrix, dtype=np.float64)
    n_samples, n_features = X.shape
    nominal = np.array([f in categories for f in range(n_features)])
    bins = np.full((n_features, n_samples), -1, dtype=np.int64)
    n_bins = np.ones(n_features, dtype=np.int64)
    thresholds: list[np.ndarray] = []
    for f in range(n_features):
        column = X[:, f]
        if nominal[f]:
            bins[f] = _category_index(column, categories[f])
            n_bins[f] = len(categories[f])
            thresholds.append(np.empty(0))
            continue
        points = (
            candidate_thresholds(column, n_thresholds)
            if threshold_rule == "quantile"
            else gain_thresholds(column, y, n_classes, n_thresholds)
        )
        known = ~np.isnan(column)
        bins[f, known] = np.searchsorted(points, column[known], side="left")
        n_bins[f] = points.size + 1
        thresholds.append(points)
    n_splits = int(sum(1 if nominal[f] else n_bins[f] - 1 for f in range(n_features)))
    work = search_work(n_splits, n_features, n_samples, max_depth)
    if work > MAX_SEARCH_WORK:
        raise ValueError(
            f"the exhaustive search over {n_splits} splits to depth {max_depth} on "
            f"{n_samples} cases would take too long (about {work:.1e} case visits, at most "
            f"{MAX_SEARCH_WORK:.0e}); lower max_depth or n_thresholds"
        )
    prices = _price_table(cost_model, n_features, max_depth)
    min_leaf = float(min_leaf)
    bins = np.ascontiguousarray(bins.T)  # case-major, as the shared split kernels read it
    search = (bins, nominal, n_bins, y, n_classes, prices, matrix, min_leaf)

    tree = GrowingTree(n_classes)
    weights = np.ones(n_samples)
    cases = np.arange(n_samples, dtype=np.int64)
    root = tree.add(kernels.class_counts(y, cases, weights, n_classes))
    # (node, cases, weights, path tests a and b, levels left)
    stack = [(root, cases, weights, n_features, n_features, int(max_depth))]
    while stack:
        node, cases, weights, a, b, depth = stack.pop()
        _, f, j = kernels.subtree_cost(depth, search, cases, weights, a, b)
        if f < 0:
            continue
        n_branches = int(n_bins[f]) if nominal[f] else 2
        _, shares = kernels.split_shares(
            bins, f, nominal[f], j, n_branches, cases, weights, min_leaf
        )
        if nominal[f]:
            values = np.asarray(categories[f], dtype=float)
        else:
            values = np.array([np.nan, np.nan])
            tree.threshold[node] = float(thresholds[f][j])
        tree.feature[node] = f
        next_a, next_b = (f, b) if a == n_features else (a, f)
        children = []
        for branch in range(n_branches):
            share = float(shares[branch])
            if share <= 0.0:
                leaf = tree.add(tree.class_weight[node].copy(), empty=True)
                tree.edges[node].append((leaf, float(values[branch]), 0.0))
                continue
            sub_cases, sub_weights = kernels.branch_cases(
                bins, f, j, nominal[f], branch, share, cases, weights
            )
            child = tree.add(kernels.class_counts(y, sub_cases, sub_weights, n_classes))
            tree.edges[node].append((child, float(values[branch]), share))
            children.append((child, sub_cases, sub_weights, next_a, next_b, depth - 1))
        stack.extend(reversed(children))
    return tree


class OptimalTreeClassifier(GreedyTreeClassifier):
    """The least-cost tree of at most ``max_depth`` levels (exhaustive search).

    See :mod:`learners.tree.optimal`.  Measured as an ACT inner-CV candidate and
    not kept there (issue 12, benchmarks/README.md); offered on its own as a short,
    exact checklist.

    Parameters
    ----------
    test_costs, cost_matrix, reject_cost, categorical_features, random_state,
    min_samples_leaf, cf, pruning, probability
        As the greedy trees (:class:`~learners.tree.DTMCClassifier`); ``pruning``
        defaults to ``"none"``: a split is kept only where it lowers the training
        cost, which already prunes.
    max_depth : int, default 3
        Levels of splits searched, 1 to 3.
    n_thresholds : int, default 5
        Candidate thresholds per numeric feature (STreeD's default).
    threshold_rule : {"quantile", "gain"}, default "quantile"
        Where they sit: at evenly spaced quantiles of the training values
        (:func:`candidate_thresholds`), or the midpoints of highest information
        gain (:func:`gain_thresholds`), which find a class boundary in a tail.

    Raises
    ------
    ValueError
        From ``fit``, on bad input or parameters, or when the search would take
        more than ``MAX_SEARCH_WORK`` case visits (:func:`search_work`).
    """

    _parameter_constraints = constraints(
        GreedyTreeClassifier._parameter_constraints,
        max_depth=[Interval(Integral, 1, MAX_SEARCH_DEPTH, closed="both")],
        n_thresholds=[Interval(Integral, 1, None, closed="left")],
        threshold_rule=[StrOptions({"quantile", "gain"})],
    )

    _expected_failed_checks = dict.fromkeys(
        TRAIN_ACCURACY_CHECKS,
        "with the default unit test costs and 0/1 loss no split ever pays "
        "(n * 1 per test > the errors it removes), so the least-cost tree is a single leaf",
    )

    def __init__(
        self,
        *,
        test_costs=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=None,
        random_state=None,
        min_samples_leaf=2,
        cf=0.25,
        pruning="none",
        probability="laplace",
        max_depth=3,
        n_thresholds=5,
        threshold_rule="quantile",
    ):
        super().__init__(
            test_costs=test_costs,
            cost_matrix=cost_matrix,
            reject_cost=reject_cost,
            categorical_features=categorical_features,
            random_state=random_state,
            min_samples_leaf=min_samples_leaf,
            cf=cf,
            pruning=pruning,
            probability=probability,
            max_depth=max_depth,
        )
        self.n_thresholds = n_thresholds
        self.threshold_rule = threshold_rule

    def _grow(self, X: np.ndarray, y_codes: np.ndarray) -> GrowingTree:
        return grow_optimal_tree(
            X,
            y_codes,
            len(self.classes_),
            cost_model=self.cost_model_,
            cost_matrix=self.cost_matrix_,
            categories=self.categories_,
            min_leaf=float(self.min_samples_leaf),
            max_depth=int(self.max_depth),
            n_thresholds=int(self.n_thresholds),
            threshold_rule=self.threshold_rule,
        )
