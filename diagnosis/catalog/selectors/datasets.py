"""A dataset's reads that training, pricing and the forms share: its cases as arrays and its
default error matrix."""

from __future__ import annotations

import numpy as np

from ..models import Dataset, DiagnosticTest, ErrorMatrix

__all__ = ["dataset_arrays", "default_error_matrices", "default_error_matrix"]


def dataset_arrays(dataset: Dataset) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """``X`` (NaN = missing), ``y`` (class codes) and the nominal columns' indices."""
    rows = list(dataset.cases.order_by("id").values_list("values", "label"))
    if not rows:
        raise ValueError(f"dataset {dataset.name!r} has no cases")
    X = np.array([[np.nan if v is None else v for v in values] for values, _ in rows], dtype=float)
    y = np.array([label for _, label in rows], dtype=np.int64)
    categorical = list(
        dataset.tests.filter(kind=DiagnosticTest.NOMINAL)
        .order_by("index")
        .values_list("index", flat=True)
    )
    return X, y, categorical


def default_error_matrix(*, dataset: Dataset) -> ErrorMatrix | None:
    """The dataset's own named error matrix a training starts from: its first one.

    The first matrix is the one listed first in the dataset's file (or added
    first by an admin); None when the dataset has none (then only 0/1 loss is left).
    """
    return dataset.error_matrices.order_by("pk").first()


def default_error_matrices() -> dict[int, int]:
    """``{dataset id: id of its default_error_matrix}`` for every dataset with a matrix."""
    defaults: dict[int, int] = {}
    for dataset_id, pk in ErrorMatrix.objects.order_by("pk").values_list("dataset_id", "pk"):
        defaults.setdefault(dataset_id, pk)
    return defaults
