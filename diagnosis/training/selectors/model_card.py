"""The model card: what a model administrator reviews before approving a model for clinicians.

Intended use, the training data, the inputs and prices as snapshotted, the error matrix,
held-out performance against both simple strategies with 95% intervals, the selection report
of a learner that chose among others, known limitations (the model's own warnings first), a
retrain's comparison with the model it would replace, and the audit of every approval
decision.  Reads only; the decisions are ``services.approval``'s.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Any

from diagnosis.catalog.models import Dataset
from diagnosis.permissions import is_model_admin
from diagnosis.shared import learner_registry
from diagnosis.shared.money import format_money

from ..models import ModelDecision, TrainedModel
from .model_cache import get_estimator
from .models import (
    ComparisonRow,
    ModelComparison,
    ModelReport,
    ModelWarning,
    model_comparison,
    model_report,
    model_warnings,
    require_model_access,
)

__all__ = [
    "ClassShare",
    "ModelCard",
    "SelectionRow",
    "model_card",
    "previous_approved_model",
    "selection_report",
]

#: What every model here shares, said on each card beside the model's own warnings.
_LIMITS = (
    "Measured once, on 30% of this dataset's patients held out from training: a hospital "
    "whose patients differ (age, referral pattern, prevalence) may see other costs.",
    "Decides with the prices and error costs on this card, as snapshotted at training; a "
    "later edit of the "
    "dataset's prices or matrix does not reach it until it is retrained and approved.",
    "Advice for a clinician, who decides: each recommendation shows its reasons, so the "
    "clinician can review them and overrule it with a reason.",
)


def previous_approved_model(*, trained_model: TrainedModel) -> TrainedModel | None:
    """The dataset's model retired most recently after having been approved (not this one)."""
    decision = (
        ModelDecision.objects.filter(
            action=ModelDecision.RETIRE,
            trained_model__dataset_id=trained_model.dataset_id,
            trained_model__approval=TrainedModel.RETIRED,
            trained_model__status=TrainedModel.SUCCEEDED,
        )
        .exclude(trained_model_id=trained_model.pk)
        .select_related("trained_model")
        .order_by("-at", "-id")
        .first()
    )
    return decision.trained_model if decision else None


@dataclass(frozen=True)
class SelectionRow:
    """One candidate a choosing learner compared, and whether it was chosen."""

    name: str
    label: str
    mean_cost: float | None
    standard_error: float | None
    fit_seconds: float | None
    chosen: bool


@dataclass(frozen=True)
class ClassShare:
    """How many of the dataset's patients have one class, and their share."""

    label: str
    n: int
    share: float


@dataclass(frozen=True)
class ModelCard:
    """Everything the card shows (see the module docstring), and which decisions its reader
    may take on it now (``can_*``).  ``replacement`` is the stored retrain comparison
    (``TrainedModel.replacement_comparison``), ``replacement_words`` its wording."""

    report: ModelReport
    intended_use: str
    learner_label: str
    learner_description: str
    dataset: Dataset
    n_patients: int
    n_training: int | None
    n_held_out: int | None
    class_mix: list[ClassShare]
    performance: list[ComparisonRow]
    beats_nothing: bool | None
    selection: list[SelectionRow] | None
    warnings: list[ModelWarning]
    limitations: list[str]
    replaced: TrainedModel | None
    replacement: dict[str, Any]
    replacement_worse: bool
    replacement_words: dict[str, str] | None
    pending_replacement: bool
    decisions: list[ModelDecision]
    previous: TrainedModel | None
    needs_reason: bool
    can_approve: bool
    can_retire: bool
    can_roll_back: bool
    can_keep_old: bool


def selection_report(estimator) -> list[SelectionRow] | None:
    """The candidates a choosing learner compared (``selection_report_``), cheapest first.

    Read by attribute, so any learner that exposes such a report is shown: each entry has
    ``name``, ``label``, ``mean_cost``, ``standard_error`` and ``fit_seconds``.  None when
    the estimator chose nothing.
    """
    entries = getattr(estimator, "selection_report_", None)
    if not entries:
        return None
    costs = [getattr(entry, "mean_cost", None) for entry in entries]
    finite = [c for c in costs if c is not None]
    best = min(finite) if finite else None
    rows = [
        SelectionRow(
            name=getattr(entry, "name", ""),
            label=getattr(entry, "label", "") or getattr(entry, "name", ""),
            mean_cost=cost,
            standard_error=getattr(entry, "standard_error", None),
            fit_seconds=getattr(entry, "fit_seconds", None),
            chosen=best is not None and cost == best,
        )
        for entry, cost in zip(entries, costs, strict=True)
    ]
    return sorted(rows, key=lambda r: (r.mean_cost is None, r.mean_cost or 0.0))


