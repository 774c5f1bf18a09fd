"""Training a model through the app's own services, for tests that need a real fitted model.

Imported by the tests of tests/diagnosis as a plain module (tests/ has no packages).
"""

from __future__ import annotations

from diagnosis.training.models import TrainedModel
from diagnosis.training.services import approval, training

#: The reason the tests give when they approve a model for clinicians (flagged ones need one).
TEST_APPROVAL_REASON = "Approved by the test set-up, to be used by the test's clinicians."


def approve(trained, admin):
    """``trained`` approved for clinicians by ``admin`` through the approval service, as a
    model admin does on its card (with a reason, which a flagged model needs)."""
    return approval.approve_model(user=admin, trained_model=trained, reason=TEST_APPROVAL_REASON)


def train(
    dataset, admin, learner: str, params: dict | None = None, *, error_matrix=None, approved=True
):
    """``learner`` fitted on ``dataset`` as a model-admin requests it (``create_training``,
    then ``run_training`` in this process), checked to have succeeded, then approved for
    clinicians (``approved=False`` leaves it a draft)."""
    requested = training.create_training(
        user=admin, dataset=dataset, learner=learner, params=params or {}, error_matrix=error_matrix
    )
    trained = training.run_training(trained_model_id=requested.pk)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    return approve(trained, admin) if approved else trained
