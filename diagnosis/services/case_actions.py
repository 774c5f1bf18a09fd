"""Guarded steps and corrections: what the screen and the JSON API post go through here.

:func:`perform_action` is the one entry point of both.  Under the same row lock as
:func:`~diagnosis.services.cases.take_step` it

* refuses a form made from an older version of the case (a stale tab, or the
  second press of a double submit) with :class:`StaleCase`, whose message says
  what changed since, by whom and when (nothing is saved);
* takes a step through ``take_step`` and stores an overrule's optional reason
  with it;
* corrects a recorded value (:func:`correct_result`) or undoes the last step
  (:func:`undo_last_step`).

Corrections keep the audit: the original step stays in the record, marked
``corrected`` (with the step that replaces it) or ``undone``, with who, when and
why.  The advice after a correction is recomputed from the corrected state,
like after any step.

Money: a test that was drawn has been paid.  An undone result keeps its price
in the running cost (no refund), and ordering that test again charges it again;
a corrected value is a typing fix and costs nothing extra (its replacement step
is priced 0).  Undoing a free step (a test marked unavailable) changes no cost.

Undoing a correction (the last step is a corrected value's replacement) restores
the value it replaced: the replacement is marked undone and the original is marked
``restored``, which counts again and keeps the correction's record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ..models import CaseAccess, DiagnosisCase, DiagnosisStep
from ..selectors.case_audit import case_events, describe_event
from ..selectors.cases import compute_case_state
from ..selectors.step_context import StepContext
from ..selectors.vocabulary import vocabulary_of
from ..shared.costs import cost_model_from_snapshot, formulas_from_snapshot
from . import cases as case_steps
from .access_log import log_case_access

__all__ = [
    "ACTIONS",
    "REASON_MAX",
    "ActionTaken",
    "StaleCase",
    "check_seen",
    "correct_result",
    "perform_action",
    "undo_last_step",
]

#: Every action a clinician or a program can post on an open case.
ACTIONS = (*case_steps.ACTIONS, "correct", "undo")
REASON_MAX = 1000


class StaleCase(ValidationError):
    """The form was made from an older version of the case; nothing was saved."""


def _seen(value: Any) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValidationError(
            f"seen must be the case version as a whole number, not {value!r}."
        ) from None
    if number < 0:
        raise ValidationError("seen must not be negative.")
    return number


@dataclass(frozen=True)
class ActionTaken:
    """What :func:`perform_action` did: the step it wrote (or marked), the case as the action
    left it (its row refreshed), and for a step the :class:`StepContext` it was taken in (the
    case's row, steps and tests as the step left them), from which the caller answers without
    reading the steps again; ``None`` after a correction or an undo (read afresh)."""

    step: DiagnosisStep
    case: DiagnosisCase
    context: StepContext | None


def check_seen(
    *,
    user,
    case: DiagnosisCase,
    seen: int | None,
    steps: list[DiagnosisStep] | None = None,
) -> None:
    """Raise :class:`StaleCase` unless ``case`` (locked by the caller) is at version ``seen``.

    ``steps``: every step of ``case``, when the caller read them under the lock.
    """
    if seen is None:
        return
    events = case_events(case, steps=steps)
    if len(events) == seen:
        return
    if len(events) < seen:
        raise StaleCase(
            f"This page claims version {seen} of the case, which has only {len(events)} "
            "changes. Nothing was saved; reload the case."
        )
    missed = "; ".join(describe_event(e, viewer=user) for e in events[seen:])
    raise StaleCase(
        f"This page was out of date: since it was opened, {missed}. Nothing from your form "
        "was saved (if you pressed twice, the first press was saved). Check the case as it "
        "is now and enter it again if it is still needed."
    )


def _reason(reason: Any, *, what: str, required: bool) -> str:
    text = "" if reason is None else str(reason).strip()
    if required and not text:
        raise ValidationError(f"Say why the {what} (the reason is kept in the case's record).")
    if len(text) > REASON_MAX:
        raise ValidationError(f"Keep the reason under {REASON_MAX} characters ({len(text)} given).")
    return text


def _position(value: Any) -> int:
    """The ``position`` of the step to correct (0-based, as stored and as the API returns it)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValidationError("Choose the step to correct (position is required).") from None


def _touch(case: DiagnosisCase) -> None:
    DiagnosisCase.objects.filter(pk=case.pk).update(updated_at=timezone.now())


@transaction.atomic
def correct_result(
    *,
    user,
    case: DiagnosisCase,
    position: int,
    value: Any,
    reason: str,
    seen: int | None = None,
    confirm_implausible: bool = False,
) -> DiagnosisStep:
    """Replace the value of result step ``position`` (0-based); the original stays, marked.

    The replacement is a new step (price 0: the test was already paid) recorded
    with the advice on screen before the correction; the advice afterwards is
    recomputed from the corrected values.  A new value outside the test's plausible range
    needs ``confirm_implausible`` (else :class:`~diagnosis.services.cases.ImplausibleValue`),
    kept with the replacement.
    """
    locked = case_steps._lock_open_case(user, case)
    check_seen(user=user, case=locked, seen=seen)
    original = (
        locked.steps.select_for_update(of=("self",))
        .select_related("test")
        .filter(position=position)
        .first()
    )
    if original is None:
        raise ValidationError(f"This case has no step {position + 1}.")
    if original.kind != DiagnosisStep.RESULT:
        raise ValidationError(
            f"Step {position + 1} is not a test result; only a recorded value can be corrected "
            "(undo the last step instead)."
        )
    if not original.is_active:
        raise ValidationError(
            f"Step {position + 1} was already {original.get_correction_display().lower()}; "
            "correct the step that replaced it."
        )
    case_steps._check_test(locked, original.test)
    if original.test.index in formulas_from_snapshot(locked.trained_model.cost_snapshot):
        raise ValidationError(
            f"{original.test.display_label} is computed from its inputs; correct those instead "
            "and it is computed again."
        )
    number = case_steps.clean_value(
        original.test, value, vocabulary_of(locked.trained_model).choices_for(original.test)
    )
    if number == original.value:
        raise ValidationError(
            f"{original.test.display_label} is already recorded as that value; nothing to correct."
        )
    why = _reason(reason, what="value is corrected", required=True)
    odd = case_steps.implausibility(original.test, number)
    if odd is not None and not confirm_implausible:
        raise case_steps.ImplausibleValue([odd])
    state = compute_case_state(locked, for_screen=False)
    replacement = case_steps._add_step(
        locked,
        user,
        state,
        None,
        kind=DiagnosisStep.RESULT,
        test=original.test,
        value=number,
        price=0.0,
        followed_advice=False,
        implausible_confirmed=odd is not None,
        plausible_range=odd.record() if odd is not None else None,
    )
    original.correction = DiagnosisStep.CORRECTED
    original.superseded_by = replacement
    original.corrected_at = replacement.created_at
    original.corrected_by = user
    original.correction_reason = why
    original.save(
        update_fields=[
            "correction",
            "superseded_by",
            "corrected_at",
            "corrected_by",
            "correction_reason",
        ]
    )
    _recompute_derived(locked, user, original)
    case_steps.refresh_case(case)
    return replacement


def _recompute_derived(
    case: DiagnosisCase, user, corrected: DiagnosisStep, *, how: str = "corrected"
) -> None:
    """A test computed from the corrected one (FTI from TT4) is computed again from the new value.

    Its old step stays in the record, marked undone with the reason; the new one
    is recorded by the same function that computes derived tests after a result.
    """
    snapshot = case.trained_model.cost_snapshot
    formulas = formulas_from_snapshot(snapshot)
    cost_model = cost_model_from_snapshot(snapshot)
    dependents = [
        index
        for index, sources in cost_model.derived.items()
        if index in formulas and corrected.test.index in sources
    ]
    if not dependents:
        return
    stale = case.steps.select_for_update(of=("self",)).filter(
        correction__in=["", DiagnosisStep.RESTORED],
        kind=DiagnosisStep.RESULT,
        test__index__in=dependents,
    )
    now = timezone.now()
    for step in stale:
        step.correction = DiagnosisStep.UNDONE
        step.corrected_at = now
        step.corrected_by = user
        step.correction_reason = f"computed again from the {how} {corrected.test.display_label}"
        step.save(update_fields=["correction", "corrected_at", "corrected_by", "correction_reason"])
    case_steps._record_computed(case, user, cost_model)


@transaction.atomic
def undo_last_step(
    *, user, case: DiagnosisCase, reason: str, seen: int | None = None
) -> DiagnosisStep:
    """Mark the last step that still counts as undone (kept in the record); returns it.

    An undone result's price stays paid (the test was drawn); the test can be
    ordered again, at its price then.  A closed case cannot be undone.  When the
    last step is a corrected value, the value it replaced counts again (marked
    ``restored``; a test computed from it is computed again).
    """
    locked = case_steps._lock_open_case(user, case)
    check_seen(user=user, case=locked, seen=seen)
    last = (
        locked.steps.select_for_update(of=("self",))
        .select_related("test")
        .filter(correction__in=["", DiagnosisStep.RESTORED])
        .order_by("-position")
        .first()
    )
    if last is None:
        raise ValidationError("There is no step to undo on this case.")
    why = _reason(reason, what="step is undone", required=True)
    replaced = (
        locked.steps.select_for_update(of=("self",))
        .select_related("test")
        .filter(superseded_by=last, correction=DiagnosisStep.CORRECTED)
        .first()
    )
    last.correction = DiagnosisStep.UNDONE
    last.superseded_by = None  # a restored value undone: now simply undone
    last.corrected_at = timezone.now()
    last.corrected_by = user
    last.correction_reason = why
    last.save(
        update_fields=[
            "correction",
            "superseded_by",
            "corrected_at",
            "corrected_by",
            "correction_reason",
        ]
    )
    if replaced is not None:  # the correction is undone: the value it replaced counts again
        replaced.correction = DiagnosisStep.RESTORED
        replaced.save(update_fields=["correction"])
        _recompute_derived(locked, user, replaced, how="restored")
    _touch(locked)
    case_steps.refresh_case(case)
    return last


@transaction.atomic
def perform_action(
    *,
    user,
    case: DiagnosisCase | None = None,
    case_id: int | None = None,
    action: str,
    seen: Any = None,
    reason: str = "",
    position: Any = None,
    **step: Any,
) -> ActionTaken:
    """Take ``action`` on an open case if the poster saw its current version.

    Parameters
    ----------
    case, case_id : the case read by the caller, or its id
        With ``case_id`` the case is read and its row locked in one query here
        (``cases.lock_case_for_user``: :class:`CaseNotFound` when missing or not the user's
        to read, like ``selectors.case_for_user``); ``ActionTaken.case`` is the case as the
        action left it either way.
    action : one of :data:`ACTIONS`
        ``result``/``unavailable``/``classify``/``refer`` go to
        :func:`~diagnosis.services.cases.take_step` (with ``step``'s ``test``,
        ``value``, ``label``); ``reason`` is then an overrule's optional reason,
        stored when the step does not follow the advice.  ``correct`` needs
        ``position`` (0-based), ``value`` and ``reason``; ``undo`` needs ``reason``.
        ``step``'s ``confirm_implausible`` confirms a result or correction outside its
        test's plausible range (else ``cases.ImplausibleValue``, nothing saved).
    seen : int, optional
        The case version the form was made from (``case_version``); ``None``
        skips the check (a program that does not track versions).

    Returns
    -------
    ActionTaken
        The step, and for a step its :class:`StepContext`: pass it to
        ``selectors.case_state(context=...)`` for the case as the step left it.

    Raises
    ------
    StaleCase
        The case changed since version ``seen``; the message says how, by whom, when.
    CaseClosed, CaseNotFound, ValidationError
        As :func:`~diagnosis.services.cases.take_step`.
    """
    locked: DiagnosisCase | None = None
    if case is None:
        if case_id is None:
            raise TypeError("perform_action needs the case or its case_id.")
        # first, as a caller reading the case first answers: a case one may not read is not
        # found, whatever else the request holds
        case = locked = case_steps.lock_case_for_user(user=user, pk=case_id)
    elif case_id is not None and case_id != case.pk:
        raise TypeError("perform_action was given a case and another case's id.")
    if action not in ACTIONS:
        raise ValidationError("action must be one of " + ", ".join(f'"{a}"' for a in ACTIONS) + ".")
    seen = _seen(seen)
    if action == "correct":
        corrected = correct_result(
            user=user,
            case=case,
            position=_position(position),
            value=step.get("value"),
            reason=reason,
            seen=seen,
            confirm_implausible=bool(step.get("confirm_implausible")),
        )
        log_case_access(user=user, case_id=case.pk, action=CaseAccess.CORRECT)
        return ActionTaken(step=corrected, case=case, context=None)
    if action == "undo":
        undone = undo_last_step(user=user, case=case, reason=reason, seen=seen)
        log_case_access(user=user, case_id=case.pk, action=CaseAccess.UNDO)
        return ActionTaken(step=undone, case=case, context=None)
    touched = locked is not None  # lock_case_for_user set updated_at with the lock
    if locked is None:
        locked = case_steps._lock_open_case(user, case)
    else:
        case_steps.check_open_for_steps(user, locked)
    # The steps and tests, read once under the lock for the whole step; the step is taken on
    # this locked row (not locked again) and adds itself to the steps.
    context = case_steps.hold_steps(locked, touched=touched)
    check_seen(user=user, case=locked, seen=seen, steps=context.steps)
    why = _reason(reason, what="advice is overruled", required=False)
    taken = case_steps.take_step(user=user, case=locked, action=action, context=context, **step)
    if why and taken.followed_advice:
        raise ValidationError(
            "This step follows the advice; a reason is only recorded when you overrule it."
        )
    if why:
        taken.overrule_reason = why
        taken.save(update_fields=["overrule_reason"])
    log_case_access(user=user, case_id=case.pk, action=CaseAccess.STEP, detail=action)
    case_steps.refresh_case(case, locked=locked)  # the row as this step left it, not read again
    return ActionTaken(step=taken, case=case, context=context)
