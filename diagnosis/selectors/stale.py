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

from learners._validation import check_cost_matrix

from ..models import Dataset, TrainedModel
from ..permissions import require_case_access, require_model_admin
from .costs import cost_model_for
from .matrices import follows_matrix_edits
from .matrices import resolve as matrix_status_of
from .vocabulary import current_vocabulary, vocabulary_of

__all__ = ["StaleModel", "catalog_changes", "models_on_old_values", "stale_model_ids"]


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


def catalog_changes(*, user, case) -> tuple[str, ...]:
    """What in the dataset differs today from what the case's model was trained with.

    For the case screen: the case goes on with the model's own prices, error costs and
    words; the clinician is told the catalog has moved on since.
    """
    require_case_access(user, case)
    trained = case.trained_model
    found = _stale(trained.dataset, [trained])
    reasons = list(found[0].reasons) if found else []
    if case.matrix_snapshot and follows_matrix_edits(trained):
        # plain Boosting: the case keeps the matrix it started with; new cases take the edit
        in_force = matrix_status_of(trained).in_force
        if not np.array_equal(np.asarray(case.matrix_snapshot), np.asarray(in_force)):
            name = trained.error_matrix.name if trained.error_matrix else "the error matrix"
            reasons.append(f"error matrix {name!r} changed since this case started")
    kept, now = vocabulary_of(trained), current_vocabulary(trained.dataset)
    if kept.class_labels != now.class_labels:
        reasons.append("class names changed")
    renamed = sorted(n for n, choices in kept.choices.items() if now.choices.get(n) != choices)
    if renamed:
        reasons.append(f"the answers of {', '.join(renamed)} changed")
    return tuple(reasons)


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
