"""One clinician's step, from every front door: a typed command in, the case's state out.

The screen, the session API (``/api``) and ``/api/v1`` only turn what was posted into a
:data:`StepCommand` (:func:`command_from_fields`, the one map from an action's name and
fields to a command) and render what :func:`apply_step` answers.  :func:`apply_step` is the
one entry point of a step.  In one transaction, and once each, it

* reads and locks the case row (:class:`~diagnosis.clinic.permissions.CaseNotFound` when it is
  missing *or* not the user's to read: the same answer);
* checks that the user may act on it (a team lead who only reads it: ``PermissionDenied``)
  and that it is open (:class:`CaseClosed`);
* refuses a form made from an older version of the case (a stale tab, or the second press
  of a double submit) with :class:`StaleCase`, whose message says what changed since, by
  whom and when (nothing is saved);
* dispatches the command: a result, several results, a test unavailable, a conclusion, a
  referral (:func:`take_step`), a correction or an undo, all in this module, with
  an overrule's optional reason stored on the steps that do not follow the advice;
* writes one row to the case access log.

Every step is stored the moment it is taken, with the advice that was on the screen then
(recomputed from the saved steps, so a reloaded or resumed case shows exactly the same advice)
and whether the clinician followed it.

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
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from diagnosis.catalog.models import Dataset, DiagnosticTest
from diagnosis.catalog.selectors.vocabulary import vocabulary_of
from diagnosis.selectors import raw_rows
from diagnosis.shared.advice import Advice
from diagnosis.training.models import TrainedModel

from ..models import CaseAccess, DiagnosisCase, DiagnosisStep
from ..permissions import CaseNotFound, require_case_access
from ..selectors.case_audit import case_events, case_steps, describe_event
from ..selectors.cases import CaseState, compute_case_state, dataset_tests_of
from ..selectors.step_context import StepContext
from .access_log import log_case_access

__all__ = [
    "ACTIONS",
    "CaseClosed",
    "Classify",
    "Correct",
    "Implausibility",
    "ImplausibleValue",
    "MarkUnavailable",
    "REASON_MAX",
    "RecordResult",
    "RecordResults",
    "Refer",
    "StaleCase",
    "StepCommand",
    "StepTaken",
    "Undo",
    "apply_step",
    "check_open_for_steps",
    "check_seen",
    "classify",
    "clean_value",
    "command_from_fields",
    "hold_steps",
    "implausibility",
    "mark_unavailable",
    "record_result",
    "record_results",
    "refer",
    "refresh_case",
    "take_step",
    "touched_case_row",
]

#: The steps a clinician (or a program, through the API) can take on an open case.
ONE_STEP_ACTIONS = ("result", "unavailable", "classify", "refer")


class CaseClosed(ValidationError):
    """The case is classified or referred: it accepts no more steps."""


@dataclass(frozen=True)
class Implausibility:
    """A value inside its test's hard range but outside its plausible range."""

    test: str  # the test's name (the API's field)
    label: str  # the clinician's name for it
    value: float
    low: float | None
    high: float | None
    unit: str

    @property
    def range_text(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if self.low is not None and self.high is not None:
            return f"{self.low:g}–{self.high:g}{unit}"
        if self.low is not None:
            return f"at least {self.low:g}{unit}"
        return f"at most {self.high:g}{unit}"

    @property
    def message(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return (
            f"{self.label} of {self.value:g}{unit} is outside the plausible range "
            f"{self.range_text}. Confirm it is right?"
        )

    def record(self) -> dict[str, Any]:
        """What a step keeps of the range the clinician confirmed against."""
        return {"min": self.low, "max": self.high, "unit": self.unit}

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "label": self.label,
            "value": self.value,
            "plausible_min": self.low,
            "plausible_max": self.high,
            "unit": self.unit,
            "message": self.message,
        }


class ImplausibleValue(ValidationError):
    """Values outside their plausible range, not confirmed: nothing was saved.

    ``found`` lists them; send the step again confirmed (``confirm_implausible``) to save.
    """

    def __init__(self, found: list[Implausibility], *, by_test: bool = False) -> None:
        self.found = found
        if by_test:
            super().__init__({f.test: [f.message] for f in found})
        else:
            super().__init__(" ".join(f.message for f in found))


def implausibility(test: DiagnosticTest, number: float) -> Implausibility | None:
    """Whether ``number`` (already in the hard range) is outside ``test``'s plausible range."""
    if test.is_nominal:
        return None
    low, high = test.plausible_min, test.plausible_max
    if (low is None or number >= low) and (high is None or number <= high):
        return None
    return Implausibility(
        test=test.name, label=test.display_label, value=number, low=low, high=high, unit=test.unit
    )


def _confirms(confirm: bool | Collection[str], test: DiagnosticTest) -> bool:
    """``confirm``: True for every value, or the names of the tests whose values are confirmed."""
    if isinstance(confirm, bool):
        return confirm
    return test.name in confirm


def refresh_case(case: DiagnosisCase, *, locked: DiagnosisCase | None = None) -> None:
    """Bring ``case`` up to date after a step (status, dates).

    ``locked``: the row the step's transaction locked and wrote, whose fields the services
    keep current as they write them (``_add_step``, ``_close``): copied, not read again.
    Without it the row is read again with its model, dataset and clinician in the same query,
    so the next read of ``case.trained_model`` costs none (the model's JSON is left out: the
    fitted model comes from the estimator cache).
    """
    if locked is not None:
        if locked is not case:
            for column in DiagnosisCase._meta.concrete_fields:
                setattr(case, column.attname, getattr(locked, column.attname))
        return
    case.refresh_from_db(
        from_queryset=DiagnosisCase.objects.select_related(
            "trained_model", "trained_model__dataset", "clinician"
        ).defer("trained_model__model_json")
    )


def _step_transaction(service):
    """``transaction.atomic`` around a one-step service, without a savepoint of its own when
    the caller (``step.apply_step``) hands it the :class:`StepContext` of the row
    it locked in this transaction: an error there rolls that whole transaction back anyway
    (two statements fewer per step). Called without one it is ``transaction.atomic`` as usual.
    """

    @functools.wraps(service)
    def in_transaction(*args, **kwargs):
        context: StepContext | None = kwargs.get("context")
        if context is not None:
            context.check_locked()
        with transaction.atomic(savepoint=context is None):
            return service(*args, **kwargs)

    return in_transaction


def _lock_open_case(user, case: DiagnosisCase, context: StepContext | None = None) -> DiagnosisCase:
    """The case row locked for this transaction, after permission and status checks.

    With the ``context`` of the row the caller locked in this transaction, that row (not
    read nor locked again).
    """
    if context is not None:  # made by the one entry point after these checks: not again
        context.check_locked()
        return context.for_case(case).case
    locked = _select_for_update(case)
    check_open_for_steps(user, locked)
    return locked


def touched_case_row(pk: int) -> DiagnosisCase | None:
    """Case ``pk`` with its model (JSON deferred) and dataset, its row alone locked and its
    ``updated_at`` set to now, for the step about to be taken in the caller's transaction
    (which undoes it with everything else if the step fails).

    On PostgreSQL one raw statement written once per process (``selectors.raw_rows``): an
    ``UPDATE`` of the case row ``RETURNING`` it joined to its model and dataset, which takes
    the same lock as ``SELECT ... FOR NO KEY UPDATE OF`` the case (the key is not changed;
    the model's and dataset's rows, read through ``FROM``, are not locked).  Elsewhere the
    same through the ORM, in two statements.
    """
    try:
        pk = int(pk)
    except (TypeError, ValueError):
        return None
    now = timezone.now()
    if transaction.get_connection().vendor != "postgresql":
        case = (
            DiagnosisCase.objects.select_for_update(of=("self",), no_key=True)
            .select_related("trained_model", "trained_model__dataset")
            .defer("trained_model__model_json")
            .filter(pk=pk)
            .first()
        )
        if case is not None:
            DiagnosisCase.objects.filter(pk=pk).update(updated_at=now)
            case.updated_at = now
        return case
    case_part, model_part, dataset_part = _case_row_parts()
    rows = raw_rows.fetch_instances(
        (case_part, model_part, dataset_part), _touched_case_sql(), [now, pk]
    )
    if not rows:
        return None
    case, trained, dataset = rows[0]
    TrainedModel.dataset.field.set_cached_value(trained, dataset)
    DiagnosisCase.trained_model.field.set_cached_value(case, trained)
    return case


def _case_row_parts() -> tuple[raw_rows.Columns, raw_rows.Columns, raw_rows.Columns]:
    return (
        raw_rows.columns(DiagnosisCase, DiagnosisCase._meta.db_table),
        raw_rows.columns(TrainedModel, "m", defer=("model_json",)),
        raw_rows.columns(Dataset, "d"),
    )


@functools.cache
def _touched_case_sql() -> str:
    case, trained, dataset = _case_row_parts()
    quote = transaction.get_connection().ops.quote_name
    updated = quote(DiagnosisCase._meta.get_field("updated_at").column)
    return (
        f"UPDATE {quote(case.alias)} SET {updated} = %s"
        f" FROM {trained.table}"
        f" INNER JOIN {dataset.table} ON ({trained.column('dataset')} = {dataset.column('id')})"
        f" WHERE {case.column('id')} = %s"
        f" AND {case.column('trained_model')} = {trained.column('id')}"
        f" RETURNING {case.sql}, {trained.sql}, {dataset.sql}"
    )


def check_open_for_steps(user, locked: DiagnosisCase) -> None:
    """Raise unless ``user`` may take a step on ``locked`` (its row locked) and it is open."""
    require_case_access(user, locked)
    if not locked.is_open:
        raise CaseClosed(f"This case is closed ({locked.status}); it accepts no more steps.")


def _select_for_update(case: DiagnosisCase) -> DiagnosisCase:
    """The case row, locked; only that row (``of``), and ``no_key``: rows that merely refer to
    the case (an access-log row) are not held up, and the model's and dataset's rows are
    never locked, so steps on different cases of one model run side by side.

    The case's model (and its dataset) is the one the caller read with the case, when it did:
    a case never changes model, and its JSON is not needed (the estimator cache has it).
    """
    cases = DiagnosisCase.objects.select_for_update(of=("self",), no_key=True)
    if DiagnosisCase.trained_model.is_cached(case) and TrainedModel.dataset.is_cached(
        case.trained_model
    ):
        locked = cases.get(pk=case.pk)
        if locked.trained_model_id == case.trained_model_id:
            locked.trained_model = case.trained_model
        if DiagnosisCase.clinician.is_cached(case) and locked.clinician_id == case.clinician_id:
            locked.clinician = case.clinician  # the author of its steps (case_audit.case_steps)
        return locked
    return (
        cases.select_related("trained_model", "trained_model__dataset")
        # the fitted model comes from the estimator cache; its JSON is read only on a miss
        .defer("trained_model__model_json")
        .get(pk=case.pk)
    )


def hold_steps(case: DiagnosisCase, *, touched: bool = False) -> StepContext:
    """The :class:`StepContext` of ``case``, a row locked by this transaction: its dataset's
    tests and its steps (each step's test taken from those tests), read once. The checks,
    advice and price of the step then use these, and ``_add_step`` adds each step it writes."""
    tests = dataset_tests_of(case)
    return StepContext(case=case, steps=case_steps(case, tests=tests), tests=tests, touched=touched)


def _check_test(case: DiagnosisCase, test: DiagnosticTest) -> None:
    trained = case.trained_model
    if test.dataset_id != trained.dataset_id:
        raise ValidationError(
            f"Test {test.name!r} does not belong to dataset {trained.dataset.name!r}."
        )
    names = trained.snapshot.names
    if test.index >= len(names) or names[test.index] != test.name:
        raise ValidationError(
            f"Test {test.name!r} was added or moved after this model was trained; "
            "the model cannot use it."
        )


def _number_text(value: float, unit: str) -> str:
    return f"{value:g}{unit}"


# A choice's code typed as text: "1", "-1", "1.0"; nothing around it.
_CODE_TEXT = re.compile(r"-?[0-9]+(?:\.0*)?")


def clean_value(test: DiagnosticTest, value: Any, choices: list | None = None) -> float:
    """``value`` as the float the model expects: in range for numeric, a choice code for nominal.

    The one place a result is checked: the screen's form and the JSON API both
    call it, so they accept and refuse the same values with the same words.
    A nominal value may be the choice's code (``1``, ``"1"``, ``"1.0"``) or
    its label (``"male"``), exactly: ``" male"`` or ``"1 "`` is refused, saying so, as
    class labels are (a padded value is a sender's bug, not a choice). ``choices`` are the
    test's choices as the case's model learned them
    (:class:`~diagnosis.shared.vocabulary.Vocabulary`); without them, today's.
    """
    label = test.display_label
    choices = list(test.choices or []) if choices is None else choices
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValidationError(f"Enter the {label} result.")
    if test.is_nominal:
        if isinstance(value, str):
            for choice in choices:
                if value == str(choice["label"]):
                    return float(choice["code"])
            if value != value.strip():
                options = ", ".join(f"{c['code']} ({c['label']})" for c in choices)
                raise ValidationError(
                    f"The {label} result {value!r} has spaces before or after it; send one of "
                    f"the {label} results exactly as listed: {options}."
                )
        try:
            if isinstance(value, str) and not _CODE_TEXT.fullmatch(value):
                raise ValueError(value)  # float() would also read " 1", "1e0", "inf", "1_0"
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        codes = {int(c["code"]) for c in choices}
        if (
            isinstance(value, bool)
            or math.isnan(number)
            or not number.is_integer()
            or int(number) not in codes
        ):
            options = ", ".join(f"{c['code']} ({c['label']})" for c in choices)
            raise ValidationError(f"{value!r} is not one of the {label} results: {options}.")
        return float(int(number))
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)
    except (TypeError, ValueError):
        raise ValidationError(
            f"Enter the {label} result as a number ({value!r} is not a number)."
        ) from None
    if not math.isfinite(number):
        raise ValidationError(f"Enter the {label} result as a finite number.")
    unit = f" {test.unit}" if test.unit else ""
    if test.min_value is not None and number < test.min_value:
        raise ValidationError(
            f"{label} must be at least {_number_text(test.min_value, unit)} "
            f"(you entered {number:g})."
        )
    if test.max_value is not None and number > test.max_value:
        raise ValidationError(
            f"{label} must be at most {_number_text(test.max_value, unit)} "
            f"(you entered {number:g})."
        )
    if test.integer_only and not number.is_integer():
        raise ValidationError(
            f"{label} takes whole numbers only; {number:g} is not one "
            f"(enter {math.floor(number):g} or {math.ceil(number):g})."
        )
    return number


