"""The two simple strategies (order nothing, order every test) on hand-checkable data."""

from __future__ import annotations

import numpy as np
import pytest

from learners import Classify, CostModel, Extract, Reject
from learners.baselines import OrderEverything, OrderNothing, class_rates
from learners.evaluation import evaluate
from learners.tree import C45Classifier

# Tests 0 and 1 share a blood draw (group A); test 2 is a $1 question.
PRICES = CostModel([10.0, 6.0, 1.0], discounted=[4.0, 2.0, 1.0], groups=["A", "A", None])
M = np.array([[0.0, 50.0], [200.0, 0.0]])
# 6 training patients: 4 healthy (0), 2 ill (1); x0 gives the class away.
X = np.array([[0, 5, 1], [0, 6, 0], [0, 7, 1], [0, 4, 0], [1, 5, 1], [1, 6, 0]], dtype=float)
y = np.array([0, 0, 0, 0, 1, 1])


def test_order_nothing_concludes_the_class_of_least_expected_cost():
    """Prior 4:2, M: concluding 0 costs 2/6*200 = 66.7, concluding 1 costs 4/6*50 = 33.3: 1."""
    policy = OrderNothing(test_costs=PRICES, cost_matrix=M).fit(X, y)
    action = policy.next_action({})
    assert isinstance(action, Classify) and action.label == 1
    assert action.expected_cost == pytest.approx(4 / 6 * 50)
    assert action.evidence.support == 6 and action.evidence.proba == pytest.approx((4 / 6, 2 / 6))
    assert policy.next_action({0: 1.0}, {1}) == action  # results do not change its mind


def test_order_nothing_refers_when_referral_is_cheaper():
    """With a referral at 20 (below 33.3) every patient is referred."""
    policy = OrderNothing(test_costs=PRICES, cost_matrix=M, reject_cost=20.0).fit(X, y)
    assert isinstance(policy.next_action({}), Reject)


def test_order_nothing_evaluates_to_the_hand_computed_costs():
    """evaluate: no test paid; every healthy patient is a $50 false alarm: 4*50/6 per patient."""
    policy = OrderNothing(test_costs=PRICES, cost_matrix=M).fit(X, y)
    report = evaluate(policy, X, y)
    assert report.mean_test_cost == 0.0
    assert report.mean_total_cost == pytest.approx(4 * 50 / 6)
    assert report.accuracy == pytest.approx(2 / 6)
    assert report.confusion.tolist() == [[0, 4, 0], [0, 2, 0]]


def test_order_nothing_rejects_a_bad_table():
    """Labels that do not match the rows are refused."""
    with pytest.raises(ValueError):
        OrderNothing(test_costs=PRICES, cost_matrix=M).fit(X, y[:3])


def test_order_everything_buys_every_test_at_its_marginal_price():
    """Tests in index order: 10 (A), 2 (A discounted), then 1: $13 per patient, then concludes."""
    tree = C45Classifier(test_costs=PRICES, cost_matrix=M, random_state=0).fit(X, y)
    policy = OrderEverything(tree)
    first = policy.next_action({})
    assert isinstance(first, Extract) and (first.test, first.cost) == (0, 10.0)
    assert first.evidence is not None
    second = policy.next_action({0: 0.0})
    assert (second.test, second.cost) == (1, 2.0)
    report = evaluate(policy, X, y)
    assert report.mean_test_cost == pytest.approx(13.0)
    assert report.accuracy == 1.0  # x0 gives the class away and the tree splits on it
    assert report.mean_total_cost == pytest.approx(13.0)
    assert all(case.tests == (0, 1, 2) for case in report.cases)


def test_order_everything_skips_unavailable_tests_and_then_concludes():
    """An unavailable test is never ordered; with all others done the concluder decides."""
    tree = C45Classifier(test_costs=PRICES, cost_matrix=M, random_state=0).fit(X, y)
    policy = OrderEverything(tree)
    assert policy.next_action({0: 1.0}, {1}).test == 2
    final = policy.next_action({0: 1.0, 2: 0.0}, {1})
    assert isinstance(final, Classify) and final.label == 1


def test_class_rates_by_hand():
    """Rows actual, columns concluded then referred: sensitivity and specificity per class."""
    confusion = [[8, 1, 1], [2, 6, 2]]
    rates = class_rates(confusion)
    # class 0: 8 of 10 found; of the 10 others, 2 were called 0 -> 8 of 10 not called 0.
    # class 1: 6 of 10 found; of the 10 others, 1 was called 1 -> 9 of 10.
    assert rates["sensitivity"] == pytest.approx([0.8, 0.6])
    assert rates["specificity"] == pytest.approx([0.8, 0.9])


def test_class_rates_without_a_class_in_the_data():
    """A class with no patients has no sensitivity (None), not a division by zero."""
    rates = class_rates([[5, 0], [0, 0]])
    assert rates["sensitivity"] == [1.0, None]
    assert rates["specificity"] == [None, 1.0]
    with pytest.raises(ValueError):
        class_rates([[1, 2, 3, 4]])
