"""The tree diagram draws the model's own decisions: each node agrees with next_action there."""

from __future__ import annotations

import math

import pytest
from thyroid_like import CLASSES, THYROID_TESTS, thyroid_like_rows

from diagnosis.models import TrainedModel
from diagnosis.selectors import tree_layout
from diagnosis.selectors.cases import estimator_for
from diagnosis.services import learner_registry, training
from diagnosis.services.datasets import create_dataset
from learners.policy import decide
from learners.tree import TreePolicyMixin

pytestmark = pytest.mark.django_db

# Missing hypothyroid is dear, a false alarm cheap: frequency and Laplace
# probabilities then disagree on many small leaves, and referral (120) beats
# every class where the leaf is mixed.
SKEWED = [[0, 60, 90], [700, 0, 250], [1500, 300, 0]]
REFER = 120

# Small settings so every learner trains in seconds; the others keep their defaults.
QUICK = {
    "act": {"r": 1},
    "lsid3": {"r": 1},
    "icet": {"generations": 2, "population": 4},
}

TREE_LEARNERS = [
    key
    for key, spec in learner_registry.LEARNERS.items()
    if issubclass(spec.estimator_class(), TreePolicyMixin)
]


@pytest.fixture
def skewed_dataset(db):
    rows, labels = thyroid_like_rows(n=240, seed=3)
    return create_dataset(
        name="Thyroid-like, skewed",
        class_labels=CLASSES,
        tests=THYROID_TESTS,
        rows=rows,
        labels=labels,
        error_matrices=[{"name": "Skewed", "matrix": SKEWED, "reject_cost": REFER}],
    )


def patient_at(tree, node: int) -> dict[int, float] | None:
    """Known values that route a patient from the root to ``node``; None if no value can.

    Numeric edge 0 takes values <= threshold, edge 1 values above it; a test
    met twice on the path narrows the interval.  Nominal edges take their
    branch value.
    """
    known: dict[int, float] = {}
    low: dict[int, float] = {}
    high: dict[int, float] = {}
    for parent, edge in tree.path_to(node):
        feature = int(tree.feature[parent])
        threshold = float(tree.threshold[parent])
        if math.isnan(threshold):
            known[feature] = float(tree.branch_value[edge])
        elif edge == int(tree.edge_start[parent]):
            high[feature] = min(high.get(feature, math.inf), threshold)
        else:
            low[feature] = max(low.get(feature, -math.inf), threshold)
    for feature in set(low) | set(high):
        lo, hi = low.get(feature, -math.inf), high.get(feature, math.inf)
        if not lo < hi or math.isinf(lo) and lo > 0 or math.isinf(hi) and hi < 0:
            return None  # an empty interval: no patient reaches this node
        if math.isinf(hi):
            known[feature] = lo + 1.0
        elif math.isinf(lo):
            known[feature] = hi
        else:
            known[feature] = (lo + hi) / 2.0
    return known


def test_every_registry_tree_learner_is_checked():
    """The tree learners of the registry are found (so the diagram test below covers them)."""
    assert {"eg2", "c45", "act"} <= set(TREE_LEARNERS)


@pytest.mark.parametrize("learner", TREE_LEARNERS)
def test_diagram_decisions_equal_next_action_at_every_node(learner, skewed_dataset, model_admin):
    """For a patient stopping at any node, the drawn decision and probabilities are next_action."""
    requested = training.create_training(
        user=model_admin,
        dataset=skewed_dataset,
        learner=learner,
        params=QUICK.get(learner, {}),
        error_matrix=skewed_dataset.error_matrices.get(),
    )
    trained = training.run_training(trained_model_id=requested.pk)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    layout = tree_layout(user=model_admin, trained_model=trained)
    estimator = estimator_for(trained)
    tree = estimator.tree_
    class_labels = [CLASSES[int(c)] for c in estimator.classes_]
    drawn = {n["id"]: n for n in layout["nodes"]}
    assert sorted(drawn) == list(range(tree.n_nodes))
    checked_leaves = checked_tests = 0
    for node_id, node in drawn.items():
        known = patient_at(tree, node_id)
        if known is None:
            continue
        action = estimator.next_action(known)
        if node["is_leaf"]:
            assert action.kind in ("classify", "reject"), (node_id, action)
            conclusion = action
            checked_leaves += 1
        else:
            feature = int(tree.feature[node_id])
            if feature in known:
                continue  # the path already tested it: no patient waits on it here
            assert action.kind == "extract" and action.test == feature, (node_id, action)
            # What the model would conclude for this patient now, by the library's own rule.
            conclusion = decide(
                action.evidence.proba,
                classes=list(estimator.classes_),
                cost_matrix=estimator.cost_matrix_,
                reject_cost=estimator.reject_cost_,
            )
            assert node["expected_cost"] == pytest.approx(action.evidence.conclude_cost)
            checked_tests += 1
        expected_label = "Refer" if conclusion.kind == "reject" else CLASSES[int(conclusion.label)]
        assert node["decision_kind"] == conclusion.kind, node_id
        assert node["decision"] == expected_label, node_id
        assert node["expected_cost"] == pytest.approx(conclusion.expected_cost)
        assert list(node["proba"]) == class_labels
        assert list(node["proba"].values()) == pytest.approx(list(conclusion.evidence.proba))
    assert checked_leaves == tree.n_leaves, "every leaf has a patient who ends there"
    assert checked_tests > 0 or tree.n_nodes == 1
