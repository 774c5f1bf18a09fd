"""FHIR R4 in and out (issue 31), every resource built and read with ``fhir.resources``
(its R4B module: R4's resources as they stand in R4B, the same for these).

In: a Bundle of Observations (a CDS Hooks ``prefetch`` or a FHIR server's search) read into
test results by the catalog's codes (:func:`observations_to_results`), and a ``draftOrders``
Bundle of ServiceRequests (:func:`ordered_tests`).  Out: an ``Observation`` per recorded
result, the ``ServiceRequest``
(``intent=proposal``) of the next test, the ``RiskAssessment`` of the class probabilities,
the ``DiagnosticReport`` of a conclusion, a ``Bundle`` of them and the ``OperationOutcome`` of
a refusal, each validated by its class before it leaves.  No database: the caller passes the codes
(``selectors.codes.CodeBook``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fhir.resources.R4B.bundle import Bundle
from fhir.resources.R4B.diagnosticreport import DiagnosticReport
from fhir.resources.R4B.observation import Observation
from fhir.resources.R4B.operationoutcome import OperationOutcome
from fhir.resources.R4B.patient import Patient
from fhir.resources.R4B.riskassessment import RiskAssessment
from fhir.resources.R4B.servicerequest import ServiceRequest

from diagnosis.integration.models import LOCAL_TESTS, UCUM
from diagnosis.integration.selectors.codes import CodeBook, Coded

__all__ = [
    "FhirInvalid",
    "ObservedResult",
    "collection",
    "diagnostic_report",
    "observation",
    "observations_to_results",
    "operation_outcome",
    "ordered_tests",
    "patient_subject",
    "read_patient",
    "risk_assessment",
    "service_request",
]

#: Observation statuses whose value counts as a result
USABLE_STATUSES = frozenset({"final", "amended", "corrected", "preliminary"})


class FhirInvalid(ValueError):
    """FHIR that does not validate, or does not fit the catalog: ``where`` names the resource
    and the field (``Observation/o1.valueQuantity.code``)."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


def _validated(cls, data: Any, where: str):
    """``cls`` validated from ``data``; :class:`FhirInvalid` naming the first bad field."""
    if not isinstance(data, dict):
        raise FhirInvalid(where, f"expected a FHIR {cls.__name__} (a JSON object)")
    try:
        return cls.model_validate(data)
    except Exception as exc:  # pydantic's ValidationError, and KeyError for unknown types
        errors = getattr(exc, "errors", None)
        if callable(errors):
            first = errors()[0]
            field = ".".join(str(p) for p in first.get("loc", ()))
            raise FhirInvalid(f"{where}.{field}" if field else where, first["msg"]) from None
        raise FhirInvalid(where, f"not a valid FHIR {cls.__name__} ({exc!r:.200})") from None


def _dump(resource) -> dict[str, Any]:
    return resource.model_dump(mode="json", exclude_none=True)


def read_patient(data: Any, patient_id: str) -> None:
    """Check a prefetched Patient: a valid resource, the context's patient."""
    patient = _validated(Patient, data, "prefetch.patient")
    if patient.id is not None and patient.id != patient_id:
        raise FhirInvalid("prefetch.patient.id", f"is {patient.id!r}, not the context's patient")


@dataclass(frozen=True)
class ObservedResult:
    """One test's value from an Observation, and the Observation's reference."""

    test: str  # the test's name
    value: float | str
    reference: str | None  # "Observation/<id>"
    when: datetime | None


def _when(observation: Observation) -> datetime | None:
    moment = observation.effectiveDateTime or observation.issued
    if isinstance(moment, datetime):
        return moment if moment.tzinfo else None  # a date without a zone: no order
    return None


def _value(
    observation: Observation, coded: Coded, where: str, *, strict: bool = False
) -> float | str | None:
    """The Observation's value as the step service reads values (a number, or a choice's
    label or code); a unit other than the mapped one is refused (``strict``: a missing one
    too, when the test has a unit)."""
    quantity = observation.valueQuantity
    if quantity is not None:
        if quantity.value is None:
            raise FhirInvalid(f"{where}.valueQuantity.value", "is missing")
        unit = quantity.code or quantity.unit
        if quantity.system is not None and quantity.system != UCUM and quantity.code:
            raise FhirInvalid(f"{where}.valueQuantity.system", f"must be UCUM ({UCUM})")
        if strict and coded.unit and unit is None:
            raise FhirInvalid(
                f"{where}.valueQuantity.code",
                f"is missing: {coded.display} is recorded in {coded.unit!r} (UCUM)",
            )
        if coded.unit and unit is not None and unit != coded.unit:
            raise FhirInvalid(
                f"{where}.valueQuantity.code",
                f"unit {unit!r} is not {coded.unit!r}, the unit {coded.display} is recorded in",
            )
        return float(quantity.value)
    if observation.valueInteger is not None:
        return float(observation.valueInteger)
    if observation.valueBoolean is not None:
        return 1.0 if observation.valueBoolean else 0.0
    concept = observation.valueCodeableConcept
    if concept is not None:
        for coding in concept.coding or ():
            if coding.code:
                return coding.display or coding.code
        if concept.text:
            return concept.text
        raise FhirInvalid(f"{where}.valueCodeableConcept", "has neither a code nor a text")
    if observation.valueString is not None:
        return observation.valueString
    return None


