"""Which trained models were trained on prices or error costs that have since been edited.

A model keeps the prices and the matrix it was trained with (its snapshots) and is never
rewritten by a later edit; this tells the administrator which models an edit leaves behind.
Prices are compared as the library's ``CostModel`` (its own equality), the matrix as the
library's checked cost matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from diagnosis.catalog.models import Dataset
from diagnosis.catalog.selectors.costs import cost_model_for
from diagnosis.permissions import require_model_admin
from learners._validation import check_cost_matrix

from ..models import TrainedModel
from .matrices import follows_matrix_edits
from .matrices import resolve as matrix_status_of

__all__ = ["StaleModel", "model_changes", "models_on_old_values", "stale_model_ids"]


@dataclass(frozen=True)
class StaleModel:
    """A ready model and what changed since it was trained (plain words, for the admin)."""

    trained: TrainedModel
    reasons: tuple[str, ...]


def models_on_old_values(*, user, dataset: Dataset) -> list[StaleModel]:
    """The dataset's ready models whose prices or error matrix differ from the live values."""
    require_model_admin(user)
    return _stale(dataset, _ready(dataset))


def stale_model_ids(*, user, queryset: QuerySet[TrainedModel]) -> list[int]:
    """Ids of the models in ``queryset`` trained on values that have since changed."""
    require_model_admin(user)
    ids: list[int] = []
    for dataset in Dataset.objects.filter(trained_models__in=queryset).distinct():
        models = queryset.filter(dataset=dataset, status=TrainedModel.SUCCEEDED)
        ids.extend(s.trained.pk for s in _stale(dataset, models))
    return ids


def model_changes(trained: TrainedModel) -> tuple[str, ...]:
    """What changed in ``trained``'s dataset (prices, error matrix) since it was trained."""
    found = _stale(trained.dataset, [trained])
    return found[0].reasons if found else ()


def _ready(dataset: Dataset) -> QuerySet[TrainedModel]:
    return dataset.trained_models.filter(status=TrainedModel.SUCCEEDED).select_related(
        "error_matrix"
    )


def _stale(dataset: Dataset, models) -> list[StaleModel]:
    try:
        live_prices = cost_model_for(dataset)
    except ValidationError:
        live_prices = None
    k = len(dataset.class_labels or [])
    stale = []
    for trained in models:
        reasons = []
        if live_prices is None:
            reasons.append("the dataset's prices are not valid now")
        elif trained.snapshot.prices != live_prices:
            reasons.append("test prices changed")
        reasons.extend(_matrix_changes(trained, k))
        if reasons:
            stale.append(StaleModel(trained, tuple(reasons)))
    return stale


def _matrix_changes(trained: TrainedModel, k: int) -> list[str]:
    matrix = trained.error_matrix
    if matrix is None:
        return [] if not trained.matrix_snapshot else ["its error matrix was deleted"]
    changes = []
    if follows_matrix_edits(trained):
        # plain Boosting decides with the edited matrix at once (selectors.matrices): only an
        # edit it cannot take leaves it behind
        changes.extend(matrix_status_of(trained).reasons)
    else:
        changes.extend(_matrix_value_change(trained, matrix, k))
    if trained.reject_cost_snapshot != matrix.reject_cost:
        changes.append(f"the referral cost of {matrix.name!r} changed")
    return changes


def _matrix_value_change(trained: TrainedModel, matrix, k: int) -> list[str]:
    changes = []
    try:
        same = np.array_equal(
            check_cost_matrix(trained.matrix_snapshot, k), check_cost_matrix(matrix.matrix, k)
        )
    except ValueError:
        same = False
    if not same:
        changes.append(f"error matrix {matrix.name!r} changed")
    return changes
