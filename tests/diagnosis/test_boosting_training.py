"""Boosting trains through the app's training service, reporting its trials as progress."""

from __future__ import annotations

from diagnosis.models import TrainedModel
from diagnosis.services import training
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