def _add_step(
    case: DiagnosisCase, user, state: CaseState, context: StepContext | None, **fields
) -> DiagnosisStep:
    # ``state`` was computed from every saved step under this transaction's row lock.
    last = max((s.position for s in state.steps), default=None)
    step = DiagnosisStep.objects.create(
        case=case,
        position=0 if last is None else last + 1,
        created_by=user,
        advice=state.advice.to_json() if state.advice is not None else None,
        **fields,
    )
    if context is None or not context.touched:  # else this transaction's lock touched it
        case.updated_at = timezone.now()
        DiagnosisCase.objects.filter(pk=case.pk).update(updated_at=case.updated_at)
    if context is not None:
        context.steps.append(step)
    return step


@_step_transaction
def record_result(
    *,
    user,
    case: DiagnosisCase,
    test: DiagnosticTest,
    value: Any,
    context: StepContext | None = None,
    confirm_implausible: bool | Collection[str] = False,
) -> DiagnosisStep:
    """Save a test result, charging its marginal price for this patient (group discounts apply).

    ``context``: the row the caller locked in this transaction, with its steps and tests.
    A value outside the test's plausible range raises :class:`ImplausibleValue` unless
    ``confirm_implausible`` (True, or a collection holding the test's name); the step then
    keeps the confirmation and the range it was confirmed against.
    """
    case = _lock_open_case(user, case, context)
    _check_test(case, test)
    state = compute_case_state(case, context=context, for_screen=False)
    if test.index in state.known:
        raise ValidationError(f"{test.display_label} already has a result for this patient.")
    number = clean_value(test, value, state.vocabulary.choices_for(test))
    cost_model = case.trained_model.snapshot.prices
    problem = _derived_problem(
        case, cost_model, test, number, state.known, state.unavailable, tests=_tests(case, context)
    )
    if problem:
        raise ValidationError(problem)
    odd = implausibility(test, number)
    if odd is not None and not _confirms(confirm_implausible, test):
        raise ImplausibleValue([odd])
    price = cost_model.marginal_cost(test.index, frozenset(state.known))
    step = _add_step(
        case,
        user,
        state,
        context,
        kind=DiagnosisStep.RESULT,
        test=test,
        value=number,
        price=price,
        followed_advice=_follows_extract(state.advice, test.index, cost_model),
        implausible_confirmed=odd is not None,
        plausible_range=odd.record() if odd is not None else None,
    )
    if any(test.index in sources for sources in cost_model.derived.values()):
        _record_computed(case, user, cost_model, context)
    return step


