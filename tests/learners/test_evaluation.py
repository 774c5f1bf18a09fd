"""Evaluation runs each policy honestly and prices what it did by hand-checkable rules."""

from __future__ import annotations

import json

import numpy as np
import pytest

from learners import Classify, CostModel, Extract, Reject
from learners.evaluation import cross_validate, evaluate, make_folds

# Tests 0 and 1 share a blood draw (group A, delayed); test 2 is a cheap question.
PRICES = CostModel(
    [10.0, 6.0, 1.0],
    discounted=[4.0, 2.0, 1.0],
    groups=["A", "A", None],
    delayed=[True, True, False],
)
M = np.array([[0.0, 50.0], [200.0, 0.0]])


class ScriptedPolicy:
    """Asks ``order`` until ``rule(known)`` returns a label, "reject" or None (keep asking)."""

    def __init__(self, order, rule, *, subtree=None, cost_model=PRICES, reject_cost=None):
        self.order = list(order)
        self.rule = rule
        self.subtree = subtree
        self.classes_ = np.array([0, 1])
        self.n_features_in_ = cost_model.n_features
        self.cost_model_ = cost_model
        self.cost_matrix_ = M
        self.reject_cost_ = reject_cost
        self.calls = []

    def next_action(self, known, unavailable=()):
        self.calls.append((dict(known), set(unavailable)))
        verdict = self.rule(known)
        if verdict == "reject":
            return Reject(expected_cost=0.0)
        if verdict is not None:
            return Classify(label=verdict, proba=(0.5, 0.5), expected_cost=0.0)
        for test in self.order:
            if test not in known and test not in unavailable:
                return Extract(test=test, cost=0.0)
        return Classify(label=0, proba=(1.0, 0.0), expected_cost=0.0)

    def delayed_order(self, known, test):
        return list(self.subtree[test])


def _label_by_test1(known):
    return None if 1 not in known else int(known[1] > 0)


def test_path_cost_applies_group_discount_in_purchase_order():
    """Tests 2, 0, 1 cost 1 + 10 + 2 (second test of group A at its discounted price)."""
    policy = ScriptedPolicy([2, 0, 1], _label_by_test1)
    X = np.array([[0.0, 1.0, 5.0]])
    report = evaluate(policy, X, [1])
    case = report.cases[0]
    assert case.tests == (2, 0, 1)
    assert case.test_cost == pytest.approx(13.0)
    assert case.misclassification_cost == 0.0
    assert report.accuracy == 1.0


def test_values_are_revealed_only_when_bought():
    """The policy sees no value before asking for it, then exactly the data value."""
    policy = ScriptedPolicy([2, 0, 1], _label_by_test1)
    evaluate(policy, np.array([[7.0, -3.0, 5.0]]), [0])
    seen = [known for known, _ in policy.calls]
    assert seen == [{}, {2: 5.0}, {2: 5.0, 0: 7.0}, {2: 5.0, 0: 7.0, 1: -3.0}]


def test_missing_value_is_paid_for_and_stays_done():
    """A NaN result is charged, then reported as known-but-missing (NaN), never as unavailable."""
    policy = ScriptedPolicy([0, 2], lambda known: 0 if 2 in known else None)
    report = evaluate(policy, np.array([[np.nan, 0.0, 1.0]]), [0])
    assert report.cases[0].test_cost == pytest.approx(11.0)
    known, unavailable = policy.calls[-1]
    assert set(known) == {0, 2} and np.isnan(known[0]) and known[2] == 1.0
    assert unavailable == set()


def test_misclassification_costs_follow_matrix_orientation():
    """M[true, predicted]: a class-1 case called 0 costs 200, a class-0 case called 1 costs 50."""
    policy = ScriptedPolicy([1], _label_by_test1)
    X = np.array([[0, -1.0, 0], [0, 1.0, 0], [0, 1.0, 0], [0, -1.0, 0]])
    y = [1, 0, 1, 0]
    report = evaluate(policy, X, y)
    assert [c.misclassification_cost for c in report.cases] == [200.0, 50.0, 0.0, 0.0]
    assert report.mean_misclassification_cost == pytest.approx(250.0 / 4)
    assert report.mean_test_cost == pytest.approx(6.0)
    assert report.mean_total_cost == pytest.approx(6.0 + 62.5)
    assert report.accuracy == pytest.approx(0.5)
    assert report.confusion.tolist() == [[1, 1, 0], [1, 1, 0]]
    # Cheapest positive error is 50, so only the 200 error is a high-cost error.
    assert report.high_cost_errors == 1


