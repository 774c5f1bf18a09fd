"""One-vs-rest splits of nominal tests: indicator tests, the folded tree, and ACT using them."""

import json

import numpy as np
import pytest

from learners.act import ACTClassifier
from learners.costs import CostModel
from learners.serialization import model_from_json, model_to_json
from learners.tree import TreeStructure, export_text, other_edge
from learners.tree._base import check_nominal_splits
from learners.tree.one_vs_rest import category_indicators, fold_indicators


def _concept(n=300, seed=0):
    """kind (4 categories, test 0, $1) is 3 or not, XOR level (test 1, $10) above 0, 5% of
    labels flipped: one-vs-rest on kind, then level on each side, is the small tree (four
    leaves against eight with one branch per category)."""
    rng = np.random.default_rng(seed)
    kind = rng.integers(0, 4, n).astype(float)
    level = rng.normal(size=n)
    y = ((kind == 3) ^ (level > 0)).astype(int)
    flip = rng.random(n) < 0.05
    y[flip] = 1 - y[flip]
    X = np.column_stack([kind, level, rng.normal(size=n)])
    X[rng.random(n) < 0.05, 0] = np.nan
    return X, y


def _costs():
    return CostModel([5.0, 3.0, 1.0], discounted=[2.0, 3.0, 1.0], groups=["G", None, "G"])


def _act(**params):
    settings = dict(
        test_costs=CostModel([1.0, 10.0, 1.0]),
        cost_matrix=[[0, 200], [200, 0]],
        categorical_features=[0],
        r=2,
        random_state=0,
    )
    return ACTClassifier(**{**settings, **params})


def test_indicators_cost_what_their_test_costs_and_mark_it_done():
    """An indicator alone costs its test's price, after a group-mate the discount, after a
    sibling indicator nothing; TC is unchanged."""
    X, _ = _concept()
    found = category_indicators(X, {0: np.array([0.0, 1.0, 2.0, 3.0])}, _costs())
    model = found.cost_model
    assert found.source == [(0, 0.0), (0, 1.0), (0, 2.0), (0, 3.0)]
    assert found.categorical == [0, 3, 4, 5, 6]
    assert model.marginal_cost(4) == 5.0 and model.marginal_cost(4, {2}) == 2.0
    assert model.marginal_cost(5, {3}) == 0.0 and model.marginal_cost(2, {6}) == 1.0
    assert model.total_cost() == _costs().total_cost()
    np.testing.assert_array_equal(np.isnan(found.X[:, 6]), np.isnan(X[:, 0]))
    assert category_indicators(X, {0: np.array([0.0, 1.0])}, _costs()) is None


def _said(action, found):
    """An action as (kind, test over the original tests or best class, evidence numbers)."""
    if action.kind == "extract":
        n = found.n_features
        what = action.test if action.test < n else found.source[action.test - n][0]
    else:
        what = action.evidence.best_class
    evidence = action.evidence
    nodes = np.ravel(sorted(evidence.nodes))  # in walk order, which follows the edge order
    return (action.kind, what, *evidence.proba, evidence.cost_after, *nodes)


def test_act_with_one_vs_rest_equals_act_grown_on_the_indicator_columns():
    """The folded tree routes every row (missing and unseen categories too) and answers
    next_action exactly as the tree grown on the expanded columns."""
    X, y = _concept()
    ours = _act().fit(X, y)
    found = category_indicators(X, ours.categories_, ours.cost_model_)
    reference = _act(
        one_vs_rest=False, test_costs=found.cost_model, categorical_features=found.categorical
    ).fit(found.X, y)
    assert ours.estimated_cost_ == reference.estimated_cost_
    rows = np.vstack([X, [[7.0, 0.5, 0.0], [np.nan, -1.0, 0.0]]])  # 7: a category never seen
    expanded = category_indicators(rows, ours.categories_, ours.cost_model_).X
    np.testing.assert_array_equal(ours.tree_.node_mass(rows), reference.tree_.node_mass(expanded))
    for row, wide in zip(rows[:40], expanded[:40], strict=True):
        for known in ({}, {0: row[0]}, {0: row[0], 1: row[1]}):
            wide_known = {
                f: wide[f] for f in range(wide.size) if f in known or (f >= 3 and 0 in known)
            }
            said = _said(ours.next_action(known), found)
            # the folded node lists its edges the other way round: sums may differ in the
            # last bit
            assert said == pytest.approx(_said(reference.next_action(wide_known), found))