@_step_transaction
def mark_unavailable(
    *, user, case: DiagnosisCase, test: DiagnosticTest, context: StepContext | None = None
) -> DiagnosisStep:
    """Record that a test cannot be done for this patient (free; the model works around it)."""
    case = _lock_open_case(user, case, context)
    _check_test(case, test)
    state = compute_case_state(case, context=context, for_screen=False)
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
        context,
        kind=DiagnosisStep.UNAVAILABLE,
        test=test,
        price=0.0,
        followed_advice=False,
    )


# ------------------------------------------------------------------ derived tests
def _tests(case: DiagnosisCase, context: StepContext | None) -> list[DiagnosticTest]:
    """The case's dataset's tests: as the step's context holds them, else read."""
    return context.tests if context is not None else dataset_tests_of(case)


def _labels(case: DiagnosisCase, indices, tests: list[DiagnosticTest]) -> str:
    label_of = {t.index: t.display_label for t in tests}
    names = case.trained_model.snapshot.names
    return " and ".join(label_of.get(i) or names[i] for i in indices)


def _derived_problem(
    case: DiagnosisCase,
    cost_model,
    test: DiagnosticTest,
    number: float,
    known: dict[int, float],
    unavailable,
    *,
    tests: list[DiagnosticTest],
) -> str | None:
    """Why a typed value of derived ``test`` cannot be recorded now, or None when it can.

    A derived test (thyroid FTI from TT4 and T4U) is never a separate paid step:
    it is recorded only once its inputs are (in the same form or before).  When
    the model's snapshot has its formula, the typed value must agree with the
    inputs within the formula's tolerance (``DerivedFormula.agrees``).
    """
    sources = cost_model.derived.get(test.index)
    if not sources:
        return None
    label = test.display_label
    formula = case.trained_model.snapshot.derived_formulas().get(test.index)
    gone = [s for s in sources if s not in known and s in unavailable]
    missing = [s for s in sources if s not in known]
    if gone:
        return (
            f"{label} is derived from {_labels(case, sources, tests)}, and "
            f"{_labels(case, gone, tests)} is marked unavailable; mark {label} unavailable too."
        )
    if missing:
        how = (
            f"enter {_labels(case, missing, tests)} and {label} is computed for you"
            if formula is not None
            else f"enter it together with {_labels(case, missing, tests)}"
        )
        inputs = _labels(case, sources, tests)
        return f"{label} is derived from {inputs}, not a test of its own: {how}."
    if formula is None:
        return None
    names = case.trained_model.snapshot.names
    try:
        computed = formula.evaluate({names[s]: known[s] for s in sources})
    except ValueError as exc:
        return f"{label} cannot be computed ({exc}); mark it unavailable."
    if not formula.agrees(number, computed):
        return (
            f"{label} {number:g} contradicts {_labels(case, sources, tests)}: {formula.text} = "
            f"{computed:.4g}, and a typed value may differ by {formula.tolerance:.0%} at most. "
            "Check the values."
        )
    return None


