"""Boosting and Cost-Boosting (learners/boosting): the weight rules by hand, the vote, the policy,
matrices chosen after training, bad input and JSON."""

import json
import math

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.utils._param_validation import InvalidParameterError

from learners import (
    BoostingClassifier,
    C45Classifier,
    Classify,
    CostModel,
    Extract,
    Reject,
    model_from_json,
)
from learners.boosting import _weights as W
from learners.evaluation import decides_any_matrix, evaluate
from learners.policy import best_class


# ------------------------------------------------------------- weight rules
def test_adaboost_update_by_hand():
    """4 equal weights, case 0 wrong: eps 1/4, alpha = ln(3)/2; the wrong case goes to 1/2,
    the others to 1/6; before normalizing they sum to z = 2 sqrt(3/4 * 1/4)."""
    w = np.full(4, 0.25)
    wrong = np.array([True, False, False, False])
    eps = W.weighted_error(w, wrong)
    assert eps == 0.25
    assert W.adaboost_alpha(eps) == pytest.approx(0.5 * math.log(3.0))
    raw = 0.25 * math.sqrt(3.0) + 3 * 0.25 / math.sqrt(3.0)
    assert raw == pytest.approx(2 * math.sqrt(0.75 * 0.25))
    np.testing.assert_allclose(W.adaboost_update(w, wrong, eps), [1 / 2, 1 / 6, 1 / 6, 1 / 6])


def test_adaboost_update_leaves_the_last_tree_at_error_one_half():
    """After the update the tree just used has weighted error exactly 1/2 (AdaBoost's property)."""
    rng = np.random.default_rng(0)
    w = rng.random(20)
    w /= w.sum()
    wrong = rng.random(20) < 0.3
    updated = W.adaboost_update(w, wrong, W.weighted_error(w, wrong))
    assert W.weighted_error(updated, wrong) == pytest.approx(0.5)


def test_cost_boosting_update_by_hand():
    """w = (.1, .2, .3, .4), M = [[0, 2], [5, 0]]: cases 1 (1 -> 0) and 3 (0 -> 1) are wrong,
    so w' = (4 * .1, M[1, 0] = 5, 4 * .3, M[0, 1] = 2), divided by their sum 8.6."""
    w = np.array([0.1, 0.2, 0.3, 0.4])
    actual = np.array([0, 1, 1, 0])
    predicted = np.array([0, 0, 1, 1])
    updated = W.cost_boosting_update(w, actual, predicted, [[0, 2], [5, 0]])
    np.testing.assert_allclose(updated, np.array([0.4, 5.0, 1.2, 2.0]) / 8.6)


def test_unit_error_scale_puts_the_cheapest_error_at_one():
    """M = [[0, 20], [50, 0]] becomes [[0, 1], [2.5, 0]]; c * M gives the same matrix."""
    expected = np.array([[0.0, 1.0], [2.5, 0.0]])
    np.testing.assert_allclose(W.unit_error_scale([[0, 20], [50, 0]]), expected)
    np.testing.assert_allclose(W.unit_error_scale([[0, 20000], [50000, 0]]), expected)
    with pytest.raises(ValueError, match="more than 0"):
        W.unit_error_scale([[0, 0], [5, 0]])


@pytest.mark.parametrize(("eps", "reset"), [(0.0, True), (0.5, True), (0.7, True), (0.3, False)])
def test_reset_rule(eps, reset):
    """Paper 004 resets the weights when eps >= 0.5 or eps = 0."""
    assert W.needs_reset(eps) is reset


def test_reset_weights_are_equal_plus_small_noise():
    """A reset gives weights summing to 1, each within the noise of 1/N, not all equal."""
    w = W.reset_weights(50, np.random.default_rng(1))
    assert w.sum() == pytest.approx(1.0)
    assert np.all(np.abs(w * 50 - 1) < 2.5 * W.RESET_NOISE)
    assert np.ptp(w) > 0


def test_alpha_refuses_an_error_that_calls_for_a_reset():
    """alpha is undefined at eps = 0 or eps >= 0.5: the caller must reset instead."""
    with pytest.raises(ValueError, match="reset the weights"):
        W.adaboost_alpha(0.5)


