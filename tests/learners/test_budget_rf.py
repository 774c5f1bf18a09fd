"""BudgetRF (paper 002, ALGORITHMS.md §6): impurities, the minimax split, the budget stop,
the forest policy and its compiled acquisition, bad input, JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

import learners
from learners import (
    Classify,
    CostModel,
    Extract,
    ModelDocumentError,
    Reject,
    evaluate,
    model_from_json,
)
from learners.act._encoding import encode_prices
from learners.forest import ALPHA_GRID, BudgetRFClassifier
from learners.forest._impurity import PAIRS, POWERS, impurity, pairs_impurity, powers_impurity
from learners.forest._kernels import grow_greedy_tree, impurity_jit


# ------------------------------------------------------------------ impurities
@pytest.mark.parametrize(
    ("counts", "alpha", "expected"),
    [
        # ordered pairs (0,1) and (1,0): 5*3 twice
        ([5.0, 3.0], 0.0, 30.0),
        # [5-1]+ [3-1]+ - 1 = 7, twice
        ([5.0, 3.0], 1.0, 14.0),
        # [5-2]+ [3-2]+ - 4 = -1, clipped: the set counts as pure
        ([5.0, 3.0], 2.0, 0.0),
        # a = (3, 2, 0): only the pair of classes 0 and 1 is above the threshold: (6 - 1) twice
        ([4.0, 3.0, 1.0], 1.0, 10.0),
        # one class only
        ([7.0, 0.0], 0.0, 0.0),
    ],
)
def test_threshold_pairs_by_hand(counts, alpha, expected):
    """F_a = sum over ordered pairs i != j of [[n_i - a]+ [n_j - a]+ - a^2]+; plain = compiled."""
    counts = np.array(counts)
    assert pairs_impurity(counts, alpha) == pytest.approx(expected)
    assert impurity(counts, PAIRS, alpha, 2.0) == pytest.approx(expected)
    assert impurity_jit(counts, PAIRS, alpha, 2.0) == pairs_impurity(counts, alpha)


@pytest.mark.parametrize(
    ("counts", "power", "expected"),
    [
        ([5.0, 3.0], 2.0, 64.0 - 25.0 - 9.0),  # = threshold-Pairs with alpha 0
        ([5.0, 3.0], 3.0, 512.0 - 125.0 - 27.0),
        ([2.0, 1.0, 1.0], 2.0, 16.0 - 4.0 - 1.0 - 1.0),
        ([4.0, 0.0], 3.0, 0.0),
    ],
)
def test_powers_by_hand(counts, power, expected):
    """Powers: (sum n_i)^l - sum n_i^l; plain and compiled agree."""
    counts = np.array(counts)
    assert powers_impurity(counts, power) == pytest.approx(expected)
    assert impurity_jit(counts, POWERS, 0.0, power) == powers_impurity(counts, power)


def test_powers_with_l_2_is_pairs_with_alpha_0():
    """(sum n)^2 - sum n^2 = sum_{i != j} n_i n_j, so the two impurities agree on any counts."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        counts = rng.integers(0, 30, size=4).astype(float)
        assert powers_impurity(counts, 2.0) == pytest.approx(pairs_impurity(counts, 0.0))


# ------------------------------------------------------------------- the split
def _figure_1():
    """Paper 002's Figure 1: 30 + 30 cases; x0 isolates 20 of class 1, x1 halves both classes."""
    y = np.array([0] * 30 + [1] * 30)
    x0 = np.zeros(60)
    x0[40:] = 1.0  # 20 cases of class 1 alone; the other side holds 30 of class 0, 10 of class 1
    x1 = np.zeros(60)
    x1[15:30] = 1.0
    x1[45:60] = 1.0  # each half: 15 and 15
    return np.column_stack([x0, x1]), y


def _root_feature(X, y, costs, alpha):
    """The root test GreedyTree picks on the whole table (every case once, weight 1)."""
    feature, *_ = grow_greedy_tree(
        X, y, np.ones(len(y)), 2, PAIRS, alpha, 2.0, encode_prices(CostModel(costs)), 0, 1e-9
    )
    return int(feature[0])


def test_minimax_split_by_hand():
    """alpha 0: F(S)=1800; x0's outcomes leave 0 and 600 (worst reduction 1200), x1's halves
    450 each (1350): minimax takes x1, as the paper says; at twice x1's price x0 wins
    (1/1200 < 2/1350)."""
    X, y = _figure_1()
    assert pairs_impurity(np.array([30.0, 30.0]), 0.0) == 1800.0
    assert pairs_impurity(np.array([30.0, 10.0]), 0.0) == 600.0
    assert pairs_impurity(np.array([15.0, 15.0]), 0.0) == 450.0
    assert _root_feature(X, y, [1.0, 1.0], 0.0) == 1
    assert _root_feature(X, y, [1.0, 2.0], 0.0) == 0
    # An expected-split (weighted mean) rule would take x0: 40/60*600 = 400 < 450.


