"""A case's record as events (who did what, when), its version, and a patient's earlier cases.

Every write to a case is one event: a step recorded, a value corrected (the
original step marked and its replacement recorded together), or a step undone.
The number of events is the case's *version*: a form carries the version it was
made from, so a step posted from a stale tab (or posted twice) is refused with
the events it missed, by whom and when, instead of being silently applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet

from diagnosis.catalog.models.datasets import range_text
from diagnosis.catalog.selectors.vocabulary import vocabulary_of
from diagnosis.permissions import is_clinician
from diagnosis.selectors import raw_rows
from diagnosis.shared.vocabulary import Vocabulary

from ..models import DiagnosisCase, DiagnosisStep
from ..permissions import require_case_access

__all__ = [
    "CaseEvent",
    "case_events",
    "case_steps",
    "case_version",
    "cases_for_patient",
    "describe_event",
    "earlier_cases_of_patient",
    "events_by_others",
    "outcome_text",
    "step_audit",
    "step_value_text",
    "with_others_acted",
]


@dataclass(frozen=True)
class CaseEvent:
    """One write to a case: ``kind`` is ``recorded``, ``corrected`` or ``undone``."""

    kind: str
    step: DiagnosisStep
    user: AbstractBaseUser | None
    at: datetime
    replacement: DiagnosisStep | None = None  # the corrected value's new step


def case_steps(case: DiagnosisCase, *, tests=None) -> list[DiagnosisStep]:
    """``case``'s steps in order, with their test and authors, read from the database.

    ``tests``: the case's dataset's tests, when the caller has read them (each step's test is
    then taken from them instead of joined into the query).
    """
    if tests is None:
        steps = list(case.steps.select_related("test").order_by("position"))
    else:
        by_id = {t.pk: t for t in tests}
        steps = _steps_of(case)
        for step in steps:
            if step.test_id in by_id:  # any other test (none should be) is read when used
                DiagnosisStep.test.field.set_cached_value(step, by_id[step.test_id])
    _attach_authors(case, steps)
    return steps


def _steps_of(case: DiagnosisCase) -> list[DiagnosisStep]:
    """``case``'s steps by position (on PostgreSQL a raw query written once per process)."""
    if connection.vendor != "postgresql":
        return list(case.steps.order_by("position"))
    part = raw_rows.columns(DiagnosisStep, DiagnosisStep._meta.db_table)
    sql = (
        f"SELECT {part.sql} FROM {part.table} WHERE {part.column('case')} = %s"
        f" ORDER BY {part.column('position')} ASC"
    )
    steps = [row[0] for row in raw_rows.fetch_instances((part,), sql, [case.pk])]
    for step in steps:
        DiagnosisStep.case.field.set_cached_value(step, case)
    return steps


def _attach_authors(case: DiagnosisCase, steps: list[DiagnosisStep]) -> None:
    """Set each step's ``created_by`` and ``corrected_by`` without joining the user table twice
    into the steps' query: the case's clinician (who takes every step of their case) when the
    case was read with it, any other author read in one query."""
    authors = {}
    if DiagnosisCase.clinician.is_cached(case):
        authors[case.clinician_id] = case.clinician
    wanted = {s.created_by_id for s in steps} | {s.corrected_by_id for s in steps}
    missing = wanted - authors.keys() - {None}
    if missing:
        authors.update(get_user_model().objects.in_bulk(missing))
    for step in steps:
        DiagnosisStep.created_by.field.set_cached_value(step, authors[step.created_by_id])
        DiagnosisStep.corrected_by.field.set_cached_value(
            step, authors.get(step.corrected_by_id) if step.corrected_by_id else None
        )


def case_events(
    case: DiagnosisCase, *, steps: list[DiagnosisStep] | None = None
) -> list[CaseEvent]:
    """Every write to ``case`` in the order it happened (no permission check; callers check).

    ``steps``: every step of ``case`` as :func:`case_steps` reads them, when the caller holds
    them (a step service, under the case's row lock: ``StepContext.steps``).
    """
    if steps is None:
        steps = case_steps(case)
    by_pk: dict[int | None, DiagnosisStep] = {s.pk: s for s in steps}
    replacements = {s.superseded_by_id for s in steps if s.superseded_by_id}
    events = []
    for step in steps:
        if step.pk not in replacements:  # a replacement is part of its correction event
            events.append(CaseEvent("recorded", step, step.created_by, step.created_at))
        if step.correction:
            assert step.corrected_at is not None  # the step_correction_marked constraint
            events.append(
                CaseEvent(
                    # a restored value was corrected first; the undo is its replacement's event
                    DiagnosisStep.CORRECTED
                    if step.correction == DiagnosisStep.RESTORED
                    else step.correction,
                    step,
                    step.corrected_by,
                    step.corrected_at,
                    replacement=by_pk.get(step.superseded_by_id),
                )
            )
    events.sort(key=lambda e: (e.at, e.step.position))
    return events