# ------------------------------------------------------------------- fitting
@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return X, y


@pytest.fixture(scope="module")
def boosted(cancer):
    X, y = cancer
    return BoostingClassifier(n_trials=4, random_state=0).fit(X, y)


def test_boosting_votes_are_adaboost_alphas(boosted):
    """Each tree's vote is 1/2 ln((1 - eps)/eps) of its weighted error, 0 < eps < 0.5."""
    errors = boosted.trial_errors_
    assert len(boosted.members_) == 4 and np.all((errors > 0) & (errors < 0.5))
    np.testing.assert_allclose(boosted.alphas_, 0.5 * np.log((1 - errors) / errors))


def test_cost_boosting_votes_one_each_and_trains_for_its_matrix(cancer):
    """Cost-Boosting gives every tree vote 1; its later trees differ from plain Boosting's."""
    X, y = cancer
    matrix = [[0, 1], [8, 0]]
    cost = BoostingClassifier(n_trials=3, cost_sensitive=True, cost_matrix=matrix).fit(X, y)
    plain = BoostingClassifier(n_trials=3, cost_matrix=matrix).fit(X, y)
    np.testing.assert_array_equal(cost.alphas_, [1.0, 1.0, 1.0])
    # the first tree is C4.5's on equal weights for both
    np.testing.assert_array_equal(cost.members_[0].feature, plain.members_[0].feature)
    # then the weights differ: errors weigh their cost, not 1/(2 eps)
    assert not np.allclose(cost.members_[1].class_weight[0], plain.members_[1].class_weight[0])


def test_cost_boosting_grows_the_same_trees_at_any_scale_of_error_costs(cancer):
    """Uniform error costs of 10 and 10,000 give the same weights, hence the same trees
    (the update sees the matrix scaled to a cheapest error of 1)."""
    X, y = cancer
    models = [
        BoostingClassifier(n_trials=3, cost_sensitive=True, cost_matrix=c * (1 - np.eye(2))).fit(
            X, y
        )
        for c in (10.0, 10000.0)
    ]
    assert len(models[0].members_) == len(models[1].members_) == 3
    for a, b in zip(models[0].members_, models[1].members_, strict=True):
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_allclose(a.class_weight, b.class_weight)


def test_reset_when_the_error_reaches_one_half():
    """Balanced classes, no usable feature: on equal weights the single leaf is wrong on exactly
    half the weight (eps = 4/8), so the first trial resets; kept trees have 0 < eps < 0.5."""
    X = np.zeros((8, 1))
    y = [0, 1] * 4
    model = BoostingClassifier(n_trials=3, random_state=0).fit(X, y)
    assert model.n_resets_ >= 1
    assert np.all((model.trial_errors_ > 0) & (model.trial_errors_ < 0.5))


def test_perfect_first_tree_is_kept_alone_after_the_resets():
    """eps = 0 on separable data: the resets keep finding a perfect tree; after MAX_RESETS in a
    row boosting stops with that tree alone, vote 1."""
    X = np.array([[0.0], [0.0], [0.0], [1.0], [1.0], [1.0]])
    model = BoostingClassifier(random_state=0).fit(X, [0, 0, 0, 1, 1, 1])
    assert model.n_resets_ == W.MAX_RESETS
    assert len(model.members_) == 1 and model.alphas_.tolist() == [1.0]
    assert model.trial_errors_.tolist() == [0.0]
    np.testing.assert_array_equal(model.predict(X), [0, 0, 0, 1, 1, 1])
    heard = []
    BoostingClassifier(random_state=0, progress_callback=lambda f, m: heard.append((f, m))).fit(
        X, [0, 0, 0, 1, 1, 1]
    )
    assert heard == [
        (1.0, "trial 1 of 10: weighted error 0.000 after 3 resets; stopped with 1 trees")
    ]


def test_trees_are_grown_on_the_weighted_cases(cancer):
    """Each tree's root holds N weighted cases; the second tree's class weights are not counts."""
    X, y = cancer
    model = BoostingClassifier(n_trials=2, random_state=0).fit(X, y)
    for tree in model.members_:
        assert tree.class_weight[0].sum() == pytest.approx(len(y))
    assert not np.allclose(model.members_[1].class_weight[0], np.bincount(y))