def test_minimax_split_alpha_6_by_hand():
    """alpha 6: F(S) = 2*(24*24-36) = 1080; x0 leaves 0 and 2*(24*4-36) = 120 (worst reduction
    960), x1 leaves 2*(9*9-36) = 90 twice (990): x1; at price 1.04 for x1 x0 wins (1/960 <
    1.04/990)."""
    X, y = _figure_1()
    assert _root_feature(X, y, [1.0, 1.0], 6.0) == 1
    assert _root_feature(X, y, [1.0, 1.04], 6.0) == 0


def test_a_free_test_is_split_on_first_and_leaves_are_pure_or_unsplittable():
    """Zero marginal cost ranks first when it reduces impurity; a leaf is pure (F = 0) unless
    both tests are already on its path (the cell x0 = 0, x1 = 0 mixes the classes)."""
    X, y = _figure_1()
    model = BudgetRFClassifier(
        test_costs=CostModel([1.0, 5.0], free=[1]), alpha=0.0, max_trees=1, random_state=0
    ).fit(X, y)
    tree = model.trees_[0]
    assert tree.feature[0] == 1
    for leaf in np.flatnonzero(tree.feature == -1):
        if np.min(tree.class_weight[leaf]) > 0:
            tested = {int(tree.feature[node]) for node, _ in tree.path_to(int(leaf))}
            assert tested == {0, 1}


# ------------------------------------------------------------ the budget stop
def _noisy(seed=0, n=500):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = (X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(scale=0.8, size=n) > 0).astype(int)
    return X, y


def test_budget_stop_removes_the_tree_that_broke_it():
    """Same seed: the budgeted forest is the unbudgeted one's first n trees, where tree n+1
    took the validation cost over the budget and trees 1..n stayed within it."""
    X, y = _noisy()
    free = BudgetRFClassifier(alpha=0.0, max_trees=12, random_state=4, budget=1e9).fit(X, y)
    trace = free.budget_trace_
    assert trace == sorted(trace) and trace[0] < trace[-1]  # unit prices: more trees, more tests
    budget = (trace[2] + trace[3]) / 2 if trace[3] > trace[2] else trace[3] - 1e-6
    n = int(np.searchsorted(trace, budget, side="right"))
    assert 1 <= n < 12 and trace[n] > budget
    capped = BudgetRFClassifier(alpha=0.0, max_trees=12, random_state=4, budget=budget).fit(X, y)
    assert len(capped.trees_) == n
    assert capped.budget_trace_ == trace[:n]
    assert capped.validation_cost_ <= budget
    for kept, original in zip(capped.trees_, free.trees_[:n], strict=True):
        assert kept.to_dict() == original.to_dict()


def test_alpha_is_chosen_on_validation_from_the_paper_grid():
    """alpha='auto' tries every alpha of the paper's grid and keeps the least validation loss."""
    X, y = _noisy(1, 300)
    model = BudgetRFClassifier(max_trees=4, random_state=0, budget=3.0).fit(X, y)
    assert [row["alpha"] for row in model.search_] == list(ALPHA_GRID)
    best = min(model.search_, key=lambda row: (row["loss"], row["cost"]))
    assert model.alpha_ == best["alpha"]
    assert all(row["cost"] <= 3.0 for row in model.search_)
    assert model.validation_loss_ == best["loss"]


def test_when_one_tree_breaks_the_budget_the_forest_is_one_leaf():
    """A budget that the first tree already exceeds leaves a one-leaf forest: it orders nothing."""
    X, y = _noisy()
    model = BudgetRFClassifier(alpha=0.0, max_trees=3, random_state=0, budget=1.0).fit(X, y)
    assert len(model.trees_) == 1 and model.trees_[0].n_nodes == 1
    action = model.next_action({})
    assert isinstance(action, Classify) and model.validation_cost_ == 0.0


