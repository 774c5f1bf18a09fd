"""JSON model documents: exact round trips for every tree learner, safe loading."""

import json
from pathlib import Path

import numpy as np
import pytest

from learners import model_from_json
from learners.costs import CostModel
from learners.tree import (
    C45Classifier,
    CSID3Classifier,
    DTMCClassifier,
    EG2Classifier,
    IDXClassifier,
)

TREE_LEARNERS = [C45Classifier, EG2Classifier, IDXClassifier, CSID3Classifier, DTMCClassifier]


@pytest.mark.parametrize("cls", TREE_LEARNERS)
def test_round_trip_gives_identical_predictions(cls, noisy_table):
    """model_from_json(model.to_json()) has the same probabilities, tree and policy."""
    X, y = noisy_table
    costs = CostModel(
        [1, 2, 3, 4, 0.5], discounted=[1, 1, 3, 4, 0.5], groups=["a", "a", None, None, None]
    )
    model = cls(
        test_costs=costs,
        cost_matrix=[[0, 4], [1, 0]],
        reject_cost=[0.5, 0.4],
        categorical_features=[4],
        probability="frequency",
    ).fit(X, y)
    again = model_from_json(model.to_json())
    assert type(again) is cls
    assert again.get_params()["test_costs"] == costs
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    assert again.tree_.to_dict() == model.tree_.to_dict()
    for known, unavailable in [({}, ()), ({0: 0.5}, ()), ({0: -1.0, 1: 2.0}, (4,)), ({}, range(5))]:
        assert again.next_action(known, unavailable) == model.next_action(known, unavailable)
    assert again.categories_.keys() == model.categories_.keys()


def test_from_json_checks_the_class(noisy_table):
    """Cls.from_json refuses a document holding another learner."""
    X, y = noisy_table
    text = C45Classifier().fit(X, y).to_json()
    assert isinstance(C45Classifier.from_json(text), C45Classifier)
    with pytest.raises(ValueError, match="not a EG2Classifier"):
        EG2Classifier.from_json(text)


def test_unknown_learner_is_refused(noisy_table):
    """A document naming a class outside the registry does not load."""
    X, y = noisy_table
    document = json.loads(C45Classifier().fit(X, y).to_json())
    document["learner"] = "os.system"
    with pytest.raises(ValueError, match="unknown learner"):
        model_from_json(json.dumps(document))


@pytest.mark.parametrize("text", ['{"hello": 1}', "[1, 2]", '{"format": "pickle"}'])
def test_non_model_document_is_refused(text):
    """Anything that is not a learners model document raises ValueError."""
    with pytest.raises(ValueError, match="not a learners model"):
        model_from_json(text)


def test_document_is_plain_json_without_nan(noisy_table):
    """The document is strict JSON (no NaN tokens) with learner, params and fitted state."""
    X, y = noisy_table
    text = EG2Classifier(categorical_features=[4], w=0.5).fit(X, y).to_json()
    document = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert document["learner"] == "EG2Classifier"
    assert document["params"]["w"] == 0.5
    assert "tree" in document["fitted"]


def test_no_pickle_in_tree_package():
    """The tree learners never import pickle."""
    package = Path(__file__).resolve().parents[2] / "learners" / "tree"
    for source in package.glob("*.py"):
        text = source.read_text()
        assert "import pickle" not in text and "joblib" not in text, source.name


def test_tree_structure_json_keeps_infinite_thresholds():
    """An infinite threshold survives the JSON round trip (JSON itself has no infinity)."""
    import json

    from learners.tree import TreeStructure

    tree = TreeStructure(
        feature=[0, -1, -1],
        threshold=[np.inf, np.nan, np.nan],
        edge_start=[0, 2, 2],
        n_edges=[2, 0, 0],
        class_weight=[[3.0, 1.0], [3.0, 0.0], [0.0, 1.0]],
        child=[1, 2],
        branch_value=[np.nan, np.nan],
        branch_weight=[0.75, 0.25],
    )
    text = json.dumps(tree.to_dict(), allow_nan=False)
    again = TreeStructure.from_dict(json.loads(text))
    assert np.isposinf(again.threshold[0]) and np.isnan(again.threshold[1])