def test_turney_delayed_charges_whole_subtree_at_once():
    """Asking for delayed test 0 orders its subtree [0, 1] at once: 10 + 2, even if 1 is unused."""
    rule = lambda known: (0 if known.get(0, 0) > 5 else None) if 0 in known else None  # noqa: E731
    subtree = {0: [0, 1], 1: [1]}
    X = np.array([[9.0, 1.0, 0.0]])
    path = evaluate(ScriptedPolicy([2, 0, 1], rule, subtree=subtree), X, [0], delayed="path")
    turney = evaluate(ScriptedPolicy([2, 0, 1], rule, subtree=subtree), X, [0], delayed="turney")
    assert path.cases[0].test_cost == pytest.approx(1.0 + 10.0)
    assert turney.cases[0].test_cost == pytest.approx(1.0 + 10.0 + 2.0)
    assert turney.cases[0].tests == (2, 0, 1)
    assert turney.test_frequency.tolist() == [1.0, 1.0, 1.0]


def test_turney_mode_leaves_immediate_tests_alone():
    """An immediate test is charged alone even in Turney mode."""
    subtree = {2: [2, 0, 1]}
    policy = ScriptedPolicy([2], lambda known: 0 if 2 in known else None, subtree=subtree)
    report = evaluate(policy, np.array([[1.0, 1.0, 1.0]]), [0], delayed="turney")
    assert report.cases[0].tests == (2,)
    assert report.cases[0].test_cost == pytest.approx(1.0)


def test_referral_is_counted_separately():
    """A referral costs the reject cost, is not an error, and is not a correct answer."""

    def rule(known):
        if 2 not in known:
            return None
        return "reject" if known[2] > 0 else 0

    policy = ScriptedPolicy([2], rule, reject_cost=[30.0, 70.0])
    X = np.array([[0, 0, 1.0], [0, 0, 1.0], [0, 0, -1.0], [0, 0, -1.0]])
    report = evaluate(policy, X, [0, 1, 0, 1])
    assert [c.total_cost for c in report.cases] == [31.0, 71.0, 1.0, 201.0]
    assert report.reject_rate == pytest.approx(0.5)
    assert report.mean_reject_cost == pytest.approx(100.0 / 4)
    assert report.mean_misclassification_cost == pytest.approx(200.0 / 4)
    assert report.accuracy == pytest.approx(0.25)
    assert report.accuracy_classified == pytest.approx(0.5)
    assert report.confusion.tolist() == [[1, 0, 1], [1, 0, 1]]
    scalar = evaluate(policy, X, [0, 1, 0, 1], reject_cost=5.0)
    assert scalar.mean_reject_cost == pytest.approx(10.0 / 4)


def test_reject_without_reject_cost_is_an_error():
    """A referral with no reject cost anywhere cannot be priced."""
    policy = ScriptedPolicy([], lambda known: "reject")
    with pytest.raises(ValueError, match="reject cost"):
        evaluate(policy, np.zeros((1, 3)), [0])


def test_normalized_cost_matches_hand_computation():
    """Standard cost = TC + min(1 - f) * max M = 13 + 0.25 * 200; normalized in percent."""
    policy = ScriptedPolicy([1], _label_by_test1)
    X = np.array([[0, -1.0, 0], [0, -1.0, 0], [0, -1.0, 0], [0, -1.0, 0]])
    report = evaluate(policy, X, [0, 0, 0, 1])
    assert report.standard_cost == pytest.approx(63.0)
    mean_total = (4 * 6.0 + 200.0) / 4
    assert report.mean_total_cost == pytest.approx(mean_total)
    assert report.normalized_cost == pytest.approx(100 * mean_total / 63.0)
    given = evaluate(policy, X, [0, 0, 0, 1], class_frequencies=[1, 1])
    assert given.standard_cost == pytest.approx(13.0 + 0.5 * 200.0)


def test_evaluation_prices_can_override_the_models():
    """test_costs and cost_matrix passed to evaluate replace the model's own."""
    policy = ScriptedPolicy([1], _label_by_test1)
    X = np.array([[0, -1.0, 0]])
    report = evaluate(policy, X, [1], test_costs=[1.0, 1.0, 1.0], cost_matrix=[[0, 1], [3, 0]])
    assert report.cases[0].total_cost == pytest.approx(1.0 + 3.0)


