"""A clinician's diagnosis, one saved step at a time.

Every step is stored the moment it is taken, with the advice that was on the
screen then (recomputed from the saved steps, so a reloaded or resumed case
shows exactly the same advice) and whether the clinician followed it.
"""

from __future__ import annotations

import math
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from ..models import DiagnosisCase, DiagnosisStep, DiagnosticTest, TrainedModel
from ..permissions import require_case_access, require_clinician
from ..selectors.cases import CaseState, compute_case_state
from .costs import cost_model_from_snapshot

__all__ = ["classify", "mark_unavailable", "record_result", "refer", "start_case"]


@transaction.atomic
def start_case(*, user, trained_model: TrainedModel, patient_reference: str = "") -> DiagnosisCase:
    """Open a case for a new patient with a ready model."""
    require_clinician(user)
    if not trained_model.is_ready:
        raise ValidationError(
            f"Model {trained_model} is not ready (status {trained_model.status}); choose a trained model."
        )
    return DiagnosisCase.objects.create(
        trained_model=trained_model,
        clinician=user,
        patient_reference=(patient_reference or "").strip()[:200],
    )


def _lock_open_case(user, case: DiagnosisCase) -> DiagnosisCase:
    """The case row locked for this transaction, after permission and status checks."""
    locked = (
        DiagnosisCase.objects.select_for_update()
        .select_related("trained_model", "trained_model__dataset")
        .get(pk=case.pk)
    )
    require_case_access(user, locked)
    if not locked.is_open:
        raise ValidationError(f"This case is closed ({locked.status}); it accepts no more steps.")
    return locked


def _check_test(case: DiagnosisCase, test: DiagnosticTest) -> None:
    trained = case.trained_model
    if test.dataset_id != trained.dataset_id:
        raise ValidationError(
            f"Test {test.name!r} does not belong to dataset {trained.dataset.name!r}."
        )
    names = trained.cost_snapshot.get("names", [])
    if test.index >= len(names) or names[test.index] != test.name:
        raise ValidationError(
            f"Test {test.name!r} was added or moved after this model was trained; the model cannot use it."
        )


def clean_value(test: DiagnosticTest, value: Any) -> float:
    """``value`` as the float the model expects: in range for numeric, a choice code for nominal."""
    if test.is_nominal:
        for choice in test.choices:
            if isinstance(value, str) and value.strip() == str(choice["label"]):
                return float(choice["code"])
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        codes = {int(c["code"]) for c in test.choices}
        if math.isnan(number) or number != int(number) or int(number) not in codes:
            options = ", ".join(f"{c['code']} ({c['label']})" for c in test.choices)
            raise ValidationError(f"{test.display_label}: {value!r} is not one of {options}.")
        return float(int(number))
    if isinstance(value, bool):
        raise ValidationError(f"{test.display_label}: {value!r} is not a number.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValidationError(f"{test.display_label}: {value!r} is not a number.") from None
    if not math.isfinite(number):
        raise ValidationError(f"{test.display_label}: the value must be a finite number.")
    unit = f" {test.unit}" if test.unit else ""
    if test.min_value is not None and number < test.min_value:
        raise ValidationError(
            f"{test.display_label}: {number:g}{unit} is below the minimum {test.min_value:g}{unit}."
        )
    if test.max_value is not None and number > test.max_value:
        raise ValidationError(
            f"{test.display_label}: {number:g}{unit} is above the maximum {test.max_value:g}{unit}."
        )
    return number


def _add_step(case: DiagnosisCase, user, state: CaseState, **fields) -> DiagnosisStep:
    last = case.steps.aggregate(last=Max("position"))["last"]
    step = DiagnosisStep.objects.create(
        case=case,
        position=0 if last is None else last + 1,
        created_by=user,
        advice=state.advice,
        **fields,
    )
    DiagnosisCase.objects.filter(pk=case.pk).update(updated_at=timezone.now())
    return step


@transaction.atomic
def record_result(*, user, case: DiagnosisCase, test: DiagnosticTest, value: Any) -> DiagnosisStep:
    """Save a test result, charging its marginal price for this patient (group discounts apply)."""
    case = _lock_open_case(user, case)
    _check_test(case, test)
    state = compute_case_state(case)
    if test.index in state.known:
        raise ValidationError(f"{test.display_label} already has a result for this patient.")
    number = clean_value(test, value)
    cost_model = cost_model_from_snapshot(case.trained_model.cost_snapshot)
    price = cost_model.marginal_cost(test.index, frozenset(state.known))
    advice = state.advice or {}
    return _add_step(
        case,
        user,
        state,
        kind=DiagnosisStep.RESULT,
        test=test,
        value=number,
        price=price,
        followed_advice=advice.get("kind") == "extract" and advice.get("test_index") == test.index,
    )


@transaction.atomic
def mark_unavailable(*, user, case: DiagnosisCase, test: DiagnosticTest) -> DiagnosisStep:
    """Record that a test cannot be done for this patient (free; the model works around it)."""
    case = _lock_open_case(user, case)
    _check_test(case, test)
    state = compute_case_state(case)
    if test.index in state.known:
        raise ValidationError(
            f"{test.display_label} already has a result; it cannot be unavailable."
        )
    if test.index in state.unavailable:
        raise ValidationError(f"{test.display_label} is already marked unavailable.")
    return _add_step(
        case,
        user,
        state,
        kind=DiagnosisStep.UNAVAILABLE,
        test=test,
        price=0.0,
        followed_advice=False,
    )


@transaction.atomic
def classify(*, user, case: DiagnosisCase, label: int) -> DiagnosisStep:
    """Conclude with class ``label`` (may overrule the advice) and close the case."""
    given, case = case, _lock_open_case(user, case)
    labels = case.trained_model.dataset.class_labels
    try:
        index = int(label)
    except (TypeError, ValueError):
        raise ValidationError(f"Class {label!r} is not a class number.") from None
    if (
        isinstance(label, bool)
        or not 0 <= index < len(labels)
        or (isinstance(label, float) and label != index)
    ):
        raise ValidationError(
            f"Class {label!r} is not one of 0..{len(labels) - 1} ({', '.join(labels)})."
        )
    state = compute_case_state(case)
    advice = state.advice or {}
    step = _add_step(
        case,
        user,
        state,
        kind=DiagnosisStep.CLASSIFY,
        label=index,
        price=0.0,
        followed_advice=advice.get("kind") == "classify" and advice.get("label_index") == index,
    )
    _close(case, DiagnosisCase.CLASSIFIED, final_label=index)
    given.refresh_from_db()
    return step


@transaction.atomic
def refer(*, user, case: DiagnosisCase) -> DiagnosisStep:
    """Refer the patient to a specialist and close the case."""
    given, case = case, _lock_open_case(user, case)
    state = compute_case_state(case)
    step = _add_step(
        case,
        user,
        state,
        kind=DiagnosisStep.REFER,
        price=0.0,
        followed_advice=(state.advice or {}).get("kind") == "reject",
    )
    _close(case, DiagnosisCase.REFERRED, final_label=None)
    given.refresh_from_db()
    return step


def _close(case: DiagnosisCase, status: str, *, final_label: int | None) -> None:
    now = timezone.now()
    DiagnosisCase.objects.filter(pk=case.pk).update(
        status=status, final_label=final_label, closed_at=now, updated_at=now
    )
