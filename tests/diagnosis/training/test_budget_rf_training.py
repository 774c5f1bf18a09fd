"""BudgetRF trains through the app's training service, reporting trees against the budget."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from training_helpers import approve

from diagnosis.shared import learner_registry
from diagnosis.training.models import TrainedModel
from diagnosis.training.services import training
from learners import BudgetRFClassifier, CostModel, model_from_json


def test_budget_rf_trains_reports_trees_against_the_budget(toy_dataset, model_admin):
    """A BudgetRF training reports each tree kept against the budget and stores a forest
    whose validation test cost is within it."""
    trained = training.create_training(
        user=model_admin,
        dataset=toy_dataset,
        learner="budget_rf",
        params={"budget": 30, "max_trees": 4},
    )
    heard = []
    result = training.run_training(
        trained_model_id=trained.pk, progress=lambda f, message: heard.append((f, message))
    )
    assert result.status == TrainedModel.SUCCEEDED, result.error
    trees = [
        message for _, message in heard if message and "trees, validation test cost" in message
    ]
    assert trees and "(budget 30)" in trees[0], heard
    fractions = [f for f, _ in heard]
    assert fractions == sorted(fractions)
    model = model_from_json(result.model_json)
    assert isinstance(model, BudgetRFClassifier) and 1 <= len(model.trees_) <= 4
    assert model.validation_cost_ <= 30
    action = model.next_action({}, ())
    assert action.kind in {"extract", "classify", "reject"}
    assert action.evidence.members == len(model.trees_)


def test_a_budget_below_the_cheapest_test_is_refused_before_training():
    """The form's check says the budget is below the cheapest test, with both numbers."""
    spec = learner_registry.get_spec("budget_rf")
    params = learner_registry.clean_params("budget_rf", {"budget": "0.5"})
    problems = spec.check(CostModel([2.0, 3.0]), params)
    assert problems == [
        "Test budget: budget 0.5 is below the cheapest test (2): a forest within it could "
        "order no test at all."
    ]
    assert spec.check(CostModel([2.0, 3.0]), learner_registry.clean_params("budget_rf", {})) == []
    with pytest.raises(ValidationError, match="at least 0"):
        learner_registry.clean_params("budget_rf", {"budget": "-1"})


def test_budget_rf_case_screen_says_how_many_trees_wait(
    client, toy_dataset, model_admin, clinician
):
    """A clinician's case with a forest shows advice naming how many trees wait on the test."""
    from django.urls import reverse
    from login_helpers import login_request

    from diagnosis.clinic.models import DiagnosisCase

    trained = training.create_training(
        user=model_admin, dataset=toy_dataset, learner="budget_rf", params={"max_trees": 3}
    )
    assert training.run_training(trained_model_id=trained.pk).status == TrainedModel.SUCCEEDED
    approve(trained, model_admin)  # for the clinician below
    password = "pw-for-tests-123"  # the password tests/diagnosis/conftest.py gives every user
    assert client.login(request=login_request(), username=model_admin.username, password=password)
    page = client.get(reverse("model-detail", args=[trained.pk]))
    assert page.status_code == 200 and "Feature-budgeted random forest" in page.content.decode()
    # No single tree to draw: the diagram page answers, or says there is none (never a 500).
    assert client.get(reverse("model-tree", args=[trained.pk])).status_code in (200, 404)
    client.logout()
    assert client.login(request=login_request(), username=clinician.username, password=password)
    response = client.post(reverse("case-new") + f"?model={trained.pk}", {"patient_reference": "f"})
    assert response.status_code == 302
    case = DiagnosisCase.objects.get(patient_reference="f")
    screen = client.get(reverse("case-detail", args=[case.pk]))
    assert screen.status_code == 200
    advice = screen.context["advice"]
    assert advice.kind in {"extract", "classify", "reject"}
    if advice.kind == "extract":
        assert "trees" in screen.content.decode() and "waiting on" in screen.content.decode()
