"""The least-cost tree of bounded depth: an exact search, its pricing and its tree."""

import itertools

import numpy as np
import pytest

from learners.costs import CostModel
from learners.tree import DTMCClassifier, OptimalTreeClassifier
from learners.tree import _optimal_kernels as kernels
from learners.tree._kernels import branch_cases, misclassification_cost
from learners.tree.optimal import _price_table, candidate_thresholds


def _binned(X, categories, n_thresholds):
    """The search's inputs for ``X``, as ``grow_optimal_tree`` bins it."""
    from learners.tree._builder import _category_index

    n, n_features = X.shape
    nominal = np.array([f in categories for f in range(n_features)])
    bins = np.full((n_features, n), -1, dtype=np.int64)
    n_bins = np.ones(n_features, dtype=np.int64)
    for f in range(n_features):
        if nominal[f]:
            bins[f] = _category_index(X[:, f], categories[f])
            n_bins[f] = len(categories[f])
        else:
            points = candidate_thresholds(X[:, f], n_thresholds)
            known = ~np.isnan(X[:, f])
            bins[f, known] = np.searchsorted(points, X[known, f], side="left")
            n_bins[f] = points.size + 1
    return np.ascontiguousarray(bins.T), nominal, n_bins


def _brute_force(depth, bins, nominal, n_bins, y, k, cases, weights, path, model, matrix, leaf):
    """The least cost by plain recursion: prices from ``CostModel.marginal_cost`` itself,
    children from the shared ``branch_cases`` (the one definition of a branch)."""
    cw = np.bincount(y[cases], weights=weights, minlength=k).astype(float)
    total = cw.sum()
    best = misclassification_cost(cw, matrix)
    if depth == 0 or total < 2 * leaf - 1e-9 or cw.max() >= total - 1e-9:
        return best
    for f in range(bins.shape[1]):
        if nominal[f] and f in path:
            continue
        branches = int(n_bins[f]) if nominal[f] else 2
        for j in range(1 if nominal[f] else int(n_bins[f]) - 1):
            valid, shares = kernels.split_shares(
                bins, f, nominal[f], j, branches, cases, weights, leaf
            )
            if not valid:
                continue
            cost = model.marginal_cost(f, set(path)) * total
            for b in range(branches):
                if shares[b] > 0:
                    sub, sub_w = branch_cases(bins, f, j, nominal[f], b, shares[b], cases, weights)
                    cost += _brute_force(
                        depth - 1,
                        bins,
                        nominal,
                        n_bins,
                        y,
                        k,
                        sub,
                        sub_w,
                        path + (f,),
                        model,
                        matrix,
                        leaf,
                    )
            best = min(best, cost)
    return best


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_search_equals_brute_force(depth, seed):
    """The compiled search's least cost equals plain recursion over every tree of that depth,
    with group prices, a nominal test and missing values (fractional cases)."""
    rng = np.random.default_rng(seed)
    n = 40
    X = rng.normal(size=(n, 4))
    X[:, 3] = rng.integers(0, 3, n)
    X[rng.random((n, 4)) < 0.1] = np.nan
    y = ((np.nan_to_num(X[:, 0]) > 0) ^ (np.nan_to_num(X[:, 3]) == 1)).astype(np.int64)
    y[rng.random(n) < 0.15] ^= 1
    model = CostModel(
        [3.0, 5.0, 5.0, 2.0], discounted=[3.0, 3.0, 3.0, 2.0], groups=[None, "blood", "blood", None]
    )
    matrix = np.array([[0.0, 40.0], [25.0, 0.0]])
    categories = {3: np.array([0.0, 1.0, 2.0])}
    bins, nominal, n_bins = _binned(X, categories, 3)
    prices = _price_table(model, 4, depth)
    cases, weights = np.arange(n, dtype=np.int64), np.ones(n)
    search = (bins, nominal, n_bins, y, 2, prices, matrix, 2.0)
    cost, _, _ = kernels.subtree_cost(depth, search, cases, weights, 4, 4)
    expected = _brute_force(
        depth, bins, nominal, n_bins, y, 2, cases, weights, (), model, matrix, 2.0
    )
    assert cost == pytest.approx(expected, rel=1e-12, abs=1e-9)


def test_finds_xor_that_greedy_misses():
    """On x0 XOR x1 with a noisy, slightly informative x2, no first split gains information
    about the class but x2's; the depth-2 search finds the exact tree, greedy DTMC does not."""
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    y = a ^ b
    x2 = np.where(rng.random(200) < 0.65, y, 1 - y)
    X = np.column_stack([a, b, x2]).astype(float)
    kwargs = dict(test_costs=[1.0, 1.0, 1.0], cost_matrix=[[0, 50], [50, 0]])
    optimal = OptimalTreeClassifier(max_depth=2, **kwargs).fit(X, y)
    greedy = DTMCClassifier(max_depth=2, **kwargs).fit(X, y)
    assert (optimal.predict(X) == y).all()
    assert (greedy.predict(X) != y).sum() > 20


