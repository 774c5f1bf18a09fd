"""CDS Hooks 2.0 (issue 31): discovery, ``patient-view``, ``order-select`` and feedback, on
the same case services and step entry point as the screen.

A hook call for a FHIR patient joins the open case its client holds for that patient and
model (``CdsPatientCase``), or opens one through ``services.cases.open_case``; the
Observations of ``prefetch`` (or, without them, of the EHR's FHIR server) that carry a
mapped code and are not yet recorded become the case's results through
``services.step.apply_step`` (``RecordResults``: each its own step, priced, all or nothing,
logged), exactly as results typed on the screen.  The card then says what the case state
says: the next test with its price for this patient now, what it is expected to save and the
cost so far, or the conclusion and the expected cost of each choice.  Prices, savings and
costs come from the state and the advice (the library's CostModel and Evidence); nothing is
priced here.  Money is written by ``format_money``."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils.dateparse import parse_datetime
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from diagnosis.catalog.selectors.vocabulary import vocabulary_of
from diagnosis.clinic import selectors
from diagnosis.clinic.models import CaseAccess, DiagnosisCase
from diagnosis.clinic.selectors.case_audit import case_version
from diagnosis.clinic.selectors.cases import CaseState
from diagnosis.clinic.selectors.explanations import cents, expected_saving
from diagnosis.clinic.selectors.step_context import StepContext
from diagnosis.clinic.services import cases as case_services
from diagnosis.clinic.services import step
from diagnosis.clinic.services.access_log import log_case_access
from diagnosis.integration import fhir
from diagnosis.integration.models import (
    LOINC,
    CdsCard,
    CdsClient,
    CdsFeedback,
    CdsPatientCase,
)
from diagnosis.integration.selectors.codes import CodeBook, code_book
from diagnosis.integration.services import fhir_search
from diagnosis.integration.services.cds_clients import fhir_server_allowed
from diagnosis.integration.services.fhir_cases import class_outcomes, not_yet_recorded
from diagnosis.shared.advice import Advice
from diagnosis.shared.money import format_money
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors import models as model_selectors

__all__ = [
    "FEEDBACK_ACTION",
    "HOOKS",
    "FeedbackIn",
    "HookIn",
    "HookRefused",
    "answer_hook",
    "discovery",
    "record_feedback",
    "service_id",
    "service_of",
]

PATIENT_VIEW = "patient-view"
ORDER_SELECT = "order-select"
HOOKS = (PATIENT_VIEW, ORDER_SELECT)
#: the case access log's action for a card's feedback (fits its 12 characters)
FEEDBACK_ACTION = CaseAccess.CDS_FEEDBACK
SOURCE_LABEL = "Cost-aware diagnosis"
#: why a clinician may override a card (offered on every card, CDS Hooks overrideReasons)
OVERRIDE_SYSTEM = "urn:cost-aware-diagnosis:override-reason"
OVERRIDE_REASONS = [
    {"system": OVERRIDE_SYSTEM, "code": "clinical-judgement", "display": "Clinical judgement"},
    {"system": OVERRIDE_SYSTEM, "code": "already-known", "display": "Result already known"},
    {"system": OVERRIDE_SYSTEM, "code": "patient-declined", "display": "Patient declined"},
    {"system": OVERRIDE_SYSTEM, "code": "not-available", "display": "Test not available"},
]
_SERVICE_ID = re.compile(r"^cost-aware-model-(?P<pk>[1-9][0-9]{0,17})(?P<order>-order-select)?$")
#: a FHIR id (R4: up to 64 letters, digits, '-' and '.')
FHIR_ID = r"^[A-Za-z0-9\-.]{1,64}$"


class HookRefused(Exception):
    """A hook call that cannot be answered: ``status`` (400, 403, 404, 412) and why."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


