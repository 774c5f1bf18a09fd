"""Training a model through the app's own services, for tests that need a real fitted model.

Imported by the tests of tests/diagnosis as a plain module (tests/ has no packages).
"""

from __future__ import annotations

from diagnosis.models import TrainedModel
from diagnosis.services import training


def train(dataset, admin, learner: str, params: dict | None = None, *, error_matrix=None):
    """``learner`` fitted on ``dataset`` as a model-admin requests it (``create_training``,
    then ``run_training`` in this process), checked to have succeeded."""
    requested = training.create_training(
        user=admin, dataset=dataset, learner=learner, params=params or {}, error_matrix=error_matrix
    )
    trained = training.run_training(trained_model_id=requested.pk)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    return trained
