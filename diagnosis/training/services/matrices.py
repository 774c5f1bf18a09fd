"""Writes around the error matrix in force: retraining a model on the dataset's current values.

The matrix in force itself is read by ``selectors.matrices`` (a plain Boosting model
follows its dataset's matrix as it is edited; a case copies the matrix in force when it
starts, in ``services.cases.start_case``).  A model that cannot follow an edit is retrained
here, the same way as the admin's "Retrain" actions (same error matrix and name; the
dataset's current prices and matrix).  The retrain is a draft that names the approved model it
would replace: the worker scores both on the same held-out patients at the new values
(``services.approval``), and only a model admin's approval swaps them.
"""

from __future__ import annotations

from django.db import transaction

from diagnosis.permissions import require_model_admin
from diagnosis.shared import learner_registry

from ..models import TrainedModel
from . import training

__all__ = ["SELECTOR_LEARNER", "retrain_with_current_values"]

#: The learner a retrain runs when the registry has it: the one that chooses among the others
#: by held-out cost on the training data, so a retrain never guesses a learner.
SELECTOR_LEARNER = "cost_selected"


def retrain_with_current_values(*, user, trained_model: TrainedModel) -> TrainedModel:
    """Queue a new training of ``trained_model`` with the dataset's current values: a draft.

    The learner is :data:`SELECTOR_LEARNER` with its defaults when registered, else the old
    model's learner and parameters.  The old model stays in use until the retrain is approved
    (its cases keep what they were decided with).

    Raises
    ------
    PermissionDenied
        Unless ``user`` is a model administrator.
    ValidationError
        When the training cannot be requested (for one, its error matrix was deleted
        and the learner needs one, or the parameters no longer validate).
    """
    require_model_admin(user)
    if SELECTOR_LEARNER in learner_registry.LEARNERS:
        learner, params = SELECTOR_LEARNER, {}
    else:
        learner, params = trained_model.learner, trained_model.params
    with transaction.atomic():
        new = training.request_training(
            user=user,
            dataset=trained_model.dataset,
            learner=learner,
            params=params,
            error_matrix=trained_model.error_matrix,
            name=trained_model.name,
        )
        if trained_model.approval == TrainedModel.APPROVED:  # in use: the retrain may replace it
            new.replaces = trained_model
            new.save(update_fields=["replaces"])
    return new
