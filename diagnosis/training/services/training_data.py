"""The held-out split and the held-out report of a fitted model (a dataset's arrays are
:func:`diagnosis.catalog.selectors.datasets.dataset_arrays`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from sklearn.model_selection import train_test_split

from ..selectors.models import THIN_SUPPORT

__all__ = [
    "RANDOM_STATE",
    "baseline_metrics",
    "held_out_metrics",
    "split_indices",
]


#: The seed of every split and fit of a training (and of the comparison after a retrain), so
#: the held-out patients a model is judged on are the same each time.
RANDOM_STATE = 0


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
    supports = [
        case.decision.evidence.support
        for case in report.cases
        if case.decision.evidence is not None
    ]
    return {
        **_summary(report),
        # The spread of the per-patient cost and the mean's 95% interval: what monitoring
        # compares the confirmed cases' realized cost with (learners.monitoring).
        **_total_cost_spread(report),
        "standard_cost": _number(report.standard_cost),
        # learners reports a percentage; the report stores the ratio (1.0 = standard cost).
        "normalized_cost": _number(report.normalized_cost / 100.0),
        "high_cost_errors": int(report.high_cost_errors),
        "reject_rate": _number(report.reject_rate),
        "test_order_frequency": {test_names[t]: float(f) for t, f in enumerate(frequency) if f > 0},
        # How many held-out conclusions rest on fewer than THIN_SUPPORT training patients.
        "support": {
            "threshold": THIN_SUPPORT,
            "n_measured": len(supports),
            "n_thin": sum(1 for s in supports if s < THIN_SUPPORT),
            "min": _number(min(supports)) if supports else None,
        },
    }


def baseline_metrics(
    *,
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    cost_model,
    cost_matrix,
    reject_cost,
    categorical: Sequence[int],
    random_state: int,
) -> dict:
    """The two simple strategies on the model's own held-out cases, priced by ``evaluate``.

    ``order_nothing``: no test, the class of least expected cost under the
    training frequencies (``learners.baselines.OrderNothing``).
    ``order_everything``: every test, then the conclusion of a C4.5 tree
    (prices ignored) grown on the same training rows
    (``learners.baselines.OrderEverything``).  Same prices, matrix and
    referral cost as the model.
    """
    from learners import evaluate
    from learners.baselines import OrderEverything, OrderNothing
    from learners.tree import C45Classifier

    matrix = np.asarray(cost_matrix, dtype=float)
    nothing = OrderNothing(test_costs=cost_model, cost_matrix=matrix, reject_cost=reject_cost).fit(
        X_train, y_train
    )
    tree = C45Classifier(
        test_costs=cost_model,
        cost_matrix=matrix,
        reject_cost=reject_cost,
        categorical_features=list(categorical) or None,
        random_state=random_state,
    ).fit(X_train, y_train)
    figures = {}
    for key, policy in (("order_nothing", nothing), ("order_everything", OrderEverything(tree))):
        report = evaluate(
            policy,
            X_test,
            y_test,
            test_costs=cost_model,
            cost_matrix=matrix,
            reject_cost=reject_cost,
            delayed="path",
        )
        figures[key] = _summary(report)
    conclusion = nothing.next_action({})
    figures["order_nothing"]["conclusion"] = (
        {"kind": "refer", "label": None}
        if conclusion.kind == "reject"
        else {"kind": "classify", "label": int(conclusion.label)}
    )
    return figures


def _total_cost_spread(report) -> dict:
    from learners.significance import mean_interval

    costs = [float(case.total_cost) for case in report.cases]
    if len(costs) < 2:
        return {}
    interval = mean_interval(costs)
    return {
        "total_cost_sd": _number(np.std(costs, ddof=1)),
        "total_cost_interval": {
            "low": interval.low,
            "high": interval.high,
            "confidence": interval.confidence,
        },
    }


def _summary(report) -> dict:
    """The figures the model and the two strategies are compared on.

    ``total_cost_interval``: the 95% Student-t interval of the mean total cost per patient
    over these held-out patients (``learners.significance.mean_interval``), for the card.
    """
    from learners.baselines import class_rates
    from learners.significance import mean_interval

    confusion = np.asarray(report.confusion)
    totals = [float(case.total_cost) for case in report.cases]
    interval = mean_interval(totals) if totals else None
    return {
        "total_cost_interval": (
            {"low": interval.low, "high": interval.high, "confidence": interval.confidence}
            if interval is not None
            else None
        ),
        "n_test_cases": int(report.n_cases),
        "accuracy": _number(report.accuracy),
        "accuracy_classified": _number(report.accuracy_classified),
        "mean_test_cost": _number(report.mean_test_cost),
        "mean_misclassification_cost": _number(report.mean_misclassification_cost),
        "mean_reject_cost": _number(report.mean_reject_cost),
        "mean_total_cost": _number(report.mean_total_cost),
        "confusion": confusion.tolist(),
        **class_rates(confusion),
    }


def _number(value) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None
