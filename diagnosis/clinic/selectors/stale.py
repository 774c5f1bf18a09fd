"""What in the catalog moved on since a case's model was trained (the case screen's note);
which models an edit leaves behind is the training's :mod:`diagnosis.training.selectors.stale`."""

from __future__ import annotations

import numpy as np

from diagnosis.catalog.selectors.vocabulary import current_vocabulary, vocabulary_of
from diagnosis.training.selectors.matrices import follows_matrix_edits
from diagnosis.training.selectors.matrices import resolve as matrix_status_of
from diagnosis.training.selectors.stale import model_changes

from ..permissions import require_case_access

__all__ = ["catalog_changes"]


def catalog_changes(*, user, case) -> tuple[str, ...]:
    """What in the dataset differs today from what the case's model was trained with.

    For the case screen: the case goes on with the model's own prices, error costs and
    words; the clinician is told the catalog has moved on since.
    """
    require_case_access(user, case)
    trained = case.trained_model
    reasons = list(model_changes(trained))
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