def test_first_tree_is_c45s(cancer):
    """Paper 004: the first tree of Boosting and Cost-Boosting is the one C4.5 grows."""
    X, y = cancer
    c45 = C45Classifier(probability="frequency").fit(X, y).tree_
    for cost_sensitive in (False, True):
        first = BoostingClassifier(n_trials=2, cost_sensitive=cost_sensitive).fit(X, y)
        assert first.members_[0].to_dict() == c45.to_dict()


def test_progress_reports_every_trial(cancer):
    """progress_callback hears each trial: its fraction and its weighted error."""
    X, y = cancer
    heard = []
    BoostingClassifier(n_trials=3, progress_callback=lambda f, m: heard.append((f, m))).fit(X, y)
    assert [f for f, _ in heard] == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert heard[0][1].startswith("trial 1 of 3: weighted error")


# ------------------------------------------------------------------ the vote
def test_vote_is_alpha_weighted_leaf_weights_by_hand(boosted, cancer):
    """predict_proba(x) = sum_k alpha_k W(t_k(x)) normalized, W the class weights of x's leaf."""
    X, _ = cancer
    x = X[7]
    known = dict(enumerate(x))
    votes = np.zeros(2)
    for alpha, tree in zip(boosted.alphas_, boosted.members_, strict=True):
        (leaf,) = tree.reach(known).leaves
        votes += alpha * tree.class_weight[leaf]
    np.testing.assert_allclose(boosted.predict_proba(X[7:8])[0], votes / votes.sum())


def test_policy_concludes_like_predict_once_every_tree_is_done(boosted, cancer):
    """With every result known each tree is at a leaf: the policy classifies as predict does."""
    X, _ = cancer
    for x in X[:20]:
        action = boosted.next_action(dict(enumerate(x)))
        assert isinstance(action, Classify)
        assert action.label == boosted.predict(x[None, :])[0]
        assert action.evidence.waiting == 0.0
        assert action.evidence.members == pytest.approx(boosted.alphas_.sum())


def test_policy_orders_the_test_most_vote_weight_waits_on(boosted):
    """At the start every tree waits at its root: the test with the largest summed alpha."""
    action = boosted.next_action({})
    assert isinstance(action, Extract)
    by_test = {}
    for alpha, tree in zip(boosted.alphas_, boosted.members_, strict=True):
        by_test[int(tree.feature[0])] = by_test.get(int(tree.feature[0]), 0.0) + alpha
    assert by_test[action.test] == max(by_test.values())
    assert action.evidence.waiting == pytest.approx(by_test[action.test])


def test_policy_never_asks_for_an_unavailable_test(boosted, cancer):
    """Tests marked unavailable split the trees over their branches and are never ordered."""
    X, _ = cancer
    unavailable = set(range(0, 30, 2))
    known = {}
    for _ in range(31):
        action = boosted.next_action(known, unavailable)
        if not isinstance(action, Extract):
            break
        assert action.test not in unavailable and action.test not in known
        known[action.test] = X[3, action.test]
    assert isinstance(action, Classify)


def _stump(feature, left, right, n_features=2):
    """A one-split tree document: x_feature <= 0.5 goes to ``left`` class weights."""
    return {
        "feature": [feature, -1, -1],
        "threshold": [0.5, None, None],
        "edge_start": [0, 2, 2],
        "n_edges": [2, 0, 0],
        "class_weight": [[a + b for a, b in zip(left, right, strict=True)], left, right],
        "child": [1, 2],
        "branch_value": [None, None],
        "branch_weight": [0.5, 0.5],
    }


def _two_stumps(alphas, prices, reject_cost=None):
    """A hand-made ensemble: tree A tests x0, tree B tests x1, with votes ``alphas``."""
    document = {
        "format": "learners-model",
        "version": 1,
        "learner": "BoostingClassifier",
        "params": {"n_trials": 2, "reject_cost": reject_cost},
        "fitted": {
            "members": [_stump(0, [6, 0], [0, 6]), _stump(1, [4, 2], [1, 5])],
            "alphas": list(alphas),
            "trial_errors": [0.1, 0.2],
            "n_resets": 0,
            "classes": [0, 1],
            "n_features_in": 2,
            "cost_model": CostModel(prices).to_dict(),
            "cost_matrix": [[0, 1], [1, 0]],
            "reject_cost": reject_cost,
            "categories": {},
        },
    }
    return model_from_json(json.dumps(document))