def case_version(case: DiagnosisCase, *, steps: list[DiagnosisStep] | None = None) -> int:
    """How many writes ``case`` has had; a form made from version *n* may only apply to *n*.

    ``steps``: every step of ``case``, when the caller has read them (counted without a query).
    """
    if steps is not None:
        replacements = {s.superseded_by_id for s in steps if s.superseded_by_id}
        return sum(s.pk not in replacements for s in steps) + sum(bool(s.correction) for s in steps)
    stored = case.steps.all()
    recorded = stored.exclude(
        pk__in=stored.filter(superseded_by__isnull=False).values("superseded_by")
    )
    return recorded.count() + stored.exclude(correction="").count()


def step_value_text(step: DiagnosisStep, vocabulary: Vocabulary | None = None) -> str:
    """The recorded value as the clinician entered it: a choice's label, or a number and unit.

    ``vocabulary``: the case's model's words, when the caller already has them.
    """
    if step.value is None or step.test is None:
        return ""
    if step.test.is_nominal:
        # in the words the case's model learned, whatever the choices are called today
        words = vocabulary or vocabulary_of(step.case.trained_model)
        return words.choice_label(step.test, step.value)
    unit = f" {step.test.unit}" if step.test.unit else ""
    return f"{step.value:g}{unit}"


def confirmed_range_text(step: DiagnosisStep) -> str:
    """The plausible range a confirmed implausible value was confirmed against, in words
    ("40–400 mg/dl"), as the step kept it whatever the test's range is now; "" for others."""
    shown = step.plausible_range if step.implausible_confirmed else None
    if not isinstance(shown, dict):
        return ""
    return range_text(shown.get("min"), shown.get("max"), shown.get("unit") or "")


def _step_text(step: DiagnosisStep, class_labels: list[str]) -> str:
    if step.kind == DiagnosisStep.RESULT:
        assert step.test is not None  # a result names its test
        confirmed = confirmed_range_text(step)
        odd = f", confirmed outside the plausible {confirmed}" if confirmed else ""
        return f"{step.test.display_label} = {step_value_text(step)}{odd}"
    if step.kind == DiagnosisStep.UNAVAILABLE:
        assert step.test is not None  # so does an unavailable test
        return f"{step.test.display_label} marked not available"
    if step.kind == DiagnosisStep.CLASSIFY:
        label = step.label
        name = (
            class_labels[label] if label is not None and 0 <= label < len(class_labels) else label
        )
        return f"classified as {name}"
    return "referred"


def _who(user, viewer) -> str:
    name = user.get_username() if user is not None else "someone"
    return f"you ({name})" if viewer is not None and user == viewer else name


def describe_event(event: CaseEvent, *, viewer=None) -> str:
    """One line: what changed, by whom, when (UTC), and why for a correction."""
    labels = vocabulary_of(event.step.case.trained_model).class_labels
    when = f"{event.at:%Y-%m-%d %H:%M:%S} UTC"
    who = _who(event.user, viewer)
    number = event.step.position + 1
    tail = ""
    if event.kind == "recorded":
        what = f"step {number} ({_step_text(event.step, labels)}) was recorded"
    elif event.kind == DiagnosisStep.CORRECTED and event.replacement is not None:
        assert event.step.test is not None  # only a result is corrected
        what = (
            f"step {number} ({event.step.test.display_label}) was corrected from "
            f"{step_value_text(event.step)} to {step_value_text(event.replacement)}"
        )
    else:
        what = f"step {number} ({_step_text(event.step, labels)}) was undone"
        restored = getattr(event.step, "supersedes", None) if event.step.pk else None
        if restored is not None and restored.correction == DiagnosisStep.RESTORED:
            tail = (
                f", undoing the correction of step {restored.position + 1}: "
                f"{step_value_text(restored)} counts again"
            )
    reason = f" (reason: {event.step.correction_reason})" if event.kind != "recorded" else ""
    return f"{what} by {who} at {when}{reason}{tail}"


def events_by_others(case: DiagnosisCase) -> list[CaseEvent]:
    """What anyone but the case's own clinician did on it (shown to the owner)."""
    return [e for e in case_events(case) if e.user is not None and e.user.pk != case.clinician_id]


def with_others_acted(cases: QuerySet[DiagnosisCase]) -> QuerySet[DiagnosisCase]:
    """``cases`` annotated with ``others_acted``: someone else recorded or corrected a step."""
    others = DiagnosisStep.objects.filter(case=OuterRef("pk")).filter(
        ~Q(created_by=OuterRef("clinician"))
        | Q(corrected_by__isnull=False) & ~Q(corrected_by=OuterRef("clinician"))
    )
    return cases.annotate(others_acted=Exists(others))