def _record_computed(
    case: DiagnosisCase, user, cost_model, context: StepContext | None = None
) -> list[DiagnosisStep]:
    """Record every derived test that has a formula and whose inputs are now all known.

    Each is its own step (priced by the snapshot's ``marginal_cost``: nothing,
    its inputs are done), with the advice on screen before it.  A value the
    formula cannot give (a division by zero) or outside the test's range is
    left for the clinician, who may mark the test unavailable.
    """
    snapshot = case.trained_model.snapshot
    formulas, names = snapshot.derived_formulas(), snapshot.names
    tests = {t.index: t for t in _tests(case, context) if t.index in formulas}
    recorded: list[DiagnosisStep] = []
    failed: set[int] = set()
    while True:
        state = compute_case_state(case, context=context, for_screen=False)
        ready = [
            index
            for index, sources in sorted(cost_model.derived.items())
            if index in formulas
            and index in tests
            and index not in failed
            and index not in state.known
            and index not in state.unavailable
            and all(s in state.known for s in sources)
        ]
        if not ready:
            return recorded
        index = ready[0]
        sources = cost_model.derived[index]
        try:
            value = _computed_value(formulas[index], names, sources, state.known)
            number = clean_value(tests[index], value, state.vocabulary.choices_for(tests[index]))
        except (ValueError, ValidationError):
            failed.add(index)
            continue
        recorded.append(
            _add_step(
                case,
                user,
                state,
                context,
                kind=DiagnosisStep.RESULT,
                test=tests[index],
                value=number,
                price=cost_model.marginal_cost(index, frozenset(state.known)),
                followed_advice=_follows_extract(state.advice, index, cost_model),
            )
        )