def test_tie_in_vote_weight_goes_to_the_cheaper_test():
    """Equal votes wait on x0 (price 5) and x1 (price 2): the cheaper x1 is ordered."""
    action = _two_stumps([1.0, 1.0], [5.0, 2.0]).next_action({})
    assert action.test == 1 and action.cost == 2.0
    assert action.evidence.waiting == 1.0 and action.evidence.members == 2.0


def test_larger_vote_beats_a_cheaper_test():
    """Tree A's vote 2 outweighs tree B's 1: x0 is ordered despite its price."""
    action = _two_stumps([2.0, 1.0], [5.0, 2.0]).next_action({})
    assert action.test == 0 and action.evidence.waiting == 2.0


def test_cost_after_the_ordered_test_by_hand():
    """Votes 2 (A on x0) and 1 (B, staying at its root (5, 7)); A's split sends half its
    training weight left: after x0 the vote is (5, 7) + 2 (6, 0) or + 2 (0, 6), each with
    chance 1/2, costing 7/24 and 5/24 under 0/1 loss: 1/4, against 17/36 now."""
    action = _two_stumps([2.0, 1.0], [5.0, 2.0]).next_action({})
    assert action.evidence.conclude_cost == pytest.approx(17 / 36)
    assert action.evidence.cost_after == pytest.approx(0.5 * 7 / 24 + 0.5 * 5 / 24)


def test_conclusion_votes_by_hand_and_can_refer():
    """x0 = 0, x1 = 1: A's leaf (6, 0) x 2 + B's leaf (1, 5) x 1 = (13, 5); with a reject cost
    below the best class's expected cost 5/18, the model refers."""
    model = _two_stumps([2.0, 1.0], [5.0, 2.0])
    action = model.next_action({0: 0.0, 1: 1.0})
    assert isinstance(action, Classify) and action.label == 0
    assert action.proba == pytest.approx((13 / 18, 5 / 18))
    refer = _two_stumps([2.0, 1.0], [5.0, 2.0], reject_cost=0.2).next_action({0: 0.0, 1: 1.0})
    assert isinstance(refer, Reject) and refer.expected_cost == pytest.approx(0.2)


# -------------------------------------------------- matrices after training
def test_plain_boosting_takes_another_matrix_without_retraining(cancer):
    """predict(X, cost_matrix=M), set_cost_matrix(M) and the policy all decide argmin p @ M."""
    X, y = cancer
    model = BoostingClassifier(n_trials=3, random_state=0).fit(X, y)
    members = [tree.to_dict() for tree in model.members_]
    dear = np.array([[0.0, 1.0], [50.0, 0.0]])
    expected = model.classes_[best_class(model.predict_proba(X), dear)]
    np.testing.assert_array_equal(model.predict(X, cost_matrix=dear), expected)
    assert not np.array_equal(model.predict(X), expected)  # the matrix matters here
    row = dict(enumerate(X[np.flatnonzero(model.predict(X) != expected)[0]]))
    assert model.next_action(row, cost_matrix=dear).label != model.next_action(row).label
    model.set_cost_matrix(dear)
    np.testing.assert_array_equal(model.predict(X), expected)
    assert [tree.to_dict() for tree in model.members_] == members
    assert model_from_json(model.to_json()).cost_matrix_.tolist() == dear.tolist()


def test_evaluate_decides_plain_boosting_with_the_given_matrix(cancer):
    """evaluate(..., cost_matrix=M) runs Boosting's policy under M, as predict(X, M) decides."""
    X, y = cancer
    model = BoostingClassifier(n_trials=3, random_state=0).fit(X, y)
    dear = np.array([[0.0, 1.0], [50.0, 0.0]])
    assert decides_any_matrix(model)
    report = evaluate(model, X[:60], y[:60], cost_matrix=dear)
    labels = [case.decision.label for case in report.cases]
    np.testing.assert_array_equal(labels, model.predict(X[:60], cost_matrix=dear))


