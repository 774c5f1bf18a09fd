"""Assembling an experiment's results from its task rows: summaries, significance, advice.

A read: the task rows in, the results out (``services.experiment_runner`` stores them when
the last task lands; ``selectors.experiments`` computes them on the fly while it runs).

Every statistic comes from :mod:`learners.significance` (scipy.stats).  Per matrix, each pair
of learners is compared over the (repeat, fold) cells both finished (the same folds served
both), on normalized cost, with Nadeau and Bengio's corrected paired t-test: the folds'
training sets overlap, so the plain test would be overconfident (:func:`test_train_ratio`).
The recommended learner is the one with the lowest mean total cost per patient (tests +
errors + referrals), with a t confidence interval, and the same test on total cost against
the runner-up says whether the difference is significant at ``ALPHA``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations
from typing import Any

import numpy as np

from diagnosis.bench.models import Experiment, ExperimentTask
from diagnosis.shared.baselines import ORDER_NOTHING, is_baseline
from learners.significance import ALPHA, mean_interval, paired_t_test

__all__ = ["METRICS", "assemble_results", "cells_by_learner_matrix", "summary"]

#: The per-task figures summarized as mean and spread.
METRICS = (
    "normalized_cost",
    "accuracy",
    "mean_test_cost",
    "mean_total_cost",
    "misclassification_cost",
    "reject_rate",
    "fit_seconds",
)


def cells_by_learner_matrix(experiment: Experiment) -> dict[tuple[int, int], dict]:
    """``{(learner, matrix): {(repeat, fold): row-dict}}`` of the finished tasks."""
    cells: dict[tuple[int, int], dict] = defaultdict(dict)
    rows = experiment.tasks.filter(status=ExperimentTask.DONE).values(
        "learner_index", "matrix_index", "repeat", "fold", "roc", *METRICS
    )
    for row in rows:
        cells[(row["learner_index"], row["matrix_index"])][(row["repeat"], row["fold"])] = row
    return cells


def summary(values) -> dict:
    """Mean and standard deviation (``ddof=1``; 0 for one value) of finite values."""
    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if len(x) == 0:
        return {"mean": None, "std": None, "n": 0}
    return {
        "mean": float(np.mean(x)),
        "std": float(np.std(x, ddof=1)) if len(x) > 1 else 0.0,
        "n": int(len(x)),
    }


def assemble_results(experiment: Experiment) -> dict:
    """The JSON stored in ``Experiment.results`` when its last task lands."""
    cells = cells_by_learner_matrix(experiment)
    n_learners, n_matrices = len(experiment.learners), len(experiment.matrices)
    table = []
    for mi in range(n_matrices):
        for li in range(n_learners):
            rows = list(cells.get((li, mi), {}).values())
            entry: dict[str, Any] = {"learner_index": li, "matrix_index": mi, "n": len(rows)}
            for metric in METRICS:
                entry[metric] = summary(r[metric] for r in rows)
            entry["auc"] = summary((r["roc"] or {}).get("auc") for r in rows)
            table.append(entry)
    comparisons = []
    recommendations = []
    for mi in range(n_matrices):
        for a, b in combinations(range(n_learners), 2):
            comparison = _paired(experiment, cells, a, b, mi, "normalized_cost")
            if comparison is not None:
                comparisons.append(comparison)
        recommendations.append(_recommend(experiment, cells, mi))
    return {
        "table": table,
        "significance": comparisons,
        "recommendations": recommendations,
        "alpha": ALPHA,
    }


def test_train_ratio(experiment: Experiment) -> float:
    """Test cases per training case in one fold of the experiment's k-fold CV: 1 / (k - 1)."""
    return 1.0 / (experiment.k - 1)


def _paired(experiment: Experiment, cells, a: int, b: int, mi: int, metric: str) -> dict | None:
    left, right = cells.get((a, mi), {}), cells.get((b, mi), {})
    common = sorted(
        key
        for key in set(left) & set(right)
        if left[key][metric] is not None and right[key][metric] is not None
    )
    if not common:
        return None
    result = paired_t_test(
        [left[c][metric] for c in common],
        [right[c][metric] for c in common],
        test_train_ratio=test_train_ratio(experiment),
    )
    return {"matrix_index": mi, "a": a, "b": b, "metric": metric, **result.to_dict()}


def _recommend(experiment: Experiment, cells, mi: int) -> dict:
    """The cheapest learner (never a baseline), its interval, the runner-up, and how it
    compares with ordering nothing on the same folds (``versus_nothing``)."""
    means = []
    for li, entry in enumerate(experiment.learners):
        if is_baseline(entry):
            continue
        values = [
            row["mean_total_cost"]
            for row in cells.get((li, mi), {}).values()
            if row["mean_total_cost"] is not None
        ]
        if values:
            means.append((float(np.mean(values)), li, values))
    if not means:
        return {"matrix_index": mi, "learner_index": None}
    means.sort(key=lambda item: (item[0], item[1]))
    best_mean, best, values = means[0]
    interval = mean_interval(values)
    recommendation: dict[str, Any] = {
        "matrix_index": mi,
        "learner_index": best,
        "mean_total_cost": best_mean,
        "ci_low": interval.low,
        "ci_high": interval.high,
        "confidence": interval.confidence,
        "n": interval.n,
        "runner_up_index": None,
        "runner_up_cost": None,
        "comparison": None,
        "significant": False,
    }
    if len(means) > 1:
        runner_cost, runner, _ = means[1]
        comparison = _paired(experiment, cells, best, runner, mi, "mean_total_cost")
        recommendation.update(
            runner_up_index=runner,
            runner_up_cost=runner_cost,
            comparison=comparison,
            significant=bool(comparison and comparison["significant"]),
        )
    nothing = next(
        (
            li
            for li, entry in enumerate(experiment.learners)
            if is_baseline(entry) and entry["key"] == ORDER_NOTHING
        ),
        None,
    )
    if nothing is not None:
        costs = [
            row["mean_total_cost"]
            for row in cells.get((nothing, mi), {}).values()
            if row["mean_total_cost"] is not None
        ]
        if costs:
            nothing_cost = float(np.mean(costs))
            recommendation["versus_nothing"] = {
                "nothing_index": nothing,
                "nothing_cost": nothing_cost,
                "cheaper": best_mean < nothing_cost,
                "comparison": _paired(experiment, cells, best, nothing, mi, "mean_total_cost"),
            }
    return recommendation