def test_act_splits_one_category_against_the_rest_where_that_is_the_small_tree():
    """On the concept, ACT tests kind with the edges [3, other]; with one_vs_rest=False no
    node has an other edge."""
    X, y = _concept()
    tree = _act().fit(X, y).tree_
    splits = [
        (int(tree.feature[n]), tree.branch_value[tree.edges(n)].tolist())
        for n in range(tree.n_nodes)
        if other_edge(tree, n) is not None
    ]
    assert splits and all(f == 0 and codes[0] == 3.0 for f, codes in splits)
    plain = _act(one_vs_rest=False).fit(X, y).tree_
    assert all(other_edge(plain, n) is None for n in range(plain.n_nodes))


def test_a_model_with_an_other_edge_survives_json_and_prints_it():
    """Round trip keeps the predictions; export_text names the other branch."""
    X, y = _concept()
    model = _act().fit(X, y)
    loaded = model_from_json(model_to_json(model))
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert "x0 = other:" in export_text(model)


def _one_vs_rest_tree(codes):
    return TreeStructure(
        feature=[0, -1, -1],
        threshold=[np.nan, np.nan, np.nan],
        edge_start=[0, 2, 2],
        n_edges=[2, 0, 0],
        class_weight=[[3, 3], [0, 2], [3, 1]],
        child=[1, 2],
        branch_value=codes,
        branch_weight=[0.4, 0.6],
        checked=False,
    )


def test_the_walk_takes_the_other_edge_for_every_unnamed_category():
    """Known 2 takes its edge; 0, 1 and an unseen 9 take the other; NaN splits by weight."""
    tree = _one_vs_rest_tree([2.0, np.nan])
    tree.validate()
    assert tree.reach({0: 2.0}).leaves == {1: 1.0}
    assert tree.reach({0: 9.0}).leaves == {2: 1.0}
    mass = tree.node_mass(np.array([[2.0], [0.0], [1.0], [np.nan]]))
    np.testing.assert_allclose(mass[1:], [[1, 0, 0, 0.4], [0, 1, 1, 0.6]])


@pytest.mark.parametrize(
    ("codes", "message"),
    [([np.nan, 2.0], "only a nominal split's last edge"), ([2.0, 2.0], "two edges for one")],
)
def test_a_tree_whose_other_edge_is_not_last_or_with_a_repeated_code_is_refused(codes, message):
    """The other edge is the last one; a code has one edge."""
    with pytest.raises(ValueError, match=message):
        _one_vs_rest_tree(codes).validate()


def test_a_loaded_model_needs_its_named_codes_among_the_categories():
    """[2, other] fits categories {0, 1, 2}; [5, other] names an unknown code; [0, 1, 2,
    other] leaves the other edge nothing."""
    categories = {0: np.array([0.0, 1.0, 2.0])}
    check_nominal_splits(_one_vs_rest_tree([2.0, np.nan]), categories, "t", "c")
    with pytest.raises(ValueError, match="splits feature 0"):
        check_nominal_splits(_one_vs_rest_tree([5.0, np.nan]), categories, "t", "c")
    with pytest.raises(ValueError, match="splits feature 0"):
        check_nominal_splits(_one_vs_rest_tree([2.0, np.nan]), {0: np.array([2.0])}, "t", "c")


def test_folding_refuses_an_indicator_split_without_both_codes():
    """An indicator node must have the edges 0 and 1 (anything else is not one of ours)."""
    X, _ = _concept()
    found = category_indicators(X, {0: np.array([0.0, 1.0, 2.0, 3.0])}, _costs())
    tree = _one_vs_rest_tree([0.0, 2.0])
    tree.feature[0] = 3
    with pytest.raises(ValueError, match="not 0 and 1"):
        fold_indicators(tree, found)


def test_the_model_document_keeps_the_other_edge_as_null():
    """The JSON model writes the other edge's code as null (no NaN in the document)."""
    X, y = _concept()
    document = json.loads(model_to_json(_act().fit(X, y)))
    assert None in document["fitted"]["tree"]["branch_value"]