def _follows_extract(advice: Advice | None, index: int, cost_model) -> bool:
    """Whether a result for test ``index`` is what the advice asked for: the advised test, or
    an input it is derived from (advice to order FTI is advice to order TT4 and T4U: the
    library's ``CostModel.done_closure``, as it prices that order)."""
    advised = advice.test_index if advice is not None and advice.kind == "extract" else None
    return advised is not None and index in cost_model.done_closure({int(advised)})


def _computed_value(formula, names, sources, known) -> float:
    """The formula's value, kept to 4 significant digits (as a lab reports it; well inside
    any tolerance), so a computed FTI reads 84.91, not 84.9057."""
    return float(f"{formula.evaluate({names[s]: known[s] for s in sources}):.4g}")


# ------------------------------------------------------------- several at once
def _derived_depth(cost_model, index: int) -> int:
    sources = cost_model.derived.get(index)
    return 0 if not sources else 1 + max(_derived_depth(cost_model, s) for s in sources)


@transaction.atomic
def record_results(
    *,
    user,
    case: DiagnosisCase,
    results: Any,
    confirm_implausible: bool | Collection[str] = False,
    context: StepContext | None = None,
) -> list[DiagnosisStep]:
    """Record several tests from one form, each as its own step, all or nothing.

    ``results`` maps a test (object or name) to its value, or to ``None`` for
    "unknown / not available" (recorded as :func:`mark_unavailable`).  Every
    value is checked first by :func:`clean_value` and the derived-test rules,
    exactly as for one step; when anything is wrong nothing is saved and the
    :class:`ValidationError` maps each test name to its messages.  Then each is
    recorded, in the order given (a derived test after its inputs), through
    :func:`record_result` / :func:`mark_unavailable`, so every step has its own
    price (``CostModel.marginal_cost`` at that moment) and the advice the screen
    would have shown before it.  A derived test with a formula is computed when
    its inputs are recorded; a typed value for it only has to agree.  When every value is
    valid but some lie outside their plausible range and are not confirmed
    (``confirm_implausible``: True, or the names of the confirmed tests), nothing is saved and
    :class:`ImplausibleValue` lists them by test name.

    ``context``: the row the caller locked in this transaction, with its steps and tests
    (``apply_step``).  Without it the case is locked and its steps held here, as
    ``apply_step`` does: either way each step is taken on that held row, without locking or
    reading the case again.
    """
    caller_held = context is not None
    locked = _lock_open_case(user, case, context)
    if context is None:
        context = hold_steps(locked)
    if not isinstance(results, dict) or not results:
        raise ValidationError(
            'Give the results as an object of test names and values, e.g. {"age": 54}.'
        )
    state = compute_case_state(locked, context=context, for_screen=False)
    tests = _tests(locked, context)
    cost_model = locked.trained_model.snapshot.prices
    errors: dict[str, list[str]] = {}
    chosen: list[tuple[DiagnosticTest, float | None]] = []
    for key, value in results.items():
        field = key.name if isinstance(key, DiagnosticTest) else str(key)
        try:
            test = _model_test(locked, key, context)
            if any(test.index == t.index for t, _ in chosen):
                raise ValidationError(f"{test.display_label} is given twice.")
            if test.index in state.known:
                raise ValidationError(
                    f"{test.display_label} already has a result for this patient."
                )
            if value is None and test.index in state.unavailable:
                raise ValidationError(f"{test.display_label} is already marked unavailable.")
            number = (
                None
                if value is None
                else clean_value(test, value, state.vocabulary.choices_for(test))
            )
        except ValidationError as exc:
            errors.setdefault(field, []).extend(exc.messages)
            continue
        chosen.append((test, number))
    given = {t.index: n for t, n in chosen if n is not None}
    known = {**state.known, **given}
    unknown = set(state.unavailable) | {t.index for t, n in chosen if n is None}
    names = locked.trained_model.snapshot.names
    for test, number in chosen:
        sources = cost_model.derived.get(test.index, ())
        if number is None or any(names[s] in errors for s in sources):
            continue  # an input's own error is said first
        problem = _derived_problem(locked, cost_model, test, number, known, unknown, tests=tests)
        if problem:
            errors.setdefault(test.name, []).append(problem)
    if errors:
        raise ValidationError(errors)
    unconfirmed = [
        odd
        for test, number in chosen
        if number is not None
        and (odd := implausibility(test, number)) is not None
        and not _confirms(confirm_implausible, test)
    ]
    if unconfirmed:
        raise ImplausibleValue(unconfirmed, by_test=True)
    ordered = sorted(chosen, key=lambda item: _derived_depth(cost_model, item[0].index))
    held = len(context.steps)
    for test, number in ordered:
        _record_one_of_several(user, locked, test, number, confirm_implausible, context)
    if not caller_held:  # the caller's case object, as the steps left the locked row
        refresh_case(case, locked=locked)
    return context.steps[held:]


