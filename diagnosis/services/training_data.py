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
        dataset.tests.filter(kind=DiagnosticTest.NOMINAL).order_by("index").values_list("index", flat=True)
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
    """Replay every held-out case through ``next_action``, paying as a clinician would.

    A value is revealed only when the model asks for it; a missing value counts
    as an unavailable test (free).  Costs use the same ``marginal_cost``.
    """
    matrix = np.asarray(cost_matrix, dtype=float)
    n_features = X.shape[1]
    test_costs, error_costs, bought_counts = [], [], Counter()
    correct = rejected = 0
    for row, actual in zip(X, y):
        known: dict[int, float] = {}
        unavailable: set[int] = set()
        paid = 0.0
        for _ in range(2 * n_features + 2):
            action = estimator.next_action(known, unavailable)
            if action.kind != "extract":
                break
            t = int(action.test)
            if t in known or t in unavailable:
                raise RuntimeError(f"the model asked again for test {t}, which it already has")
            if np.isnan(row[t]):
                unavailable.add(t)
                continue
            paid += cost_model.marginal_cost(t, frozenset(known))
            known[t] = float(row[t])
            bought_counts[t] += 1
        else:
            raise RuntimeError("the model kept asking for tests without concluding")
        if action.kind == "classify":
            predicted = int(action.label)
            correct += int(predicted == int(actual))
            error_costs.append(float(matrix[int(actual), predicted]))
        else:
            rejected += 1
            error_costs.append(_reject_cost_for(reject_cost, int(actual)))
        test_costs.append(paid)
    n = len(y)
    total = np.asarray(test_costs) + np.asarray(error_costs)
    frequencies = np.bincount(y, minlength=matrix.shape[0])
    standard = cost_model.standard_cost(frequencies, matrix) if frequencies.sum() else 0.0
    return {
        "n_test_cases": int(n),
        "accuracy": correct / n,
        "mean_test_cost": float(np.mean(test_costs)),
        "mean_misclassification_cost": float(np.mean(error_costs)),
        "mean_total_cost": float(np.mean(total)),
        "normalized_cost": float(np.mean(total) / standard) if standard > 0 else None,
        "standard_cost": float(standard),
        "reject_rate": rejected / n,
        "test_order_frequency": {
            test_names[t]: bought_counts[t] / n for t in sorted(bought_counts)
        },
    }


def _reject_cost_for(reject_cost, actual: int) -> float:
    if reject_cost is None:
        return 0.0
    value = np.asarray(reject_cost, dtype=float)
    return float(value) if value.ndim == 0 else float(value[actual])
