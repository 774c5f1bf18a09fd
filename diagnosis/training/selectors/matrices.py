"""Which error matrix a trained model decides with now, since when, and what a case uses.

A model keeps the matrix it was trained with (``TrainedModel.matrix_snapshot``).
Plain Boosting (``BoostingClassifier`` with ``cost_sensitive=False``) never
looked at the matrix while training, so it takes the dataset's matrix as an
admin edits it, at once (the library's ``set_cost_matrix``): its matrix in
force is its error matrix's current value.  Every other model keeps its
training matrix; when the dataset's matrix has moved on, it is flagged
"trained with a different matrix" (and retrained through
``services.matrices.retrain_with_current_values``).

*Since when* comes from the error matrix's change history (django-simple-history,
``ErrorMatrix.history``): the first of the latest run of saves that left the
matrix at its current value, or the end of training if that is later.

A case copies the matrix in force when it starts (:func:`matrix_for_new_case`, written by the
clinic's ``services.cases.start_case``) and is decided with it for good: the clinic's
``selectors.matrices.estimator_for_case`` gives the model deciding with the case's own matrix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict

import numpy as np

from diagnosis.catalog.models import ErrorMatrix
from diagnosis.shared import learner_registry
from learners._validation import check_cost_matrix

from ..models import TrainedModel
from .models import require_model_access

__all__ = [
    "MatrixStatus",
    "checked_matrix",
    "follows_matrix_edits",
    "matrix_for_new_case",
    "matrix_status",
    "resolve",
]


@dataclass(frozen=True)
class MatrixStatus:
    """The model page's account of the error matrix a model decides with."""

    follows_edits: bool  # plain Boosting: takes the dataset's matrix as it is edited
    in_force: list[list[float]]  # what a case started now is decided with
    trained_with: list[list[float]]
    name: str | None  # the dataset's matrix it was trained with (None: deleted or none)
    since: datetime | None  # when ``in_force`` became the model's matrix (None: not recorded)
    since_training: bool  # ``in_force`` is the training matrix, in force since training
    #: Not plain Boosting (or it cannot take the edit), and the dataset's matrix differs now.
    trained_with_different: bool = False
    live: list[list[float]] | None = None  # the dataset's matrix today
    problem: str = ""  # why a following model cannot take the dataset's matrix
    reasons: list[str] = field(default_factory=list)


def follows_matrix_edits(trained: TrainedModel) -> bool:
    """Whether the model takes a new error matrix without retraining (plain Boosting).

    The learner says so: its estimator has ``set_cost_matrix``, and it was not
    trained cost-sensitively (Cost-Boosting's trees were grown for its matrix).
    """
    try:
        return learner_registry.takes_matrix_at_prediction(trained.learner, trained.params)
    except Exception:  # noqa: BLE001  an unknown learner follows nothing
        return False


def checked_matrix(rows, k: int) -> np.ndarray | None:
    """``rows`` as the library's checked k-by-k cost matrix, or None when it is not one."""
    try:
        return check_cost_matrix(rows, k)
    except (ValueError, TypeError):
        return None


class _Known(TypedDict):
    """The :class:`MatrixStatus` fields every outcome of :func:`resolve` shares."""

    follows_edits: bool
    trained_with: list[list[float]]
    name: str | None
    live: list[list[float]] | None


def _same(a, b, k: int) -> bool:
    left, right = checked_matrix(a, k), checked_matrix(b, k)
    return left is not None and right is not None and np.array_equal(left, right)


def _plain(matrix: np.ndarray) -> list[list[float]]:
    return [[float(v) for v in row] for row in matrix]


def resolve(trained: TrainedModel) -> MatrixStatus:
    """:class:`MatrixStatus` without a permission check (services and selectors use it)."""
    trained_with = trained.matrix_snapshot or []
    k = len(trained_with)
    follows = follows_matrix_edits(trained) and trained.is_ready
    # read afresh: the dataset's matrix as it is now, not as an instance loaded earlier holds it
    # pk=None (no matrix) is Django's IS NULL: no row; django-stubs' lookup type omits None
    source = ErrorMatrix.objects.filter(pk=trained.error_matrix_id).first()  # type: ignore[misc]
    live = None if source is None else checked_matrix(source.matrix, k)
    base: _Known = {
        "follows_edits": follows,
        "trained_with": trained_with,
        "name": None if source is None else source.name,
        "live": None if live is None else _plain(live),
    }
    finished = trained.finished_at
    if source is None or _same(source.matrix, trained_with, k):
        since = _history_since(source, k) if follows and source is not None else None
        if since is None or (finished is not None and since <= finished):
            return MatrixStatus(in_force=trained_with, since=finished, since_training=True, **base)
        # edited away and back again after training: the same values, in force again since
        return MatrixStatus(in_force=trained_with, since=since, since_training=False, **base)
    if follows and live is not None:
        since = _history_since(source, k)
        if since is not None and finished is not None:
            since = max(since, finished)
        return MatrixStatus(in_force=_plain(live), since=since, since_training=False, **base)
    reasons = [f"the dataset's error matrix {source.name!r} has changed since training"]
    problem = ""
    if follows:  # plain Boosting, but the edited matrix does not fit its classes
        problem = (
            f"the dataset's error matrix {source.name!r} is no longer a {k} x {k} matrix "
            "of costs for this model's classes"
        )
        reasons = [problem]
    return MatrixStatus(
        in_force=trained_with,
        since=finished,
        since_training=True,
        trained_with_different=True,
        problem=problem,
        reasons=reasons,
        **base,
    )


def _history_since(source, k: int) -> datetime | None:
    """When the matrix took its current value: the earliest of the latest saves that left it so."""
    history = getattr(source, "history", None)
    if history is None:
        return None
    current = source.matrix
    since = None
    for record in history.order_by("-history_date", "-history_id").only("matrix", "history_date"):
        if not _same(record.matrix, current, k):
            break
        since = record.history_date
    return since


def matrix_status(*, user, trained_model: TrainedModel) -> MatrixStatus:
    """The error matrix ``trained_model`` decides with now, since when, and whether it is
    flagged "trained with a different matrix"."""
    require_model_access(user, trained_model)
    return resolve(trained_model)


def matrix_for_new_case(trained: TrainedModel) -> list[list[float]]:
    """The matrix a case started now copies (``DiagnosisCase.matrix_snapshot``).

    A model that does not follow matrix edits decides with its training matrix whatever the
    dataset's matrix is now (``resolve``'s every branch says so): no query for it.
    """
    if not follows_matrix_edits(trained):
        return trained.matrix_snapshot or []
    return resolve(trained).in_force
