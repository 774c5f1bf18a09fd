"""Trained models a user may see, and the report behind the model's trust page."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.utils import timezone

from diagnosis.catalog.models import Dataset
from diagnosis.catalog.selectors.vocabulary import vocabulary_of
from diagnosis.permissions import ModelNotFound, is_model_admin, require_clinician
from diagnosis.selectors import raw_rows
from diagnosis.shared import learner_registry
from diagnosis.shared.money import format_money

from ..models import TrainedModel

__all__ = [
    "THIN_SUPPORT",
    "ClassRate",
    "ComparisonRow",
    "ConfusionRow",
    "ModelComparison",
    "ModelReport",
    "ModelWarning",
    "PriceRow",
    "ReferralStatistics",
    "model_comparison",
    "model_report",
    "model_warnings",
    "model_page_open",
    "referral_statistics",
    "require_model_access",
    "startable_model",
    "training_progress",
    "visible_model",
]


def visible_model(*, user, pk: int) -> TrainedModel | None:
    """Model ``pk`` if ``user`` may see it (as the clinic's ``models_for_user`` decides), else None.

    With its dataset and without its JSON or the case counts: starting a case needs neither
    (the fitted model comes from the estimator cache), and counting every case of the model
    grows with its use. ``has_fitted_json`` answers ``is_ready`` in the same query.
    """
    admin = is_model_admin(user)
    if not admin:
        require_clinician(user)
    if connection.vendor == "postgresql":
        return _visible_model_row(pk, ready_only=not admin)
    qs = (
        TrainedModel.objects.select_related("dataset")
        .defer("model_json")
        # ``is_ready`` without a query of its own (the JSON is not read)
        .annotate(has_fitted_json=ExpressionWrapper(~Q(model_json=""), output_field=BooleanField()))
    )
    if not admin:
        qs = qs.filter(status=TrainedModel.SUCCEEDED, approval=TrainedModel.APPROVED)
    return qs.filter(pk=pk).first()


def model_page_open(*, user, trained: TrainedModel) -> bool:
    """Whether ``user`` may open ``trained``'s pages (as :func:`visible_model` decides): a case
    screen on a model since retired names it without a link that would answer 404."""
    if is_model_admin(user):
        return True
    return trained.status == TrainedModel.SUCCEEDED and trained.approval == TrainedModel.APPROVED


def startable_model(*, user, pk: int) -> TrainedModel:
    """Model ``pk`` if ``user`` may start a case with it: approved, whoever asks (a model admin
    who is also a clinician tries a draft on its card, never on a patient).

    Raises :class:`ModelNotFound` otherwise, like a missing model.
    """
    require_clinician(user)
    trained = (
        TrainedModel.objects.select_related("dataset")
        .defer("model_json")
        .annotate(has_fitted_json=ExpressionWrapper(~Q(model_json=""), output_field=BooleanField()))
        .filter(pk=pk, approval=TrainedModel.APPROVED)
        .first()
    )
    if trained is None:
        raise ModelNotFound(pk)
    return trained  # one not ready is refused by the service with its reason


def _visible_model_row(pk, *, ready_only: bool) -> TrainedModel | None:
    """:func:`visible_model`'s read on PostgreSQL: one raw query written once per process."""
    try:
        pk = int(pk)
    except (TypeError, ValueError):
        return None
    trained_part, dataset_part = _model_parts()
    sql, params = _model_sql(ready_only), [pk]
    if ready_only:
        params += [TrainedModel.SUCCEEDED, TrainedModel.APPROVED]
    rows = raw_rows.fetch_instances((trained_part, dataset_part), sql, params)
    if not rows:
        return None
    trained, dataset, has_json = rows[0]
    TrainedModel.dataset.field.set_cached_value(trained, dataset)
    trained.has_fitted_json = bool(has_json)  # as models_for_user annotates it, for is_ready
    return trained


def _model_parts() -> tuple[raw_rows.Columns, raw_rows.Columns]:
    return (
        raw_rows.columns(TrainedModel, TrainedModel._meta.db_table, defer=("model_json",)),
        raw_rows.columns(Dataset, "d"),
    )


@functools.cache
def _model_sql(ready_only: bool) -> str:
    trained, dataset = _model_parts()
    status = (
        f" AND {trained.column('status')} = %s AND {trained.column('approval')} = %s"
        if ready_only
        else ""
    )
    return (
        f"SELECT {trained.sql}, {dataset.sql}, NOT ({trained.column('model_json')} = '')"
        f" FROM {trained.table}"
        f" INNER JOIN {dataset.table} ON ({trained.column('dataset')} = {dataset.column('id')})"
        f" WHERE {trained.column('id')} = %s{status}"
    )


def require_model_access(user, trained: TrainedModel) -> None:
    """The role check of every model read; which model a clinician may open is
    :func:`model_for_page`'s (an approved one, or the model of a case they read)."""
    if not is_model_admin(user):
        require_clinician(user)


def _checkpoints(trained_model: TrainedModel) -> list[dict]:
    return [
        {
            "elapsed_seconds": c.elapsed_seconds,
            "estimated_cost": c.estimated_cost,
            # the live table's text (static/js/anytime.js), worded here like every other amount
            "estimated_cost_text": _money_or_none(c.estimated_cost),
            "label": c.label,
        }
        for c in trained_model.checkpoints.all()
    ]


def _money_or_none(amount: float | None) -> str | None:
    return None if amount is None else format_money(amount)


def _anytime_summary(trained_model: TrainedModel) -> dict | None:
    """r, time spent and the cost estimate of the model in use, for an anytime learner."""
    spec = learner_registry.LEARNERS.get(trained_model.learner)
    if spec is None or not spec.anytime:
        return None
    info = dict((trained_model.metrics or {}).get("anytime") or {})
    requested = (trained_model.params or {}).get(spec.anytime_param)
    if trained_model.started_at is not None and info.get("seconds_spent") is None:
        end = trained_model.finished_at or timezone.now()
        info["seconds_spent"] = max(0.0, (end - trained_model.started_at).total_seconds())
    return {
        "parameter": spec.anytime_param,
        "requested": requested,
        "round": trained_model.anytime_round or info.get("round") or "",
        "value": info.get("value"),
        "estimated_cost": info.get("estimated_cost"),
        "estimated_cost_text": _money_or_none(info.get("estimated_cost")),
        "estimate": info.get("estimate", "held-out mean total cost per patient"),
        "training_estimated_cost": info.get("training_estimated_cost"),
        "derived_params": info.get("derived_params") or {},
        "seconds_to_this_model": info.get("seconds_to_this_model"),
        "seconds_spent": info.get("seconds_spent"),
        "time_budget_seconds": (trained_model.params or {}).get("time_budget_seconds"),
        "ended": info.get("ended", ""),
        "rounds_run": info.get("rounds_run"),
        "rounds": info.get("rounds") or [],
        "stop_requested": trained_model.stop_requested,
        "can_stop": not trained_model.is_finished,
    }


def training_progress(*, user, trained_model: TrainedModel) -> dict:
    """The live progress JSON: status, bar, elapsed time, error and the anytime checkpoints."""
    require_model_access(user, trained_model)
    started = trained_model.started_at
    elapsed = None
    if started is not None:
        end = trained_model.finished_at or timezone.now()
        elapsed = max(0.0, (end - started).total_seconds())
    return {
        "id": trained_model.pk,
        "status": trained_model.status,
        "status_label": trained_model.get_status_display(),
        "finished": trained_model.is_finished,
        "progress": trained_model.progress,
        "message": trained_model.progress_message,
        "elapsed_seconds": elapsed,
        "error": trained_model.error,
        "checkpoints": _checkpoints(trained_model),
        "anytime": _anytime_summary(trained_model),
    }


@dataclass(frozen=True)
class PriceRow:
    """One test as the model was trained with it: its prices, group and marks, by its label
    today (its name for a test since deleted)."""

    index: int
    name: str
    label: str
    unit: str
    price: float
    discounted_price: float
    group: str | None
    delayed: bool
    derived_from: tuple[str, ...]
    free: bool
    generated: bool


@dataclass(frozen=True)
class ReferralStatistics:
    """How often the model referred its held-out patients and what that cost, as measured
    (:func:`referral_statistics`)."""

    n: int | None
    of: int | None
    of_text: str | None
    percent_text: str | None
    priced: bool
    price_text: str | None
    total_text: str | None


@dataclass(frozen=True)
class ModelReport:
    """The trust page's content: what the model was trained with (learner, parameters, prices
        as snapshotted, error matrix), how it did on held-out patients (``metrics`` as stored,
        and the headline figures read from it; None before they exist); what it has done since (its
    cases) is the clinic's ``selectors.models.case_outcomes``.

        ``checkpoints`` and ``anytime`` are the live progress JSON's own parts
        (:func:`training_progress`), the same on the page as in the poll.
    """

    model: TrainedModel
    learner: str
    learner_label: str
    params: dict[str, Any]
    param_labels: dict[str, str]
    dataset_name: str
    dataset_size: int
    class_labels: list[str]
    prices: list[PriceRow]
    matrix: list
    error_matrix_name: str
    reject_cost: float | None
    status: str
    error: str
    metrics: dict[str, Any]
    accuracy: float | None
    mean_test_cost: float | None
    normalized_cost: float | None
    reject_rate: float | None
    mean_misclassification_cost: float | None
    n_test_cases: int | None
    test_order_frequency: dict[str, float]
    n_referred: int | None
    referrals: ReferralStatistics
    fit_seconds: float | None
    checkpoints: list[dict[str, Any]]
    anytime: dict[str, Any] | None


def _price_rows(trained_model: TrainedModel) -> list[PriceRow]:
    """The model's tests and prices as snapshotted (none for a model without a snapshot)."""
    if not trained_model.cost_snapshot:
        return []
    snapshot = trained_model.snapshot
    costs = snapshot.prices
    tests = {t.name: t for t in trained_model.dataset.tests.all()}
    rows = []
    for i, name in enumerate(snapshot.names):
        test = tests.get(name)
        rows.append(
            PriceRow(
                index=i,
                name=name,
                label=test.display_label if test else name,
                unit=test.unit if test else "",
                price=float(costs.costs[i]),
                discounted_price=float(costs.discounted[i]),
                group=costs.groups[i],
                delayed=bool(costs.delayed[i]),
                derived_from=tuple(snapshot.derived_from(i)),
                free=i in costs.free,
                generated=snapshot.is_generated(i),
            )
        )
    return rows


def model_report(*, user, trained_model: TrainedModel) -> ModelReport:
    """The trust page's content: what the model was trained with, how it did on held-out cases."""
    require_model_access(user, trained_model)
    dataset = trained_model.dataset
    spec = learner_registry.LEARNERS.get(trained_model.learner)
    metrics = dict(trained_model.metrics or {})
    return ModelReport(
        model=trained_model,
        learner=trained_model.learner,
        learner_label=spec.label if spec else trained_model.learner,
        params=trained_model.params,
        param_labels={p.name: p.label for p in spec.params} if spec else {},
        dataset_name=dataset.name,
        dataset_size=dataset.cases.count(),
        class_labels=vocabulary_of(trained_model).class_labels,
        prices=_price_rows(trained_model),
        matrix=trained_model.matrix_snapshot,
        error_matrix_name=trained_model.error_matrix.name
        if trained_model.error_matrix
        else "0/1 loss",
        reject_cost=trained_model.reject_cost_snapshot,
        status=trained_model.status,
        error=trained_model.error,
        metrics=metrics,
        accuracy=metrics.get("accuracy"),
        mean_test_cost=metrics.get("mean_test_cost"),
        normalized_cost=metrics.get("normalized_cost"),
        reject_rate=metrics.get("reject_rate"),
        mean_misclassification_cost=metrics.get("mean_misclassification_cost"),
        n_test_cases=metrics.get("n_test_cases"),
        test_order_frequency=metrics.get("test_order_frequency", {}),
        n_referred=metrics.get("n_referred"),
        referrals=referral_statistics(metrics, trained_model.reject_cost_snapshot),
        fit_seconds=trained_model.fit_seconds,
        checkpoints=_checkpoints(trained_model),
        anytime=_anytime_summary(trained_model),
    )


def referral_statistics(metrics: Mapping[str, Any], reject_cost: Any) -> ReferralStatistics:
    """How often the model referred its held-out patients and what that cost, as measured.

    From the held-out evaluation (``n_referred``, ``n_test_cases``,
    ``mean_reject_cost``), never inferred from the price: a model with no
    referral price may still refer (the conditioned-loss model refers by
    its risk), and then each referral was charged $0.  ``n`` is None before
    the figures exist.  Texts: ``price_text`` ("$150.00" or None),
    ``total_text`` (all referrals together), ``percent_text``.
    """
    n = metrics.get("n_referred")
    of = metrics.get("n_test_cases")
    price = reject_cost
    price_text: str | None
    if isinstance(price, list | tuple):
        price_text = " / ".join(format_money(p) for p in price)
    else:
        price_text = None if price is None else format_money(price)
    mean = metrics.get("mean_reject_cost")
    total = None if mean is None or of is None else float(mean) * int(of)
    return ReferralStatistics(
        n=None if n is None else int(n),
        of=None if of is None else int(of),
        of_text=None if of is None else f"{int(of):,}",
        percent_text=None if not n or not of else f"{100.0 * int(n) / int(of):.1f}%",
        priced=price is not None,
        price_text=price_text,
        total_text=None if total is None else format_money(total),
    )


# ------------------------------------------------------------ honest models
#: A conclusion resting on fewer training patients than this is "thin" (its
#: probabilities come from a handful of cases); training counts them
#: (``services.training_data.held_out_metrics``) and the model page shows the count.
THIN_SUPPORT = 10

#: A model warns when at least this share of its held-out conclusions rests on
#: fewer than ``THIN_SUPPORT`` training patients.
THIN_SHARE = 0.10

_STRATEGIES = (
    ("model", "This model"),
    ("order_nothing", "Order nothing"),
    ("order_everything", "Order every test"),
)


@dataclass(frozen=True)
class ConfusionRow:
    """Held-out patients of one actual class by what was concluded (``referred``: None when
    referring was neither possible nor done)."""

    label: str
    counts: list[int]
    referred: int | None


@dataclass(frozen=True)
class ClassRate:
    label: str
    sensitivity: float | None
    specificity: float | None


@dataclass(frozen=True)
class ComparisonRow:
    """One strategy on the held-out patients: this model, "order nothing" or "order every
    test"; ``measured`` False when its figures were not measured.  ``conclusion``: what
    ordering nothing concludes, in words.  ``low``/``high``: the 95% interval of its total
    cost per patient (the model card fills them)."""

    key: str
    title: str
    measured: bool
    accuracy: float | None
    mean_test_cost: float | None
    mean_total_cost: float | None
    n_test_cases: int | None
    confusion_rows: list[ConfusionRow] = field(default_factory=list)
    with_refer: bool = False
    rates: list[ClassRate] = field(default_factory=list)
    conclusion: str = ""
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class ModelComparison:
    """The model against the two simple strategies; ``beats``: whether it costs less per
    patient than ordering nothing (None when either is unmeasured)."""

    rows: list[ComparisonRow]
    measured: bool
    class_labels: list[str]
    beats: bool | None


def _class_rows(figures: dict, class_labels: list[str], *, can_refer: bool) -> dict[str, Any]:
    """Confusion rows and per-class sensitivity/specificity, labelled with the class names."""
    from learners.baselines import class_rates

    confusion = figures.get("confusion")
    if not confusion:
        return {}
    rates = class_rates(confusion)
    # The "referred" column only where referring was possible or happened.
    with_refer = len(confusion[0]) > len(confusion) and (
        can_refer or any(row[-1] for row in confusion)
    )
    return {
        "confusion_rows": [
            ConfusionRow(
                label=label,
                counts=row[: len(confusion)],
                referred=row[-1] if with_refer else None,
            )
            for label, row in zip(class_labels, confusion, strict=False)
        ],
        "with_refer": with_refer,
        "rates": [
            ClassRate(label=label, sensitivity=sens, specificity=spec)
            for label, sens, spec in zip(
                class_labels, rates["sensitivity"], rates["specificity"], strict=False
            )
        ],
    }


def model_comparison(*, user, trained_model: TrainedModel) -> ModelComparison:
    """The model against "order nothing" and "order every test" on the same held-out cases.

    Rows whose figures were not measured (models trained before the
    comparison existed, or a training that has not finished) have
    ``measured`` False; the page says "not measured".
    """
    require_model_access(user, trained_model)
    metrics = trained_model.metrics or {}
    baselines = metrics.get("baselines") or {}
    labels = vocabulary_of(trained_model).class_labels
    rows = []
    for key, title in _STRATEGIES:
        figures = metrics if key == "model" else baselines.get(key) or {}
        rows.append(
            ComparisonRow(
                key=key,
                title=title,
                measured=figures.get("mean_total_cost") is not None,
                accuracy=figures.get("accuracy"),
                mean_test_cost=figures.get("mean_test_cost"),
                mean_total_cost=figures.get("mean_total_cost"),
                n_test_cases=figures.get("n_test_cases"),
                conclusion=_conclusion_words(figures.get("conclusion"), labels)
                if key == "order_nothing"
                else "",
                **_class_rows(
                    figures, labels, can_refer=trained_model.reject_cost_snapshot is not None
                ),
            )
        )
    own, plain = rows[0].mean_total_cost, rows[1].mean_total_cost
    beats = None if own is None or plain is None else own < plain
    return ModelComparison(rows=rows, measured=bool(baselines), class_labels=labels, beats=beats)


def _conclusion_words(conclusion: dict | None, labels: list[str]) -> str:
    if not conclusion:
        return ""
    if conclusion.get("kind") == "refer":
        return "refer every patient"
    label = conclusion.get("label")
    name = labels[label] if isinstance(label, int) and 0 <= label < len(labels) else str(label)
    return f"conclude “{name}” for every patient"


@dataclass(frozen=True)
class ModelWarning:
    """Why a clinician should not rely on a model: a machine ``code`` and a sentence."""

    code: str
    text: str

    def to_json(self) -> dict[str, str]:
        """As kept in an approval decision's basis."""
        return {"code": self.code, "text": self.text}


def model_warnings(*, user, trained_model: TrainedModel) -> list[ModelWarning]:
    """Why a clinician should not rely on this model, as :class:`ModelWarning` items.

    * ``no_gain``: its held-out total cost per patient is not below ordering nothing;
    * ``no_tests``: it ordered no test for any held-out patient;
    * ``thin_support``: at least ``THIN_SHARE`` of its held-out conclusions rest
      on fewer than ``THIN_SUPPORT`` training patients;
    * ``cut_short``: its training was cut short by a dead worker (interrupted, or approved
      although it was), so it is the model of the rounds finished before.

    Only a model with held-out figures is judged; figures it lacks (an old
    model) give no warning of that kind.
    """
    require_model_access(user, trained_model)
    metrics = trained_model.metrics or {}
    cut_short = trained_model.cut_short or trained_model.holds_partial_model
    if not (trained_model.is_ready or cut_short):
        return []
    warnings: list[ModelWarning] = []
    if cut_short:
        warnings.append(
            ModelWarning(
                code="cut_short",
                text="Cut short: the worker died before this training finished, so this "
                "is the model of the rounds finished before.",
            )
        )
    if metrics.get("mean_total_cost") is None:
        return warnings
    labels = vocabulary_of(trained_model).class_labels
    nothing = (metrics.get("baselines") or {}).get("order_nothing") or {}
    own, plain = metrics.get("mean_total_cost"), nothing.get("mean_total_cost")
    if plain is not None and own >= plain:
        how = _conclusion_words(nothing.get("conclusion"), labels) or "order nothing"
        warnings.append(
            ModelWarning(
                code="no_gain",
                text=(
                    f"No better than ordering no test: on held-out patients it cost "
                    f"{format_money(own)} per patient, against {format_money(plain)} to {how}."
                ),
            )
        )
    if not metrics.get("test_order_frequency"):
        warnings.append(
            ModelWarning(
                code="no_tests",
                text="Orders no test at all: every patient gets the same advice, "
                "whatever their results.",
            )
        )
    support = metrics.get("support") or {}
    measured, thin = support.get("n_measured") or 0, support.get("n_thin") or 0
    if measured and thin / measured >= THIN_SHARE:
        warnings.append(
            ModelWarning(
                code="thin_support",
                text=(
                    f"Rests on very few cases: {thin} of {measured} held-out conclusions "
                    f"({100 * thin / measured:.0f}%) come from fewer than "
                    f"{support.get('threshold', THIN_SUPPORT)} training patients."
                ),
            )
        )
    return warnings
