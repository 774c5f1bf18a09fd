"""Input checks shared by every estimator, with messages a person can act on.

A parameter's type and range are its estimator's ``_parameter_constraints``
(:mod:`._estimator`), checked before these run; these are the checks that
need the data: a cost matrix against the classes, prices against the
features, the values inside an array.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from .costs import CostModel


def check_cost_matrix(cost_matrix, n_classes: int) -> np.ndarray:
    """``M[actual, predicted]`` as a float array; None means 0/1 loss.

    Raises
    ------
    ValueError
        If the matrix is not K x K, or holds a negative or non-finite entry.
    """
    if cost_matrix is None:
        return 1.0 - np.eye(n_classes)
    try:
        matrix = np.asarray(cost_matrix, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("cost_matrix must be a square table of numbers") from None
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"cost_matrix must be square, got shape {matrix.shape}")
    if matrix.shape[0] != n_classes:
        raise ValueError(
            f"cost_matrix is {matrix.shape[0]}x{matrix.shape[0]} but there are {n_classes} classes"
        )
    if not np.isfinite(matrix).all():
        raise ValueError("cost_matrix entries must be finite")
    if (matrix < 0).any():
        i, j = np.argwhere(matrix < 0)[0]
        raise ValueError(f"cost_matrix[{i}, {j}] = {matrix[i, j]:g} is negative")
    return matrix


def check_reject_cost(reject_cost, n_classes: int):
    """None, or a non-negative finite scalar or per-true-class vector."""
    if reject_cost is None:
        return None
    try:
        value = np.asarray(reject_cost, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("reject_cost must be a number or one number per class") from None
    result: float | np.ndarray
    if value.ndim == 0:
        result = float(value)
    elif value.shape == (n_classes,):
        result = value
    else:
        raise ValueError(f"reject_cost must be a scalar or have {n_classes} entries")
    if not np.isfinite(value).all() or (value < 0).any():
        raise ValueError("reject_cost must be finite and non-negative")
    return result


def check_test_costs(test_costs, n_features: int) -> CostModel:
    """A :class:`CostModel` covering ``n_features``; None means every test costs 1."""
    if test_costs is None:
        return CostModel.uniform(n_features)
    if not isinstance(test_costs, CostModel):
        test_costs = CostModel(test_costs)
    if test_costs.n_features != n_features:
        raise ValueError(
            f"test_costs describes {test_costs.n_features} tests but X has {n_features} features"
        )
    return test_costs


def validate_costed_fit(estimator: Any, X, y) -> tuple[np.ndarray, np.ndarray]:
    """Check ``X`` (NaN = missing), ``y`` and ``estimator``'s cost parameters for ``fit``.

    Sets ``classes_``, ``n_features_in_``, ``cost_matrix_``, ``reject_cost_`` and
    ``cost_model_`` on ``estimator``; returns ``X`` as floats and the class codes of ``y``.
    """
    X, y = validate_data(
        estimator, X, y, ensure_all_finite="allow-nan", dtype=np.float64, y_numeric=False
    )
    check_classification_targets(y)
    estimator.classes_, codes = np.unique(y, return_inverse=True)
    k = len(estimator.classes_)
    estimator.cost_matrix_ = check_cost_matrix(estimator.cost_matrix, k)
    estimator.reject_cost_ = check_reject_cost(estimator.reject_cost, k)
    estimator.cost_model_ = check_test_costs(estimator.test_costs, X.shape[1])
    return X, codes


def validate_rows(estimator: Any, X) -> np.ndarray:
    """``X`` (NaN = missing) as floats, checked against ``estimator``'s fitted tests."""
    return validate_data(estimator, X, reset=False, ensure_all_finite="allow-nan", dtype=np.float64)
