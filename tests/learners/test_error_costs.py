"""Every learner's conclusions follow the error costs, and never cost more than ordering nothing.

Each learner is fitted at uniform error costs of 10, 100, 1000 and 10000 on two small tables
(two and three classes, four priced tests), and evaluated on held-out patients:

* with a referral at a fixed $50, what it does (the tests it orders and its conclusion, per
  patient) changes with the error cost: with calibrated (Laplace) leaves ``decide`` refers
  a patient in doubt once errors cost enough (a uniform matrix alone never changes which
  class is cheapest), and a cost-sensitive learner buys more tests when errors cost more;
* with no referral, its held-out cost per patient is not above ordering nothing's by more
  than twice the standard error of the paired per-patient difference.

A learner that cannot meet one of these by its paper's design is marked here, with the
reason, as an expected failure (strict where it fails on both tables, so the mark goes
when the learner changes); its docstring says so too.
"""

from __future__ import annotations

import importlib
import math
from functools import cache

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.model_selection import train_test_split

from learners import CostModel, evaluate
from learners.baselines import OrderNothing
from learners.serialization import LEARNERS

# about 200 small fits (12 learners, 4 error costs, 2 tables, with and without referral)
pytestmark = pytest.mark.slow

ERROR_COSTS = (10.0, 100.0, 1000.0, 10000.0)
REFERRAL = 50.0
#: Small settings for the learners that have them (applied only where the learner takes one).
SMALL = {
    "r": 1,
    "population": 4,
    "generations": 2,
    "validation_folds": 2,
    "window_widths": (0.1, 0.5),
    "n_trials": 5,
    "candidates": ("eg2", "dtmc", "optimal-depth2"),
    "n_repeats": 1,
}
NAMES = sorted(LEARNERS)

_CHEAP_ERRORS = ": above ordering nothing when an error costs less than the tests it buys"
#: (learner, check) -> (reason, strict): what the learner's paper's design cannot meet.
#: Strict where it fails on both tables; the gain-per-price trees fail where errors are cheap
#: next to the tests (breast cancer at mc 10), not on every table.
BY_DESIGN = {
    ("C45Classifier", "cheap"): (
        "C4.5 grows its tree from the class counts alone, whatever the tests and errors cost"
        + _CHEAP_ERRORS,
        True,
    ),
    ("LSID3Classifier", "cheap"): (
        "LSID3 (paper 000) seeks the smallest tree, blind to the tests' and errors' costs"
        + _CHEAP_ERRORS,
        True,
    ),
    ("BoostingClassifier", "cheap"): (
        "plain Boosting (paper 004) grows C4.5 trees blind to the costs; only its vote "
        "weighs the errors" + _CHEAP_ERRORS,
        True,
    ),
    **{
        (name, "cheap"): (
            f"{paper} chooses tests by information gain per price, never by the error costs, "
            "and stops only by C4.5's pruning" + _CHEAP_ERRORS,
            False,
        )
        for name, paper in (
            ("EG2Classifier", "EG2 (Nunez)"),
            ("IDXClassifier", "IDX (Norton)"),
            ("CSID3Classifier", "CS-ID3 (Tan)"),
            ("ICETClassifier", "ICET evolves EG2's prices; EG2"),
        )
    },
}


def _breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    # worst radius, worst texture, worst concave points, mean smoothness
    return X[:, [20, 21, 27, 4]], y, CostModel([3.0, 1.0, 12.0, 6.0])


def _wine():
    X, y = load_wine(return_X_y=True)
    # alcohol, flavanoids, colour intensity, proline
    return X[:, [0, 6, 9, 12]], y, CostModel([2.0, 8.0, 1.0, 15.0])


TABLES = {"breast-cancer": _breast_cancer, "wine": _wine}


def _learner(name: str):
    return getattr(importlib.import_module(LEARNERS[name]), name)


@cache
def _split(table: str):
    X, y, costs = TABLES[table]()
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.4, stratify=y, random_state=0
    )
    return X_train, X_test, y_train, y_test, costs


@cache
def _outcome(name: str | None, table: str, mc: float, referral: float | None):
    """(per-patient (tests, conclusion), per-patient cost) of ``name`` on ``table``'s held-out
    patients, referring at ``referral`` (None: never); ``name`` None: ordering nothing."""
    X_train, X_test, y_train, y_test, costs = _split(table)
    k = len(np.unique(y_train))
    matrix = mc * (1.0 - np.eye(k))
    if name is None:
        model = OrderNothing(test_costs=costs, cost_matrix=matrix, reject_cost=referral)
    else:
        cls = _learner(name)
        params = set(cls().get_params())
        chosen = {key: value for key, value in SMALL.items() if key in params}
        chosen.update(test_costs=costs, reject_cost=referral, random_state=0)
        if "cost_matrix" in params:
            chosen["cost_matrix"] = matrix
        if "penalty" in params:  # the conditioned-loss model states its errors as PENALTY
            chosen.update(penalty=mc, reward=0.0)
        model = cls(**chosen)
    model.fit(X_train, y_train)
    report = evaluate(model, X_test, y_test, cost_matrix=matrix, reject_cost=referral)
    actions = tuple(
        (case.tests, repr(case.decision.label if hasattr(case.decision, "label") else "refer"))
        for case in report.cases
    )
    return actions, np.array([case.total_cost for case in report.cases])


def _marked(name: str, check: str):
    design = BY_DESIGN.get((name, check))
    marks = [pytest.mark.xfail(strict=design[1], reason=design[0])] if design else []
    return pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", [_marked(n, "follows") for n in NAMES])
@pytest.mark.parametrize("table", sorted(TABLES))
def test_conclusions_change_with_the_error_cost(name, table):
    """With a referral at $50, the tests ordered or the conclusions reached differ between
    some two error costs (Laplace leaves are never certain, so dear errors make doubt refer)."""
    outcomes = {_outcome(name, table, mc, REFERRAL)[0] for mc in ERROR_COSTS}
    assert len(outcomes) > 1


@pytest.mark.parametrize("name", [_marked(n, "cheap") for n in NAMES])
@pytest.mark.parametrize("table", sorted(TABLES))
def test_held_out_cost_is_never_above_ordering_nothing(name, table):
    """With no referral, at every error cost the mean held-out cost exceeds ordering nothing's
    by at most twice the standard error of the paired per-patient difference."""
    over = []
    for mc in ERROR_COSTS:
        _, costs = _outcome(name, table, mc, None)
        _, nothing = _outcome(None, table, mc, None)
        difference = costs - nothing
        noise = 2.0 * float(np.std(difference, ddof=1)) / math.sqrt(len(difference))
        if difference.mean() > noise + 1e-9:
            over.append((mc, round(float(costs.mean()), 2), round(float(nothing.mean()), 2)))
    assert not over, f"above ordering nothing at (mc, cost, ordering nothing): {over}"
