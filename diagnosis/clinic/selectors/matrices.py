"""The error matrix a case is decided with (its own copy, ``DiagnosisCase.matrix_snapshot``)
and the model deciding with it; what a model decides with now is the training's
:mod:`diagnosis.training.selectors.matrices`."""

from __future__ import annotations

import copy

import numpy as np

from diagnosis.training.selectors.matrices import checked_matrix
from diagnosis.training.selectors.model_cache import get_estimator

from ..models import DiagnosisCase

__all__ = ["case_matrix", "estimator_for_case"]


def case_matrix(case: DiagnosisCase) -> list[list[float]]:
    """The error matrix ``case`` is decided with: its own copy, or (a case started before
    cases kept one) its model's training matrix."""
    return case.matrix_snapshot or case.trained_model.matrix_snapshot or []


def estimator_for_case(case: DiagnosisCase):
    """The fitted model deciding with the case's own matrix (its ``matrix_snapshot``).

    A case of a plain Boosting model started after an edit gets a shallow copy
    of the cached model with :meth:`~learners.BoostingClassifier.set_cost_matrix`
    applied (the cached one is shared, so it is never changed); every other
    case gets the cached model itself.
    """
    estimator = get_estimator(case.trained_model)
    snapshot = case.matrix_snapshot
    if not snapshot or not hasattr(estimator, "set_cost_matrix"):
        return estimator
    mine = checked_matrix(snapshot, len(estimator.classes_))
    if mine is None or np.array_equal(mine, estimator.cost_matrix_):
        return estimator
    return copy.copy(estimator).set_cost_matrix(mine)
