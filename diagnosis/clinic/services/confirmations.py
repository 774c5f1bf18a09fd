"""Recording a closed case's confirmed diagnosis, one at a time or from a CSV (issue 27).

Only the case's own clinician records it (a lead reads, as for steps), only on a closed case,
and only as one of the classes its model knows: a class is given by its name or its code in
the model's vocabulary snapshot (``shared.vocabulary``), so a class renamed since training
still means what the model meant.  Each recording is a new :class:`ConfirmedDiagnosis` row
(the latest is in force) and one case-access row; the case's steps and costs are never
touched.  A CSV is all or nothing: every row is checked first, every problem is reported
with its line, and nothing is saved unless every row is good.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from diagnosis.catalog.selectors.vocabulary import vocabulary_of
from diagnosis.permissions import require_clinician
from diagnosis.shared.csv_table import read_csv_records

from ..models import CaseAccess, ConfirmedDiagnosis, DiagnosisCase
from ..permissions import CaseNotFound, require_case_access
from .access_log import log_case_access

__all__ = [
    "CSV_COLUMNS",
    "CsvConfirmation",
    "confirmed_label_code",
    "record_confirmed_diagnosis",
    "record_confirmed_diagnoses_csv",
]

CSV_COLUMNS = ("patient_reference", "confirmed_label")
#: Rows one upload may confirm (a ward's month, comfortably).
MAX_CSV_ROWS = 5_000


def confirmed_label_code(case: DiagnosisCase, label: int | str) -> tuple[int, str]:
    """The class code and its word, in the case's model's vocabulary snapshot, for a class
    given by name (``"disease"``) or code (``1``, ``"1"``); ValidationError listing the
    classes otherwise."""
    labels = list(vocabulary_of(case.trained_model).class_labels)
    if isinstance(label, str):
        text = label.strip()
        if text in labels:
            return labels.index(text), text
        lowered = [name.casefold() for name in labels]
        if text.casefold() in lowered and lowered.count(text.casefold()) == 1:
            code = lowered.index(text.casefold())
            return code, labels[code]
        if text.isascii() and text.isdigit():  # "²" is a digit to str.isdigit, not to int()
            label = int(text)
    if isinstance(label, int) and not isinstance(label, bool) and 0 <= label < len(labels):
        return label, labels[label]
    choices = ", ".join(f"{name} ({i})" for i, name in enumerate(labels))
    raise ValidationError(f"{label!r} is not a class of this model; choose one of: {choices}.")


def _record(*, user, locked: DiagnosisCase, label: int | str, source: str) -> ConfirmedDiagnosis:
    require_case_access(user, locked)
    if locked.is_open:
        raise ValidationError(
            "This case is still open: conclude or refer it first, then record the confirmed "
            "diagnosis."
        )
    code, word = confirmed_label_code(locked, label)
    confirmation = ConfirmedDiagnosis.objects.create(
        case=locked, label=code, label_name=word[:200], recorded_by=user, source=source
    )
    log_case_access(
        user=user, case_id=locked.pk, action=CaseAccess.CONFIRM, detail=f"confirmed {word}"
    )
    return confirmation


def _locked(pk: int) -> DiagnosisCase:
    case = (
        DiagnosisCase.objects.select_for_update(of=("self",))
        .select_related("trained_model", "trained_model__dataset")
        .defer("trained_model__model_json")
        .filter(pk=pk)
        .first()
    )
    if case is None:
        raise CaseNotFound(pk)
    return case


@transaction.atomic
def record_confirmed_diagnosis(
    *, user, case: DiagnosisCase, label: int | str, source: str = ConfirmedDiagnosis.CASE_SCREEN
) -> ConfirmedDiagnosis:
    """Record ``case``'s confirmed diagnosis (a class name or code) as ``user``.

    CaseNotFound for anyone who may not read the case (as a missing one), PermissionDenied
    for a lead who only reads it, ValidationError for an open case or an unknown class.
    """
    if source not in dict(ConfirmedDiagnosis.SOURCE_CHOICES):
        raise ValueError(f"unknown source {source!r}")
    return _record(user=user, locked=_locked(case.pk), label=label, source=source)


@dataclass(frozen=True)
class CsvConfirmation:
    line: int
    patient_reference: str
    case_id: int
    label: int
    label_name: str


@transaction.atomic
def record_confirmed_diagnoses_csv(*, user, file) -> list[CsvConfirmation]:
    """Confirm the user's closed cases from a CSV ``patient_reference,confirmed_label``.

    Each reference must name exactly one of the user's own closed cases (an ambiguous one is
    refused: confirm it on its case screen), each label a class of that case's model, and a
    reference may appear once.  All or nothing: one ValidationError lists every bad line,
    and nothing is saved.
    """
    require_clinician(user)
    records = read_csv_records(file)
    records = [r for r in records if any(cell.strip() for cell in r)]
    if not records:
        raise ValidationError("The file is empty; its first line must be: " + ",".join(CSV_COLUMNS))
    header = [cell.strip().casefold() for cell in records[0]]
    if header != list(CSV_COLUMNS):
        raise ValidationError(
            f"The first line must be exactly: {','.join(CSV_COLUMNS)} (got {','.join(records[0])})."
        )
    rows = records[1:]
    if not rows:
        raise ValidationError("The file has a header but no rows to confirm.")
    if len(rows) > MAX_CSV_ROWS:
        raise ValidationError(f"At most {MAX_CSV_ROWS:,} rows per file (got {len(rows):,}).")
    references = [(r[0].strip() if r else "") for r in rows]
    closed = (
        DiagnosisCase.objects.filter(clinician=user, patient_reference__in=set(references))
        .exclude(status=DiagnosisCase.OPEN)
        .select_related("trained_model", "trained_model__dataset")
        .defer("trained_model__model_json")
    )
    by_reference: dict[str, list[DiagnosisCase]] = {}
    for case in closed:
        by_reference.setdefault(case.patient_reference, []).append(case)
    problems: list[str] = []
    planned: list[tuple[int, str, DiagnosisCase, int, str]] = []
    seen: dict[str, int] = {}
    for line, (record, reference) in enumerate(zip(rows, references, strict=True), start=2):
        if len(record) != len(CSV_COLUMNS):
            problems.append(
                f"Line {line}: {len(record)} values; each line holds a patient reference and "
                "a confirmed label."
            )
            continue
        label = record[1].strip()
        if not reference:
            problems.append(f"Line {line}: the patient reference is empty.")
            continue
        if not label:
            problems.append(f"Line {line} ({reference}): the confirmed label is empty.")
            continue
        if reference in seen:
            problems.append(f"Line {line}: {reference} is also on line {seen[reference]}.")
            continue
        seen[reference] = line
        cases = by_reference.get(reference, [])
        if not cases:
            problems.append(f"Line {line}: you have no closed case for patient {reference}.")
            continue
        if len(cases) > 1:
            problems.append(
                f"Line {line}: you have {len(cases)} closed cases for patient {reference}; "
                "record this one on its case screen."
            )
            continue
        try:
            code, word = confirmed_label_code(cases[0], label)
        except ValidationError as exc:
            problems.append(f"Line {line} ({reference}): {exc.messages[0]}")
            continue
        planned.append((line, reference, cases[0], code, word))
    if problems:
        raise ValidationError(
            [f"Nothing was saved: {len(problems)} of {len(rows)} lines have a problem."] + problems
        )
    done: list[CsvConfirmation] = []
    for line, reference, case, code, _word in planned:
        confirmation = _record(
            user=user, locked=_locked(case.pk), label=code, source=ConfirmedDiagnosis.CSV
        )
        done.append(
            CsvConfirmation(
                line=line,
                patient_reference=reference,
                case_id=case.pk,
                label=confirmation.label,
                label_name=confirmation.label_name,
            )
        )
    return done