def _record_one_of_several(
    user,
    locked: DiagnosisCase,
    test: DiagnosticTest,
    number: float | None,
    confirm_implausible: bool | Collection[str],
    context: StepContext,
) -> None:
    """One checked value of :func:`record_results` as its own step (a derived test already
    computed from its inputs a moment ago is skipped: the typed value agreed)."""
    if number is None:
        mark_unavailable(user=user, case=locked, test=test, context=context)
        return
    cost_model = locked.trained_model.snapshot.prices
    if test.index in cost_model.derived and (
        test.index in compute_case_state(locked, context=context, for_screen=False).known
    ):
        return
    record_result(
        user=user,
        case=locked,
        test=test,
        value=number,
        confirm_implausible=confirm_implausible,
        context=context,
    )


def _class_index(label: int | float | str, labels: list[str]) -> int:
    """A class given by its index (``1``, ``"1"``) or its name (``"disease"``)."""
    if isinstance(label, str) and label in labels:
        return labels.index(label)
    if isinstance(label, str) and re.fullmatch(r"-?[0-9]+", label):  # exact: not " 1"
        label = int(label)
    if isinstance(label, float) and label.is_integer():
        label = int(label)
    if isinstance(label, bool) or not isinstance(label, int) or not 0 <= label < len(labels):
        choices = ", ".join(f"{i} ({name})" for i, name in enumerate(labels))
        raise ValidationError(f"Class {label!r} is not one of {choices}.")
    return label