def test_asking_twice_for_a_test_raises():
    """A policy that asks again for a test it already has is a bug, not an endless loop."""

    class Stubborn(ScriptedPolicy):
        def next_action(self, known, unavailable=()):
            return Extract(test=0, cost=0.0)

    with pytest.raises(RuntimeError, match="asked again for test 0"):
        evaluate(Stubborn([], None), np.zeros((1, 3)), [0])


def test_asking_again_for_an_unavailable_test_raises():
    """A test whose result was missing counts as bought: asking again is a loop."""

    class Stubborn(ScriptedPolicy):
        def next_action(self, known, unavailable=()):
            return Extract(test=1, cost=0.0)

    with pytest.raises(RuntimeError, match="asked again"):
        evaluate(Stubborn([], None), np.array([[0.0, np.nan, 0.0]]), [0])


def test_derived_test_brings_its_inputs():
    """Buying derived test 2 (from 0 and 1) charges 10 + 2 and reveals both inputs."""
    prices = CostModel(
        [10.0, 6.0, 0.0], discounted=[4.0, 2.0, 0.0], groups=["A", "A", None], derived={2: (0, 1)}
    )
    policy = ScriptedPolicy([2], lambda known: 0 if 2 in known else None, cost_model=prices)
    report = evaluate(policy, np.array([[1.0, 2.0, 3.0]]), [0])
    assert report.cases[0].test_cost == pytest.approx(12.0)
    assert report.cases[0].tests == (2, 0, 1)
    assert policy.calls[-1][0] == {0: 1.0, 1: 2.0, 2: 3.0}


def test_unknown_label_and_bad_mode_are_rejected():
    """Labels outside classes_ and unknown delayed modes raise clear errors."""
    policy = ScriptedPolicy([1], _label_by_test1)
    with pytest.raises(ValueError, match="not one of the model's classes"):
        evaluate(policy, np.zeros((1, 3)), [7])
    with pytest.raises(ValueError, match="delayed must be"):
        evaluate(policy, np.zeros((1, 3)), [0], delayed="later")


def test_to_dict_is_plain_json():
    """The report serializes with json.dumps (no arrays, no NaN)."""
    policy = ScriptedPolicy([], lambda known: "reject", reject_cost=1.0)
    report = evaluate(policy, np.zeros((2, 3)), [0, 1])
    text = json.dumps(report.to_dict(), allow_nan=False)
    data = json.loads(text)
    assert data["accuracy_classified"] is None
    assert data["confusion"] == [[0, 0, 1], [0, 0, 1]]
    assert data["cases"][0]["decision"] == "reject"


class ThresholdOnTest1:
    """A minimal estimator: learns the class-1 share above 0 on test 1 and buys only test 1."""

    def __init__(self, *, test_costs=None):
        self.test_costs = test_costs

    def get_params(self, deep=True):
        return {"test_costs": self.test_costs}

    def set_params(self, **params):
        self.__dict__.update(params)
        return self

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.n_features_in_ = X.shape[1]
        self.cost_model_ = PRICES if self.test_costs is None else CostModel(self.test_costs)
        self.cost_matrix_ = 1.0 - np.eye(len(self.classes_))
        self.reject_cost_ = None
        above = y[X[:, 1] > 0]
        self.label_above_ = int(np.bincount(above, minlength=2).argmax()) if above.size else 1
        self.n_train_ = len(y)
        return self

    def next_action(self, known, unavailable=()):
        if 1 not in known and 1 not in unavailable:
            return Extract(test=1, cost=6.0)
        above = known.get(1, 0.0) > 0
        label = self.label_above_ if above else 1 - self.label_above_
        return Classify(label=label, proba=(0.5, 0.5), expected_cost=0.5)


