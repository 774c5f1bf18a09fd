"""The learner registry: every learner the product offers, and what each estimator receives."""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from sklearn.base import clone
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
    generate_invalid_param_val,
    generate_valid_param,
)

from diagnosis.shared import learner_registry
from learners import CostModel

EXPECTED = {
    "c45": "C45Classifier",
    "eg2": "EG2Classifier",
    "dtmc": "DTMCClassifier",
    "optimal": "OptimalTreeClassifier",
    "idx": "IDXClassifier",
    "csid3": "CSID3Classifier",
    "act": "ACTClassifier",
    "lsid3": "LSID3Classifier",
    "icet": "ICETClassifier",
    "conditioned_loss": "ConditionedLossClassifier",
    "boosting": "BoostingClassifier",
    "budget_rf": "BudgetRFClassifier",
    "cost_selected": "CostSelectedClassifier",
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


def test_act_one_vs_rest_box_defaults_on_and_an_unchecked_box_turns_it_off():
    """Left out (an API call): the estimator's default, True; an unchecked box (False): off."""
    assert learner_registry.clean_params("act", {})["one_vs_rest"] is True
    assert learner_registry.clean_params("act", {"one_vs_rest": False})["one_vs_rest"] is False
    assert _build("act", {"one_vs_rest": "off"}).get_params()["one_vs_rest"] is False


def test_bad_learner_params_are_refused_with_their_label():
    """Out-of-range or unknown parameters raise ValidationError naming the parameter."""
    with pytest.raises(ValidationError, match="Sample size r must be at least 0"):
        learner_registry.clean_params("act", {"r": -1})
    with pytest.raises(ValidationError, match="not one of leaf_cost, prune"):
        learner_registry.clean_params("act", {"stop_rule": "sometimes"})
    with pytest.raises(ValidationError, match="has no parameter 'cost_matrix'"):
        learner_registry.clean_params("conditioned_loss", {"cost_matrix": [[0]]})
    with pytest.raises(ValidationError, match="Generations must be at least 0"):
        learner_registry.clean_params("icet", {"generations": -1})
    with pytest.raises(ValidationError, match="Pruning confidence must be below 1"):
        learner_registry.clean_params("eg2", {"cf": 1})
    with pytest.raises(ValidationError, match="Trials \\(trees\\) must be at least 1"):
        learner_registry.clean_params("boosting", {"n_trials": 0})
    with pytest.raises(ValidationError, match="Pruning: 'pessimistic' is not one of"):
        learner_registry.clean_params("c45", {"pruning": "pessimistic"})


def test_params_stored_with_the_old_prune_flag_still_clean():
    """A training stored before pruning= replaced prune (true/false) retrains as error/none."""
    assert learner_registry.clean_params("c45", {"prune": True})["pruning"] == "error"
    assert learner_registry.clean_params("eg2", {"prune": False})["pruning"] == "none"
    with pytest.raises(ValidationError, match="params.prune: expected true or false"):
        learner_registry.clean_params("c45", {"prune": "maybe"})


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_every_learner_fits_and_answers_next_action(key):
    """Each registry learner, with small settings, fits a tiny priced problem and gives advice."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (60, 3))
    X[:, 2] = rng.integers(0, 2, 60)
    y = (X[:, 0] > 0.5).astype(int)
    small = {
        "act": {"r": 1},
        "lsid3": {"r": 1},
        "icet": {"generations": 2, "population": 4},
        "boosting": {"n_trials": 3},
        "budget_rf": {"max_trees": 3},
        "cost_selected": {"time_budget": 2.0},
    }
    estimator = _build(key, small.get(key, {}), reject_cost=None)
    estimator.fit(X, y)
    assert estimator.next_action({}).kind in {"extract", "classify", "reject"}


def _form_params(key):
    """(form field, the estimator's constraint list) for each estimator parameter of the form."""
    spec = learner_registry.LEARNERS[key]
    rules = spec.estimator_class()._parameter_constraints
    return [(p, rules[p.name]) for p in spec.params if p.estimator_param]


def _estimator_accepts(key, name, value):
    estimator = clone(_build(key)).set_params(**{name: value})
    try:
        estimator._validate_params()
    except InvalidParameterError:
        return False
    return True


def _form_accepts(param, value):
    try:
        param.clean(str(value))
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_form_fields_take_type_bounds_and_choices_from_the_estimator(key):
    """Each form field's type, bounds and choices are those of the estimator's constraint."""
    for param, rules in _form_params(key):
        intervals = [r for r in rules if isinstance(r, Interval)]
        options = [r for r in rules if isinstance(r, StrOptions)]
        if intervals:
            (interval,) = intervals
            unbounded = (None, math.inf, -math.inf)
            assert param.type == ("int" if interval.type is Integral else "float"), param.name
            assert param.min == (None if interval.left in unbounded else interval.left)
            assert param.max == (None if interval.right in unbounded else interval.right)
            assert param.closed == interval.closed, param.name
        elif options:
            (allowed,) = options
            assert param.type == "choice"
            assert {value for value, _ in param.choices} == allowed.options
        else:
            assert "boolean" in rules and param.type == "bool", param.name


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_form_refuses_what_the_estimator_refuses(key):
    """At each bound, just past it and off its choices, form and estimator agree on the value."""
    for param, rules in _form_params(key):
        for rule in rules:
            if isinstance(rule, Interval):
                edges = [b for b in (rule.left, rule.right) if b is not None]
                step = 1 if rule.type is Integral else 1e-6
                values = [*edges, *(b - step for b in edges), *(b + step for b in edges)]
            elif isinstance(rule, StrOptions):
                if param.type in ("int", "float"):
                    # A word the estimator also takes beside a number (BudgetRF's
                    # budget="auto"): the form holds the number only and refuses the word.
                    assert not any(_form_accepts(param, word) for word in rule.options), param
                    continue
                values = []
            else:
                continue
            values += [generate_invalid_param_val(rule), generate_valid_param(rule)]
            for value in values:
                agreed = _form_accepts(param, value) == _estimator_accepts(key, param.name, value)
                assert agreed, f"{key}.{param.name} = {value!r}"


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_form_defaults_are_the_estimators_own(key):
    """Each form default is the estimator's __init__ default, the anytime r excepted."""
    spec = learner_registry.LEARNERS[key]
    own = spec.estimator_class()().get_params(deep=False)
    for param in spec.params:
        if param.estimator_param and param.name != spec.anytime_param:
            assert param.default == own[param.name], param.name


def test_only_plain_boosting_takes_its_matrix_at_prediction():
    """Plain Boosting (cost_sensitive off, or left to its default) serves any matrix; Cost-
    Boosting and every learner without set_cost_matrix were fitted for one matrix."""
    assert learner_registry.takes_matrix_at_prediction("boosting", {})
    assert learner_registry.takes_matrix_at_prediction("boosting", {"cost_sensitive": False})
    assert not learner_registry.takes_matrix_at_prediction("boosting", {"cost_sensitive": True})
    for key in learner_registry.LEARNERS:
        if key != "boosting":
            assert not learner_registry.takes_matrix_at_prediction(key, {}), key
    with pytest.raises(ValidationError, match="Unknown learner"):
        learner_registry.takes_matrix_at_prediction("nope", {})
