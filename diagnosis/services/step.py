"""One clinician's step, from every front door: a typed command in, the case's state out.

The screen, the session API (``/api``) and ``/api/v1`` only turn what was posted into a
:data:`StepCommand` (:func:`command_from_fields`, the one map from an action's name and
fields to a command) and render what :func:`apply_step` answers.  :func:`apply_step` is the
one entry point of a step.  In one transaction, and once each, it

* reads and locks the case row (:class:`~diagnosis.permissions.CaseNotFound` when it is
  missing *or* not the user's to read: the same answer);
* checks that the user may act on it (a team lead who only reads it: ``PermissionDenied``)
  and that it is open (:class:`~diagnosis.services.cases.CaseClosed`);
* refuses a form made from an older version of the case (a stale tab, or the second press
  of a double submit) with :class:`StaleCase`, whose message says what changed since, by
  whom and when (nothing is saved);
* dispatches the command: a result, several results, a test unavailable, a conclusion, a
  referral (through :mod:`~diagnosis.services.cases`), a correction or an undo (here), with
  an overrule's optional reason stored on the steps that do not follow the advice;
* writes one row to the case access log.

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

import functools
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ..models import CaseAccess, DiagnosisCase, DiagnosisStep
from ..permissions import CaseNotFound, require_case_access
from ..selectors.case_audit import case_events, describe_event
from ..selectors.cases import CaseState, compute_case_state
from ..selectors.step_context import StepContext
from ..selectors.vocabulary import vocabulary_of
from . import cases as case_steps
from .access_log import log_case_access

__all__ = [
    "ACTIONS",
    "REASON_MAX",
    "Classify",
    "Correct",
    "MarkUnavailable",
    "RecordResult",
    "RecordResults",
    "Refer",
    "StaleCase",
    "StepCommand",
    "StepTaken",
    "Undo",
    "apply_step",
    "check_seen",
    "command_from_fields",
]

#: Every action a clinician or a program can post on an open case, by the name it is posted as.
ACTIONS = (*case_steps.ACTIONS, "correct", "undo", "results")
REASON_MAX = 1000


# ---------------------------------------------------------------------- the commands
# Each holds what was posted, as posted: the service checks every value against the case's
# model (a test of its own, a value in range, a class it knows) under the row lock, after the
# checks every step shares, so a case one may not read answers "not found" whatever was posted.
@dataclass(frozen=True)
class RecordResult:
    """A test's result: ``value`` a number, or a nominal choice's label or code."""

    test: Any
    value: Any
    confirm_implausible: bool = False  # outside the plausible range, and right
    reason: str = ""  # why the advice is overruled (kept only when it is)


@dataclass(frozen=True)
class RecordResults:
    """Several tests from one form (test name -> value; None = unknown), all or nothing."""

    results: Any
    #: True, or the names of the tests whose implausible values the poster confirmed
    confirm_implausible: bool | Collection[str] = False
    reason: str = ""


@dataclass(frozen=True)
class MarkUnavailable:
    """A test that cannot be done for this patient (free; the model works around it)."""

    test: Any
    reason: str = ""


@dataclass(frozen=True)
class Classify:
    """Conclude with a class (its index or name) and close the case."""

    label: Any
    reason: str = ""


@dataclass(frozen=True)
class Refer:
    """Refer the patient to a specialist and close the case."""

    reason: str = ""


@dataclass(frozen=True)
class Correct:
    """Replace the value of result step ``position`` (0-based); ``reason`` is required."""

    position: Any
    value: Any
    reason: str = ""
    confirm_implausible: bool = False


@dataclass(frozen=True)
class Undo:
    """Mark the last step that still counts as undone; ``reason`` is required."""

    reason: str = ""


StepCommand = RecordResult | RecordResults | MarkUnavailable | Classify | Refer | Correct | Undo


def command_from_fields(
    action: Any,
    *,
    test: Any = None,
    value: Any = None,
    label: Any = None,
    position: Any = None,
    results: Any = None,
    reason: str | None = "",
    confirm_implausible: bool | Collection[str] | None = False,
) -> StepCommand:
    """The command a posted ``action`` and its fields ask for (the screen's form, ``/api``'s
    and ``/api/v1``'s bodies); a ValidationError listing the actions for any other name."""
    why = reason or ""
    confirm = confirm_implausible or False
    if action == "result":
        return RecordResult(test=test, value=value, confirm_implausible=bool(confirm), reason=why)
    if action == "results":
        return RecordResults(results=results, confirm_implausible=confirm, reason=why)
    if action == "unavailable":
        return MarkUnavailable(test=test, reason=why)
    if action == "classify":
        return Classify(label=label, reason=why)
    if action == "refer":
        return Refer(reason=why)
    if action == "correct":
        return Correct(
            position=position, value=value, reason=why, confirm_implausible=bool(confirm)
        )
    if action == "undo":
        return Undo(reason=why)
    raise ValidationError("action must be one of " + ", ".join(f'"{a}"' for a in ACTIONS) + ".")


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


class StepTaken:
    """What :func:`apply_step` did: the steps it wrote or marked (a correction: the
    replacement; an undo: the step undone; several results: each new step), the case row as
    the step left it, and the case's :class:`~diagnosis.selectors.cases.CaseState` for the
    answer, computed when first read (the screen redirects and never reads it).  After a
    one-test step or a conclusion the state comes from what the step read and wrote under the
    lock, not from reading the case again."""

    def __init__(
        self, *, steps: tuple[DiagnosisStep, ...], case: DiagnosisCase, context: StepContext | None
    ) -> None:
        self.steps = steps
        self.case = case
        self._context = context

    @property
    def step(self) -> DiagnosisStep:
        """The one step a one-step command wrote or marked (the last, for several results)."""
        return self.steps[-1]

    @functools.cached_property
    def state(self) -> CaseState:
        # apply_step checked that the user acts on the case: no lead's read-only view here
        return compute_case_state(self.case, context=self._context)


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


def _correct(user, locked: DiagnosisCase, command: Correct) -> DiagnosisStep:
    """Replace the value of result step ``command.position`` (0-based) on the locked row; the
    original stays, marked.

    The replacement is a new step (price 0: the test was already paid) recorded
    with the advice on screen before the correction; the advice afterwards is
    recomputed from the corrected values.  A new value outside the test's plausible range
    needs ``confirm_implausible`` (else :class:`~diagnosis.services.cases.ImplausibleValue`),
    kept with the replacement.
    """
    position = _position(command.position)
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
    assert original.test is not None  # a result names its test
    case_steps._check_test(locked, original.test)
    if original.test.index in locked.trained_model.snapshot.derived_formulas():
        raise ValidationError(
            f"{original.test.display_label} is computed from its inputs; correct those instead "
            "and it is computed again."
        )
    number = case_steps.clean_value(
        original.test, command.value, vocabulary_of(locked.trained_model).choices_for(original.test)
    )
    if number == original.value:
        raise ValidationError(
            f"{original.test.display_label} is already recorded as that value; nothing to correct."
        )
    why = _reason(command.reason, what="value is corrected", required=True)
    odd = case_steps.implausibility(original.test, number)
    if odd is not None and not command.confirm_implausible:
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
    return replacement


def _recompute_derived(
    case: DiagnosisCase, user, corrected: DiagnosisStep, *, how: str = "corrected"
) -> None:
    """A test computed from the corrected one (FTI from TT4) is computed again from the new value.

    Its old step stays in the record, marked undone with the reason; the new one
    is recorded by the same function that computes derived tests after a result.
    """
    assert corrected.test is not None  # a result names its test
    snapshot = case.trained_model.snapshot
    formulas = snapshot.derived_formulas()
    cost_model = snapshot.prices
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


def _undo(user, locked: DiagnosisCase, command: Undo) -> DiagnosisStep:
    """Mark the last step that still counts on the locked row as undone (kept in the record);
    returns it.

    An undone result's price stays paid (the test was drawn); the test can be
    ordered again, at its price then.  When the last step is a corrected value, the value it
    replaced counts again (marked ``restored``; a test computed from it is computed again).
    """
    last = (
        locked.steps.select_for_update(of=("self",))
        .select_related("test")
        .filter(correction__in=["", DiagnosisStep.RESTORED])
        .order_by("-position")
        .first()
    )
    if last is None:
        raise ValidationError("There is no step to undo on this case.")
    why = _reason(command.reason, what="step is undone", required=True)
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
    return last


def _record_results(user, locked: DiagnosisCase, command: RecordResults) -> list[DiagnosisStep]:
    """Several results from one form through ``cases.record_results`` (all or nothing); an
    overrule's reason goes on each of them that does not follow the advice of its moment."""
    why = _reason(command.reason, what="advice is overruled", required=False)
    steps = case_steps.record_results(
        user=user,
        case=locked,
        results=command.results,
        confirm_implausible=command.confirm_implausible,
    )
    if why:
        overruled = [s for s in steps if not s.followed_advice]
        if not overruled:
            raise ValidationError(
                "These steps follow the advice; a reason is only recorded when you overrule it."
            )
        for step in overruled:
            step.overrule_reason = why
            step.save(update_fields=["overrule_reason"])
    return steps


def _one_step(
    user, locked: DiagnosisCase, context: StepContext, command: StepCommand
) -> DiagnosisStep:
    """A result, a test unavailable, a conclusion or a referral, taken on the held row by
    ``cases.take_step``; an overrule's reason kept when the step does not follow the advice."""
    why = _reason(command.reason, what="advice is overruled", required=False)
    if isinstance(command, RecordResult):
        taken = case_steps.take_step(
            user=user,
            case=locked,
            action="result",
            test=command.test,
            value=command.value,
            context=context,
            confirm_implausible=command.confirm_implausible,
        )
    elif isinstance(command, MarkUnavailable):
        taken = case_steps.take_step(
            user=user, case=locked, action="unavailable", test=command.test, context=context
        )
    elif isinstance(command, Classify):
        taken = case_steps.take_step(
            user=user, case=locked, action="classify", label=command.label, context=context
        )
    elif isinstance(command, Refer):
        taken = case_steps.take_step(user=user, case=locked, action="refer", context=context)
    else:  # pragma: no cover - apply_step dispatches the others
        raise TypeError(f"Not a one-step command: {command!r}")
    if why and taken.followed_advice:
        raise ValidationError(
            "This step follows the advice; a reason is only recorded when you overrule it."
        )
    if why:
        taken.overrule_reason = why
        taken.save(update_fields=["overrule_reason"])
    return taken


@transaction.atomic
def apply_step(*, user, case_id: Any, command: StepCommand, seen: Any = None) -> StepTaken:
    """Take ``command`` on open case ``case_id`` if the poster saw its current version.

    ``seen``: the case version the form was made from (``case_version``; ``None`` skips the
    check, for a program that does not track versions).

    Raises
    ------
    CaseNotFound
        The case is missing, or not the user's to read (the same answer).
    PermissionDenied
        A lead clinician who reads the case but takes no step on it.
    CaseClosed
        The case is already classified or referred.
    StaleCase
        The case changed since version ``seen``; the message says how, by whom, when.
    ImplausibleValue
        A value outside its test's plausible range, not confirmed; nothing is saved.
    ValidationError
        A bad value, test, class, position or reason (several results: ``message_dict`` by
        test name); nothing is saved.
    """
    # The row read, locked and touched in one statement; its steps then do not touch it again.
    locked = case_steps.touched_case_row(case_id)
    if locked is None:
        raise CaseNotFound(case_id)
    if locked.clinician_id == getattr(user, "pk", None):
        locked.clinician = user  # the usual author of its steps (case_audit.case_steps)
    require_case_access(user, locked)  # the one permission check: 404 unless readable, 403 lead
    if not locked.is_open:
        raise case_steps.CaseClosed(
            f"This case is closed ({locked.status}); it accepts no more steps."
        )
    version = _seen(seen)
    # The steps and tests, read once under the lock; a one-test step is taken on this held row
    # (not locked again) and adds itself to the steps.
    context = case_steps.hold_steps(locked, touched=True)
    check_seen(user=user, case=locked, seen=version, steps=context.steps)
    if isinstance(command, Correct):
        written: tuple[DiagnosisStep, ...] = (_correct(user, locked, command),)
        log_case_access(user=user, case_id=locked.pk, action=CaseAccess.CORRECT)
    elif isinstance(command, Undo):
        written = (_undo(user, locked, command),)
        log_case_access(user=user, case_id=locked.pk, action=CaseAccess.UNDO)
    elif isinstance(command, RecordResults):
        written = tuple(_record_results(user, locked, command))
        log_case_access(
            user=user,
            case_id=locked.pk,
            action=CaseAccess.RESULTS,
            detail=f"{len(written)} steps",
        )
    else:
        written = (_one_step(user, locked, context, command),)
        log_case_access(
            user=user, case_id=locked.pk, action=CaseAccess.STEP, detail=_ACTION_OF[type(command)]
        )
        # the answer comes from the row, steps and tests as this step left them
        return StepTaken(steps=written, case=locked, context=context)
    case_steps.refresh_case(locked)  # several steps, or earlier ones marked: read afresh
    return StepTaken(steps=written, case=locked, context=None)


#: the access log's word for each one-step command (as it is posted)
_ACTION_OF: Mapping[type, str] = {
    RecordResult: "result",
    MarkUnavailable: "unavailable",
    Classify: "classify",
    Refer: "refer",
}
