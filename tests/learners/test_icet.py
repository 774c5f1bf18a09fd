"""ICET: genetic search over biased test costs, w and CF for EG2 (Turney 1995)."""

import numpy as np
import pytest

from learners import evaluate
from learners.act import ICETClassifier
from learners.costs import CostModel
from learners.synthetic import make_parity
from learners.tree import EG2Classifier


def _parity():
    data = make_parity(1200, n_relevant=4, n_irrelevant=5, random_state=5)
    return data, data.X[:600], data.y[:600], data.X[600:], data.y[600:]


def test_search_never_worsens_and_keeps_true_prices():
    """Best fitness is non-increasing over generations; the policy charges the TRUE costs."""
    data, X, y, _, _ = _parity()
    model = ICETClassifier(test_costs=data.test_costs, cost_matrix=[[0, 200], [200, 0]],
                           population=12, generations=4, random_state=0).fit(X, y)
    history = model.fitness_history_
    assert len(history) == 5
    assert all(b <= a for a, b in zip(history, history[1:]))
    np.testing.assert_array_equal(model.cost_model_.costs, data.test_costs)
    action = model.next_action({})
    if action.kind == "extract":
        assert action.cost == data.test_costs[action.test]


def test_final_tree_is_eg2_with_the_best_biases():
    """The fitted tree equals EG2 grown on all data with biased_costs_, w_ and cf_."""
    data, X, y, _, _ = _parity()
    costs = CostModel(data.test_costs)
    model = ICETClassifier(test_costs=costs, cost_matrix=[[0, 50], [50, 0]],
                           population=8, generations=2, random_state=1).fit(X, y)
    reference = EG2Classifier(test_costs=model.biased_costs_, cost_matrix=[[0, 50], [50, 0]],
                              w=model.w_, cf=model.cf_).fit(X, y)
    assert model.tree_.to_dict() == reference.tree_.to_dict()


def test_more_generations_do_not_cost_more_on_parity():
    """On XOR with cheap decoys ICET's held-out cost is no worse than plain EG2's."""
    data, X, y, X_test, y_test = _parity()
    kwargs = dict(test_costs=data.test_costs, cost_matrix=[[0, 200], [200, 0]])
    icet = ICETClassifier(generations=6, random_state=0, **kwargs).fit(X, y)
    eg2 = EG2Classifier(**kwargs).fit(X, y)
    assert evaluate(icet, X_test, y_test).mean_total_cost <= evaluate(eg2, X_test, y_test).mean_total_cost


def test_reproducible_and_json_round_trip():
    """Same seed, same tree; JSON keeps the tree and the search result."""
    data, X, y, _, _ = _parity()
    kwargs = dict(test_costs=data.test_costs, population=6, generations=1, random_state=3)
    a = ICETClassifier(**kwargs).fit(X, y)
    b = ICETClassifier(**kwargs).fit(X, y)
    assert a.tree_.to_dict() == b.tree_.to_dict()
    loaded = ICETClassifier.from_json(a.to_json())
    assert loaded.tree_.to_dict() == a.tree_.to_dict()
    np.testing.assert_allclose(loaded.biased_costs_, a.biased_costs_)
    assert loaded.fitness_history_ == a.fitness_history_


def test_bad_population_is_rejected():
    """A population below 2 raises ValueError naming the parameter."""
    data, X, y, _, _ = _parity()
    with pytest.raises(ValueError, match="population"):
        ICETClassifier(population=1).fit(X, y)
