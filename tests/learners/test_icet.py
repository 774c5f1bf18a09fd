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
    model = ICETClassifier(
        test_costs=data.test_costs,
        cost_matrix=[[0, 200], [200, 0]],
        population=12,
        generations=4,
        random_state=0,
    ).fit(X, y)
    history = model.fitness_history_
    assert len(history) == 5
    assert all(b <= a for a, b in zip(history, history[1:], strict=False))
    np.testing.assert_array_equal(model.cost_model_.costs, data.test_costs)
    action = model.next_action({})
    if action.kind == "extract":
        assert action.cost == data.test_costs[action.test]


def test_final_tree_is_eg2_with_the_best_biases():
    """The fitted tree equals EG2 grown on all data with biased_costs_, w_ and cf_."""
    data, X, y, _, _ = _parity()
    costs = CostModel(data.test_costs)
    model = ICETClassifier(
        test_costs=costs,
        cost_matrix=[[0, 50], [50, 0]],
        population=8,
        generations=2,
        random_state=1,
    ).fit(X, y)
    reference = EG2Classifier(
        test_costs=model.biased_costs_, cost_matrix=[[0, 50], [50, 0]], w=model.w_, cf=model.cf_
    ).fit(X, y)
    assert model.tree_.to_dict() == reference.tree_.to_dict()


def test_more_generations_do_not_cost_more_on_parity():
    """On XOR with cheap decoys ICET's held-out cost is no worse than plain EG2's."""
    data, X, y, X_test, y_test = _parity()
    kwargs = dict(test_costs=data.test_costs, cost_matrix=[[0, 200], [200, 0]])
    icet = ICETClassifier(generations=6, random_state=0, **kwargs).fit(X, y)
    eg2 = EG2Classifier(**kwargs).fit(X, y)
    assert (
        evaluate(icet, X_test, y_test).mean_total_cost
        <= evaluate(eg2, X_test, y_test).mean_total_cost
    )


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


# ------------------------------------------------ the fitness tree is the shipped tree
def _clinic(seed):
    """Numeric and nominal tests, missing results, a free test, a discount group, a derived test."""
    rng = np.random.default_rng(seed)
    n = 260
    X = np.empty((n, 6))
    X[:, 0] = rng.integers(20, 80, n)  # age: free
    X[:, 1] = rng.normal(size=n).round(1)  # two blood tests sharing a draw
    X[:, 2] = rng.normal(size=n).round(1)
    X[:, 3] = rng.integers(0, 3, n)  # nominal, three categories
    X[:, 4] = rng.normal(size=n).round(2)
    X[:, 5] = X[:, 1] - X[:, 2]  # derived from 1 and 2
    score = X[:, 1] + (X[:, 3] == 2) + 0.02 * (X[:, 0] - 50) + rng.normal(scale=0.7, size=n)
    y = (score > 0.4).astype(int)
    for f in (1, 2, 3, 4):
        X[rng.random(n) < 0.1, f] = np.nan
    costs = CostModel(
        [0.0, 10.0, 8.0, 3.0, 5.0, 0.0],
        discounted=[0.0, 2.0, 1.5, 3.0, 5.0, 0.0],
        groups=[None, "blood", "blood", None, None, None],
        derived={5: (1, 2)},
    )
    return X, y, costs


def _search_and_eg2(seed, genome_seed, reject_cost):
    from learners.act.icet import _biased_model, _Search

    X, y, costs = _clinic(seed)
    matrix = np.array([[0.0, 60.0], [40.0, 0.0]])
    model = ICETClassifier(
        test_costs=costs,
        cost_matrix=matrix,
        reject_cost=reject_cost,
        categorical_features=[3],
        population=2,
        generations=0,
        random_state=0,
    ).fit(X, y)
    search = _Search(model, X, y.astype(np.int64), np.random.default_rng(seed))
    # every category of the nominal test must reach the train half, which fits EG2 alone
    assert set(X[search.train, 3][~np.isnan(X[search.train, 3])]) == {0.0, 1.0, 2.0}
    rng = np.random.default_rng(genome_seed)
    genome = np.concatenate(
        [
            np.log(np.maximum(costs.costs, 1e-3)) + rng.normal(size=6),
            [rng.uniform(0.0, 1.0), rng.uniform(0.05, 0.45)],
        ]
    )
    biased, w, cf = search.decode(genome)
    eg2 = EG2Classifier(
        test_costs=_biased_model(costs, biased),
        cost_matrix=matrix,
        reject_cost=reject_cost,
        categorical_features=[3],
        w=w,
        cf=cf,
    )
    eg2.fit(X[search.train], y[search.train])
    return search, genome, eg2, X, y, costs


@pytest.mark.parametrize("genome_seed", range(6))
@pytest.mark.parametrize("reject_cost", [None, 14.0])
def test_fitness_tree_is_the_eg2_tree_node_by_node(genome_seed, reject_cost):
    """For one genome, the engine grows EG2Classifier's tree on the train half, node by node."""
    search, genome, eg2, _, _, _ = _search_and_eg2(3, genome_seed, reject_cost)
    engine_tree = search.tree(genome)
    assert eg2.tree_.n_nodes > 3
    assert engine_tree.to_dict() == eg2.tree_.to_dict()


@pytest.mark.parametrize("genome_seed", range(6))
@pytest.mark.parametrize("reject_cost", [None, 14.0])
def test_fitness_is_what_evaluate_charges_the_eg2_tree(genome_seed, reject_cost):
    """The fitness is evaluate's mean total cost of that EG2 tree on the test half, true prices."""
    search, genome, eg2, X, y, costs = _search_and_eg2(3, genome_seed, reject_cost)
    report = evaluate(eg2, X[search.test], y[search.test], test_costs=costs)
    assert search.fitness(genome) == pytest.approx(report.mean_total_cost, rel=1e-12, abs=1e-12)


def test_the_clinic_cases_exercise_what_the_fitness_must_charge():
    """The data behind the two tests above meet missing results, referrals and the derived test."""
    search, genome, eg2, X, y, costs = _search_and_eg2(3, 0, 14.0)
    report = evaluate(eg2, X[search.test], y[search.test], test_costs=costs)
    kinds = {case.decision.kind for case in report.cases}
    assert kinds == {"classify", "reject"}
    met = [t for case in report.cases for t in case.tests]
    assert np.isnan(X[search.test][:, [1, 2, 3, 4]]).any()
    assert 3 in met and (1 in met or 2 in met or 5 in met)