# ------------------------------------------------------------------- what is posted
class _In(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class FhirAuthorizationIn(_In):
    access_token: StrictStr = Field(max_length=4096)
    token_type: Literal["Bearer"]
    expires_in: int = Field(ge=0)
    scope: StrictStr = Field(max_length=2000)
    subject: StrictStr = Field(max_length=500)


class ContextIn(_In):
    userId: StrictStr = Field(max_length=500)
    patientId: StrictStr = Field(pattern=FHIR_ID)
    encounterId: StrictStr | None = Field(None, max_length=500)
    selections: list[StrictStr] | None = Field(None, max_length=100)
    draftOrders: dict[str, Any] | None = None


class HookIn(_In):
    """A CDS Hooks request body (the fields this service reads; extensions are allowed)."""

    hook: Literal["patient-view", "order-select"]
    hookInstance: StrictStr = Field(min_length=1, max_length=100)
    fhirServer: StrictStr | None = Field(None, max_length=500, pattern=r"^https?://[^\s]+$")
    fhirAuthorization: FhirAuthorizationIn | None = None
    context: ContextIn
    prefetch: dict[str, dict[str, Any] | None] | None = None


class OverrideReasonIn(_In):
    reason: dict[str, Any] | None = None
    userComment: StrictStr | None = Field(None, max_length=2000)


class AcceptedSuggestionIn(_In):
    id: StrictStr = Field(max_length=100)


class FeedbackItemIn(_In):
    card: StrictStr = Field(max_length=100)
    outcome: Literal["accepted", "overridden"]
    acceptedSuggestions: list[AcceptedSuggestionIn] | None = Field(None, max_length=20)
    overrideReason: OverrideReasonIn | None = None
    outcomeTimestamp: StrictStr = Field(max_length=64)


class FeedbackIn(_In):
    feedback: list[FeedbackItemIn] = Field(min_length=1, max_length=50)


# ------------------------------------------------------------------------ discovery
def service_id(trained: TrainedModel, hook: str) -> str:
    return f"cost-aware-model-{trained.pk}" + ("-order-select" if hook == ORDER_SELECT else "")


def _usable_models(client: CdsClient) -> list[TrainedModel]:
    """The approved, ready models the client's clinician may use (as the home page lists)."""
    return [
        m
        for m in selectors.models_for_user(user=client.clinician)
        if m.approval == TrainedModel.APPROVED and m.is_ready
    ]


def service_of(client: CdsClient, service: str) -> tuple[TrainedModel, str]:
    """The model and hook of ``service``; HookRefused 404 for no such service (or a model the
    client's clinician may not use: the same answer)."""
    match = _SERVICE_ID.match(service)
    trained = None
    if match is not None:
        trained = model_selectors.visible_model(user=client.clinician, pk=int(match["pk"]))
    if trained is None or trained.approval != TrainedModel.APPROVED or not trained.is_ready:
        raise HookRefused(f"There is no CDS service {service[:100]!r}.", status=404)
    return trained, ORDER_SELECT if match and match["order"] else PATIENT_VIEW


def discovery(client: CdsClient) -> dict[str, Any]:
    """One service per approved model and hook: ``patient-view`` (the next step) and
    ``order-select`` (the selected test against the model's), with their prefetch."""
    services = []
    for trained in _usable_models(client):
        book = code_book(trained.dataset_id, vocabulary_of(trained).class_labels)
        loinc = sum(1 for c in book.of_test.values() if c.system == LOINC)
        prefetch = {
            "patient": "Patient/{{context.patientId}}",
            "observations": fhir_search.observation_query(book, "{{context.patientId}}"),
        }
        what = (
            f"{trained.dataset.name}, {trained.learner} model {trained.pk}: "
            f"{len(book.tests)} tests ({loinc} LOINC-coded)"
        )
        services.append(
            {
                "hook": PATIENT_VIEW,
                "id": service_id(trained, PATIENT_VIEW),
                "title": f"Next test or conclusion: {trained.dataset.name}"[:200],
                "description": f"The cost-aware next step for this patient. {what}.",
                "prefetch": prefetch,
                "usageRequirements": "Registered EHR clients only (JWT per call).",
            }
        )
        services.append(
            {
                "hook": ORDER_SELECT,
                "id": service_id(trained, ORDER_SELECT),
                "title": f"Is this the test to order? {trained.dataset.name}"[:200],
                "description": "The selected test against the model's choice, priced for this "
                f"patient now. {what}.",
                "prefetch": prefetch,
                "usageRequirements": "Registered EHR clients only (JWT per call).",
            }
        )
    return {"services": services}


# ------------------------------------------------------------------ the patient's data
def _fetch_observations(hook: HookIn, book: CodeBook) -> dict[str, Any]:
    """The Observations a ``fhirServer`` holds for the patient (CDS Hooks: without prefetch,
    the service asks the FHIR server, with ``fhirAuthorization``'s access token)."""
    assert hook.fhirServer is not None
    token = hook.fhirAuthorization.access_token if hook.fhirAuthorization is not None else None
    try:
        return fhir_search.search(hook.fhirServer, hook.context.patientId, book, token)
    except fhir_search.FhirUnreadable as exc:
        raise HookRefused(f"{exc} Send the observations in prefetch.", status=412) from None


def _observations(hook: HookIn, book: CodeBook) -> tuple[dict[str, Any], str]:
    """The Observation Bundle of ``prefetch``, else of the FHIR server; 412 without either."""
    prefetched = (hook.prefetch or {}).get("observations")
    if prefetched is not None:
        patient = (hook.prefetch or {}).get("patient")
        if patient is not None:
            try:
                fhir.read_patient(patient, hook.context.patientId)
            except fhir.FhirInvalid as exc:
                raise HookRefused(str(exc)) from None
        return prefetched, "prefetch.observations"
    if hook.fhirServer is None:
        raise HookRefused(
            "No observations in prefetch and no fhirServer to read them from.", status=412
        )
    return _fetch_observations(hook, book), "fhirServer Observation search"


# -------------------------------------------------------------------------- the case
def _hold_patient(client: CdsClient, patient_id: str, trained: TrainedModel) -> None:
    """Serialize the calls for one (client, patient, model) until the transaction ends, so two
    first calls never open two cases (PostgreSQL; SQLite writes one at a time anyway)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 31))",
                [f"cds:{client.pk}:{trained.pk}:{patient_id}"],
            )


def _patient_case(
    client: CdsClient, patient_id: str, trained: TrainedModel
) -> tuple[DiagnosisCase, StepContext | None]:
    """The open case of this client's patient on this model, else a new one with what opening
    it left (``open_case``'s context: no steps yet, the dataset's tests)."""
    _hold_patient(client, patient_id, trained)
    link = (
        CdsPatientCase.objects.select_related("case")
        .filter(
            client=client,
            patient_id=patient_id,
            trained_model=trained,
            case__status=DiagnosisCase.OPEN,
        )
        .order_by("-created_at")
        .first()
    )
    if link is not None:
        return link.case, None
    opened = case_services.open_case(
        user=client.clinician,
        trained_model=trained,
        patient_reference=f"FHIR Patient/{patient_id}",
    )
    CdsPatientCase.objects.create(
        client=client, patient_id=patient_id, trained_model=trained, case=opened.case
    )
    return opened.case, opened


@dataclass
class _Answer:
    state: CaseState
    book: CodeBook
    supporting: list[str]  # the Observations the case's known results came from


def _record(
    client: CdsClient,
    trained: TrainedModel,
    hook: HookIn,
    found: dict[str, fhir.ObservedResult],
    book: CodeBook,
) -> _Answer:
    """Open or join the case and record the Observations it lacks (one RecordResults step
    through apply_step), in the caller's transaction."""
    user = client.clinician
    case, opened = _patient_case(client, hook.context.patientId, trained)
    new = (  # a case just opened holds no result: not read again
        {name: r.value for name, r in found.items()}
        if opened is not None
        else not_yet_recorded(case, found)
    )
    if new:
        try:
            taken = step.apply_step(
                user=user, case_id=case.pk, command=step.RecordResults(results=new), seen=None
            )
        except step.ImplausibleValue:
            raise
        except ValidationError as exc:
            raise HookRefused(_named_errors(exc, found)) from None
        state = taken.state
    else:
        state = selectors.case_state(user=user, case=case, context=opened)
        log_case_access(user=user, case_id=case.pk, action=CaseAccess.API_READ, detail="cds")
    known = {o.test.name for o in state.test_options if o.done}
    supporting = [r.reference for n, r in found.items() if n in known and r.reference]
    return _Answer(state=state, book=book, supporting=supporting)


def _named_errors(exc: ValidationError, found: dict[str, fhir.ObservedResult]) -> str:
    if hasattr(exc, "error_dict"):
        parts = []
        for name, messages in exc.message_dict.items():
            where = found[name].reference if name in found else None
            parts.append(f"{where or name} ({name}): {' '.join(messages)}")
        return "An Observation's value is refused: " + " ".join(parts)
    return " ".join(exc.messages)


# ------------------------------------------------------------------------- the cards
def _short(text: str) -> str:
    return text if len(text) < 140 else text[:136].rstrip() + "…"


def _saving_words(saving: float | None) -> str:
    """What a test is expected to save, in words a card can carry."""
    if saving is None:
        return "its expected saving is not estimated by this model"
    if saving > 0:
        return f"expected to save {format_money(saving)}"
    return (
        f"not expected to save on its own ({format_money(saving)}): the model orders it for "
        "the tests it leads to"
    )


def _saving_line(saving: float | None) -> str:
    """A card's "Expected saving:" line after its colon (the figure once, then why)."""
    if saving is None:
        return "not estimated by this model"
    if saving > 0:
        return format_money(saving)
    return f"{format_money(saving)}, none on its own: the model orders it for the tests it leads to"


def _option(state: CaseState, name: str | None):
    return next((o for o in state.test_options if o.test.name == name), None)


def _price_words(state: CaseState, name: str) -> str:
    option = _option(state, name)
    if option is None:
        return "–"
    words = f"{format_money(option.price_now)} for this patient now"
    if option.discount_from:  # set by CostModel.discount_source only when it is cheaper now
        words += (
            f" (group discount with {option.discount_from} done; "
            f"{format_money(option.full_price)} alone)"
        )
    return words


def _coding_words(book: CodeBook, name: str) -> str:
    coded = book.of_test[name]
    system = "LOINC" if coded.system == LOINC else "local code"
    return f"{system} {coded.code}"


def _choice_costs(state: CaseState, advice: Advice) -> list[str]:
    """The expected cost of each choice now: each class, and referral where the model may."""
    evidence = advice.evidence
    if evidence is None:
        return []
    lines = [
        f"- Conclude {advice.class_name(i)}: {format_money(cost)} expected"
        for i, cost in enumerate(evidence.class_costs)
    ]
    if evidence.refer_cost is not None:
        lines.append(f"- Refer: {format_money(evidence.refer_cost)} expected")
    return lines


def _card(
    *,
    summary: str,
    detail: str,
    indicator: str,
    case_url: str,
    trained: TrainedModel,
    suggestions: list[dict[str, Any]],
) -> dict[str, Any]:
    card: dict[str, Any] = {
        "uuid": str(uuid.uuid4()),
        "summary": _short(summary),
        "detail": detail,
        "indicator": indicator,
        "source": {
            "label": f"{SOURCE_LABEL}: {trained.dataset.name} model {trained.pk}",
            "url": case_url,
        },
        "overrideReasons": OVERRIDE_REASONS,
        "links": [{"label": "Open the case", "url": case_url, "type": "absolute"}],
    }
    if suggestions:
        card["suggestions"] = suggestions
        card["selectionBehavior"] = "at-most-one"
    return card


def _order_suggestion(
    answer: _Answer, patient_id: str, name: str, *, remove: list[str] | None = None
) -> dict[str, Any]:
    option = _option(answer.state, name)
    label = option.test.display_label if option else name
    price = format_money(option.price_now) if option else "–"
    request = fhir.service_request(
        coded=answer.book.of_test[name],
        label=label,
        patient_id=patient_id,
        supporting=answer.supporting,
        note=f"Proposed by the cost-aware model: {price} for this patient now.",
    )
    actions: list[dict[str, Any]] = [
        {"type": "delete", "description": f"Remove {ref}", "resourceId": [ref]}
        for ref in remove or []
    ]
    actions.append({"type": "create", "description": f"Order {label}", "resource": request})
    return {
        "label": f"Order {label} ({price})",
        "uuid": str(uuid.uuid4()),
        "isRecommended": True,
        "actions": actions,
    }


def _conclusion_suggestion(answer: _Answer, advice: Advice, patient_id: str) -> dict[str, Any]:
    outcomes = class_outcomes(advice, answer.state.vocabulary.class_labels, answer.book)
    what = "Refer" if advice.kind == "reject" else f"Conclude {advice.label}"
    assessment = fhir.risk_assessment(
        outcomes=outcomes,
        patient_id=patient_id,
        basis=answer.supporting,
        note=f"{what}: expected cost {format_money(advice.expected_cost)}.",
    )
    return {
        "label": "Record the class probabilities (RiskAssessment)",
        "uuid": str(uuid.uuid4()),
        "isRecommended": False,
        "actions": [
            {
                "type": "create",
                "description": f"{what}: class probabilities",
                "resource": assessment,
            }
        ],
    }


def _patient_view_card(
    answer: _Answer, trained: TrainedModel, patient_id: str, case_url: str
) -> dict[str, Any]:
    state = answer.state
    advice = state.advice
    so_far = format_money(state.accumulated_cost)
    why = state.explanation.why if state.explanation else []
    assert advice is not None  # an open case always has advice
    if advice.kind == "extract" and advice.test_name is not None:
        name = advice.test_name
        label = advice.test_label or name
        saving = expected_saving(advice)
        summary = f"Order {label} next: {format_money(advice.cost)} for this patient now"
        if saving is not None and saving > 0:
            summary += f", expected to save {format_money(saving)}"
        detail = "\n".join(
            [
                f"**Order {label}** ({_coding_words(answer.book, name)}): "
                f"{_price_words(state, name)}.",
                f"Expected saving: {_saving_line(saving)}.",
                f"Cost so far: {so_far}.",
                "",
                *why,
            ]
        )
        suggestions = [_order_suggestion(answer, patient_id, name)]
        indicator = "info"
    else:
        what = "Refer to a specialist" if advice.kind == "reject" else f"Conclude {advice.label}"
        summary = (
            f"{what}: expected cost {format_money(advice.expected_cost)}; cost so far {so_far}"
        )
        detail = "\n".join(
            [
                f"**{what}**: no more tests. Cost so far: {so_far}.",
                "",
                "Expected cost of each choice now:",
                *_choice_costs(state, advice),
                "",
                *why,
            ]
        )
        suggestions = [_conclusion_suggestion(answer, advice, patient_id)]
        indicator = "warning" if advice.kind == "reject" else "info"
    return _card(
        summary=summary,
        detail=detail,
        indicator=indicator,
        case_url=case_url,
        trained=trained,
        suggestions=suggestions,
    )


def _order_select_card(
    answer: _Answer,
    trained: TrainedModel,
    hook: HookIn,
    selected: tuple[str, str],
    case_url: str,
) -> dict[str, Any]:
    state = answer.state
    advice = state.advice
    assert advice is not None
    reference, name = selected
    option = _option(state, name)
    assert option is not None  # a test of the model's dataset
    label = option.test.display_label
    so_far = format_money(state.accumulated_cost)
    patient_id = hook.context.patientId
    suggestions: list[dict[str, Any]] = []
    if option.done:
        summary = f"{label} is already recorded for this patient (cost so far {so_far})"
        detail = f"{label}'s result is already in the case; ordering it again costs money."
        indicator = "warning"
    elif advice.kind == "extract" and advice.test_name == name:
        saving = expected_saving(advice)
        summary = f"{label} is the model's next test: {format_money(option.price_now)} now"
        detail = "\n".join(
            [
                f"**{label}** is the test the model would order: {_price_words(state, name)}.",
                f"Expected saving: {_saving_line(saving)}. Cost so far: {so_far}.",
            ]
        )
        indicator = "info"
    elif advice.kind == "extract" and advice.test_name is not None:
        chosen = advice.test_name
        chosen_label = advice.test_label or chosen
        mine = _option(state, chosen)
        assert mine is not None
        saving = expected_saving(advice)
        cheaper = mine.price_now < option.price_now
        summary = (
            f"The model would order {chosen_label} ({format_money(mine.price_now)}) "
            f"rather than {label} ({format_money(option.price_now)})"
        )
        detail = "\n".join(
            [
                f"**Selected: {label}**: {_price_words(state, name)}.",
                f"**The model's choice: {chosen_label}**: {_price_words(state, chosen)}; "
                f"{_saving_words(saving)}.",
                f"Difference now: {format_money(cents(option.price_now - mine.price_now))}. "
                f"Cost so far: {so_far}.",
            ]
        )
        if cheaper:
            suggestions = [_order_suggestion(answer, patient_id, chosen, remove=[reference])]
        indicator = "warning" if cheaper else "info"
    else:
        what = "refer the patient" if advice.kind == "reject" else f"conclude {advice.label}"
        summary = (
            f"No more tests needed: the model would {what}; {label} costs "
            f"{format_money(option.price_now)}"
        )
        detail = "\n".join(
            [
                f"The model would {what} now (cost so far {so_far}); {label} would add "
                f"{_price_words(state, name)}.",
                "",
                "Expected cost of each choice now:",
                *_choice_costs(state, advice),
            ]
        )
        suggestions = [
            {
                "label": f"Remove the order of {label}",
                "uuid": str(uuid.uuid4()),
                "isRecommended": True,
                "actions": [
                    {
                        "type": "delete",
                        "description": f"Remove {reference}",
                        "resourceId": [reference],
                    }
                ],
            }
        ]
        indicator = "warning"
    return _card(
        summary=summary,
        detail=detail,
        indicator=indicator,
        case_url=case_url,
        trained=trained,
        suggestions=suggestions,
    )


def _implausible_card(exc: step.ImplausibleValue, trained: TrainedModel, url: str) -> dict:
    return _card(
        summary="A result from the record is outside its plausible range: check it",
        detail=" ".join(f.message for f in exc.found)
        + " Nothing was recorded; confirm the value on the case screen.",
        indicator="warning",
        case_url=url,
        trained=trained,
        suggestions=[],
    )


def answer_hook(
    *,
    client: CdsClient,
    service: str,
    hook: HookIn,
    case_url: Callable[[int | None], str],
) -> dict[str, Any]:
    """The cards for one hook call of ``service``; HookRefused for what cannot be answered.
    All or nothing: the case, its steps and the cards are stored in one transaction."""
    trained, service_hook = service_of(client, service)
    if hook.hook != service_hook:
        raise HookRefused(f"Service {service!r} answers {service_hook}, not {hook.hook}.")
    if hook.fhirServer is not None and not fhir_server_allowed(client, hook.fhirServer):
        raise HookRefused(
            f"fhirServer {hook.fhirServer[:200]!r} is not a FHIR server registered for this "
            "client; this service reads only the FHIR servers its registration names.",
            status=403,
        )
    book = code_book(trained.dataset_id, vocabulary_of(trained).class_labels)
    bundle, where = _observations(hook, book)
    try:
        found = fhir.observations_to_results(
            bundle, book=book, patient_id=hook.context.patientId, where=where
        )
        selected: list[tuple[str, str]] = []
        if service_hook == ORDER_SELECT:
            if hook.context.draftOrders is None:
                raise HookRefused("order-select needs context.draftOrders.")
            selected = fhir.ordered_tests(
                hook.context.draftOrders, list(hook.context.selections or []), book=book
            )
    except fhir.FhirInvalid as exc:
        raise HookRefused(str(exc)) from None
    try:
        with transaction.atomic():
            answer = _record(client, trained, hook, found, book)
            url = case_url(answer.state.case.pk)
            if service_hook == PATIENT_VIEW:
                cards = [_patient_view_card(answer, trained, hook.context.patientId, url)]
            else:
                cards = [
                    _order_select_card(answer, trained, hook, chosen, url)
                    for chosen in selected[:1]
                ]
            version = case_version(answer.state.case, steps=answer.state.steps)
            advice = answer.state.advice
            conclusion = None
            if service_hook == PATIENT_VIEW and advice is not None:
                if advice.kind == "classify":
                    conclusion = {"action": "classify", "label": advice.label_index}
                elif advice.kind == "reject":
                    conclusion = {"action": "refer"}
            for card in cards:
                CdsCard.objects.create(
                    uuid=card["uuid"],
                    client=client,
                    case=answer.state.case,
                    service_id=service,
                    hook=hook.hook,
                    hook_instance=hook.hookInstance,
                    summary=card["summary"],
                    suggestions=[s["uuid"] for s in card.get("suggestions", [])],
                    version=version,
                    conclusion=conclusion,
                )
    except step.ImplausibleValue as exc:
        return {"cards": [_implausible_card(exc, trained, case_url(None))]}
    return {"cards": cards}


# -------------------------------------------------------------------------- feedback
@transaction.atomic
def record_feedback(*, client: CdsClient, service: str, feedback: FeedbackIn) -> int:
    """Store each card's outcome in its case's audit (``CdsFeedback`` and an access-log row
    ``cds-feedback``); an accepted conclusion card also takes its step (classify or refer,
    through ``apply_step``, as the screen's accept does; 409 when the case changed since the
    card).  All or nothing; HookRefused 404 for a card this client was not given by this
    service."""
    saved = 0
    for i, item in enumerate(feedback.feedback):
        card = (
            CdsCard.objects.select_related("case")
            .filter(uuid=_uuid(item.card, i), client=client, service_id=service)
            .first()
        )
        if card is None:
            raise HookRefused(f"feedback[{i}].card: no card {item.card!r} of this service.", 404)
        when = parse_datetime(item.outcomeTimestamp)
        if when is None or when.tzinfo is None:
            raise HookRefused(
                f"feedback[{i}].outcomeTimestamp must be an ISO 8601 time with its zone."
            )
        accepted = [s.id for s in item.acceptedSuggestions or []]
        unknown = [s for s in accepted if s not in card.suggestions]
        if unknown:
            raise HookRefused(f"feedback[{i}].acceptedSuggestions: unknown {unknown[0]!r}.")
        if item.outcome == CdsFeedback.ACCEPTED and item.overrideReason is not None:
            raise HookRefused(f"feedback[{i}]: an accepted card carries no overrideReason.")
        reason = item.overrideReason
        CdsFeedback.objects.create(
            card=card,
            case=card.case,
            outcome=item.outcome,
            accepted_suggestions=accepted,
            override_reason=reason.reason if reason is not None else None,
            user_comment=(reason.userComment or "") if reason is not None else "",
            outcome_timestamp=when,
        )
        log_case_access(
            user=client.clinician,
            case_id=card.case_id,
            action=FEEDBACK_ACTION,
            detail=f"{item.outcome} card {card.hook}",
        )
        if item.outcome == CdsFeedback.ACCEPTED and card.conclusion:
            _conclude(client, card, i)
        saved += 1
    return saved


def _conclude(client: CdsClient, card: CdsCard, i: int) -> None:
    """An accepted conclusion card is the clinician following it: the step the screen's
    "accept" takes (classify or refer), on the case as the card saw it (its version)."""
    assert card.conclusion is not None
    command: step.StepCommand = (
        step.Classify(label=card.conclusion["label"])
        if card.conclusion["action"] == "classify"
        else step.Refer()
    )
    try:
        step.apply_step(
            user=client.clinician, case_id=card.case_id, command=command, seen=card.version
        )
    except (step.CaseClosed, step.StaleCase) as exc:
        raise HookRefused(f"feedback[{i}]: {' '.join(exc.messages)}", status=409) from None


def _uuid(text: str, i: int) -> uuid.UUID:
    try:
        return uuid.UUID(text)
    except ValueError:
        raise HookRefused(f"feedback[{i}].card: {text[:100]!r} is not a card's uuid.") from None