# ---------------------------------------------------------------- the policy
def _hand_forest(reject_cost=None):
    """Two hand-made trees over x0, x1 (one blood draw: 10, then 1) and x2 (5).

    Tree A: x0 <= 0 ? (x1 <= 0 ? leaf [4, 0] : leaf [0, 4]) : leaf [1, 5].
    Tree B: x2 <= 0 ? leaf [3, 1] : leaf [0, 2].
    """
    costs = CostModel([10.0, 10.0, 5.0], discounted=[1.0, 1.0, 5.0], groups=["b", "b", None])
    tree_a = {
        "feature": [0, 1, -1, -1, -1],
        "threshold": [0.0, 0.0, None, None, None],
        "edge_start": [0, 2, 4, 4, 4],
        "n_edges": [2, 2, 0, 0, 0],
        "class_weight": [[5, 9], [4, 4], [1, 5], [4, 0], [0, 4]],
        "child": [1, 2, 3, 4],
        "branch_value": [None, None, None, None],
        "branch_weight": [0.5, 0.5, 0.5, 0.5],
    }
    tree_b = {
        "feature": [2, -1, -1],
        "threshold": [0.0, None, None],
        "edge_start": [0, 2, 2],
        "n_edges": [2, 0, 0],
        "class_weight": [[3, 3], [3, 1], [0, 2]],
        "child": [1, 2],
        "branch_value": [None, None],
        "branch_weight": [0.6, 0.4],
    }
    model = BudgetRFClassifier(test_costs=costs, reject_cost=reject_cost)
    model._load_fitted_state(
        {
            "trees": [tree_a, tree_b],
            "classes": ["well", "sick"],
            "n_features_in": 3,
            "cost_model": costs.to_dict(),
            "cost_matrix": [[0.0, 1.0], [1.0, 0.0]],
            "reject_cost": reject_cost,
            "alpha": 0.0,
            "validation_cost": 0.0,
            "validation_loss": 0.0,
            "budget_trace": [0.0, 0.0],
        }
    )
    return model


def test_policy_orders_what_most_trees_wait_on_ties_by_price():
    """Both trees wait on one test each (1 vs 1): the cheaper x2 (5) before x0 (10); then x0;
    then x1 at the blood draw's discounted 1; then every tree is at a leaf: decide."""
    model = _hand_forest()
    first = model.next_action({})
    assert isinstance(first, Extract) and (first.test, first.cost) == (2, 5.0)
    assert first.evidence.waiting == 1 and first.evidence.members == 2
    second = model.next_action({2: -1.0})
    assert isinstance(second, Extract) and (second.test, second.cost) == (0, 10.0)
    third = model.next_action({2: -1.0, 0: -1.0})
    assert isinstance(third, Extract) and (third.test, third.cost) == (1, 1.0)
    final = model.next_action({2: -1.0, 0: -1.0, 1: 1.0})
    # Summed leaves: A's [0, 4] + B's [3, 1] = [3, 5]: p(sick) = 5/8, 0/1 loss -> sick.
    assert isinstance(final, Classify) and final.label == "sick"
    assert final.proba == pytest.approx((3 / 8, 5 / 8))
    assert final.evidence.waiting == 0 and final.evidence.members == 2
    assert final.evidence.support == pytest.approx(4.0)  # (4 + 4) / 2 trees


def test_the_test_most_trees_wait_on_goes_first():
    """With x2 known, only tree A waits (x0); x0 unavailable sends A down both branches."""
    model = _hand_forest()
    action = model.next_action({2: 1.0}, unavailable=[0])
    # A splits over x0's branches: its left half waits on x1; x1 alone is wanted.
    assert isinstance(action, Extract) and action.test == 1 and action.evidence.waiting == 1
    assert action.cost == pytest.approx(10.0)  # nothing of the blood draw was done


def test_extract_evidence_cost_after_by_hand():
    """x2's result moves B to [3, 1] (chance 0.6) or [0, 2] (0.4); A stays at its root [5, 9].
    Conclusions: [8, 10] -> 8/18, [5, 11] -> 5/16; after = 0.6*8/18 + 0.4*5/16."""
    model = _hand_forest()
    action = model.next_action({})
    assert action.evidence.proba == pytest.approx((8 / 20, 12 / 20))  # [5, 9] + [3, 3]
    assert action.evidence.cost_after == pytest.approx(0.6 * 8 / 18 + 0.4 * 5 / 16)


def test_conclusion_can_refer():
    """decide's reject: a referral cheaper than the best class's expected cost refers."""
    model = _hand_forest(reject_cost=0.2)
    action = model.next_action({2: -1.0, 0: -1.0, 1: 1.0})
    assert isinstance(action, Reject) and action.expected_cost == pytest.approx(0.2)


