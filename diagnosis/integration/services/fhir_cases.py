"""A case in FHIR for /api/v1 (issue 31): a Bundle of Observations recorded as results, and
the case's state read as FHIR resources.

In: the Observations of a ``Bundle`` are read strictly by ``fhir.observations_to_results``
(every entry an Observation of a mapped code, in the mapped UCUM unit, of the case's
patient when the case names one) and recorded through ``services.step.apply_step`` with
one ``RecordResults`` command: each result its own priced step, all or nothing, as typed
on the screen.  Out: a ``collection`` Bundle of an ``Observation`` per recorded result, the
``ServiceRequest`` (``intent=proposal``) of the advised test (those Observations in its
``supportingInfo``), the ``RiskAssessment`` of the class probabilities and, for a
conclusion, its ``DiagnosticReport`` (``final`` once the case is closed, ``preliminary``
while it is the advice).  Every resource is built by ``fhir.py``.  A refusal is
:class:`FhirRefused`, whose ``outcome`` is the ``OperationOutcome`` naming the resource and
field."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError

from diagnosis.catalog.selectors.vocabulary import vocabulary_of
from diagnosis.clinic import selectors
from diagnosis.clinic.models import CaseAccess, DiagnosisCase, DiagnosisStep
from diagnosis.clinic.selectors.cases import CaseState, compute_case_state
from diagnosis.clinic.services import step
from diagnosis.clinic.services.access_log import log_case_access
from diagnosis.integration import fhir
from diagnosis.integration.selectors.codes import CodeBook, Coded, code_book
from diagnosis.shared.advice import Advice
from diagnosis.shared.money import format_money

__all__ = ["FhirRefused", "case_bundle", "class_outcomes", "not_yet_recorded", "record_bundle"]

#: a case's patient_reference that names a FHIR patient (as the CDS hooks write it)
_FHIR_PATIENT = re.compile(r"^(?:FHIR )?Patient/(?P<id>[A-Za-z0-9\-.]{1,64})$")


class FhirRefused(Exception):
    """FHIR that cannot be recorded: ``outcome`` (an OperationOutcome) says where and why."""

    def __init__(self, where: str, message: str, code: str = "invalid") -> None:
        super().__init__(f"{where}: {message}")
        self.outcome = fhir.operation_outcome(where, message, code)


def patient_id_of(case: DiagnosisCase) -> str | None:
    """The FHIR patient id a case's patient reference names, or None."""
    match = _FHIR_PATIENT.match(case.patient_reference or "")
    return match["id"] if match else None


def class_outcomes(
    advice: Advice, class_labels: Sequence[str], book: CodeBook
) -> list[tuple[Coded, str, float]]:
    """(class code, label, probability) of each class the advice weighs."""
    outcomes = []
    proba = advice.proba or (advice.evidence.proba if advice.evidence else ())
    for position, p in enumerate(proba):
        label = advice.class_name(position)
        index = list(class_labels).index(label) if label in class_labels else position
        outcomes.append((book.class_code(index, label), label, float(p)))
    return outcomes


def not_yet_recorded(
    case: DiagnosisCase, found: dict[str, fhir.ObservedResult]
) -> dict[str, float | str]:
    """The values of ``found`` (by test name) whose tests ``case`` has neither a result for
    nor marked unavailable: what an EHR's Observations add to the case."""
    held = compute_case_state(case, for_screen=False)
    names = case.trained_model.snapshot.names
    settled = {names[i] for i in (*held.known, *held.unavailable) if i < len(names)}
    return {name: r.value for name, r in found.items() if name not in settled}


def _observations(
    state: CaseState, book: CodeBook, patient_id: str | None, subject: str
) -> list[dict[str, Any]]:
    """An Observation of each result that counts (not undone nor corrected away), in the
    order they were recorded; its id names the case and the step's position."""
    observations = []
    for taken in state.steps:
        if (
            not taken.is_active
            or taken.kind != DiagnosisStep.RESULT
            or taken.test is None
            or taken.value is None
        ):
            continue
        test, value = taken.test, float(taken.value)
        choice = (
            state.vocabulary.choice_label(test, value)
            if state.vocabulary.choices_for(test)
            else None
        )
        observations.append(
            fhir.observation(
                resource_id=f"case{state.case.pk}-step{taken.position}",
                coded=book.of_test[test.name],
                label=test.display_label,
                value=value,
                choice=choice,
                patient_id=patient_id,
                when=taken.created_at,
                subject_text=subject,
            )
        )
    return observations


