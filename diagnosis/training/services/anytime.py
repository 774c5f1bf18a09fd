"""Anytime training: r = 1, 2, 4, ... with the best model so far always the model in use.

Each round fits the learner afresh with a larger ``r`` (its anytime
parameter).  A round's *estimated cost* is the held-out mean total cost per
patient (tests + errors + referrals, ``learners.evaluate`` on the same 30%
split the model report shows), because ACT's own ``estimated_cost_`` is
measured on the cases it was grown on; ACT's figure is kept beside it as
``training_estimated_cost``.  Caveat: the round in use is chosen on those same
held-out cases, so its held-out figures are slightly optimistic (a choice
among a handful of rounds).

When a round lowers the estimate it is stored at once (a checkpoint, and the
model's ``model_json``/``metrics``), so a stop request, a time budget, an
error or a killed worker all leave the best model so far in place.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable

import numpy as np
from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction

from diagnosis.shared import learner_registry

from ..models import TrainedModel, TrainingCheckpoint
from .training_data import held_out_metrics
from .training_progress import ProgressWriter

__all__ = ["AnytimeStopped", "fit_anytime", "held_out_report", "round_schedule"]

log = logging.getLogger(__name__)

#: Seconds between database reads of the stop flag during a round.
STOP_CHECK_INTERVAL = 1.0

FINISHED = "finished"
STOPPED = "stopped on request"
BUDGET = "time budget reached"
CANCELLED = "cancelled"
WORKER_LIMIT = "the worker's time limit was reached"


class AnytimeStopped(Exception):
    """Stopped before the first round produced a model: there is nothing to keep."""


class _RoundInterrupted(Exception):
    """Raised from the learner's progress callback to end the current round early."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def held_out_report(estimator, X, y, *, trained, cost_model) -> dict:
    """``held_out_metrics`` under ``trained``'s price and matrix snapshots, plus
    ``n_referred``: referrals counted apart from conclusions."""
    metrics = held_out_metrics(
        estimator,
        X,
        y,
        cost_model=cost_model,
        cost_matrix=trained.matrix_snapshot,
        reject_cost=trained.reject_cost_snapshot,
        test_names=trained.snapshot.names,
    )
    metrics["n_referred"] = int(sum(row[-1] for row in metrics.get("confusion") or []))
    metrics["n_classified"] = int(metrics.get("n_test_cases", 0)) - metrics["n_referred"]
    return metrics


def round_schedule(target: int) -> list[int]:
    """The values tried: 1, 2, 4, ... below ``target``, then ``target`` ([0] for 0)."""
    if target <= 0:
        return [0]
    values, r = [], 1
    while r < target:
        values.append(r)
        r *= 2
    values.append(int(target))
    return values


class _StopWatch:
    """Why the run should end now, if it should: a stop request, a cancel, or the budget.

    The database is read at most once per ``STOP_CHECK_INTERVAL`` seconds; the
    time budget never interrupts the first round, so a budget always yields a model.
    """

    def __init__(self, trained_model_id: int, started: float, budget: float | None):
        self.trained_model_id = trained_model_id
        self.started = started
        self.budget = budget
        self._checked_at = -np.inf
        self._reason: str | None = None

    def reason(self, *, have_model: bool, force: bool = False) -> str | None:
        now = time.perf_counter()
        if self._reason is None and (force or now - self._checked_at >= STOP_CHECK_INTERVAL):
            self._checked_at = now
            row = (
                TrainedModel.objects.filter(pk=self.trained_model_id)
                .values_list("status", "stop_requested")
                .first()
            )
            if row is None or row[0] != TrainedModel.RUNNING:
                self._reason = CANCELLED
            elif row[1]:
                self._reason = STOPPED
        if self._reason is not None:
            return self._reason
        if have_model and self.budget is not None and now - self.started >= self.budget:
            return BUDGET
        return None


