"""A deployed model watched after: realized accuracy and cost on confirmed cases, and drift.

For every closed case of a model whose diagnosis was later confirmed (the latest
:class:`~diagnosis.clinic.models.ConfirmedDiagnosis` of the case is in force), the realized cost is
what the case paid for its tests plus the error matrix's cost of its conclusion against the
confirmed class (``learners.monitoring.realized_cost``: the case's own matrix snapshot, the
model's referral cost).  Their mean is set beside the held-out estimate the model was trained
on, with its 95% interval, and ``learners.monitoring.sequential_drift`` (a Welch t-test
every 5 confirmations, look j at significance 6 alpha / (pi^2 j^2)) says when it has drifted
outside.  Only aggregates leave this module: no patient is named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.db.models import Count, Sum

from diagnosis.permissions import is_clinician, is_model_admin
from diagnosis.training.models import TrainedModel
from learners.monitoring import LOOK_EVERY, DriftCheck, realized_cost, sequential_drift

from ..models import ConfirmedDiagnosis, DiagnosisCase, DiagnosisStep

__all__ = ["ModelMonitoring", "confirmed_diagnosis_of", "model_monitoring", "models_monitoring"]


@dataclass(frozen=True)
class ModelMonitoring:
    """What the model page's monitoring panel and the home card's alarm show."""

    n_closed: int
    n_confirmed: int
    realized_accuracy: float | None
    realized_mean_cost: float | None
    estimate_mean: float | None
    estimate_low: float | None
    estimate_high: float | None
    estimate_confidence: float
    estimate_n: int
    drift: DriftCheck | None
    #: Why there is no drift test (empty when there is one).
    no_test_reason: str

    @property
    def alarm(self) -> bool:
        return bool(self.drift and self.drift.alarm)


def _estimate(trained: TrainedModel) -> tuple[float | None, float | None, dict, int]:
    metrics = trained.metrics or {}
    interval = metrics.get("total_cost_interval") or {}
    return (
        metrics.get("mean_total_cost"),
        metrics.get("total_cost_sd"),
        interval,
        int(metrics.get("n_test_cases") or 0),
    )


def model_monitoring(*, user, trained_model: TrainedModel) -> ModelMonitoring:
    """Realized figures on the model's confirmed cases, the estimate, and the drift test."""
    return models_monitoring(user=user, trained_models=[trained_model])[trained_model.pk]


def models_monitoring(
    *, user, trained_models: Sequence[TrainedModel]
) -> dict[int, ModelMonitoring]:
    """:func:`model_monitoring` of several models at once, in four queries whatever their
    number (the home page's cards)."""
    if not (is_clinician(user) or is_model_admin(user)):
        raise PermissionDenied("Only clinicians and model administrators see models.")
    by_pk = {m.pk: m for m in trained_models}
    closed = DiagnosisCase.objects.filter(trained_model__in=list(by_pk)).exclude(
        status=DiagnosisCase.OPEN
    )
    n_closed = dict(
        closed.order_by()
        .values("trained_model_id")
        .annotate(n=Count("id"))
        .values_list("trained_model_id", "n")
    )
    latest: dict[int, ConfirmedDiagnosis] = {}
    for confirmation in ConfirmedDiagnosis.objects.filter(
        case__trained_model__in=list(by_pk)
    ).order_by("recorded_at", "id"):
        latest.pop(confirmation.case_id, None)  # a re-recording moves the case to its time
        latest[confirmation.case_id] = confirmation
    cases = {
        c.pk: c
        for c in closed.filter(pk__in=list(latest)).only(
            "id", "trained_model_id", "status", "final_label", "matrix_snapshot"
        )
    }
    paid = dict(
        DiagnosisStep.objects.filter(case_id__in=list(cases))
        .order_by()
        .values("case_id")
        .annotate(total=Sum("price"))
        .values_list("case_id", "total")
    )
    costs: dict[int, list[float]] = {pk: [] for pk in by_pk}
    correct: dict[int, int] = dict.fromkeys(by_pk, 0)
    for case_id, confirmation in latest.items():  # in the order they were confirmed
        case = cases.get(case_id)
        if case is None:
            continue
        trained = by_pk[case.trained_model_id]
        concluded = case.final_label if case.status == DiagnosisCase.CLASSIFIED else None
        costs[trained.pk].append(
            realized_cost(
                test_cost=float(paid.get(case_id) or 0.0),
                concluded=concluded,
                confirmed=confirmation.label,
                cost_matrix=case.matrix_snapshot or trained.matrix_snapshot,
                reject_cost=trained.reject_cost_snapshot,
            )
        )
        correct[trained.pk] += int(concluded is not None and concluded == confirmation.label)
    return {
        pk: _monitoring(trained, costs[pk], correct[pk], n_closed.get(pk, 0))
        for pk, trained in by_pk.items()
    }


def _monitoring(
    trained: TrainedModel, costs: list[float], correct: int, n_closed: int
) -> ModelMonitoring:
    mean, sd, interval, n_estimate = _estimate(trained)
    low, high = interval.get("low"), interval.get("high")
    drift = None
    reason = ""
    if mean is None or sd is None or low is None or high is None or n_estimate < 2:
        reason = (
            "This model's held-out report has no interval (it was trained before monitoring "
            "existed); retrain it to watch its cost against one."
        )
    elif len(costs) < LOOK_EVERY:
        reason = f"The drift test first looks at {LOOK_EVERY} confirmed cases."
    else:
        drift = sequential_drift(
            costs,
            reference_mean=float(mean),
            reference_sd=float(sd),
            reference_n=n_estimate,
            low=low,
            high=high,
        )
    return ModelMonitoring(
        n_closed=n_closed,
        n_confirmed=len(costs),
        realized_accuracy=correct / len(costs) if costs else None,
        realized_mean_cost=sum(costs) / len(costs) if costs else None,
        estimate_mean=mean,
        estimate_low=low,
        estimate_high=high,
        estimate_confidence=float(interval.get("confidence") or 0.95),
        estimate_n=n_estimate,
        drift=drift,
        no_test_reason=reason,
    )


def confirmed_diagnosis_of(case: DiagnosisCase) -> ConfirmedDiagnosis | None:
    """The case's confirmed diagnosis in force (the latest recorded), with who recorded it.

    No permission check: the caller has read the case through ``case_for_user``."""
    return (
        ConfirmedDiagnosis.objects.filter(case=case)
        .select_related("recorded_by")
        .order_by("-recorded_at", "-id")
        .first()
    )