def _class_mix(trained: TrainedModel, labels: list[str]) -> list[ClassShare]:
    counts = Counter(trained.dataset.cases.values_list("label", flat=True))
    total = sum(counts.values()) or 1
    return [
        ClassShare(label=label, n=counts.get(code, 0), share=counts.get(code, 0) / total)
        for code, label in enumerate(labels)
    ]


def _performance(trained: TrainedModel, comparison: ModelComparison) -> list[ComparisonRow]:
    """The comparison's rows with each one's 95% interval of the total cost per patient."""
    metrics = trained.metrics or {}
    baselines = metrics.get("baselines") or {}
    rows = []
    for row in comparison.rows:
        figures = metrics if row.key == "model" else baselines.get(row.key) or {}
        interval = figures.get("total_cost_interval") or {}
        rows.append(dataclasses.replace(row, low=interval.get("low"), high=interval.get("high")))
    return rows


def _replacement_words(compared: dict) -> dict[str, str] | None:
    """The retrain comparison as the card words it: the verdict and the difference's interval."""
    if not compared.get("comparable"):
        return None
    old, new, difference = compared["old"]["mean"], compared["new"]["mean"], compared["difference"]
    verdict = (
        f"The retrain costs {format_money(new - old)} more per patient than the model in use"
        if new > old
        else f"The retrain costs {format_money(old - new)} less per patient than the model in use"
        if new < old
        else "The retrain costs the same per patient as the model in use"
    )
    interval = (
        f"difference {format_money(difference['low'])} to {format_money(difference['high'])} "
        f"(95%), paired t-test p = {difference['p_value']:.3f}"
        if difference.get("low") is not None and difference.get("p_value") is not None
        else ""
    )
    nothing = compared.get("order_nothing")
    above = [
        name
        for name, cost in (("the retrain", new), ("the model in use", old))
        if nothing is not None and cost >= nothing
    ]
    return {
        "verdict": verdict,
        "interval": interval,
        "nothing_note": (
            f"Ordering nothing costs {format_money(nothing)} per patient: "
            f"{' and '.join(above)} {'are' if len(above) > 1 else 'is'} no cheaper."
            if above
            else ""
        ),
    }


def _decisions(trained: TrainedModel) -> list[ModelDecision]:
    return list(
        ModelDecision.objects.filter(trained_model=trained)
        .select_related("other_model")
        .order_by("-at", "-id")
    )


def model_card(*, user, trained_model: TrainedModel) -> ModelCard:
    """Everything the card shows, and which decisions ``user`` may take on it now."""
    require_model_access(user, trained_model)
    report = model_report(user=user, trained_model=trained_model)
    comparison = model_comparison(user=user, trained_model=trained_model)
    warnings = model_warnings(user=user, trained_model=trained_model)
    labels = report.class_labels
    dataset = trained_model.dataset
    metrics = report.metrics
    spec = learner_registry.LEARNERS.get(trained_model.learner)
    usable = trained_model.is_ready or trained_model.holds_partial_model
    selection = selection_report(get_estimator(trained_model)) if usable else None
    replaced = trained_model.replaces
    compared = trained_model.replacement_comparison or {}
    admin = is_model_admin(user)
    previous = (
        previous_approved_model(trained_model=trained_model)
        if admin and trained_model.approval == TrainedModel.APPROVED
        else None
    )
    worse = bool(compared.get("comparable") and compared["new"]["mean"] > compared["old"]["mean"])
    pending_replacement = (
        replaced is not None
        and trained_model.approval == TrainedModel.DRAFT
        and replaced.approval == TrainedModel.APPROVED
    )
    return ModelCard(
        report=report,
        intended_use=(
            f"Decision support for clinicians seeing patients like those of "
            f"{dataset.name}: it advises which test to order next and when to conclude "
            f"({', '.join(labels)}){' or refer' if report.reject_cost is not None else ''}, "
            f"so that the cost of tests plus the cost of errors "
            f"({report.error_matrix_name}) stays low. The clinician decides."
        ),
        learner_label=report.learner_label,
        learner_description=spec.description if spec else "",
        dataset=dataset,
        n_patients=report.dataset_size,
        n_training=metrics.get("n_training_cases"),
        n_held_out=metrics.get("n_test_cases"),
        class_mix=_class_mix(trained_model, labels),
        performance=_performance(trained_model, comparison),
        beats_nothing=comparison.beats,
        selection=selection,
        warnings=warnings,
        limitations=list(_LIMITS),
        replaced=replaced,
        replacement=compared,
        replacement_worse=worse,
        replacement_words=_replacement_words(compared),
        pending_replacement=pending_replacement,
        decisions=_decisions(trained_model),
        previous=previous,
        needs_reason=bool(warnings) or worse,
        can_approve=admin
        and (trained_model.is_ready or trained_model.holds_partial_model)
        and trained_model.approval != TrainedModel.APPROVED,
        can_retire=admin and trained_model.approval == TrainedModel.APPROVED,
        can_roll_back=admin and previous is not None,
        can_keep_old=admin and pending_replacement,
    )