def observations_to_results(
    bundle_data: Any,
    *,
    book: CodeBook,
    patient_id: str | None,
    where: str,
    strict: bool = False,
) -> dict[str, ObservedResult]:
    """The results a Bundle of Observations holds for the catalog's tests, by test name (the
    latest when a test was measured more than once); Observations of other codes, without
    a value or not final are passed over.  :class:`FhirInvalid` for a Bundle or Observation
    that does not validate, another patient's Observation (``patient_id`` None: any
    patient's) or a unit other than the mapped one.

    ``strict`` (a Bundle sent to be recorded, not a chart's search): what would be passed over
    is refused instead: an entry that is not an Observation, a status other than a result's,
    a code no test of the catalog has, a missing value or unit, an empty Bundle."""
    bundle = _validated(Bundle, bundle_data, where)
    found: dict[str, ObservedResult] = {}
    if strict and not bundle.entry:
        raise FhirInvalid(f"{where}.entry", "is empty: send one Observation per result")
    for i, entry in enumerate(bundle.entry or ()):
        resource = entry.resource
        at = f"{where}.entry[{i}].resource"
        if resource is None or resource.get_resource_type() != "Observation":
            if strict:
                kind = resource.get_resource_type() if resource is not None else "missing"
                raise FhirInvalid(at, f"is {kind}: send only Observations")
            continue  # a search's OperationOutcome, an included Patient
        assert isinstance(resource, Observation)
        named = f"Observation/{resource.id}" if resource.id else at
        if resource.status not in USABLE_STATUSES:
            if strict:
                usable = ", ".join(sorted(USABLE_STATUSES))
                raise FhirInvalid(
                    f"{named}.status", f"is {resource.status!r}; a result is one of {usable}"
                )
            continue
        if resource.code is None:
            raise FhirInvalid(f"{named}.code", "is missing")
        coded_test = None
        for coding in resource.code.coding or ():
            coded_test = book.by_code.get((coding.system or "", coding.code or ""))
            if coded_test is not None:
                break
        if coded_test is None:
            if strict:
                sent = ", ".join(
                    f"{c.system or '?'}|{c.code or '?'}" for c in resource.code.coding or ()
                )
                raise FhirInvalid(
                    f"{named}.code",
                    f"no test of this model has the code {sent or '(no coding)'}"[:300],
                )
            continue
        subject = resource.subject.reference if resource.subject is not None else None
        if (
            patient_id is not None
            and subject is not None
            and subject not in (f"Patient/{patient_id}", patient_id)
        ):
            raise FhirInvalid(f"{named}.subject", f"names {subject!r}, not Patient/{patient_id}")
        value = _value(resource, book.of_test[coded_test.name], named, strict=strict)
        if value is None:
            if strict:
                raise FhirInvalid(f"{named}.value[x]", "is missing")
            continue
        result = ObservedResult(
            test=coded_test.name,
            value=value,
            reference=f"Observation/{resource.id}" if resource.id else None,
            when=_when(resource),
        )
        earlier = found.get(coded_test.name)
        if earlier is None or (
            result.when is not None and (earlier.when is None or result.when >= earlier.when)
        ):
            found[coded_test.name] = result
    return found


def ordered_tests(
    draft_orders: Any, selections: list[str], *, book: CodeBook
) -> list[tuple[str, str]]:
    """The selected draft ServiceRequests of an ``order-select`` call that order one of the
    catalog's tests: ``[(reference, test name)]``."""
    bundle = _validated(Bundle, draft_orders, "context.draftOrders")
    chosen = []
    for i, entry in enumerate(bundle.entry or ()):
        resource = entry.resource
        if resource is None or resource.get_resource_type() != "ServiceRequest":
            continue
        assert isinstance(resource, ServiceRequest)
        reference = f"ServiceRequest/{resource.id}" if resource.id else None
        if reference is None or (selections and reference not in selections):
            continue
        concept = resource.code
        for coding in (concept.coding or ()) if concept is not None else ():
            test = book.by_code.get((coding.system or "", coding.code or ""))
            if test is not None:
                chosen.append((reference, test.name))
                break
        else:
            if concept is None:
                raise FhirInvalid(f"context.draftOrders.entry[{i}].resource.code", "is missing")
    return chosen


def _concept(coded: Coded, text: str) -> dict[str, Any]:
    return {
        "coding": [{"system": coded.system, "code": coded.code, "display": coded.display}],
        "text": text,
    }


def patient_subject(patient_id: str | None, text: str = "") -> dict[str, Any]:
    """The subject of a resource: ``Patient/<id>``, or (no FHIR patient known) a display."""
    if patient_id is not None:
        return {"reference": f"Patient/{patient_id}"}
    return {"display": text or "patient without a FHIR id"}


