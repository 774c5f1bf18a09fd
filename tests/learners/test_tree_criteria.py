"""Cost-aware split criteria: EG2, IDX and CS-ID3 choices (ALGORITHMS.md §2)."""

import numpy as np
import pytest

from learners.costs import CostModel
from learners.tree import C45Classifier, CSID3Classifier, EG2Classifier, IDXClassifier
from learners.tree._criteria import CSID3, EG2, IDX, Candidate

PERFECT_GAIN = 1.0
PARTIAL_GAIN = 1.0 - (-(0.75 * np.log2(0.75) + 0.25 * np.log2(0.25)))  # 0.189 bit


def _root_feature(model):
    return int(model.tree_.feature[0])


def _fit(cls, X, y, costs, **kwargs):
    return cls(test_costs=costs, pruning="none", min_samples_leaf=1, **kwargs).fit(X, y)


def test_icf_formulas():
    """EG2, IDX and CS-ID3 score a candidate by their published formulas."""
    cand = Candidate(feature=0, gain=0.5, split_info=1.0, cost=3.0)
    assert EG2(2.0).key(cand)[1] == pytest.approx((2**0.5 - 1) / 4**2)
    assert IDX().key(cand)[1] == pytest.approx(0.5 / 3)
    assert CSID3().key(cand)[1] == pytest.approx(0.25 / 3)


@pytest.mark.parametrize(
    "cls, expected",
    [
        # EG2: (2^1-1)/21 = 0.048 < (2^0.189-1)/2 = 0.070 -> the cheap, weaker test wins.
        (EG2Classifier, 1),
        # IDX: 1/20 = 0.05 < 0.189/1 -> cheap test wins.
        (IDXClassifier, 1),
        # CS-ID3: 1/20 = 0.05 > 0.189^2/1 = 0.036 -> the informative, expensive test wins.
        (CSID3Classifier, 0),
        # C4.5 ignores costs.
        (C45Classifier, 0),
    ],
)
def test_cheap_attribute_wins_or_loses(cheap_vs_informative, cls, expected):
    """With x0 costing 20 and x1 costing 1, each criterion picks as its formula says."""
    X, y = cheap_vs_informative
    model = _fit(cls, X, y, [20.0, 1.0])
    assert _root_feature(model) == expected


def test_expensive_attribute_wins_when_cheap_enough(cheap_vs_informative):
    """At x0 = 5, EG2's (2^1-1)/6 = 0.167 beats 0.070: the perfect test is chosen."""
    X, y = cheap_vs_informative
    assert _root_feature(_fit(EG2Classifier, X, y, [5.0, 1.0])) == 0


def test_eg2_with_w_zero_ignores_cost(cheap_vs_informative):
    """w = 0 makes the denominator 1: EG2 picks the highest gain whatever it costs."""
    X, y = cheap_vs_informative
    assert _root_feature(_fit(EG2Classifier, X, y, [1000.0, 1.0], w=0.0)) == 0
    assert _root_feature(_fit(EG2Classifier, X, y, [1000.0, 1.0], w=1.0)) == 1


@pytest.mark.parametrize("cls", [IDXClassifier, CSID3Classifier])
def test_zero_cost_test_ranks_first(cheap_vs_informative, cls):
    """A free test with some gain beats a better test of positive (even tiny) cost."""
    X, y = cheap_vs_informative
    assert _root_feature(_fit(cls, X, y, [1e-6, 0.0])) == 1


def test_eg2_keeps_its_formula_at_zero_cost(cheap_vs_informative):
    """EG2 at c = 0: ICF = 2^0.189 - 1 = 0.14 loses to the perfect test's 1 / 1.000001."""
    X, y = cheap_vs_informative
    assert _root_feature(_fit(EG2Classifier, X, y, [1e-6, 0.0])) == 0
    # At c = 10 the perfect test's 1/11 = 0.09 drops below the free test's 0.14.
    assert _root_feature(_fit(EG2Classifier, X, y, [10.0, 0.0])) == 1


@pytest.mark.parametrize("cls", [EG2Classifier, IDXClassifier, CSID3Classifier])
def test_zero_cost_tests_ranked_by_gain(cheap_vs_informative, cls):
    """Among free tests the higher information gain wins (no division by zero)."""
    X, y = cheap_vs_informative
    assert _root_feature(_fit(cls, X, y, [0.0, 0.0])) == 0


def test_ties_go_to_lowest_feature_index(cheap_vs_informative):
    """Two identical columns at the same price: the lower index is chosen."""
    X, y = cheap_vs_informative
    doubled = np.column_stack([X[:, 1], X[:, 0], X[:, 0]])
    assert _root_feature(_fit(IDXClassifier, doubled, y, [5.0, 2.0, 2.0])) == 1


def _group_table():
    """x0 (price 0, group g) splits off 16 pure cases; below it the cheap_vs_informative table."""
    y8 = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    x1 = np.array([0, 0, 0, 1, 1, 1, 1, 0])
    lower = np.column_stack([np.ones(32), np.tile(x1, 4), np.tile(y8, 4)])
    X = np.vstack([np.zeros((16, 3)), lower])
    y = np.concatenate([np.zeros(16, int), np.tile(y8, 4)])
    return X, y


@pytest.mark.parametrize("cls", [EG2Classifier, IDXClassifier])
def test_group_discount_in_path_context_changes_choice(cls):
    """Below x0, x2 (full 20, 0.5 after a group-mate) wins only when x0's group discounts it."""
    X, y = _group_table()
    grouped = CostModel([0, 1, 20], discounted=[0, 1, 0.5], groups=["g", None, "g"])
    alone = CostModel([0, 1, 20])
    with_discount = _fit(cls, X, y, grouped)
    without = _fit(cls, X, y, alone)
    assert _root_feature(with_discount) == 0 and _root_feature(without) == 0
    child = int(with_discount.tree_.children(0)[1])
    assert int(with_discount.tree_.feature[child]) == 2
    child = int(without.tree_.children(0)[1])
    assert int(without.tree_.feature[child]) == 1


def _retest_table():
    """x0 in 0..3 sets the class mostly; below x0 <= 1.5, x1 has more gain (0.20) than x0 (0.14)."""
    rows = [(0, i % 2, 0) for i in range(8)]
    rows += [(1, 0, 0)] * 6 + [(1, 1, 1)] * 2
    rows += [(2, 0, 0)] * 2 + [(2, 1, 1)] * 6
    rows += [(3, i % 2, 1) for i in range(8)]
    table = np.array(rows, dtype=float)
    return table[:, :2], table[:, 2].astype(int)


@pytest.mark.parametrize(
    "cls, expected",
    [
        # x0 is on the path, so re-testing it is free: EG2's 2^0.138 - 1 = 0.10
        # beats x1's (2^0.20 - 1) / 2 = 0.074.
        (EG2Classifier, 0),
        # IDX ranks x0's second threshold at half its price (learners.tree._formulas):
        # 0.14 / 0.5 beats x1's 0.20 / 1.
        (IDXClassifier, 0),
        # Cost-blind C4.5 takes the higher gain ratio of x1.
        (C45Classifier, 1),
    ],
)
def test_test_already_on_path_is_free(cls, expected):
    """Below a split on x0, x0 costs nothing again, which changes the cost-aware choice."""
    X, y = _retest_table()
    model = _fit(cls, X, y, [1.0, 1.0])
    assert _root_feature(model) == 0
    left = int(model.tree_.children(0)[0])
    assert int(model.tree_.feature[left]) == expected