def test_evaluate_charges_what_the_compiled_acquisition_computes():
    """Per case, evaluate (the Python policy, CostModel prices) pays what acquisition says."""
    model = _hand_forest()
    X = np.array([[-1.0, 1.0, -1.0], [1.0, 1.0, 1.0], [-1.0, -1.0, 1.0], [np.nan, 1.0, -1.0]])
    report = evaluate(model, X, ["sick", "sick", "well", "well"])
    charged = [case.test_cost for case in report.cases]
    cost, n_done = model.acquisition(X)
    assert charged == pytest.approx(cost.tolist())
    # Case 0: x2 5, x0 10, x1 1; case 1: x2 5, x0 10 (A reaches a leaf); case 3: x0 has no
    # result, so A waits on x1 down its left branch.
    assert charged == pytest.approx([16.0, 15.0, 16.0, 16.0])
    assert n_done.tolist() == [3, 2, 3, 3]


def test_fitted_forest_policy_and_acquisition_agree_with_groups_derived_and_missing():
    """On a fitted forest with a group, a derived test and missing values, evaluate's charges
    equal the compiled acquisition case by case (the budget is measured with the policy's own
    prices)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 5))
    X[:, 4] = X[:, 2] + X[:, 3]
    y = (X[:, 0] + X[:, 4] + 0.5 * rng.normal(size=400) > 0).astype(int)
    X[rng.random(X.shape) < 0.07] = np.nan
    costs = CostModel(
        [1.0, 3.0, 6.0, 6.0, 0.0],
        discounted=[1.0, 3.0, 2.0, 2.0, 0.0],
        groups=[None, None, "lab", "lab", None],
        derived={4: (2, 3)},
    )
    model = BudgetRFClassifier(test_costs=costs, alpha=2.0, max_trees=8, random_state=0)
    model.fit(X[:300], y[:300])
    report = evaluate(model, X[300:], y[300:])
    cost, _ = model.acquisition(X[300:])
    assert [case.test_cost for case in report.cases] == pytest.approx(cost.tolist())
    assert cost.mean() > 0  # something was bought


def test_predict_is_the_policy_decision_with_everything_known():
    """predict over all values = the policy's conclusion once it has bought what it asked."""
    X, y = _noisy(2, 300)
    model = BudgetRFClassifier(alpha=4.0, max_trees=6, random_state=1).fit(X[:200], y[:200])
    report = evaluate(model, X[200:], y[200:])
    predicted = model.predict(X[200:])
    assert [case.decision.label for case in report.cases] == predicted.tolist()
    proba = model.predict_proba(X[200:])
    np.testing.assert_allclose([case.decision.proba for case in report.cases], proba)


def test_public_in_learners():
    """The forest is importable from the package root and loadable by name."""
    assert learners.BudgetRFClassifier is BudgetRFClassifier


# ------------------------------------------------------------------- bad input
def test_budget_below_the_cheapest_test_is_refused_clearly():
    """A budget under every test's price cannot order anything: refused, both numbers named."""
    X, y = _noisy()
    with pytest.raises(ValueError, match=r"budget 0\.5 is below the cheapest test \(2\)"):
        BudgetRFClassifier(test_costs=[2.0] * 6, budget=0.5).fit(X, y)
    # A free test makes a zero budget meaningful.
    model = BudgetRFClassifier(
        test_costs=CostModel([2.0] * 6, free=[0]), budget=0.0, alpha=0.0, max_trees=3
    ).fit(X, y)
    assert model.validation_cost_ == 0.0


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"budget": -1.0}, "budget"),
        ({"impurity": "gini"}, "impurity"),
        ({"power": 1.5}, "power"),
        ({"alpha": -2.0}, "alpha"),
        ({"max_trees": 0}, "max_trees"),
        ({"validation_fraction": 1.0}, "validation_fraction"),
        ({"min_copy_weight": -0.5}, "min_copy_weight"),
    ],
)
def test_bad_parameters_name_the_parameter(params, name):
    """Each out-of-range parameter is refused by its declared constraint, naming it."""
    X, y = _noisy(0, 50)
    with pytest.raises(InvalidParameterError, match=name):
        BudgetRFClassifier(**params).fit(X, y)


def test_cost_matrix_and_test_costs_must_fit_the_data():
    """A 3x3 matrix for two classes and 4 prices for 6 features are refused with the sizes."""
    X, y = _noisy(0, 50)
    with pytest.raises(ValueError, match="3x3 but there are 2 classes"):
        BudgetRFClassifier(cost_matrix=np.ones((3, 3))).fit(X, y)
    with pytest.raises(ValueError, match="4 tests but X has 6 features"):
        BudgetRFClassifier(test_costs=[1.0] * 4).fit(X, y)


