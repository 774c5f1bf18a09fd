"""The minimum-expected-cost decision with reject (learners.policy.decide)."""

import numpy as np
import pytest

from learners.policy import Classify, Reject, decide, expected_costs


def test_skewed_matrix_picks_minority_class():
    """C4.5c: with p(sick)=0.2 and a missed sick case costing 10, predicting sick is cheaper."""
    matrix = [[0, 1], [10, 0]]  # rows: actual healthy, sick
    action = decide([0.8, 0.2], classes=["healthy", "sick"], cost_matrix=matrix)
    assert isinstance(action, Classify)
    assert action.label == "sick"
    assert action.expected_cost == pytest.approx(0.8)


def test_zero_one_loss_picks_majority():
    """Under 0/1 loss the decision is the most probable class."""
    action = decide([0.8, 0.2], classes=["healthy", "sick"], cost_matrix=1 - np.eye(2))
    assert action.label == "healthy"


def test_reject_when_best_expected_cost_exceeds_reject_cost():
    """Best class costs 0.5 in expectation; a reject cost of 0.3 refers instead."""
    action = decide([0.5, 0.5], classes=[0, 1], cost_matrix=1 - np.eye(2), reject_cost=0.3)
    assert isinstance(action, Reject)
    assert action.expected_cost == pytest.approx(0.3)


def test_no_reject_when_classifying_is_cheaper():
    """A confident belief classifies even when a reject cost is set."""
    action = decide([0.95, 0.05], classes=[0, 1], cost_matrix=1 - np.eye(2), reject_cost=0.3)
    assert isinstance(action, Classify)


def test_per_class_reject_cost():
    """Reject cost per true class: expected reject cost is sum_i p_i R_i."""
    proba = [0.6, 0.4]
    # Best class costs 0.4; referring costs 0.6*0.1 + 0.4*0.5 = 0.26 -> reject.
    action = decide(proba, classes=[0, 1], cost_matrix=1 - np.eye(2), reject_cost=[0.1, 0.5])
    assert isinstance(action, Reject)
    assert action.expected_cost == pytest.approx(0.26)
    # A reject cost of 0.9 for both classes is above 0.4: classify.
    action = decide(proba, classes=[0, 1], cost_matrix=1 - np.eye(2), reject_cost=[0.9, 0.9])
    assert isinstance(action, Classify)


def test_expected_costs_orientation():
    """EC_j = sum_i p_i M[actual i, predicted j]."""
    np.testing.assert_allclose(expected_costs([0.25, 0.75], [[0, 2], [4, 0]]), [3.0, 0.5])


def test_evidence_carries_how_many_trees_wait_as_numbers():
    """Ensemble evidence: waiting and members pass through decide into to_dict as floats."""
    action = decide([0.25, 0.75], classes=[0, 1], cost_matrix=1 - np.eye(2), waiting=0, members=7)
    document = action.evidence.to_dict()
    assert document["waiting"] == 0.0 and document["members"] == 7.0
    assert isinstance(document["waiting"], float) and isinstance(document["members"], float)
    single = decide([0.25, 0.75], classes=[0, 1], cost_matrix=1 - np.eye(2))
    assert single.evidence.to_dict()["waiting"] is None
    assert single.evidence.to_dict()["members"] is None
