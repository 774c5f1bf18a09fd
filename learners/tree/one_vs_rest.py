"""One-vs-rest splits of nominal tests, learned through priced indicator tests.

A nominal test splits one branch per category.  A split that sets one category
against the rest ("chest pain: asymptomatic / any other") is often the better
one: fewer, larger branches.  Rather than teach every compiled engine a second
kind of nominal split, a learner is given the choice through its data:

- :func:`category_indicators` adds one 0/1 test per category of each nominal
  test with :data:`MIN_CATEGORIES` or more categories ("cp = 4").  Each is a
  *derived* test of its nominal test (``CostModel.derived``): its price is the
  nominal test's marginal price, group discounts included, doing it makes the
  nominal test done, and once one indicator (or the test) is known every other
  indicator of that test is free.  The nominal test stays, so the learner chooses
  between the multiway split and any one-vs-rest split by its own criterion.
  Turney's standard cost is unchanged (the indicators add nothing to TC).
- :func:`fold_indicators` turns the tree grown on those columns back into a
  tree over the original tests: a split on "cp = 4" becomes a split on cp with
  the edges ``[4, other]`` (``TreeStructure``'s "other" edge), the same
  children, class weights and branch weights.  Every walk of the folded tree on
  the original columns equals the walk of the grown tree on the expanded ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..costs import CostModel
from ._structure import TreeStructure

__all__ = ["MIN_CATEGORIES", "CategoryIndicators", "category_indicators", "fold_indicators"]

#: a nominal test with fewer categories gains nothing: its multiway split is one-vs-rest
MIN_CATEGORIES = 3


@dataclass(frozen=True)
class CategoryIndicators:
    """The original tests followed by one indicator test per category (see the module).

    Attributes
    ----------
    X : ndarray, shape (n_cases, n_features + n_indicators)
        The original columns, then each indicator (1 where the test has the
        category, 0 where it has another, NaN where it is missing).
    cost_model : CostModel
        The original prices, and each indicator as a derived test of its test.
    categorical : list of int
        The original nominal tests, then every indicator.
    source : list of (int, float)
        The nominal test and category code of each indicator, in column order.
    n_features : int
        Number of original tests.
    """

    X: np.ndarray
    cost_model: CostModel
    categorical: list[int]
    source: list[tuple[int, float]]
    n_features: int


def category_indicators(
    X: np.ndarray, categories: Mapping[int, np.ndarray], cost_model: CostModel
) -> CategoryIndicators | None:
    """Indicator tests for every nominal test of ``categories`` (feature -> its codes) with
    :data:`MIN_CATEGORIES` or more codes; None when there is none."""
    X = np.asarray(X, dtype=float)
    n_features = X.shape[1]
    source = [
        (int(f), float(code))
        for f in sorted(categories)
        if len(categories[f]) >= MIN_CATEGORIES
        for code in categories[f]
    ]
    if not source:
        return None
    columns = []
    for f, code in source:
        values = X[:, f]
        columns.append(np.where(np.isnan(values), np.nan, (values == code).astype(float)))
    tests = [f for f, _ in source]
    model = CostModel(
        np.concatenate([cost_model.costs, cost_model.costs[tests]]),
        # an indicator's own prices are never charged: it costs its test's marginal price
        discounted=np.concatenate([cost_model.discounted, cost_model.discounted[tests]]),
        groups=list(cost_model.groups) + [None] * len(source),
        delayed=np.concatenate([cost_model.delayed, cost_model.delayed[tests]]),
        derived={
            **cost_model.derived,
            **{n_features + i: (f,) for i, (f, _) in enumerate(source)},
        },
        free=cost_model.free,
    )
    return CategoryIndicators(
        X=np.hstack([X, np.column_stack(columns)]),
        cost_model=model,
        categorical=sorted(int(f) for f in categories) + list(range(n_features, model.n_features)),
        source=source,
        n_features=n_features,
    )


def fold_indicators(tree: TreeStructure, indicators: CategoryIndicators) -> TreeStructure:
    """``tree`` (grown on ``indicators.X``) over the original tests: each split on an
    indicator becomes a one-vs-rest split of its test, edges ``[code, other]``.

    Raises
    ------
    ValueError
        If an indicator's split does not have the two edges 0 and 1.
    """
    n = indicators.n_features
    feature = tree.feature.copy()
    child = tree.child.copy()
    branch_value = tree.branch_value.copy()
    branch_weight = tree.branch_weight.copy()
    for node in np.flatnonzero(tree.feature >= n).tolist():
        f, code = indicators.source[int(tree.feature[node]) - n]
        edges = np.asarray(tree.edges(node))
        codes = tree.branch_value[edges].tolist()
        if sorted(codes) != [0.0, 1.0]:
            raise ValueError(f"node {node} splits an indicator on the codes {codes}, not 0 and 1")
        order = edges[np.argsort(codes)[::-1]]  # the category's edge (1), then the other (0)
        feature[node] = f
        child[edges] = tree.child[order]
        branch_weight[edges] = tree.branch_weight[order]
        branch_value[edges] = [code, np.nan]
    return TreeStructure(
        feature=feature,
        threshold=tree.threshold,
        edge_start=tree.edge_start,
        n_edges=tree.n_edges,
        class_weight=tree.class_weight,
        child=child,
        branch_value=branch_value,
        branch_weight=branch_weight,
    )
