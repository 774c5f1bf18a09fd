"""Selectors: action dictionaries, model lists, the model report and the tree layout."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied

from diagnosis.catalog.selectors.costs import cost_model_for
from diagnosis.clinic.selectors.cases import advice_for, case_state, open_cases_for_user
from diagnosis.clinic.selectors.models import models_for_user
from diagnosis.clinic.selectors.tree import tree_layout
from diagnosis.clinic.services import cases
from diagnosis.clinic.services import step as step_service
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors.models import model_report
from learners.policy import Extract, decide, evidence_for


def test_advice_json_keeps_the_numbers_and_adds_names(toy_dataset):
    """Extract, classify and reject advice, as stored (to_json), keep action.to_dict()'s
    numbers plus test and class names."""
    matrix = [[0.0, 100.0], [400.0, 0.0]]
    evidence = evidence_for((0.75, 0.25), cost_matrix=matrix, reject_cost=30.0, support=12.0)
    extract = Extract(test=1, cost=3.0, evidence=evidence)
    data = advice_for(extract, dataset=toy_dataset).to_json()
    assert data["kind"] == "extract"
    assert (data["test_index"], data["test_name"], data["test_label"], data["cost"]) == (
        1,
        "insulin",
        "Insulin",
        3.0,
    )
    assert data["evidence"] == extract.evidence.to_dict()
    assert data["test_labels"] == {"1": "Insulin"}
    classify = decide((0.25, 0.75), classes=[0, 1], cost_matrix=matrix)
    data = advice_for(classify, dataset=toy_dataset, classes=[0, 1]).to_json()
    assert (data["label"], data["label_index"], data["label_position"]) == ("disease", 1, 1)
    assert data["proba"] == [0.25, 0.75] and data["class_labels"] == ["healthy", "disease"]
    reject = decide((0.5, 0.5), classes=[0, 1], cost_matrix=matrix, reject_cost=30.0)
    data = advice_for(reject, dataset=toy_dataset, classes=[0, 1]).to_json()
    assert data["kind"] == "reject" and data["label"] is None
    assert data["expected_cost"] == reject.expected_cost
    assert data["evidence"]["refer_cost"] == reject.expected_cost


def test_cost_model_for_uses_the_dataset_prices(toy_dataset):
    """The dataset's CostModel applies the group discount."""
    model = cost_model_for(toy_dataset)
    assert model.marginal_cost(1, {0}) == 3.0 and model.marginal_cost(1, ()) == 12.0
    assert model.marginal_cost(2, {0}) == 1.0


def test_clinicians_see_only_ready_models_admins_see_all(
    trained_model, clinician, model_admin, toy_dataset
):
    """Queued/failed models are hidden from clinicians but listed for model admins."""
    failed = TrainedModel.objects.create(dataset=toy_dataset, learner="eg2", status="failed")
    assert list(models_for_user(user=clinician)) == [trained_model]
    assert set(models_for_user(user=model_admin)) == {trained_model, failed}
    nobody = User.objects.create_user("nobody", password="x-123456789")
    with pytest.raises(PermissionDenied):
        models_for_user(user=nobody)


def test_open_cases_lists_only_own_open_cases(trained_model, clinician, other_clinician):
    """A clinician's resume list holds their open cases only."""
    mine = cases.start_case(user=clinician, trained_model=trained_model)
    closed = cases.start_case(user=clinician, trained_model=trained_model)
    step_service.refer(user=clinician, case=closed)
    cases.start_case(user=other_clinician, trained_model=trained_model)
    assert list(open_cases_for_user(user=clinician)) == [mine]


def test_model_report_has_prices_matrix_and_metrics(trained_model, clinician):
    """The trust page data reflects the snapshots and the stored held-out metrics."""
    report = model_report(user=clinician, trained_model=trained_model)
    assert report.dataset_name == "Toy diabetes" and report.dataset_size == 120
    prices = {p.name: p for p in report.prices}
    assert prices["insulin"].price == 12.0 and prices["insulin"].discounted_price == 3.0
    assert prices["insulin"].group == "blood" and prices["insulin"].delayed is True
    assert report.matrix == [[0.0, 100.0], [100.0, 0.0]]
    assert report.accuracy == trained_model.metrics["accuracy"]
    assert report.n_test_cases == 36
    assert report.learner_label.startswith("EG2")


def test_tree_layout_highlights_the_case_path(trained_model, clinician):
    """Every node is listed, edges link parents to children, the case's path starts at the root."""
    case = cases.start_case(user=clinician, trained_model=trained_model)
    glucose = trained_model.dataset.tests.get(name="glucose")
    step_service.record_result(user=clinician, case=case, test=glucose, value=70)
    layout = tree_layout(user=clinician, trained_model=trained_model, case=case)
    nodes = layout["nodes"]
    assert [n["id"] for n in nodes] == list(range(len(nodes)))
    assert len(layout["edges"]) == len(nodes) - 1
    assert all(nodes[e["target"]]["parent"] == e["source"] for e in layout["edges"])
    assert layout["highlight"][0] == 0 and len(layout["highlight"]) >= 2
    assert nodes[layout["highlight"][-1]]["is_leaf"]
    root = nodes[0]
    # glucose is done for this patient: the node says so, not a price
    assert root["test_name"] == "glucose" and root["text"].endswith("(done)")
    assert root["test_status"] == "done" and root["price"] == 0.0
    plain = tree_layout(user=clinician, trained_model=trained_model)
    assert plain["highlight"] == [] and plain["nodes"][0]["test_status"] is None
    assert plain["nodes"][0]["text"].endswith(f"(${plain['nodes'][0]['price']:,.2f})")


def test_case_state_lists_priced_options_and_recommendation(trained_model, clinician):
    """Test options carry today's price and mark the recommended test."""
    case = cases.start_case(user=clinician, trained_model=trained_model)
    state = case_state(user=clinician, case=case)
    assert [o.test.name for o in state.test_options] == ["glucose", "insulin", "sex"]
    assert [o.price_now for o in state.test_options] == [10.0, 12.0, 1.0]
    recommended = [o.test.index for o in state.test_options if o.recommended]
    assert recommended == [state.advice.test_index]
    assert state.is_open and state.class_labels == ["healthy", "disease"]


def test_closed_case_has_no_advice(trained_model, clinician):
    """Once classified, the state carries no advice."""
    case = cases.start_case(user=clinician, trained_model=trained_model)
    step_service.classify(user=clinician, case=case, label=0)
    state = case_state(user=clinician, case=case)
    assert state.advice is None and not state.is_open
