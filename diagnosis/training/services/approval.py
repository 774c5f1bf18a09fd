"""Approval before use: a trained model is a draft until a model administrator approves it.

Only an approved model reaches a clinician (``selectors.models``); a retired one is withdrawn
(its existing cases stay readable).  Every change here is one :class:`ModelDecision` row per
model it touches, with who, when, why and the figures it was taken on:

* :func:`approve_model` approves a draft (or a retired model again).  A model flagged "Use
  with caution" (``selectors.models.model_warnings``), or a retrain that costs more than the
  model it replaces, needs a written reason.  Approving a retrain retires the model it
  replaces.
* :func:`retire_model` withdraws an approved model.
* :func:`roll_back` approves again the dataset's most recently retired model that had been
  approved, and retires the current one.
* :func:`keep_replaced_model` keeps the model in use and retires the retrain meant to
  replace it.
* :func:`record_replacement_comparison` (the worker, after a retrain succeeded) scores the
  retrain and the model it replaces on the same held-out patients under the retrain's prices
  and matrix, with ``learners.evaluate``.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from diagnosis.permissions import require_model_admin
from diagnosis.shared.money import format_money

from ..models import ModelDecision, TrainedModel
from ..selectors.model_card import previous_approved_model
from ..selectors.models import ModelWarning

__all__ = [
    "DEMO_REASON",
    "approve_for_demo",
    "approve_model",
    "keep_replaced_model",
    "record_replacement_comparison",
    "replacement_comparison",
    "retire_model",
    "roll_back",
]

log = logging.getLogger(__name__)

DEMO_REASON = "Demo model, approved by the demo set-up (load_demo_data) for trying the app."
MAX_REASON = 2000


def _locked(trained_model: TrainedModel) -> TrainedModel:
    return (
        TrainedModel.objects.select_related("dataset")
        .select_for_update(of=("self",))
        .get(pk=trained_model.pk)
    )


def _set_approval(trained: TrainedModel, approval: str, *, user, reason: str) -> None:
    trained.approval = approval
    trained.approval_by = user
    trained.approval_at = timezone.now()
    trained.approval_reason = reason
    trained.save(update_fields=["approval", "approval_by", "approval_at", "approval_reason"])


def _decide(trained: TrainedModel, action: str, *, user, reason: str, other=None, basis=None):
    return ModelDecision.objects.create(
        trained_model=trained,
        action=action,
        other_model=other,
        user=user,
        username=user.get_username(),
        reason=reason,
        basis=basis or {},
    )


def _clean_reason(reason: str | None) -> str:
    text = (reason or "").strip()
    if len(text) > MAX_REASON:
        raise ValidationError(f"Keep the reason under {MAX_REASON} characters.")
    return text


def _flags(*, user, trained: TrainedModel) -> list[ModelWarning]:
    """Why approving ``trained`` needs a reason: its own warnings, and a retrain that costs
    more than the model it replaces (on the same patients, at the new prices and matrix)."""
    from ..selectors.models import model_warnings

    flags = list(model_warnings(user=user, trained_model=trained))
    compared = trained.replacement_comparison or {}
    if compared.get("comparable") and compared["new"]["mean"] > compared["old"]["mean"]:
        flags.append(
            ModelWarning(
                code="worse_than_replaced",
                text=(
                    "Costs more than the model it replaces: "
                    f"{format_money(compared['new']['mean'])} per patient against "
                    f"{format_money(compared['old']['mean'])}, on the same "
                    "held-out patients at the new prices and error costs."
                ),
            )
        )
    return flags


@transaction.atomic
def approve_model(*, user, trained_model: TrainedModel, reason: str = "") -> TrainedModel:
    """Approve ``trained_model`` for clinicians; a flagged model needs ``reason``.

    Approving a retrain retires the approved model it replaces (both logged).

    Raises
    ------
    PermissionDenied
        Unless ``user`` is a model administrator.
    ValidationError
        When the model has no fitted model, is approved already, or is flagged "Use with
        caution" and no reason is given.
    """
    require_model_admin(user)
    reason = _clean_reason(reason)
    trained = _locked(trained_model)
    cut_short = trained.holds_partial_model
    if not (trained.is_ready or cut_short):
        raise ValidationError(
            f"{trained} has no fitted model (training {trained.get_status_display().lower()}); "
            "only a trained model can be approved."
        )
    if trained.approval == TrainedModel.APPROVED:
        raise ValidationError(f"{trained} is approved already.")
    replaced = None
    if trained.replaces is not None:  # no query when there is none
        replaced = _locked(trained.replaces)
        if replaced.approval != TrainedModel.APPROVED:
            replaced = None
    if replaced is not None and not trained.replacement_comparison:
        # never a replacement without the comparison: measured now if the worker could not
        trained.replacement_comparison = replacement_comparison(new=trained, old=replaced)
        trained.save(update_fields=["replacement_comparison"])
    flags = _flags(user=user, trained=trained)
    if flags and not reason:
        raise ValidationError(
            "This model is flagged “Use with caution”: "
            + " ".join(flag.text for flag in flags)
            + " Write why clinicians should use it anyway, or keep it as a draft."
        )
    basis = {
        "warnings": [flag.to_json() for flag in flags],
        "comparison": trained.replacement_comparison or {},
    }
    if cut_short:
        # Usable from now on, as every succeeded model; ``cut_short`` keeps saying what it is.
        TrainedModel.objects.filter(pk=trained.pk).update(
            status=TrainedModel.SUCCEEDED, cut_short=True
        )
        trained.status, trained.cut_short = TrainedModel.SUCCEEDED, True
    _set_approval(trained, TrainedModel.APPROVED, user=user, reason=reason)
    _decide(trained, ModelDecision.APPROVE, user=user, reason=reason, other=replaced, basis=basis)
    if replaced is not None:
        why = f"Replaced by {trained} (#{trained.pk})."
        _set_approval(replaced, TrainedModel.RETIRED, user=user, reason=why)
        _decide(replaced, ModelDecision.RETIRE, user=user, reason=why, other=trained)
    return trained


@transaction.atomic
def approve_for_demo(*, user, trained_model: TrainedModel) -> TrainedModel:
    """Approve a demo model as the demo set-up trains it, with :data:`DEMO_REASON`."""
    return approve_model(user=user, trained_model=trained_model, reason=DEMO_REASON)


@transaction.atomic
def retire_model(*, user, trained_model: TrainedModel, reason: str = "") -> TrainedModel:
    """Withdraw an approved model: clinicians no longer see it or start cases with it.

    Its existing cases stay readable by their clinicians.
    """
    require_model_admin(user)
    reason = _clean_reason(reason)
    trained = _locked(trained_model)
    if trained.approval != TrainedModel.APPROVED:
        raise ValidationError(f"{trained} is not approved; there is nothing to retire.")
    _set_approval(trained, TrainedModel.RETIRED, user=user, reason=reason)
    _decide(trained, ModelDecision.RETIRE, user=user, reason=reason)
    return trained


@transaction.atomic
def roll_back(*, user, trained_model: TrainedModel, reason: str = "") -> TrainedModel:
    """Retire ``trained_model`` and approve again the model approved before it; that model.

    "Before it" is the same dataset's model retired most recently after having been approved
    (:func:`previous_approved_model`).  Its approval was reviewed once; it needs no new reason.
    """
    require_model_admin(user)
    reason = _clean_reason(reason)
    current = _locked(trained_model)
    if current.approval != TrainedModel.APPROVED:
        raise ValidationError(f"{current} is not approved; only the model in use is rolled back.")
    previous = previous_approved_model(trained_model=current)
    if previous is None:
        raise ValidationError(
            f"No model of {current.dataset.name} was approved before {current}: "
            "there is nothing to roll back to. Retire it instead."
        )
    previous = _locked(previous)
    why = reason or f"Rolled back from {current} (#{current.pk})."
    _set_approval(previous, TrainedModel.APPROVED, user=user, reason=why)
    _decide(previous, ModelDecision.ROLL_BACK, user=user, reason=why, other=current)
    retired_why = reason or f"Rolled back to {previous} (#{previous.pk})."
    _set_approval(current, TrainedModel.RETIRED, user=user, reason=retired_why)
    _decide(current, ModelDecision.RETIRE, user=user, reason=retired_why, other=previous)
    return previous


@transaction.atomic
def keep_replaced_model(*, user, trained_model: TrainedModel, reason: str = "") -> TrainedModel:
    """Keep the model in use and retire the retrain ``trained_model`` (a draft); the kept one."""
    require_model_admin(user)
    reason = _clean_reason(reason)
    draft = _locked(trained_model)
    if draft.approval != TrainedModel.DRAFT or draft.replaces is None:
        raise ValidationError(f"{draft} is not a retrain waiting for a decision.")
    kept = draft.replaces
    why = reason or f"Kept {kept} (#{kept.pk}) in use."
    _set_approval(draft, TrainedModel.RETIRED, user=user, reason=why)
    _decide(
        draft,
        ModelDecision.KEEP_OLD,
        user=user,
        reason=why,
        other=kept,
        basis={"comparison": draft.replacement_comparison or {}},
    )
    return kept


# ------------------------------------------------------------------ the retrain's comparison
def replacement_comparison(*, new: TrainedModel, old: TrainedModel) -> dict[str, Any]:
    """``new`` and ``old`` on ``new``'s held-out patients, both charged ``new``'s prices, error
    matrix and referral price by ``learners.evaluate`` (each model decides as it was trained).

    ``{"comparable": True, "n": patients, "old"/"new": {"mean", "low", "high"} (95% t
    intervals), "difference": {"mean", "low", "high", "p_value"} (new minus old, paired
    t-test), "order_nothing": the new model's baseline}``; ``{"comparable": False, "why"}``
    when the two do not read the same tests.
    """
    from diagnosis.catalog.selectors.datasets import dataset_arrays
    from learners import evaluate
    from learners.significance import mean_interval, paired_t_test

    from ..selectors.model_cache import get_estimator
    from .training_data import RANDOM_STATE, split_indices

    def names(trained: TrainedModel) -> tuple[str, ...] | None:
        return trained.snapshot.names if trained.cost_snapshot else None  # none kept: unknown

    if names(new) != names(old):
        return {
            "comparable": False,
            "why": "The dataset's tests changed since the old model was trained: the two "
            "models read different inputs.",
        }
    X, y, _ = dataset_arrays(new.dataset)
    _, test = split_indices(y, test_size=0.3, random_state=RANDOM_STATE)
    prices = new.snapshot.prices
    costs = {}
    for key, trained in (("old", old), ("new", new)):
        report = evaluate(
            get_estimator(trained),
            X[test],
            y[test],
            test_costs=prices,
            cost_matrix=new.matrix_snapshot,
            reject_cost=new.reject_cost_snapshot,
            delayed="path",
        )
        costs[key] = [float(case.total_cost) for case in report.cases]
    out: dict[str, Any] = {"comparable": True, "n": len(test)}
    for key in ("old", "new"):
        interval = mean_interval(costs[key])
        out[key] = {"mean": interval.mean, "low": interval.low, "high": interval.high}
    paired = paired_t_test(costs["new"], costs["old"])
    out["difference"] = {
        "mean": paired.mean_difference,
        "low": paired.ci_low,
        "high": paired.ci_high,
        "p_value": paired.p_value,
    }
    nothing = ((new.metrics or {}).get("baselines") or {}).get("order_nothing") or {}
    out["order_nothing"] = nothing.get("mean_total_cost")
    return out


def record_replacement_comparison(*, trained_model_id: int) -> None:
    """Store :func:`replacement_comparison` on a succeeded retrain (worker side, no user).

    A failure is logged and leaves the comparison empty: :func:`approve_model` measures it
    again before the retrain can replace anything.
    """
    trained = TrainedModel.objects.select_related("dataset", "replaces").get(pk=trained_model_id)
    if trained.replaces is None or not trained.is_ready or not trained.replaces.is_ready:
        return
    try:
        comparison = replacement_comparison(new=trained, old=trained.replaces)
    except Exception:  # the training itself succeeded; the card says the comparison is missing
        log.exception("comparing retrain %s with model %s failed", trained.pk, trained.replaces_id)
        return
    TrainedModel.objects.filter(pk=trained.pk).update(replacement_comparison=comparison)
