"""The step-by-step policy of a fitted tree: extract, classify, reject (ALGORITHMS.md §9)."""

import time

import numpy as np
import pytest

from learners.costs import CostModel
from learners.policy import Classify, Extract, Reject
from learners.tree import C45Classifier, EG2Classifier


@pytest.fixture
def model(noisy_table):
    X, y = noisy_table
    return C45Classifier(categorical_features=[4], pruning="none").fit(X, y)


def _walk(model, row, unavailable=()):
    known, steps = {}, []
    for _ in range(model.n_features_in_ + 1):
        action = model.next_action(known, unavailable)
        steps.append(action)
        if action.kind != "extract":
            return known, steps
        assert action.test not in known and action.test not in unavailable
        known[action.test] = row[action.test]
    raise AssertionError("the policy asked for more tests than exist")


def test_first_action_asks_for_the_root_test(model):
    """With nothing known, the tree asks for its root test at its full price."""
    action = model.next_action({})
    assert isinstance(action, Extract)
    assert action.test == model.tree_.feature[0]
    assert action.cost == 1.0
    # The evidence is the root's: every training case stands behind it.
    assert action.evidence.support == pytest.approx(model.tree_.class_weight[0].sum())
    assert sum(action.evidence.proba) == pytest.approx(1.0)


def test_walk_ends_in_the_same_decision_as_predict(model, noisy_table):
    """Extract until a leaf: the classification matches predict on the full row."""
    X, _ = noisy_table
    for row in X[:25]:
        known, steps = _walk(model, np.nan_to_num(row))
        final = steps[-1]
        assert isinstance(final, Classify)
        assert final.label == model.predict(np.nan_to_num(row)[None])[0]
        path = model.decision_path_nodes(known)
        assert path[0] == 0 and model.tree_.is_leaf(path[-1])


def test_extract_cost_is_marginal_given_known():
    """The quoted price is the marginal cost: discounted after a group-mate is known."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    costs = CostModel([5.0, 4.0], discounted=[1.0, 1.0], groups=["g", "g"])
    model = EG2Classifier(test_costs=costs, pruning="none").fit(X, y)
    first = model.next_action({})
    assert first.cost == costs.costs[first.test]
    later = [s for row in X[:50] for s in _walk(model, row)[1][1:] if s.kind == "extract"]
    assert later, "no walk asked for a second test"
    assert all(s.cost == 1.0 for s in later)


def test_unavailable_test_is_treated_as_missing(model, noisy_table):
    """An unavailable root test is never asked for, and the walk still ends in a decision."""
    X, _ = noisy_table
    root = int(model.tree_.feature[0])
    for row in X[:10]:
        _, steps = _walk(model, np.nan_to_num(row), unavailable={root})
        assert all(s.test != root for s in steps if s.kind == "extract")
        assert steps[-1].kind in ("classify", "reject")
    everything = set(range(model.n_features_in_))
    action = model.next_action({}, unavailable=everything)
    expected = model.predict_proba(np.full((1, model.n_features_in_), np.nan))[0]
    np.testing.assert_allclose(action.proba, expected)


def test_nan_in_known_counts_as_missing(model):
    """A known NaN follows every branch like an unavailable test."""
    root = int(model.tree_.feature[0])
    assert model.next_action({root: np.nan}).test != root
    assert model.next_action({root: np.nan}) == model.next_action({}, unavailable=[root])


def test_reject_when_leaf_is_too_uncertain(noisy_table):
    """With a reject cost below any leaf's expected error cost, every walk refers."""
    X, y = noisy_table
    model = C45Classifier(categorical_features=[4], reject_cost=1e-6).fit(X, y)
    _, steps = _walk(model, np.nan_to_num(X[0]))
    assert isinstance(steps[-1], Reject)
    assert steps[-1].expected_cost == pytest.approx(1e-6)


def test_unknown_category_raises(model):
    """A category code never seen in training is a clear error naming feature and code."""
    known = {f: 0.0 for f in range(4)}
    known[4] = 7.0
    assert 4 in model.tree_.feature
    with pytest.raises(ValueError, match=r"feature 4 .*7"):
        model.next_action(known)


def test_delayed_order_lists_the_subtree(model):
    """Turney's rule: asking the root test orders every test of the tree, root first."""
    root = int(model.tree_.feature[0])
    order = model.delayed_order({}, root)
    used = set(model.tree_.feature[model.tree_.feature >= 0].tolist())
    assert order[0] == root
    assert set(order) == used
    assert len(order) == len(set(order))


def test_delayed_order_skips_known_tests(model):
    """Tests already known are not ordered again."""
    root = int(model.tree_.feature[0])
    action = model.next_action({root: 0.0})
    if action.kind == "extract":
        assert root not in model.delayed_order({root: 0.0}, action.test)


def test_next_action_is_fast(model):
    """One call answers in well under a millisecond."""
    known = {0: 0.3}
    model.next_action(known)
    start = time.perf_counter()
    for _ in range(200):
        model.next_action(known)
    assert (time.perf_counter() - start) / 200 < 1e-3


def test_known_keys_from_json_are_accepted(model):
    """String keys (as JSON delivers them) and None values mean the same as ints and NaN."""
    root = int(model.tree_.feature[0])
    assert model.next_action({str(root): 0.25}) == model.next_action({root: 0.25})
    assert model.next_action({root: None}) == model.next_action({root: np.nan})


def test_out_of_range_feature_is_refused(model):
    """A known or unavailable index that is not a feature raises ValueError."""
    with pytest.raises(ValueError, match="out of range"):
        model.next_action({99: 1.0})
    with pytest.raises(ValueError, match="out of range"):
        model.next_action({}, unavailable=[-1])


def test_export_text_shows_splits_counts_and_decisions(model):
    """The text export names the split features, class weights and each leaf's decision."""
    from learners.tree import export_text

    names = ["age", "bp", "chol", "hr", "cp"]
    text = export_text(model, feature_names=names, class_names=["SICK", "WELL"])
    assert text == model.export_text(feature_names=names, class_names=["SICK", "WELL"])
    root = names[int(model.tree_.feature[0])]
    assert text.splitlines()[1].startswith(root)
    assert text.count("-> class") + text.count("-> refer") == model.tree_.n_leaves
    assert "SICK: " in text and "WELL: " in text
    with pytest.raises(ValueError, match="feature_names"):
        export_text(model, feature_names=["only one"])


def test_path_tests_price_a_leaf_as_the_walk_charges_the_patient_who_ends_there(noisy_table):
    """For every complete row, CostModel.path_cost of the ending leaf's path_tests (what the
    tree diagram prices) equals path_cost of the tests the policy walk asked, in its order:
    repeats on a path are free and group discounts follow the path, in one rule."""
    X, y = noisy_table
    costs = CostModel(
        [5.0, 8.0, 8.0, 3.0, 1.0],
        discounted=[5.0, 2.0, 2.0, 3.0, 1.0],
        groups=[None, "blood", "blood", None, None],
    )
    model = EG2Classifier(test_costs=costs, categorical_features=[4], w=0.0, pruning="none")
    model.fit(X, y)
    tree = model.tree_
    complete = X[~np.isnan(X).any(axis=1)]
    repeats = 0
    for row in complete:
        known, _ = _walk(model, row)
        (leaf,) = tree.reach(known).ends
        on_path = tree.path_tests(leaf)
        repeats += len(on_path) - len(set(on_path))
        assert costs.path_cost(on_path) == pytest.approx(costs.path_cost(list(known)))
    assert repeats > 0, "some walk meets a test twice, so the free repeat is exercised"