@_step_transaction
def classify(
    *, user, case: DiagnosisCase, label: int | str, context: StepContext | None = None
) -> DiagnosisStep:
    """Conclude with class ``label`` (index or name; may overrule the advice) and close the case."""
    given, case = case, _lock_open_case(user, case, context)
    index = _class_index(label, vocabulary_of(case.trained_model).class_labels)
    state = compute_case_state(case, context=context, for_screen=False)
    advice = state.advice
    step = _add_step(
        case,
        user,
        state,
        context,
        kind=DiagnosisStep.CLASSIFY,
        label=index,
        price=0.0,
        followed_advice=advice is not None
        and advice.kind == "classify"
        and advice.label_index == index,
    )
    _close(case, DiagnosisCase.CLASSIFIED, final_label=index)
    refresh_case(given, locked=case)
    return step


@_step_transaction
def refer(*, user, case: DiagnosisCase, context: StepContext | None = None) -> DiagnosisStep:
    """Refer the patient to a specialist and close the case."""
    given, case = case, _lock_open_case(user, case, context)
    state = compute_case_state(case, context=context, for_screen=False)
    step = _add_step(
        case,
        user,
        state,
        context,
        kind=DiagnosisStep.REFER,
        price=0.0,
        followed_advice=state.advice is not None and state.advice.kind == "reject",
    )
    _close(case, DiagnosisCase.REFERRED, final_label=None)
    refresh_case(given, locked=case)
    return step


def _close(case: DiagnosisCase, status: str, *, final_label: int | None) -> None:
    now = timezone.now()
    DiagnosisCase.objects.filter(pk=case.pk).update(
        status=status, final_label=final_label, closed_at=now, updated_at=now
    )
    case.status, case.final_label, case.closed_at, case.updated_at = status, final_label, now, now


def _model_test(
    case: DiagnosisCase, test: DiagnosticTest | str | None, context: StepContext | None = None
) -> DiagnosticTest:
    """``test`` (an object or a test name) as one of the tests ``case``'s model was trained with."""
    trained = case.trained_model
    names = trained.snapshot.names
    if isinstance(test, DiagnosticTest):
        _check_test(case, test)
        return test
    found = (
        next((t for t in _tests(case, context) if t.name == test), None)
        if isinstance(test, str) and test
        else None
    )
    if found is None or found.index >= len(names) or names[found.index] != found.name:
        raise ValidationError(f"Choose one of this model's tests: {', '.join(names)}.")
    return found


def take_step(
    *,
    user,
    case: DiagnosisCase,
    action: str,
    test: DiagnosticTest | str | None = None,
    value: Any = None,
    label: int | str | None = None,
    context: StepContext | None = None,
    confirm_implausible: bool | Collection[str] = False,
) -> DiagnosisStep:
    """Take one step on an open case (the screen and the APIs reach it through ``step.apply_step``).

    Parameters
    ----------
    action : {"result", "unavailable", "classify", "refer"}
        ``result`` needs ``test`` and ``value`` (checked by :func:`clean_value`);
        ``unavailable`` needs ``test``; ``classify`` needs ``label`` (class
        index or name); ``refer`` needs nothing.
    test : DiagnosticTest or str
        The test, or its name; it must be one the case's model was trained with.
    context : StepContext, optional
        ``case``'s row as the caller locked it in this transaction, with its steps and tests
        (``step.apply_step``): the step is taken on it, not locked or read again.
    confirm_implausible : bool or collection of test names
        A result outside its test's plausible range is saved only when confirmed.

    Raises
    ------
    CaseNotFound
        When ``user`` may not act on ``case`` (the same error as a missing case).
    CaseClosed
        When the case is already classified or referred.
    ImplausibleValue
        A result outside its plausible range, not confirmed (nothing saved).
    ValidationError
        On an unknown action, a missing or bad test, value or label.
    """
    if action not in ONE_STEP_ACTIONS:
        raise ValidationError(
            "action must be one of " + ", ".join(f'"{a}"' for a in ONE_STEP_ACTIONS) + "."
        )
    if context is None:  # else the entry point that holds the row checked both, once
        require_case_access(user, case)
        if not case.is_open:  # checked again under the row lock; answers before other checks
            raise CaseClosed(f"This case is closed ({case.status}); it accepts no more steps.")
    if action == "refer":
        return refer(user=user, case=case, context=context)
    if action == "classify":
        if label is None or label == "":
            raise ValidationError("Choose the class to conclude (label is required to classify).")
        return classify(user=user, case=case, label=label, context=context)
    chosen = _model_test(case, test, context)
    if action == "unavailable":
        return mark_unavailable(user=user, case=case, test=chosen, context=context)
    return record_result(
        user=user,
        case=case,
        test=chosen,
        value=value,
        context=context,
        confirm_implausible=confirm_implausible,
    )