# ------------------------------------------------------------------------ JSON
def test_json_round_trip_keeps_predictions_policy_and_evidence():
    """A saved and reloaded forest predicts, orders and explains exactly as before."""
    X, y = _noisy(3, 300)
    costs = CostModel(
        [1, 2, 2, 4, 1, 1], discounted=[1, 1, 1, 4, 1, 1], groups=[None, "g", "g"] + [None] * 3
    )
    model = BudgetRFClassifier(
        test_costs=costs,
        cost_matrix=[[0, 1], [5, 0]],
        reject_cost=0.9,
        max_trees=5,
        budget=4.0,
        alpha=2.0,
        random_state=0,
    ).fit(X, y)
    again = model_from_json(model.to_json())
    assert isinstance(again, BudgetRFClassifier)
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))
    for row in X[:10]:
        known = {0: float(row[0]), 3: float(row[3])}
        a, b = model.next_action(known), again.next_action(known)
        assert a == b and a.evidence == b.evidence
    assert again.budget_trace_ == model.budget_trace_ and again.alpha_ == model.alpha_


def test_loading_refuses_a_forest_without_trees_or_with_a_nominal_split():
    """An empty forest and a stump without a threshold are refused, naming the field."""
    X, y = _noisy(0, 120)
    document = json.loads(
        BudgetRFClassifier(alpha=0.0, max_trees=2, random_state=0).fit(X, y).to_json()
    )
    empty = json.loads(json.dumps(document))
    empty["fitted"]["trees"] = []
    with pytest.raises(ModelDocumentError, match=r"fitted.trees: a forest has 1 to"):
        model_from_json(json.dumps(empty))
    nominal = json.loads(json.dumps(document))
    tree = nominal["fitted"]["trees"][0]
    tree["threshold"][0] = None
    tree["branch_value"][0:2] = [0.0, 1.0]
    with pytest.raises(ModelDocumentError, match=r"fitted.trees\[0\]: node 0 has no threshold"):
        model_from_json(json.dumps(nominal))
    extra = json.loads(json.dumps(document))
    extra["fitted"]["votes"] = 3
    with pytest.raises(ModelDocumentError, match="unknown field"):
        model_from_json(json.dumps(extra))


