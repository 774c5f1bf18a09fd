"""Arrays from a dataset, the held-out split, and the held-out report of a fitted model."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from sklearn.model_selection import train_test_split

from ..models import Dataset, DiagnosticTest

__all__ = ["dataset_arrays", "held_out_metrics", "split_indices"]


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


def split_indices(y: np.ndarray, *, test_size: float, random_state: int):
    """Stratified train/test indices (plain random when a class is too rare to stratify)."""
    indices = np.arange(len(y))
    counts = Counter(y.tolist())
    stratify = y if min(counts.values()) >= 2 else None
    train, test = train_test_split(
        indices, test_size=test_size, random_state=random_state, stratify=stratify
    )
    return np.sort(train), np.sort(test)


def held_out_metrics(
    estimator,
    X: np.ndarray,
    y: np.ndarray,
    *,
    cost_model,
    cost_matrix,
    reject_cost,
    test_names: Sequence[str],
) -> dict:
    """``learners.evaluate`` on the held-out cases, as the JSON the model report shows.

    The policy is replayed case by case (values revealed only when asked for)
    and charged with the same ``marginal_cost`` the clinician's screen uses.
    """
    from learners import evaluate

    report = evaluate(
        estimator,
        X,
        y,
        test_costs=cost_model,
        cost_matrix=np.asarray(cost_matrix, dtype=float),
        reject_cost=reject_cost,
        delayed="path",
    )
    frequency = np.asarray(report.test_frequency, dtype=float)
    return {
        "n_test_cases": int(report.n_cases),
        "accuracy": _number(report.accuracy),
        "accuracy_classified": _number(report.accuracy_classified),
        "mean_test_cost": _number(report.mean_test_cost),
        "mean_misclassification_cost": _number(report.mean_misclassification_cost),
        "mean_reject_cost": _number(report.mean_reject_cost),
        "mean_total_cost": _number(report.mean_total_cost),
        "standard_cost": _number(report.standard_cost),
        # learners reports a percentage; the report stores the ratio (1.0 = standard cost).
        "normalized_cost": _number(report.normalized_cost / 100.0),
        "high_cost_errors": int(report.high_cost_errors),
        "reject_rate": _number(report.reject_rate),
        "confusion": np.asarray(report.confusion).tolist(),
        "test_order_frequency": {test_names[t]: float(f) for t, f in enumerate(frequency) if f > 0},
    }


def _number(value) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None
