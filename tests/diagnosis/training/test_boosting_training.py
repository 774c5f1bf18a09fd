"""Boosting trains through the app's training service, reporting its trials as progress."""

from __future__ import annotations

from training_helpers import approve

from diagnosis.training.models import TrainedModel
from diagnosis.training.services import training
from learners import BoostingClassifier, model_from_json


def test_boosting_trains_reports_trials_and_stores_a_working_model(toy_dataset, model_admin):
    """A Boosting training reports 'trial k of K' as it goes and stores a model that advises."""
    trained = training.create_training(
        user=model_admin, dataset=toy_dataset, learner="boosting", params={"n_trials": 3}
    )
    heard = []
    result = training.run_training(
        trained_model_id=trained.pk, progress=lambda f, message: heard.append((f, message))
    )
    assert result.status == TrainedModel.SUCCEEDED, result.error
    trials = [message for _, message in heard if message and message.startswith("trial ")]
    assert trials and trials[0].startswith("trial 1 of 3"), heard
    fractions = [f for f, _ in heard]
    assert fractions == sorted(fractions)
    model = model_from_json(result.model_json)
    assert isinstance(model, BoostingClassifier) and 1 <= len(model.members_) <= 3
    assert model.next_action({}, ()).kind in {"extract", "classify", "reject"}


def test_boosting_model_page_and_case_screen_render(client, toy_dataset, model_admin, clinician):
    """A trained Boosting model's page opens, and a clinician's case with it shows advice."""
    from django.urls import reverse
    from login_helpers import login_request

    from diagnosis.clinic.models import DiagnosisCase

    trained = training.create_training(
        user=model_admin, dataset=toy_dataset, learner="boosting", params={"n_trials": 2}
    )
    assert training.run_training(trained_model_id=trained.pk).status == TrainedModel.SUCCEEDED
    approve(trained, model_admin)  # for the clinician below
    password = "pw-for-tests-123"  # the password tests/diagnosis/conftest.py gives every user
    assert client.login(request=login_request(), username=model_admin.username, password=password)
    page = client.get(reverse("model-detail", args=[trained.pk]))
    assert page.status_code == 200
    assert "Boosted C4.5 trees" in page.content.decode()
    assert client.get(reverse("model-tree", args=[trained.pk])).status_code in (200, 404)
    client.logout()
    assert client.login(request=login_request(), username=clinician.username, password=password)
    response = client.post(reverse("case-new") + f"?model={trained.pk}", {"patient_reference": "b"})
    assert response.status_code == 302
    case = DiagnosisCase.objects.get(patient_reference="b")
    screen = client.get(reverse("case-detail", args=[case.pk]))
    assert screen.status_code == 200
    assert screen.context["advice"].kind in {"extract", "classify", "reject"}