# ------------------------------------------------- compiled paths equal their reference
def test_walk_rows_equals_node_mass_to_the_bit():
    """The forest's compiled walk (reach bits, leaf shares, leaf class sums) equals
    TreeStructure.node_mass on a fitted forest with missing values, bit for bit."""
    from learners.forest.budget_rf import _walk
    from learners.tree._structure import LEAF

    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] - X[:, 1] + 0.4 * rng.normal(size=300) > 0).astype(int)
    X[rng.random(X.shape) < 0.15] = np.nan
    model = BudgetRFClassifier(alpha=0.0, max_trees=6, random_state=0).fit(X[:200], y[:200])
    rows = X[200:]
    assert np.isnan(rows).any(axis=1).sum() > 20  # many rows go down both branches
    for tree in model.trees_:
        assert tree._numeric_only()
        mass = tree.node_mass(rows)
        leaves = tree.feature == LEAF
        reached = np.zeros((tree.n_nodes, (rows.shape[0] + 7) // 8), np.uint8)
        counts = _walk(tree, rows, reached)
        assert np.array_equal(reached, np.packbits(mass > 0.0, axis=1))
        expected = mass[leaves].T @ tree.class_weight[leaves]
        assert counts.tobytes() == expected.tobytes()


def _reference_stump(values, yn, wt, cuts, n_classes, F, alpha):
    """Paper 002's stump search as first written (numpy): sort the drawn thresholds, bin by
    np.searchsorted, judge each distinct threshold once (the last of its copies)."""
    cuts = np.sort(cuts)
    k = cuts.size
    hist = np.zeros((k + 1, n_classes))
    hist_n = np.zeros(k + 1, dtype=int)
    missing = np.zeros(n_classes)
    known_total = np.zeros(n_classes)
    n_known = 0
    for v, c, w in zip(values, yn, wt, strict=True):
        if np.isnan(v):
            missing[c] += w
            continue
        b = np.searchsorted(cuts, v)
        hist[b, c] += w
        hist_n[b] += 1
        known_total[c] += w
        n_known += 1
    known_weight = known_total.sum()
    left = np.zeros(n_classes)
    n_left = 0
    best, best_value, best_share = 0.0, np.nan, 0.0
    for j in range(k):
        left += hist[j]
        n_left += hist_n[j]
        if j + 1 < k and cuts[j + 1] == cuts[j]:
            continue
        if n_left == 0 or n_left == n_known:
            continue
        left_weight = left.sum()
        if left_weight <= 0.0 or left_weight >= known_weight:
            continue
        share = left_weight / known_weight
        l_child = left + missing * share
        r_child = known_total - left + missing * (1.0 - share)
        reduction = min(F - pairs_impurity(l_child, alpha), F - pairs_impurity(r_child, alpha))
        if reduction > best + 1e-9:
            best, best_value, best_share = reduction, cuts[j], share
    return best, best_value, best_share


def test_compiled_stump_search_equals_the_numpy_reference():
    """_best_stump (distinct stumps, branch-free binning, no sort for two-valued features, no
    gathering for complete ones) returns what the sort-and-searchsorted reference returns for
    the same random draws, on two-valued, many-valued and missing-value features."""
    from numba import njit

    from learners.forest._kernels import _best_stump

    @njit
    def draws(seed, n_known, k):
        np.random.seed(seed)
        out = np.empty(k, dtype=np.int64)
        for s in range(k):
            out[s] = np.random.randint(n_known)
        return out

    @njit
    def stump(seed, XT, yn, idx, wt, f, n_classes, F, alpha, k, two, low, high, complete):
        np.random.seed(seed)
        n = idx.shape[0]
        return _best_stump(
            XT, yn, idx, wt, f, n_classes, F, PAIRS, alpha, 2.0, k, 1e-9,
            np.empty(n), np.empty(n, dtype=np.int64), np.empty(81),
            np.empty((81, n_classes)), np.empty(81, dtype=np.int64),
            np.empty(n_classes), np.empty(n_classes), np.empty(n_classes),
            np.empty(n_classes), np.empty(n_classes), two, low, high, complete,
        )  # fmt: skip

    rng = np.random.default_rng(2)
    checked = splits = 0
    for trial in range(60):
        n, n_classes = int(rng.integers(3, 120)), int(rng.integers(2, 4))
        flag = rng.integers(0, 2, n).astype(float)
        many = np.round(rng.normal(size=n), 1)
        gappy = many.copy()
        gappy[rng.random(n) < 0.3] = np.nan
        XT = np.ascontiguousarray(np.vstack([flag, many, gappy]))
        idx = np.sort(rng.choice(n + 5, size=n, replace=False)) % n
        idx = np.unique(idx)
        yn = rng.integers(0, n_classes, idx.size)
        wt = rng.integers(1, 4, idx.size) * (0.5 if trial % 3 == 0 else 1.0)
        counts = np.bincount(yn, weights=wt, minlength=n_classes)
        alpha = float(rng.choice([0.0, 1.0]))
        F = pairs_impurity(counts, alpha)
        for f, k in ((0, 20), (1, 20), (1, 80), (2, 40)):
            values = XT[f, idx]
            known = np.flatnonzero(~np.isnan(values))
            if known.size < 2:
                continue
            cuts = values[known[draws(trial, known.size, k)]]
            expected = _reference_stump(values, yn, wt, cuts, n_classes, F, alpha)
            two = f == 0
            for fast in (False, True):
                got = stump(
                    trial, XT, yn, idx, wt, f, n_classes, F, alpha, k,
                    two and fast, 0.0, 1.0, fast and f != 2,
                )  # fmt: skip
                assert got[0] == expected[0] and got[2] == expected[2]
                assert got[1] == expected[1] or (np.isnan(got[1]) and np.isnan(expected[1]))
                checked += 1
                splits += got[0] > 0
    assert checked > 300 and splits > 150  # most searches found a split to agree on


def test_skipping_features_that_cannot_win_grows_the_same_tree():
    """grow_greedy_tree with skip_losers (a feature whose price / F(S) is above the best ratio
    only draws its stumps) returns the same arrays as judging every feature, on cheap and
    dear tests, a group, a derived test and missing values."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(400, 6))
    X[:, 5] = X[:, 3] + X[:, 4]
    X[:, 0] = (X[:, 0] > 0).astype(float)  # a two-valued flag
    y = (X[:, 0] + X[:, 1] - X[:, 5] + 0.7 * rng.normal(size=400) > 0).astype(int)
    y[rng.random(400) < 0.2] = 2
    X[rng.random(X.shape) < 0.05] = np.nan
    prices = encode_prices(
        CostModel(
            [1.0, 1.0, 2.0, 15.0, 12.0, 0.0],
            discounted=[1.0, 1.0, 2.0, 11.0, 9.0, 0.0],
            groups=[None, None, None, "lab", "lab", None],
            derived={5: (3, 4)},
        )
    )
    skipped_somewhere = False  # some tree splits on a cheap and on a dear test
    for seed in range(6):
        weights = np.bincount(rng.integers(0, 400, 400), minlength=400).astype(float)
        args = (X, y, weights, 3, PAIRS, float(seed % 3), 2.0, prices, seed, 1e-9)
        fast = grow_greedy_tree(*args)
        every = grow_greedy_tree(*args, False)
        for a, b in zip(fast, every, strict=True):
            assert a.tobytes() == b.tobytes()
        skipped_somewhere |= bool(np.any(fast[0] >= 3)) and bool(np.any(fast[0] < 3))
    assert skipped_somewhere  # the trees use both cheap and dear tests


def test_growing_with_the_columns_described_once_grows_the_same_tree():
    """grow_greedy_tree given describe_columns(X) (computed once per fit) returns the same arrays
    as describing X itself, with a two-valued flag, a constant and missing values."""
    from learners.forest._kernels import describe_columns

    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 5))
    X[:, 0] = (X[:, 0] > 0).astype(float)
    X[:, 1] = 2.0
    y = (X[:, 0] + X[:, 2] + 0.5 * rng.normal(size=300) > 0).astype(int)
    X[rng.random(X.shape) < 0.1] = np.nan
    prices = encode_prices(CostModel([1.0, 1.0, 3.0, 2.0, 5.0]))
    columns = describe_columns(X)
    assert columns[1].tolist() == [True, True, False, False, False]  # the flag, the constant
    assert not columns[2].any()  # every column has a missing value
    for seed in range(4):
        weights = np.bincount(rng.integers(0, 300, 300), minlength=300).astype(float)
        args = (X, y, weights, 2, PAIRS, float(seed), 2.0, prices, seed, 1e-9)
        alone = grow_greedy_tree(*args)
        shared = grow_greedy_tree(*args, True, columns)
        for a, b in zip(alone, shared, strict=True):
            assert a.tobytes() == b.tobytes()


# -------------------------------------------- pricing the growing forest tree by tree
def _random_tree(rng, m, depth):
    """A random numeric tree over m features (a feature may recur on a path), up to depth."""
    from learners.forest.budget_rf import _structure

    feature, threshold, left, right, share, weight = [], [], [], [], [], []

    def grow(level):
        node = len(feature)
        for values in (feature, threshold, left, right, share):
            values.append(-1)
        weight.append(rng.integers(0, 5, size=2).astype(float))
        if level < depth and rng.random() < 0.8:
            feature[node] = int(rng.integers(m))
            threshold[node] = float(rng.normal())
            share[node] = float(rng.choice([0.0, 0.3, 0.5, 1.0]))
            left[node] = grow(level + 1)
            right[node] = grow(level + 1)
        return node

    grow(0)
    return _structure(
        np.array(feature),
        np.array(threshold, dtype=float),
        np.array(left),
        np.array(right),
        np.array(share, dtype=float),
        np.array(weight),
    )


def _random_cost_model(rng, m):
    """Ties in price, groups with unequal discounts, derived tests (nested), free tests."""
    costs = rng.choice([1.0, 1.0, 2.0, 2.5, 11.41, 22.78, 0.1, 0.7], size=m)
    discounted = costs * rng.choice([1.0, 0.5, 0.3, 0.9], size=m)
    groups = [rng.choice(["a", "b", None, None]) for _ in range(m)]
    derived = {}
    for target in range(2, m):
        if rng.random() < 0.3:
            size = int(rng.integers(1, min(3, target) + 1))
            derived[target] = tuple(int(s) for s in rng.choice(target, size=size, replace=False))
    free = [int(f) for f in range(m) if rng.random() < 0.1]
    return CostModel(costs, discounted=discounted, groups=groups, derived=derived, free=free)


def test_pricing_tree_by_tree_equals_the_policy_run_on_every_tree():
    """Replaying each row's run with the added tree (forest_acquisition_added) gives, after
    every tree, what forest_acquisition gives on all the trees, to the bit: random trees and
    cost models with price ties, groups with unequal discounts, nested and free derived tests,
    free tests and missing values; both the replay and the rows it sends on are exercised."""
    from learners.forest.budget_rf import _ForestWalks

    rng = np.random.default_rng(12)
    changed = replayed = 0
    for case in range(40):
        m = int(rng.integers(3, 9))
        model = _random_cost_model(rng, m)
        prices = encode_prices(model)
        X = rng.normal(size=(60, m))
        X[rng.random(X.shape) < 0.1] = np.nan
        fast, slow = _ForestWalks(60), _ForestWalks(60, replay=False)
        for _ in range(int(rng.integers(1, 12))):
            tree = _random_tree(rng, m, int(rng.integers(1, 6)))
            fast.add(tree, X)
            slow.add(tree, X)
            before = fast.n_rerun
            cost, n_done = fast.acquisition(prices)
            expected_cost, expected_done = slow.acquisition(prices)
            assert cost.tobytes() == expected_cost.tobytes(), case
            assert np.array_equal(n_done, expected_done), case
            changed += fast.n_rerun - before
            replayed += 60 - (fast.n_rerun - before)
            fast.keep()
            slow.keep()
    assert changed > 100 and replayed > 1000


def _priced_data():
    """Rows with missing values; prices: a group with unequal discounts, derived and free tests."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 7))
    X[:, 4] = X[:, 2] + X[:, 3]
    y = (X[:, 0] + X[:, 4] - X[:, 5] + 0.6 * rng.normal(size=500) > 0).astype(int)
    X[rng.random(X.shape) < 0.05] = np.nan
    costs = CostModel(
        [1.0, 3.3, 6.1, 5.7, 0.0, 2.2, 1.0],
        discounted=[1.0, 3.3, 2.05, 1.1, 0.0, 0.7, 1.0],
        groups=[None, None, "lab", "lab", None, "lab", None],
        derived={4: (2, 3)},
        free=[6],
    )
    return X, y, costs


@pytest.mark.parametrize(
    "params",
    [
        {"alpha": 0.0, "budget": 1e9, "max_trees": 12},
        {"alpha": 0.0, "budget": 3.3, "max_trees": 12},
        {"alpha": "auto", "budget": 3.0, "max_trees": 6},
        {"impurity": "powers", "power": 3.0, "budget": 3.1, "max_trees": 10},
        {"alpha": "auto", "budget": 1e9, "max_trees": 5, "reject_cost": 0.3},
    ],
)
def test_budgeted_forest_is_the_same_with_the_replay_as_without(params, monkeypatch):
    """The fitted forest's JSON is byte for byte the same whether the growing forest is priced
    by replaying each row's run or by running the policy on every tree after each tree
    (groups with unequal discounts, a derived test, a free test, missing values)."""
    from learners.forest import budget_rf

    X, y, costs = _priced_data()
    replayed = BudgetRFClassifier(test_costs=costs, random_state=1, **params).fit(X, y)

    class Reference(budget_rf._ForestWalks):
        def __init__(self, n_rows):
            super().__init__(n_rows, replay=False)

    monkeypatch.setattr(budget_rf, "_ForestWalks", Reference)
    reference = BudgetRFClassifier(test_costs=costs, random_state=1, **params).fit(X, y)
    assert replayed.to_json() == reference.to_json()
    assert len(replayed.budget_trace_) > 1


def test_runs_too_large_to_keep_fall_back_to_the_policy_on_every_tree(monkeypatch):
    """With no room for the rows' runs, every tree is priced by running the policy on every
    tree: the same forest, byte for byte, as with the replay."""
    from learners.forest import budget_rf

    X, y, costs = _priced_data()
    params = {"alpha": 0.0, "budget": 3.3, "max_trees": 12, "test_costs": costs}
    replayed = BudgetRFClassifier(random_state=1, **params).fit(X, y)
    monkeypatch.setattr(budget_rf, "_MAX_RUN_BYTES", 0)
    walks = []
    original = budget_rf._ForestWalks.acquisition

    def spy(self, prices):
        walks.append(self)
        return original(self, prices)

    monkeypatch.setattr(budget_rf._ForestWalks, "acquisition", spy)
    unreplayed = BudgetRFClassifier(random_state=1, **params).fit(X, y)
    assert all(w.runs is None for w in walks) and len(replayed.trees_) > 2
    assert unreplayed.to_json() == replayed.to_json()


def test_every_tree_of_the_kept_forest_is_validated(monkeypatch):
    """Trees are grown unchecked (ten forests, one kept); fit validates each kept tree."""
    from learners.tree._structure import TreeStructure

    X, y = _noisy(1, 300)
    checked = []
    original = TreeStructure.validate

    def spy(tree, *args, **kwargs):
        checked.append(id(tree))
        return original(tree, *args, **kwargs)

    monkeypatch.setattr(TreeStructure, "validate", spy)
    forest = BudgetRFClassifier(max_trees=4, random_state=0, budget=3.0).fit(X, y)
    assert forest.trees_ and {id(tree) for tree in forest.trees_} <= set(checked)
