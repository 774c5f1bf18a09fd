"""Writes around the error matrix in force: retraining a model on the dataset's current values.

The matrix in force itself is read by ``selectors.matrices`` (a plain Boosting model
follows its dataset's matrix as it is edited; a case copies the matrix in force when it
starts, in ``services.cases.start_case``).  A model that cannot follow an edit is retrained
here, the same way as the admin's "Retrain" actions (same learner, parameters, error matrix
and name; the dataset's current prices and matrix).
"""

from __future__ import annotations

from ..models import TrainedModel
from ..permissions import require_model_admin
from . import training

__all__ = ["retrain_with_current_values"]


def retrain_with_current_values(*, user, trained_model: TrainedModel) -> TrainedModel:
    """Queue a new training of ``trained_model`` with the dataset's current values.

    The old model stays as it is (its cases keep what they were decided with).

    Raises
    ------
    PermissionDenied
        Unless ``user`` is a model administrator.
    ValidationError
        When the training cannot be requested (for one, its error matrix was deleted
        and the learner needs one, or the parameters no longer validate).
    """
    require_model_admin(user)
    return training.request_training(
        user=user,
        dataset=trained_model.dataset,
        learner=trained_model.learner,
        params=trained_model.params,
        error_matrix=trained_model.error_matrix,
        name=trained_model.name,
    )