#: Every action a clinician or a program can post on an open case, by the name it is posted as.
ACTIONS = (*ONE_STEP_ACTIONS, "correct", "undo", "results")


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
    the step left it, and the case's :class:`~diagnosis.clinic.selectors.cases.CaseState` for the
    answer, computed when first read (the screen redirects and never reads it).  After a
    one-test step, several results or a conclusion the state comes from what the step read and
    wrote under the lock, not from reading the case again."""

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
    needs ``confirm_implausible`` (else :class:`ImplausibleValue`),
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
    _check_test(locked, original.test)
    if original.test.index in locked.trained_model.snapshot.derived_formulas():
        raise ValidationError(
            f"{original.test.display_label} is computed from its inputs; correct those instead "
            "and it is computed again."
        )
    number = clean_value(
        original.test, command.value, vocabulary_of(locked.trained_model).choices_for(original.test)
    )
    if number == original.value:
        raise ValidationError(
            f"{original.test.display_label} is already recorded as that value; nothing to correct."
        )
    why = _reason(command.reason, what="value is corrected", required=True)
    odd = implausibility(original.test, number)
    if odd is not None and not command.confirm_implausible:
        raise ImplausibleValue([odd])
    state = compute_case_state(locked, for_screen=False)
    replacement = _add_step(
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
    _record_computed(case, user, cost_model)


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


def _record_results(
    user, locked: DiagnosisCase, context: StepContext, command: RecordResults
) -> list[DiagnosisStep]:
    """Several results from one form through :func:`record_results` (all or nothing), taken
    on the held row; an overrule's reason goes on each of them that does not follow the
    advice of its moment."""
    why = _reason(command.reason, what="advice is overruled", required=False)
    steps = record_results(
        user=user,
        case=locked,
        results=command.results,
        confirm_implausible=command.confirm_implausible,
        context=context,
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
    :func:`take_step`; an overrule's reason kept when the step does not follow the advice."""
    why = _reason(command.reason, what="advice is overruled", required=False)
    if isinstance(command, RecordResult):
        taken = take_step(
            user=user,
            case=locked,
            action="result",
            test=command.test,
            value=command.value,
            context=context,
            confirm_implausible=command.confirm_implausible,
        )
    elif isinstance(command, MarkUnavailable):
        taken = take_step(
            user=user, case=locked, action="unavailable", test=command.test, context=context
        )
    elif isinstance(command, Classify):
        taken = take_step(
            user=user, case=locked, action="classify", label=command.label, context=context
        )
    elif isinstance(command, Refer):
        taken = take_step(user=user, case=locked, action="refer", context=context)
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
    locked = touched_case_row(case_id)
    if locked is None:
        raise CaseNotFound(case_id)
    if locked.clinician_id == getattr(user, "pk", None):
        locked.clinician = user  # the usual author of its steps (case_audit.case_steps)
    require_case_access(user, locked)  # the one permission check: 404 unless readable, 403 lead
    if not locked.is_open:
        raise CaseClosed(f"This case is closed ({locked.status}); it accepts no more steps.")
    version = _seen(seen)
    # The steps and tests, read once under the lock; a one-test step or several results are
    # taken on this held row (not locked again), each step adding itself to the steps.
    context = hold_steps(locked, touched=True)
    check_seen(user=user, case=locked, seen=version, steps=context.steps)
    held: StepContext | None = None  # the answer then comes from what the step held
    detail = ""
    if isinstance(command, Correct):
        written: tuple[DiagnosisStep, ...] = (_correct(user, locked, command),)
        logged = CaseAccess.CORRECT
    elif isinstance(command, Undo):
        written, logged = (_undo(user, locked, command),), CaseAccess.UNDO
    elif isinstance(command, RecordResults):
        written = tuple(_record_results(user, locked, context, command))
        logged, detail, held = CaseAccess.RESULTS, f"{len(written)} steps", context
    else:
        written = (_one_step(user, locked, context, command),)
        logged, detail, held = CaseAccess.STEP, _ACTION_OF[type(command)], context
    log_case_access(user=user, case_id=locked.pk, action=logged, detail=detail)
    if held is None:
        refresh_case(locked)  # earlier steps marked (a correction, an undo): read afresh
    return StepTaken(steps=written, case=locked, context=held)


#: the access log's word for each one-step command (as it is posted)
_ACTION_OF: Mapping[type, str] = {
    RecordResult: "result",
    MarkUnavailable: "unavailable",
    Classify: "classify",
    Refer: "refer",
}
