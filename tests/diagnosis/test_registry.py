"""The learner registry: every learner the product offers, and what each estimator receives."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from diagnosis import learner_registry
from learners import CostModel

EXPECTED = {
    "c45": "C45Classifier",
    "eg2": "EG2Classifier",
    "dtmc": "DTMCClassifier",
    "idx": "IDXClassifier",
    "csid3": "CSID3Classifier",
    "act": "ACTClassifier",
    "lsid3": "LSID3Classifier",
    "icet": "ICETClassifier",
    "conditioned_loss": "ConditionedLossClassifier",
}


def _build(key, params=None, **overrides):
    kwargs = {
        "cost_model": CostModel([1.0, 2.0, 3.0]),
        "cost_matrix": [[0, 10], [50, 0]],
        "reject_cost": 5.0,
        "categorical_features": [2],
        "random_state": 0,
    }
    kwargs.update(overrides)
    return learner_registry.build_estimator(key, params or {}, **kwargs)


def test_registry_offers_every_learner():
    """Each learner of the product has an entry building the expected estimator class."""
    assert set(EXPECTED) <= set(learner_registry.LEARNERS)
    for key, name in EXPECTED.items():
        assert type(_build(key)).__name__ == name


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_each_learner_gets_only_the_arguments_it_takes(key):
    """Prices, matrix, referral cost, nominal columns and seed reach the learners that take them."""
    estimator = _build(key)
    params = estimator.get_params(deep=False)
    assert isinstance(params["test_costs"], CostModel)
    assert params["categorical_features"] == [2] and params["random_state"] == 0
    if "cost_matrix" in params:
        assert params["cost_matrix"] == [[0, 10], [50, 0]]
    if "reject_cost" in params:
        assert params["reject_cost"] == 5.0


def test_conditioned_loss_takes_reward_penalty_and_no_matrix():
    """The conditioned-loss model gets REWARD, PENALTY and its subset bound, never cost_matrix."""
    estimator = _build("conditioned_loss", {"reward": "50", "penalty": 2000, "max_subsets": 16})
    params = estimator.get_params(deep=False)
    assert "cost_matrix" not in params
    assert (params["reward"], params["penalty"], params["max_subsets"]) == (50.0, 2000.0, 16)


def test_act_params_and_time_budget_stay_out_of_the_estimator():
    """ACT receives r, w, cf and the stop rule; the time budget is a setting of the run."""
    estimator = _build(
        "act", {"r": "3", "w": "0.5", "cf": "", "stop_rule": "prune", "time_budget_seconds": "20"}
    )
    params = estimator.get_params(deep=False)
    assert (params["r"], params["w"], params["cf"], params["stop_rule"]) == (3, 0.5, None, "prune")
    assert "time_budget_seconds" not in params
    spec = learner_registry.LEARNERS["act"]
    assert spec.anytime and spec.anytime_param == "r"
    cleaned = learner_registry.clean_params("act", {"time_budget_seconds": "20"})
    assert cleaned["time_budget_seconds"] == 20.0


def test_bad_learner_params_are_refused_with_their_label():
    """Out-of-range or unknown parameters raise ValidationError naming the parameter."""
    with pytest.raises(ValidationError, match="Sample size r must be at most 64"):
        learner_registry.clean_params("act", {"r": 100})
    with pytest.raises(ValidationError, match="not one of leaf_cost, prune"):
        learner_registry.clean_params("act", {"stop_rule": "sometimes"})
    with pytest.raises(ValidationError, match="has no parameter 'cost_matrix'"):
        learner_registry.clean_params("conditioned_loss", {"cost_matrix": [[0]]})
    with pytest.raises(ValidationError, match="Generations must be at least 1"):
        learner_registry.clean_params("icet", {"generations": 0})


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_every_learner_fits_and_answers_next_action(key):
    """Each registry learner, with small settings, fits a tiny priced problem and gives advice."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (60, 3))
    X[:, 2] = rng.integers(0, 2, 60)
    y = (X[:, 0] > 0.5).astype(int)
    small = {"act": {"r": 1}, "lsid3": {"r": 1}, "icet": {"generations": 2, "population": 4}}
    estimator = _build(key, small.get(key, {}), reject_cost=None)
    estimator.fit(X, y)
    assert estimator.next_action({}).kind in {"extract", "classify", "reject"}