def fit_anytime(
    trained: TrainedModel,
    writer: ProgressWriter,
    *,
    X: np.ndarray,
    y: np.ndarray,
    train: np.ndarray,
    test: np.ndarray,
    cost_model,
    categorical: list[int],
    random_state: int,
) -> dict:
    """Run the rounds; return the final fields of the model (the best round's).

    Raises :class:`AnytimeStopped` when stopped before any model existed, and
    re-raises a round's error when no earlier round succeeded.
    """
    spec = learner_registry.get_spec(trained.learner)
    knob = spec.anytime_param
    params = learner_registry.clean_params(trained.learner, trained.params)
    rounds = round_schedule(int(params[knob]))
    budget = params.get("time_budget_seconds")
    work = [max(r, 1) for r in rounds]  # fit time grows about linearly with r
    # A redelivered task (its worker died mid-run) goes on after the model it had stored.
    best = _resumed(trained)
    resumed_after = best["r"] if best is not None else -1
    started = time.perf_counter() - (best["elapsed"] if best is not None else 0.0)
    watch = _StopWatch(trained.pk, started, budget)
    ended, error = FINISHED, ""
    history: list[dict] = []  # every finished round, improved or not (for the report)
    for number, r in enumerate(rounds):
        if r <= resumed_after:
            continue
        reason = watch.reason(have_model=best is not None, force=True)
        if reason:
            ended = reason
            break
        label = f"{knob}={r}"
        done_work = sum(work[:number])
        progress = _round_progress(writer, watch, label, done_work, work[number], sum(work), best)
        estimator = learner_registry.build_estimator(
            trained.learner,
            {**params, knob: r},
            cost_model=cost_model,
            cost_matrix=trained.matrix_snapshot,
            reject_cost=trained.reject_cost_snapshot,
            categorical_features=categorical,
            random_state=random_state,
        )
        estimator.set_params(progress_callback=progress)
        writer(0.05 + 0.9 * done_work / sum(work), f"{label}: fitting", force=True)
        round_started = time.perf_counter()
        try:
            estimator.fit(X[train], y[train])
            fit_seconds = time.perf_counter() - round_started
            metrics = held_out_report(
                estimator, X[test], y[test], trained=trained, cost_model=cost_model
            )
            cost = metrics.get("mean_total_cost")
            improved = cost is not None and (best is None or cost < best["cost"])
            history.append(
                {
                    "label": label,
                    "elapsed_seconds": time.perf_counter() - started,
                    "estimated_cost": cost,
                    "training_estimated_cost": _float_or_none(
                        getattr(estimator, "estimated_cost_", None)
                    ),
                    "improved": improved,
                }
            )
            if improved:
                best = _round_result(
                    estimator,
                    metrics,
                    label=label,
                    r=r,
                    fit_seconds=fit_seconds,
                    elapsed=time.perf_counter() - started,
                )
                _store_round(trained.pk, best, knob=knob, n_train=len(train), budget=budget)
        except _RoundInterrupted as exc:
            ended = exc.reason
            break
        except SoftTimeLimitExceeded:  # Celery's soft limit: a budget of last resort
            if best is None:
                raise
            ended = WORKER_LIMIT
            break
        except Exception as exc:  # keep the best model so far; with none, fail as usual
            if best is None:
                raise
            log.exception("anytime training %s: round %s failed", trained.pk, label)
            error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            ended = f"round {label} failed"
            break
    if best is None:
        raise AnytimeStopped(f"Stopped before the first model was ready ({ended}).")
    total = time.perf_counter() - started
    metrics = _metrics_in_use(
        best, knob=knob, n_train=len(train), budget=budget, total=total, ended=ended
    )
    metrics["anytime"]["rounds_run"] = len(history)
    metrics["anytime"]["rounds"] = history
    message = f"Done: {ended}; using {best['label']}"
    return {
        "model_json": best["model_json"],
        "metrics": metrics,
        "fit_seconds": total,
        "anytime_round": best["label"],
        "progress_message": message[:300],
        "error": error,
    }