def _resources(state: CaseState) -> list[dict[str, Any]]:
    case = state.case
    book = code_book(case.trained_model.dataset_id, list(state.class_labels))
    patient_id = patient_id_of(case)
    subject = case.patient_reference or f"case {case.pk}"
    resources = _observations(state, book, patient_id, subject)
    known = [f"Observation/{o['id']}" for o in resources]
    advice = state.advice
    if not state.is_open:
        if case.status == DiagnosisCase.REFERRED:
            words, code = "Referred to a specialist.", None
        else:
            index = case.final_label
            label = (
                state.class_labels[index]
                if index is not None and 0 <= index < len(state.class_labels)
                else str(index)
            )
            words = f"Concluded {label}."
            code = book.class_code(index, label) if index is not None else None
        resources.append(
            fhir.diagnostic_report(
                final=True,
                conclusion=f"{words} Cost: {format_money(state.accumulated_cost)}.",
                conclusion_code=code,
                patient_id=patient_id,
                subject_text=subject,
                issued=case.updated_at,
                results=known,
            )
        )
        return resources
    assert advice is not None  # an open case has advice
    if advice.kind == "extract" and advice.test_name is not None:
        option = next((o for o in state.test_options if o.test.name == advice.test_name), None)
        price = format_money(option.price_now) if option is not None else "–"
        resources.append(
            fhir.service_request(
                coded=book.of_test[advice.test_name],
                label=advice.test_label or advice.test_name,
                patient_id=patient_id,
                supporting=known,
                note=f"Proposed by the cost-aware model: {price} for this patient now.",
                subject_text=subject,
            )
        )
    outcomes = class_outcomes(advice, state.class_labels, book)
    if outcomes:
        resources.append(
            fhir.risk_assessment(
                outcomes=outcomes,
                patient_id=patient_id,
                basis=known,
                note=f"Class probabilities; cost so far {format_money(state.accumulated_cost)}.",
                subject_text=subject,
            )
        )
    if advice.kind in ("classify", "reject"):
        if advice.kind == "reject":
            words, code = "Refer to a specialist", None
        else:
            label = advice.label or ""
            index = advice.label_index
            words = f"Conclude {label}"
            code = book.class_code(index, label) if index is not None else None
        resources.append(
            fhir.diagnostic_report(
                final=False,
                conclusion=f"{words}: expected cost {format_money(advice.expected_cost)}.",
                conclusion_code=code,
                patient_id=patient_id,
                subject_text=subject,
                results=known,
            )
        )
    return resources


def case_bundle(*, user, case_id: int) -> dict[str, Any]:
    """The case's state as a FHIR Bundle (the read logged, as /api/v1's reads are)."""
    case = selectors.case_for_user(user=user, pk=case_id)
    log_case_access(user=user, case_id=case.pk, action=CaseAccess.API_READ, detail="fhir")
    return fhir.collection(_resources(selectors.case_state(user=user, case=case)))


def record_bundle(
    *, user, case_id: int, bundle: Any, seen: int | None, confirm_implausible: bool
) -> dict[str, Any]:
    """Record the Observations of ``bundle`` as the case's results (one ``RecordResults``
    through ``apply_step``: all or nothing) and answer the case as FHIR.  FhirRefused for
    FHIR that does not validate or fit the case's model; apply_step's own refusals (404, 403,
    409, an implausible value) as it raises them."""
    case = selectors.case_for_user(user=user, pk=case_id)
    book = code_book(case.trained_model.dataset_id, vocabulary_of(case.trained_model).class_labels)
    try:
        found = fhir.observations_to_results(
            bundle, book=book, patient_id=patient_id_of(case), where="Bundle", strict=True
        )
    except fhir.FhirInvalid as exc:
        code = "code-invalid" if exc.where.endswith((".code", ".system")) else "invalid"
        raise FhirRefused(exc.where, exc.message, code) from None
    results = {name: r.value for name, r in found.items()}
    try:
        taken = step.apply_step(
            user=user,
            case_id=case.pk,
            command=step.RecordResults(results=results, confirm_implausible=confirm_implausible),
            seen=seen,
        )
    except step.ImplausibleValue as exc:
        where = _where(found, exc.found[0].test if exc.found else None)
        raise FhirRefused(
            where,
            " ".join(f.message for f in exc.found)
            + " Nothing was recorded; send it again with confirm_implausible=true if it is right.",
            "business-rule",
        ) from None
    except (step.CaseClosed, step.StaleCase):
        raise
    except ValidationError as exc:
        if hasattr(exc, "error_dict"):
            name, messages = next(iter(exc.message_dict.items()))
            raise FhirRefused(_where(found, name), " ".join(messages)) from None
        raise FhirRefused("Bundle", " ".join(exc.messages)) from None
    return fhir.collection(_resources(taken.state))


def _where(found: dict[str, fhir.ObservedResult], name: Any) -> str:
    result = found.get(name) if isinstance(name, str) else None
    if result is not None and result.reference:
        return f"{result.reference}.value[x] ({name})"
    return f"Bundle Observation of {name}" if name else "Bundle"
