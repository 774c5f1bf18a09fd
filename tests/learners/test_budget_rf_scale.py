"""BudgetRF at hospital sizes and under any error matrix (issues 27 and 29): memory that grows
with the rows, not nodes x rows; leaves that give Laplace probabilities; a forest whose size
follows the error costs (``budget="auto"``)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from benchmarks.scale import synthetic_patients
from datasets import load_known
from learners import BudgetRFClassifier, evaluate
from learners.act._encoding import encode_prices
from learners.baselines import OrderNothing
from learners.evaluation import make_folds
from learners.forest._kernels import grow_greedy_tree
from learners.forest.budget_rf import _walk


def test_fitting_holds_no_table_of_nodes_by_rows():
    """Deep trees (alpha 0) on 6,000 patients with missing values: the fit's peak Python
    memory stays within 8 copies of the data (the leaves x rows table alone took 1.4 GB)."""
    X, y, costs = synthetic_patients(6000)
    # Kernels loaded first: their loading allocates Python objects this test is not about.
    BudgetRFClassifier(test_costs=costs, alpha=0.0, max_trees=2, random_state=0).fit(
        X[:300], y[:300]
    )
    model = BudgetRFClassifier(test_costs=costs, alpha=0.0, max_trees=3, random_state=0)
    tracemalloc.start()
    try:
        model.fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(tree.n_nodes for tree in model.trees_) > 1000  # deep trees were grown
    assert peak < 8 * X.nbytes, f"peak {peak / 2**20:.0f} MiB for {X.nbytes / 2**20:.1f} MiB"


@pytest.mark.slow
def test_copies_of_a_case_with_a_missing_value_do_not_split_a_node_on_their_own():
    """With min_impure_weight 1 (BudgetRF's), a tree on complete data is the paper's (grown to
    purity: the same arrays as with 0); with missing values a leaf may hold less than one
    case's weight outside its largest class, never more, the tree stays near the number of
    cases, and skipping features that cannot win still grows the same tree."""
    X, y, costs = synthetic_patients(2000)
    weights = np.ones(X.shape[0])
    prices = encode_prices(costs)
    args = (y, weights, 2, 0, 0.0, 2.0, prices, 3, 1e-9)
    complete = np.nan_to_num(X)
    paper = grow_greedy_tree(complete, *args, True, None, 0.0)
    ours = grow_greedy_tree(complete, *args, True, None, 1.0)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(paper, ours, strict=True))
    leaves = ours[-1][ours[0] < 0]
    assert np.all(leaves.sum(axis=1) == leaves.max(axis=1))
    grown = grow_greedy_tree(X, *args, True, None, 1.0)
    judged = grow_greedy_tree(X, *args, False, None, 1.0)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(grown, judged, strict=True))
    leaves = grown[-1][grown[0] < 0]
    outside = leaves.sum(axis=1) - leaves.max(axis=1)
    assert np.all(outside < 1.0) and np.any(outside > 0.0)
    assert grown[0].shape[0] < 10 * X.shape[0]
    exploded = grow_greedy_tree(X, *args, True, None, 0.0)
    assert exploded[0].shape[0] > 5 * grown[0].shape[0]


def test_light_copies_of_a_case_with_a_missing_value_go_down_one_branch_whole():
    """min_copy_weight: on complete data the tree is the same whatever it is; with missing
    values every class keeps its whole training weight in the leaves (a light copy goes down
    one branch with all of it)."""
    X, y, costs = synthetic_patients(2000)
    weights = np.ones(X.shape[0])
    prices = encode_prices(costs)
    args = (y, weights, 2, 0, 0.0, 2.0, prices, 3, 1e-9, True, None, 1.0)
    complete = np.nan_to_num(X)
    exact = grow_greedy_tree(complete, *args, 0.0)
    for weight in (1.0, 1e9):
        bounded = grow_greedy_tree(complete, *args, weight)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(exact, bounded, strict=True))
    truth = np.bincount(y, minlength=2).astype(float)
    bounded = grow_greedy_tree(X, *args, 1.0)
    leaves = bounded[-1][bounded[0] < 0]
    assert np.allclose(leaves.sum(axis=0), truth, rtol=1e-12)


def test_laplace_leaves_average_each_trees_laplace_probabilities():
    """probability="laplace_leaves": the belief is the mean over the trees of each reached
    leaf's (n_c + 1) / (n + K), computed here by hand from the trees' own leaves."""
    X, y, costs = synthetic_patients(400)
    X = np.nan_to_num(X)  # one leaf per tree and row
    model = BudgetRFClassifier(
        test_costs=costs, alpha=2.0, max_trees=4, probability="laplace_leaves", random_state=0
    ).fit(X, y)
    rows = X[:50]
    expected = np.zeros((rows.shape[0], 2))
    for tree in model.trees_:
        weights = _walk(tree, rows, None)  # the reached leaf's class weights
        expected += (weights + 1.0) / (weights.sum(axis=1, keepdims=True) + 2.0)
    expected /= len(model.trees_)
    assert np.allclose(model.predict_proba(rows), expected)
    assert model.predict_proba(rows).max() < 1.0  # no pure certainty from a pure leaf


def _uniform_costs_runs(key: str):
    data = load_known(key, binary=True) if key == "heart" else load_known(key)
    train, test = make_folds(data.y, n_splits=3, random_state=0)[0]
    k = len(np.unique(data.y))
    for mc in (10.0, 100.0, 1000.0, 10000.0):
        matrix = mc * (1.0 - np.eye(k))
        model = BudgetRFClassifier(
            test_costs=data.costs,
            cost_matrix=matrix,
            budget="auto",
            probability="laplace_leaves",
            max_trees=10,
            random_state=0,
        ).fit(data.X[train], data.y[train])
        nothing = OrderNothing(test_costs=data.costs, cost_matrix=matrix)
        nothing.fit(data.X[train], data.y[train])
        yield (
            mc,
            evaluate(model, data.X[test], data.y[test]),
            evaluate(nothing, data.X[test], data.y[test]),
        )


@pytest.mark.parametrize("key", ["heart", "pima"])
def test_auto_budget_follows_the_error_costs_and_never_loses_to_ordering_nothing(key):
    """At uniform error costs 10, 100, 1000 and 10000 the held-out conclusions (and the tests
    bought) change with the costs, and the held-out cost is never above ordering nothing by
    more than two standard errors of the paired per-case difference."""
    conclusions, spent = set(), set()
    for mc, forest, nothing in _uniform_costs_runs(key):
        conclusions.add(tuple(case.decision.label for case in forest.cases))
        spent.add(round(forest.mean_test_cost, 6))
        diff = np.array(
            [a.total_cost - b.total_cost for a, b in zip(forest.cases, nothing.cases, strict=True)]
        )
        noise = 2.0 * diff.std(ddof=1) / np.sqrt(diff.size)
        assert diff.mean() <= noise + 1e-9, (mc, diff.mean(), noise)
    assert len(conclusions) > 1 and len(spent) > 1


def test_auto_budget_orders_nothing_when_errors_cost_nothing():
    """With errors at 0.01 no test is worth its price: the auto forest is one leaf."""
    X, y, costs = synthetic_patients(600)
    model = BudgetRFClassifier(
        test_costs=costs,
        cost_matrix=0.01 * (1.0 - np.eye(2)),
        budget="auto",
        max_trees=5,
        random_state=0,
    ).fit(X, y)
    assert len(model.trees_) == 1 and model.trees_[0].n_nodes == 1
    assert model.validation_cost_ == 0.0