def test_cost_boosting_refuses_another_matrix(cancer):
    """Cost-Boosting's trees are for its own matrix: another one is refused, saying retrain."""
    X, y = cancer
    model = BoostingClassifier(n_trials=2, cost_sensitive=True, cost_matrix=[[0, 1], [4, 0]])
    model.fit(X, y)
    with pytest.raises(ValueError, match="retrain it for another matrix"):
        model.set_cost_matrix([[0, 1], [9, 0]])
    with pytest.raises(ValueError, match="retrain it for another matrix"):
        evaluate(model, X[:5], y[:5], cost_matrix=[[0, 1], [9, 0]])
    model.set_cost_matrix([[0, 1], [4, 0]])  # its own matrix is fine


# ----------------------------------------------------------------- bad input
@pytest.mark.parametrize("trials", [0, -3])
def test_fewer_than_one_trial_is_refused(trials):
    """K < 1: fit names n_trials and its range."""
    with pytest.raises(InvalidParameterError, match="'n_trials' parameter.*range \\[1,"):
        BoostingClassifier(n_trials=trials).fit(np.zeros((4, 1)), [0, 1, 0, 1])


def test_cost_boosting_refuses_a_matrix_without_the_unity_condition():
    """An error cheaper than 1 is refused, with the reason and the fix."""
    model = BoostingClassifier(cost_sensitive=True, cost_matrix=[[0, 0.5], [3, 0]])
    with pytest.raises(ValueError, match=r"unity condition.*cost_matrix\[0, 1\] = 0.5.*divide"):
        model.fit(np.zeros((4, 1)), [0, 1, 0, 1])


def test_plain_boosting_takes_a_matrix_without_the_unity_condition(cancer):
    """Plain Boosting never weighs by cost, so any valid matrix is fine."""
    X, y = cancer
    BoostingClassifier(n_trials=1, cost_matrix=[[0, 0.5], [3, 0]]).fit(X[:100], y[:100])


def test_bad_matrix_at_prediction_is_refused(boosted, cancer):
    """A matrix of the wrong size is refused when offered at prediction time."""
    X, _ = cancer
    with pytest.raises(ValueError, match="2 classes"):
        boosted.predict(X[:2], cost_matrix=np.zeros((3, 3)))


# ----------------------------------------------------------------------- JSON
def test_json_round_trip(boosted, cancer):
    """A saved ensemble loads back with the same trees, votes, beliefs and advice."""
    X, _ = cancer
    again = model_from_json(boosted.to_json())
    assert isinstance(again, BoostingClassifier)
    np.testing.assert_array_equal(again.alphas_, boosted.alphas_)
    np.testing.assert_array_equal(again.predict_proba(X), boosted.predict_proba(X))
    assert again.next_action({}) == boosted.next_action({})
    assert again.n_resets_ == boosted.n_resets_


def test_cost_boosting_document_with_another_matrix_is_refused(cancer):
    """A Cost-Boosting document whose matrix in force is not its training matrix is refused."""
    X, y = cancer
    model = BoostingClassifier(n_trials=1, cost_sensitive=True, cost_matrix=[[0, 1], [4, 0]])
    document = json.loads(model.fit(X[:80], y[:80]).to_json())
    document["fitted"]["cost_matrix"] = [[0, 1], [9, 0]]
    with pytest.raises(Exception, match="trained with"):
        model_from_json(json.dumps(document))


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("alphas", [0.0, 1.0], "every vote must be positive"),
        ("alphas", [1.0], "has 1 entries, expected 2"),
        ("trial_errors", [0.1, 1.5], "at most 1"),
        ("members", [], "expected 1 to n_trials"),
    ],
)
def test_malformed_ensemble_fields_are_refused(field, value, match):
    """Votes, errors and the member list are checked on load, naming the field."""
    document = json.loads(_two_stumps([1.0, 1.0], [1.0, 1.0]).to_json())
    document["fitted"][field] = value
    with pytest.raises(Exception, match=match) as caught:
        model_from_json(json.dumps(document))
    assert type(caught.value).__name__ == "ModelDocumentError"