def test_cross_validate_pools_every_case_once():
    """Every case is evaluated exactly once, by a model not trained on it, with shared folds."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 1] > 0).astype(int)
    y[:4] = 1 - y[:4]
    folds = make_folds(y, n_splits=4, random_state=3)
    result = cross_validate(ThresholdOnTest1(), X, y, folds=folds)
    assert result.overall.n_cases == 40
    assert len(result.folds) == 4 and len(result.fit_seconds) == 4
    assert sum(f.n_cases for f in result.folds) == 40
    assert result.overall.mean_test_cost == pytest.approx(6.0)
    assert result.overall.accuracy == pytest.approx(36 / 40)
    assert result.mean_fit_seconds >= 0
    again = cross_validate(ThresholdOnTest1(), X, y, n_splits=4, random_state=3)
    assert again.overall.accuracy == result.overall.accuracy
    for (train, test), fold in zip(folds, result.folds, strict=True):
        assert fold.n_cases == len(test)
        assert not set(train) & set(test)
    json.dumps(result.to_dict(), allow_nan=False)


def _and_table(repeats: int = 10):
    """Class 1 iff tests 1 and 2 are both positive; test 0 is constant (never worth buying)."""
    grid = np.array([[0.0, a, b] for a in (0.0, 1.0) for b in (0.0, 1.0)])
    X = np.repeat(grid, repeats, axis=0)
    y = ((X[:, 1] > 0) & (X[:, 2] > 0)).astype(int)
    return X, y


# Tests 1 and 2 share a group: test 2 after test 1 costs its discounted 3, not 8.
AND_PRICES = CostModel(
    [0.5, 5.0, 8.0],
    discounted=[0.5, 2.0, 3.0],
    groups=[None, "A", "A"],
    delayed=[False, True, True],
)


def test_real_tree_path_costs_match_hand_computation():
    """EG2 asks cheap test 1 first; negatives stop there (5), positives add test 2 at 3."""
    from learners.tree import EG2Classifier

    X, y = _and_table()
    tree = EG2Classifier(test_costs=AND_PRICES).fit(X, y)
    report = evaluate(tree, X, y)
    by_first = {}
    for x, case in zip(X, report.cases, strict=True):
        by_first.setdefault(x[1], set()).add((case.tests, case.test_cost))
    assert by_first[0.0] == {((1,), 5.0)}
    assert by_first[1.0] == {((1, 2), 8.0)}
    assert report.mean_test_cost == pytest.approx((20 * 5.0 + 20 * 8.0) / 40)
    assert report.accuracy == 1.0
    assert report.test_frequency.tolist() == [0.0, 1.0, 0.5]
    # TC = 0.5 + 5 + 3; 0/1 loss, class frequencies 30/40 and 10/40.
    assert report.standard_cost == pytest.approx(8.5 + 0.25 * 1.0)
    assert report.normalized_cost == pytest.approx(100 * 6.5 / 8.75)


def test_real_tree_turney_mode_charges_the_subtree():
    """Turney's rule: ordering delayed test 1 also orders test 2 below it, so every case pays 8."""
    from learners.tree import EG2Classifier

    X, y = _and_table()
    tree = EG2Classifier(test_costs=AND_PRICES).fit(X, y)
    report = evaluate(tree, X, y, delayed="turney")
    assert {case.tests for case in report.cases} == {(1, 2)}
    assert report.mean_test_cost == pytest.approx(8.0)


def test_cross_validate_real_tree_with_shared_folds():
    """Two learners given the same folds are evaluated on the same held-out cases."""
    from learners.tree import C45Classifier, EG2Classifier

    X, y = _and_table(repeats=5)
    folds = make_folds(y, n_splits=5, random_state=1)
    eg2 = cross_validate(EG2Classifier(test_costs=AND_PRICES), X, y, folds=folds)
    c45 = cross_validate(C45Classifier(test_costs=AND_PRICES), X, y, folds=folds)
    assert eg2.overall.n_cases == c45.overall.n_cases == 20
    for a, b in zip(eg2.folds, c45.folds, strict=True):
        assert [c.true_label for c in a.cases] == [c.true_label for c in b.cases]


def test_cross_validate_keeps_each_folds_fitted_model_only_when_asked():
    """keep_models=True: one fitted model per fold, the one that fold's report evaluated (it
    costs the same on that fold's cases); by default none are kept and to_dict has none."""
    from learners.tree import EG2Classifier

    X, y = _and_table(repeats=5)
    folds = make_folds(y, n_splits=5, random_state=1)
    kept = cross_validate(EG2Classifier(test_costs=AND_PRICES), X, y, folds=folds, keep_models=True)
    assert len(kept.models) == len(folds)
    for model, fold, (_, test) in zip(kept.models, kept.folds, folds, strict=True):
        again = evaluate(model, X[test], y[test])
        assert again.mean_total_cost == pytest.approx(fold.mean_total_cost)
        assert [c.tests for c in again.cases] == [c.tests for c in fold.cases]
    plain = cross_validate(EG2Classifier(test_costs=AND_PRICES), X, y, folds=folds)
    assert plain.models == () and "models" not in plain.to_dict()