def _round_result(
    estimator, metrics: dict, *, label: str, r: int, fit_seconds: float, elapsed: float
) -> dict:
    """What is kept of a round that lowered the estimate."""
    return {
        "cost": metrics["mean_total_cost"],
        "label": label,
        "r": r,
        "metrics": metrics,
        "fit_seconds": fit_seconds,
        "elapsed": elapsed,
        "training_estimate": _float_or_none(getattr(estimator, "estimated_cost_", None)),
        # ACT derives w and cf from the costs when they are left empty: show what it used.
        "derived_params": {
            name: _float_or_none(getattr(estimator, f"{name}_"))
            for name in ("w", "cf")
            if hasattr(estimator, f"{name}_")
        },
        "model_json": estimator.to_json(),
    }


def _resumed(trained: TrainedModel) -> dict | None:
    """The stored best round of an interrupted run of this model, or None for a fresh run."""
    info = (trained.metrics or {}).get("anytime")
    last = trained.checkpoints.order_by("-elapsed_seconds", "-id").first()
    if not info or last is None or not trained.model_json or last.model_json != trained.model_json:
        return None
    return {
        "cost": last.estimated_cost,
        "label": last.label,
        "r": int(info["value"]),
        "metrics": {k: v for k, v in trained.metrics.items() if k != "anytime"},
        "fit_seconds": trained.metrics.get("fit_seconds"),
        "elapsed": last.elapsed_seconds,
        "training_estimate": info.get("training_estimated_cost"),
        "derived_params": info.get("derived_params") or {},
        "model_json": trained.model_json,
    }


def _round_progress(
    writer: ProgressWriter,
    watch: _StopWatch,
    label: str,
    done_work: float,
    round_work: float,
    total_work: float,
    best: dict | None,
) -> Callable[[float, str], None]:
    """The learner's progress callback: moves the bar and ends the round when told to."""
    have_model = best is not None

    def progress(fraction: float, message: str = "") -> None:
        share = (done_work + min(max(float(fraction), 0.0), 1.0) * round_work) / total_work
        writer(0.05 + 0.9 * share, f"{label}: {message}")
        reason = watch.reason(have_model=have_model)
        if reason:
            raise _RoundInterrupted(reason)

    return progress


def _metrics_in_use(
    best: dict, *, knob: str, n_train: int, budget: float | None, total: float | None, ended: str
) -> dict:
    metrics = dict(best["metrics"])
    metrics["n_training_cases"] = int(n_train)
    metrics["fit_seconds"] = best["fit_seconds"]
    metrics["anytime"] = {
        "parameter": knob,
        "round": best["label"],
        "value": best["r"],
        "estimated_cost": best["cost"],
        "estimate": "held-out mean total cost per patient",
        "training_estimated_cost": best["training_estimate"],
        "derived_params": best["derived_params"],
        "seconds_to_this_model": best["elapsed"],
        "seconds_spent": total,
        "time_budget_seconds": budget,
        "ended": ended,
    }
    return metrics


@transaction.atomic
def _store_round(
    trained_model_id: int, best: dict, *, knob: str, n_train: int, budget: float | None
) -> None:
    """Make ``best`` the model in use and add its checkpoint (unless cancelled meanwhile)."""
    metrics = _metrics_in_use(
        best, knob=knob, n_train=n_train, budget=budget, total=None, ended="running"
    )
    updated = TrainedModel.objects.filter(pk=trained_model_id, status=TrainedModel.RUNNING).update(
        model_json=best["model_json"],
        metrics=metrics,
        fit_seconds=best["elapsed"],
        anytime_round=best["label"],
    )
    if updated:
        TrainingCheckpoint.objects.create(
            trained_model_id=trained_model_id,
            elapsed_seconds=best["elapsed"],
            estimated_cost=best["cost"],
            label=best["label"],
            model_json=best["model_json"],
        )


def _float_or_none(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None