def outcome_text(case: DiagnosisCase) -> str:
    """How the case ended: "Classified as <class>", "Referred", or "Open"."""
    if case.status == DiagnosisCase.CLASSIFIED:
        return f"Classified as {vocabulary_of(case.trained_model).class_label(case.final_label)}"
    return case.get_status_display()


def _with_outcome(cases) -> list[DiagnosisCase]:
    found = list(cases)
    for case in found:
        case.outcome = outcome_text(case)
    return found


def cases_for_patient(*, user, reference: str, limit: int = 50) -> list[DiagnosisCase]:
    """The user's own cases whose patient reference contains ``reference`` (least privilege)."""
    reference = (reference or "").strip()
    if not is_clinician(user) or not reference:
        return []
    return _with_outcome(
        with_others_acted(
            DiagnosisCase.objects.filter(clinician=user, patient_reference__icontains=reference)
            .select_related("trained_model", "trained_model__dataset")
            .order_by("-created_at", "-id")
        )[:limit]
    )


def earlier_cases_of_patient(*, user, case: DiagnosisCase) -> list[DiagnosisCase]:
    """The user's earlier cases with exactly this case's patient reference, latest first."""
    require_case_access(user, case)
    if not case.patient_reference:
        return []
    return _with_outcome(
        DiagnosisCase.objects.filter(
            clinician=user, patient_reference__iexact=case.patient_reference
        )
        .filter(Q(created_at__lt=case.created_at) | Q(created_at=case.created_at, pk__lt=case.pk))
        .select_related("trained_model", "trained_model__dataset")
        .order_by("-created_at", "-id")[:20]
    )


def step_audit(steps: list[DiagnosisStep], *, viewer=None) -> dict[int, dict]:
    """Per step position: the audit lines to show next to it (its correction, what it replaces).

    ``mark`` words a corrected or undone step (to what, by whom, when, why);
    ``replaces`` is the 1-based number of the step a corrected value replaced;
    ``by_other`` says who recorded it when that was not the case's clinician.
    """
    replaced = {s.superseded_by_id: s for s in steps if s.superseded_by_id}
    by_pk: dict[int | None, DiagnosisStep] = {s.pk: s for s in steps}
    notes: dict[int, dict] = {}
    for step in steps:
        note: dict = {"mark": "", "replaces": None, "by_other": ""}
        when = f"{step.corrected_at:%Y-%m-%d %H:%M} UTC" if step.corrected_at else ""
        who = _who(step.corrected_by, viewer) if step.corrected_by_id else ""
        if step.correction == DiagnosisStep.CORRECTED:
            new = by_pk.get(step.superseded_by_id)
            to = f" to {step_value_text(new)} (step {new.position + 1})" if new else ""
            note["mark"] = f"Corrected{to} by {who}, {when}"
        elif step.correction == DiagnosisStep.RESTORED:
            new = by_pk.get(step.superseded_by_id)
            if new is not None:
                undone_by = _who(new.corrected_by, viewer) if new.corrected_by_id else ""
                undone_at = f"{new.corrected_at:%Y-%m-%d %H:%M} UTC" if new.corrected_at else ""
                note["mark"] = (
                    f"Restored: {step_value_text(step)} counts again, the correction to "
                    f"{step_value_text(new)} (step {new.position + 1}) was undone by {undone_by}, "
                    f"{undone_at}. Corrected by {who}, {when}"
                )
            else:
                note["mark"] = f"Restored (a correction by {who}, {when}, was undone)"
        elif step.correction == DiagnosisStep.UNDONE:
            restored = replaced.get(step.pk)
            if restored is not None and restored.correction == DiagnosisStep.RESTORED:
                note["mark"] = (
                    f"Undone by {who}, {when}: step {restored.position + 1}'s "
                    f"{step_value_text(restored)} counts again"
                )
            else:
                note["mark"] = f"Undone by {who}, {when}"
        if step.pk in replaced:
            note["replaces"] = replaced[step.pk].position + 1
        if step.created_by_id != step.case.clinician_id:
            note["by_other"] = step.created_by.get_username()
        notes[step.position] = note
    return notes


def adherence(steps: list[DiagnosisStep]) -> dict[str, int]:
    """How the steps went with the advice, each kind counted on its own.

    ``followed`` of ``advised``: steps that chose an action where the model advised
    one (a test, a conclusion, a referral).  A corrected value (``corrections``)
    fixes what was typed and a test marked not available (``unavailable``) says
    what could not be done: neither is a choice against the advice, so neither is
    counted in ``advised``.
    """
    replacements = {s.superseded_by_id for s in steps if s.superseded_by_id}
    counts = {"followed": 0, "advised": 0, "corrections": 0, "unavailable": 0}
    for step in steps:
        if step.pk in replacements:
            counts["corrections"] += 1
        elif step.kind == DiagnosisStep.UNAVAILABLE:
            counts["unavailable"] += 1
        elif step.advice:
            counts["advised"] += 1
            counts["followed"] += bool(step.followed_advice)
    return counts