def service_request(
    *,
    coded: Coded,
    label: str,
    patient_id: str | None,
    supporting: list[str],
    note: str,
    subject_text: str = "",
) -> dict[str, Any]:
    """A proposed order of one test (``intent=proposal``), with the Observations the advice
    rests on in ``supportingInfo``; validated."""
    data: dict[str, Any] = {
        "resourceType": "ServiceRequest",
        "status": "draft",
        "intent": "proposal",
        "code": _concept(coded, label),
        "subject": patient_subject(patient_id, subject_text),
        "note": [{"text": note}],
    }
    if supporting:
        data["supportingInfo"] = [{"reference": ref} for ref in supporting]
    return _dump(_validated(ServiceRequest, data, "ServiceRequest"))


def risk_assessment(
    *,
    outcomes: list[tuple[Coded, str, float]],
    patient_id: str | None,
    basis: list[str],
    note: str,
    subject_text: str = "",
) -> dict[str, Any]:
    """The class probabilities as a RiskAssessment (one prediction per class); validated."""
    data: dict[str, Any] = {
        "resourceType": "RiskAssessment",
        "status": "final",
        "subject": patient_subject(patient_id, subject_text),
        "prediction": [
            {"outcome": _concept(coded, label), "probabilityDecimal": round(float(p), 6)}
            for coded, label, p in outcomes
        ],
        "note": [{"text": note}],
    }
    if basis:
        data["basis"] = [{"reference": ref} for ref in basis]
    return _dump(_validated(RiskAssessment, data, "RiskAssessment"))


def observation(
    *,
    resource_id: str,
    coded: Coded,
    label: str,
    value: float,
    choice: str | None,
    patient_id: str | None,
    when: datetime,
    subject_text: str = "",
) -> dict[str, Any]:
    """One recorded result as a ``final`` Observation, coded as the test is mapped: a number
    as a ``valueQuantity`` in the test's UCUM unit, a choice (``choice``: its label) as a
    ``valueCodeableConcept`` (the choice's code, and its label); validated.  What this emits,
    ``observations_to_results`` reads back as the same value."""
    data: dict[str, Any] = {
        "resourceType": "Observation",
        "id": resource_id,
        "status": "final",
        "code": _concept(coded, label),
        "subject": patient_subject(patient_id, subject_text),
        "effectiveDateTime": when.isoformat(),
    }
    if choice is not None:
        code = f"{value:g}"
        data["valueCodeableConcept"] = {
            "coding": [{"system": f"{LOCAL_TESTS}:{coded.code}", "code": code, "display": choice}],
            "text": choice,
        }
    else:
        quantity: dict[str, Any] = {"value": value}
        if coded.unit:
            quantity.update(unit=coded.unit, system=UCUM, code=coded.unit)
        data["valueQuantity"] = quantity
    return _dump(_validated(Observation, data, f"Observation/{resource_id}"))


#: what a DiagnosticReport of this service reports (no standard code names it: a local one)
REPORT_CODE = Coded(LOCAL_TESTS, "cost-aware-conclusion", "Cost-aware diagnosis: conclusion", "")


def diagnostic_report(
    *,
    final: bool,
    conclusion: str,
    conclusion_code: Coded | None,
    patient_id: str | None,
    subject_text: str = "",
    issued: datetime | None = None,
    results: list[str] | None = None,
) -> dict[str, Any]:
    """A case's conclusion (``final``: the case is closed; else ``preliminary``: what the
    model concludes now), with the class's code when it names one and the Observations it
    rests on (``results``: references); validated."""
    data: dict[str, Any] = {
        "resourceType": "DiagnosticReport",
        "status": "final" if final else "preliminary",
        "code": _concept(REPORT_CODE, REPORT_CODE.display),
        "subject": patient_subject(patient_id, subject_text),
        "conclusion": conclusion,
    }
    if conclusion_code is not None:
        data["conclusionCode"] = [_concept(conclusion_code, conclusion_code.display)]
    if issued is not None:
        data["issued"] = issued.isoformat()
    if results:
        data["result"] = [{"reference": ref} for ref in results]
    return _dump(_validated(DiagnosticReport, data, "DiagnosticReport"))


def collection(resources: list[dict[str, Any]]) -> dict[str, Any]:
    """Resources built here, as one ``collection`` Bundle; validated."""
    data = {
        "resourceType": "Bundle",
        "type": "collection",
        "entry": [{"resource": r} for r in resources],
    }
    return _dump(_validated(Bundle, data, "Bundle"))


def operation_outcome(where: str, message: str, code: str = "invalid") -> dict[str, Any]:
    """A refusal as FHIR: one error naming the resource and field (``expression``); validated."""
    data = {
        "resourceType": "OperationOutcome",
        "issue": [
            {
                "severity": "error",
                "code": code,
                "diagnostics": f"{where}: {message}"[:2000],
                "expression": [where[:500]],
            }
        ],
    }
    return _dump(_validated(OperationOutcome, data, "OperationOutcome"))