def test_test_prices_stop_a_split_that_does_not_pay(cheap_vs_informative):
    """The perfect test at 1 per case (32) costs more than the 16 errors it removes: a leaf;
    at 0.1 (3.2) it is bought."""
    X, y = cheap_vs_informative
    assert (
        OptimalTreeClassifier(test_costs=[1.0, 1.0], min_samples_leaf=1).fit(X, y).tree_.n_nodes
        == 1
    )
    cheap = OptimalTreeClassifier(test_costs=[0.1, 0.1], min_samples_leaf=1).fit(X, y)
    assert cheap.tree_.feature[0] == 0 and (cheap.predict(X) == y).all()


def test_tree_keeps_every_case_weight(noisy_table):
    """Missing values go down every branch as fractions: each level's weights add up to
    the training cases, and every nominal split has one branch per category."""
    X, y = noisy_table
    model = OptimalTreeClassifier(
        test_costs=[1.0] * 5, cost_matrix=[[0, 500], [500, 0]], categorical_features=[4]
    ).fit(X, y)
    tree = model.tree_
    assert tree.n_leaves > 1
    reached = np.zeros(tree.n_nodes, dtype=bool)  # an empty branch's leaf has share 0
    reached[0] = True
    reached[tree.child[tree.branch_weight > 0]] = True
    leaves = [n for n in range(tree.n_nodes) if tree.is_leaf(n) and reached[n]]
    assert tree.class_weight[leaves].sum() == pytest.approx(X.shape[0])
    for node in range(tree.n_nodes):
        if not tree.is_leaf(node) and tree.feature[node] == 4:
            assert tree.n_edges[node] == 3


def test_candidate_thresholds_are_few_midpoints():
    """At most n thresholds, each strictly between two distinct values; few values get all."""
    column = np.concatenate([np.arange(100, dtype=float), [np.nan]])
    points = candidate_thresholds(column, 5)
    assert 1 <= points.size <= 5
    assert all(p % 1 == 0.5 for p in points)
    assert candidate_thresholds(np.array([1.0, 2.0, 2.0, 3.0]), 5).tolist() == [1.5, 2.5]
    assert candidate_thresholds(np.array([4.0, 4.0, np.nan]), 5).size == 0


def test_price_table_is_the_cost_model():
    """Every entry of the price table is ``CostModel.marginal_cost`` after the path's tests."""
    model = CostModel([3.0, 5.0, 6.0], discounted=[3.0, 1.0, 4.0], groups=[None, "draw", "draw"])
    table = _price_table(model, 3, 3)
    for a, b in itertools.product(range(4), repeat=2):
        done = {t for t in (a, b) if t < 3}
        if b < 3 and a == 3:
            continue  # a path fills a first
        for f in range(3):
            assert table[a, b, f] == model.marginal_cost(f, done)


@pytest.mark.parametrize("params", [{"max_depth": 4}, {"max_depth": 0}, {"n_thresholds": 0}])
def test_bad_parameters_are_refused(params, cheap_vs_informative):
    """Depth beyond 3 (the search grows as splits^depth) or no thresholds is refused."""
    X, y = cheap_vs_informative
    with pytest.raises(ValueError, match=next(iter(params))):
        OptimalTreeClassifier(**params).fit(X, y)


def test_json_round_trip_predicts_the_same(noisy_table):
    """The fitted tree survives its JSON document (the greedy trees' state)."""
    from learners.serialization import model_from_json

    X, y = noisy_table
    model = OptimalTreeClassifier(
        test_costs=[1.0] * 5, cost_matrix=[[0, 500], [500, 0]], categorical_features=[4]
    ).fit(X, y)
    again = model_from_json(model.to_json())
    assert again.n_thresholds == 5
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))


def test_a_search_too_large_is_refused_before_it_starts():
    """200 numeric tests with 20 cut-offs each to depth 3 would visit ~5e11 cases: refused
    with the parameters to lower; depth 1 on the same data trains."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 200))
    y = (X[:, 0] > 0).astype(int)
    kwargs = dict(test_costs=[0.01] * 200, n_thresholds=20)
    with pytest.raises(ValueError, match="lower max_depth or n_thresholds"):
        OptimalTreeClassifier(max_depth=3, **kwargs).fit(X, y)
    assert OptimalTreeClassifier(max_depth=1, **kwargs).fit(X, y).tree_.feature[0] == 0
