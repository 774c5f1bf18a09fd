"""One-vs-rest indicator tests: priced exactly as their nominal test, values one per category."""

from dataclasses import replace

import numpy as np
import pytest

from benchmarks.nominal_indicators import with_category_indicators
from datasets.dataset import UCIDataset
from learners.costs import CostModel
from learners.tree import OptimalTreeClassifier


def _small() -> UCIDataset:
    """Three tests: a 3-category nominal test in group G, a group-mate, a binary nominal."""
    X = np.array(
        [[1, 0.5, 0], [2, 1.5, 1], [3, 2.5, 0], [np.nan, 3.5, 1], [2, 0.1, 1], [3, 0.2, 0]],
        dtype=float,
    )
    costs = CostModel([10.0, 8.0, 2.0], discounted=[4.0, 3.0, 2.0], groups=["G", "G", None])
    return UCIDataset(
        name="small",
        feature_names=["kind", "level", "flag"],
        categorical=[0, 2],
        X=X,
        y=np.array([0, 1, 0, 1, 1, 0]),
        class_labels=["a", "b"],
        costs=costs,
    )


def test_one_indicator_per_category_of_tests_with_three_or_more_categories():
    """kind (3 categories) gains 3 indicators, missing where kind is missing; flag gains none."""
    data = with_category_indicators(_small())
    assert data.feature_names[3:] == ["kind = 1", "kind = 2", "kind = 3"]
    assert data.categorical == [0, 2, 3, 4, 5]
    np.testing.assert_array_equal(data.X[:, :3], _small().X)
    np.testing.assert_array_equal(data.X[:, 4], [0, 1, 0, np.nan, 1, 0])


def test_an_indicator_costs_what_its_nominal_test_costs_and_the_others_then_nothing():
    """Full price alone, the group's discount after a group-mate, 0 once a sibling is known;
    the standard cost (the benchmark's normalizer) is unchanged."""
    before, after = _small().costs, with_category_indicators(_small()).costs
    assert after.marginal_cost(3) == before.marginal_cost(0) == 10.0
    assert after.marginal_cost(4, {1}) == before.marginal_cost(0, {1}) == 4.0
    assert after.marginal_cost(5, {3}) == after.marginal_cost(0, {4}) == 0.0
    assert after.marginal_cost(1, {5}) == 3.0  # kind is done, so level gets the discount
    matrix = 100 * (1 - np.eye(2))
    assert after.standard_cost([3, 3], matrix) == before.standard_cost([3, 3], matrix)


def test_only_mode_hides_the_multiway_split_and_a_learner_then_uses_an_indicator():
    """keep_multiway=False blanks kind's column; a tree splitting on kind must use kind = v."""
    data = with_category_indicators(_small(), keep_multiway=False)
    assert np.isnan(data.X[:, 0]).all()
    X = np.repeat(data.X, 20, axis=0)
    y = (np.repeat(_small().X[:, 0], 20) == 2).astype(int)
    y[np.isnan(np.repeat(_small().X[:, 0], 20))] = 0
    model = OptimalTreeClassifier(
        test_costs=data.costs,
        cost_matrix=100 * (1 - np.eye(2)),
        categorical_features=data.categorical,
        max_depth=1,
    ).fit(X, y)
    assert model.tree_.feature[0] == 4


def test_a_dataset_without_prices_is_refused():
    """No prices: nothing to derive the indicators' prices from."""
    data = replace(_small(), costs=None)
    with pytest.raises(ValueError, match="no test prices"):
        with_category_indicators(data)
