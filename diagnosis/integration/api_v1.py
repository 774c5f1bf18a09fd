"""/api/v1: the step logic for other systems (an electronic health record), with a schema.

A program authenticates with ``Authorization: Bearer <token>`` (``manage.py api_token``) and
acts as that token's user, with exactly that user's rights: a clinician lists the ready
models, starts cases and steps only their own cases; a lead clinician also reads their
team's cases (a step on one is a 403).  Case reads and steps are written to the access log.
The OpenAPI document is at ``/api/v1/openapi.json`` and its reader at ``/api/v1/docs``
(served from this server): a browser is sent to the sign-in page first, a program without a
token gets 401.

Every answer is JSON. Errors are ``{"error": "...", "details": [...]?}`` with 400 (bad input,
naming the field), 401 (no or bad token), 403 (role), 404 (no such case *or* not yours, word
for word the same), 409 (closed case, or ``seen`` older than the case) and 429 (too many
calls, or too many refused tokens from one address; ``Retry-After`` says when to try
again), 413 (a body over the size limit) and 503 (the database is not answering; a read, or a
step that committed nothing, was already run once more; ``Retry-After``).
"""

from __future__ import annotations

import hashlib
import time
from functools import wraps
from typing import Annotated, Any, Literal

from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied, RequestDataTooBig, ValidationError
from django.http import HttpRequest, JsonResponse
from django.urls import URLPattern, URLResolver
from ninja import Field, NinjaAPI, Query, Schema, Status
from ninja.errors import AuthenticationError, HttpError, Throttled
from ninja.errors import ValidationError as SchemaError
from ninja.parser import Parser
from ninja.security import HttpBearer
from pydantic import (
    ConfigDict,
    StrictInt,
    StrictStr,
    StringConstraints,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from diagnosis.catalog.selectors.vocabulary import vocabulary_of
from diagnosis.client_address import client_address
from diagnosis.clinic import selectors
from diagnosis.clinic.models import CaseAccess
from diagnosis.clinic.permissions import CaseNotFound
from diagnosis.clinic.services import cases as case_services
from diagnosis.clinic.services import step
from diagnosis.clinic.services.access_log import log_case_access
from diagnosis.integration.api import implausible_answer, state_to_dict
from diagnosis.integration.services import api_tokens, fhir_cases
from diagnosis.integration.throttling import SlidingWindowThrottle
from diagnosis.shared.validation import (
    BodyTooLarge,
    clean_request_field,
    parse_json_object,
    too_large_message,
)
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors.models import visible_model

__all__ = ["api", "urlpatterns"]


class BadTokenLimit(SlidingWindowThrottle):
    """``API_BAD_TOKEN_LIMIT`` refused tokens per client address (``client_address``, as
    django-axes counts wrong passwords) in any sliding window of its period, counted in Redis.

    The per-token rate limit runs after authentication, so it never sees a call whose token is
    refused; without this, an address could present made-up tokens as fast as the server
    answers, each one a database read.  The refusal past the limit is answered 429 (with
    ``Retry-After``), and the web process that answered it then refuses every token from that
    address, good ones too, without looking it up, until the oldest refusal leaves the window
    (another process does the same at its own first refusal).  A call with a good token never
    waits for Redis here.
    """

    scope = "api-v1-bad-token"
    rate_setting = "API_BAD_TOKEN_LIMIT"

    def __init__(self) -> None:
        super().__init__()
        self._shut: dict[str, float] = {}  # address -> time.monotonic() it may call again

    def get_cache_key(self, request: HttpRequest) -> str:
        return self.cache_format % {"scope": self.scope, "ident": _address(request)}

    def refuse_if_shut(self, request: HttpRequest) -> None:
        """Raise Throttled while this process has shut ``request``'s address out."""
        until = self._shut.get(_address(request))
        if until is not None:
            wait = until - time.monotonic()
            if wait > 0:
                # seconds as a float, as django-ninja itself passes them; its annotation says int
                raise Throttled(wait=wait)  # type: ignore[arg-type]
            del self._shut[_address(request)]

    def count_refusal(self, request: HttpRequest) -> None:
        """Count a refused token; past the limit, shut the address out and raise Throttled."""
        if self.allow_request(request):
            return
        wait = self.wait() or 1.0
        if len(self._shut) > 10_000:  # forget the addresses whose wait is over
            now = time.monotonic()
            self._shut = {a: t for a, t in self._shut.items() if t > now}
        self._shut[_address(request)] = time.monotonic() + wait
        raise Throttled(wait=wait)  # type: ignore[arg-type]  # a float, as above


def _address(request: HttpRequest) -> str:
    return client_address(request) or "unknown"  # behind trusted proxies, the forwarded one


_bad_tokens = BadTokenLimit()


def _token_user(request: HttpRequest, token: str):
    """The active user of ``token``, or None (a refusal, counted against the address);
    :class:`~ninja.errors.Throttled` past the address's limit of refusals."""
    _bad_tokens.refuse_if_shut(request)
    user = api_tokens.authenticate_token(presented=token)
    if user is None:
        _bad_tokens.count_refusal(request)
    return user


class BearerToken(HttpBearer):
    """``Authorization: Bearer <token>``; the request then acts as the token's user."""

    def authenticate(self, request: HttpRequest, token: str):
        user = _token_user(request, token)
        if user is not None:
            request.user = user
        return user


class StrictJsonParser(Parser):
    """Bodies are read by the same strict JSON reader as the step API and model files."""

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        return parse_json_object(request.body)


class TokenRateThrottle(SlidingWindowThrottle):
    """``API_RATE_LIMIT`` calls per presented token, or per address for calls without one,
    in any sliding window of the limit's period, counted atomically in Redis.

    The count is keyed by the presented header's hash: one system's burst never uses up
    another's allowance behind the same hospital address.
    """

    scope = "api-v1"
    rate_setting = "API_RATE_LIMIT"

    def get_cache_key(self, request: HttpRequest) -> str:
        header = request.headers.get("Authorization", "")
        if header:
            ident = hashlib.sha256(header.encode("utf-8", "surrogatepass")).hexdigest()
        else:
            ident = _address(request)  # never a forwarded address from an untrusted peer
        return self.cache_format % {"scope": self.scope, "ident": ident}


def _signed_in(view):
    """The schema and its reader need a token or a signed-in session, like every page."""

    @wraps(view)
    def guarded(request: HttpRequest, *args, **kwargs):
        header = request.headers.get("Authorization", "")
        token = header[7:].strip() if header.lower().startswith("bearer ") else ""
        try:
            if request.user.is_authenticated or (token and _token_user(request, token)):
                return view(request, *args, **kwargs)
        except Throttled as refused:
            return _throttled(request, refused)
        if not header and "text/html" in request.headers.get("Accept", ""):
            # A person in a browser: the sign-in page, then back to the reader.
            return redirect_to_login(request.get_full_path())
        return JsonResponse(
            {"error": "Send 'Authorization: Bearer <token>' or sign in."}, status=401
        )

    return guarded


api = NinjaAPI(
    title="Cost-aware diagnosis API",
    version="1",
    description=__doc__,
    auth=BearerToken(),
    parser=StrictJsonParser(),
    throttle=[TokenRateThrottle()],
    urls_namespace="api-v1",
    docs_decorator=_signed_in,
)


def _error(request: HttpRequest, message: str, status: int, **extra: Any) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


@api.exception_handler(ValidationError)
def _bad_input(request, exc: ValidationError):
    return _error(request, " ".join(exc.messages), 400)


@api.exception_handler(SchemaError)
def _bad_shape(request, exc: SchemaError):
    details = [
        {
            "field": ".".join(str(p) for p in e.get("loc", ()) if p not in ("body", "payload")),
            "message": e.get("msg", ""),
        }
        for e in exc.errors
    ]
    # the shared field reader's messages name their field already
    words = "; ".join(
        d["message"]
        if e.get("type") == _FIELD_REFUSED
        else f"{d['field'] or 'body'}: {d['message']}"
        for d, e in zip(details, exc.errors, strict=True)
    )
    return _error(request, f"The request does not fit the schema: {words}.", 400, details=details)


@api.exception_handler(HttpError)
def _http_error(request, exc: HttpError):
    # A body our strict reader refused comes wrapped ("Cannot parse request body"): say why.
    cause = exc.__cause__
    if isinstance(cause, RequestDataTooBig):  # over Django's DATA_UPLOAD_MAX_MEMORY_SIZE
        return _error(request, too_large_message(), 413)
    message = " ".join(cause.messages) if isinstance(cause, ValidationError) else str(exc)
    return _error(request, message, 413 if isinstance(cause, BodyTooLarge) else exc.status_code)


@api.exception_handler(AuthenticationError)
def _no_token(request, exc):
    return _error(request, "Send a valid token: 'Authorization: Bearer <token>'.", 401)


@api.exception_handler(PermissionDenied)
def _forbidden(request, exc: PermissionDenied):
    return _error(request, str(exc) or "Your role does not allow this.", 403)


@api.exception_handler(CaseNotFound)
def _no_case(request, exc: CaseNotFound):
    return _error(request, str(exc), 404)


@api.exception_handler(step.CaseClosed)
@api.exception_handler(step.StaleCase)
def _conflict(request, exc):
    return _error(request, " ".join(exc.messages), 409)


@api.exception_handler(step.ImplausibleValue)
def _implausible(request, exc: step.ImplausibleValue):
    return JsonResponse(implausible_answer(exc), status=422)


@api.exception_handler(Throttled)
def _throttled(request, exc: Throttled):
    response = _error(request, "Too many calls; wait and try again.", 429)
    if exc.wait:
        response["Retry-After"] = str(int(exc.wait) + 1)
    return response


# ------------------------------------------------------------------------ schemas
class ErrorOut(Schema):
    error: str
    details: list[dict[str, Any]] | None = None


# Every operation may answer these, each with an ErrorOut body.
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 413: ErrorOut, 429: ErrorOut, 503: ErrorOut}
CASE_ERRORS = {**ERRORS, 404: ErrorOut, 409: ErrorOut}


class ImplausibleOut(Schema):
    error: str = Field(description="Which value is outside which plausible range; nothing saved.")
    implausible: list[dict[str, Any]] = Field(
        description="Each such value: test, label, value, plausible_min, plausible_max, unit, "
        'message. Send the step again with "confirm_implausible": true if it is right.'
    )


class ModelOut(Schema):
    id: int
    name: str
    learner: str
    dataset: str
    status: str
    ready: bool
    approval: str = Field(
        description="approved (clinicians see only these), draft or retired (model admins)."
    )
    class_labels: list[str]


_FIELD_REFUSED = "field_refused"


class StrictIn(Schema):
    """A request body read field by field by the session step API's own reader
    (``clean_request_field``): the same types, lengths and NUL check on both APIs, before
    pydantic's lax coercion could turn ``true`` into 1 or ``"1"`` into an id."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _shared_reader(cls, value: Any, info: ValidationInfo) -> Any:
        assert info.field_name is not None  # a field validator's info names its field
        try:
            return clean_request_field(info.field_name, value)
        except ValidationError as exc:
            raise PydanticCustomError(_FIELD_REFUSED, " ".join(exc.messages)) from None


class CaseIn(StrictIn):
    model: int = Field(..., ge=1, description="The id of a ready model (GET /models).")
    patient_reference: str = Field("", max_length=200)


class CaseSummaryOut(Schema):
    case: int
    status: str
    patient_reference: str
    model: int
    updated_at: str


class StepOut(Schema):
    position: int = Field(description="0-based, in the order the steps were taken.")
    kind: Literal["result", "unavailable", "classify", "refer"]
    test: str | None = Field(description="The test's name (result, unavailable).")
    value: float | None = Field(description="The value recorded (a nominal test: its code).")
    price: float = Field(description="What the step was charged, in dollars.")
    discount_from: str | None = Field(
        description="The done test whose group made this one cheaper, if any."
    )
    label: str | None = Field(description="The class concluded (classify).")
    followed_advice: bool
    overrule_reason: str
    implausible_confirmed: bool = Field(
        description="The value lies outside its test's plausible range and was confirmed."
    )
    plausible_range: dict[str, Any] | None = Field(
        description="The plausible range the value was confirmed against."
    )
    created_by: str
    created_at: str
    correction: Literal["corrected", "undone", "restored"] | None
    corrected_by: str | None
    corrected_at: str | None
    correction_reason: str
    replaced_by: int | None = Field(description="The position of the step that replaced it.")


class ChoiceOut(Schema):
    model_config = ConfigDict(extra="allow")

    code: float | int
    label: str


class TestOut(Schema):
    name: str
    label: str
    kind: str = Field(description="numeric or nominal.")
    unit: str
    min_value: float | None
    max_value: float | None
    plausible_min: float | None
    plausible_max: float | None
    integer_only: bool
    choices: list[ChoiceOut] | None = Field(
        description="A nominal test's choices as the model was trained with them."
    )
    price_now: float = Field(description="What ordering it costs this patient now.")
    full_price: float
    discount_from: str | None = Field(description="The done test whose group discounts it.")
    price_generated: bool = Field(description="Made by the automatic price generator.")
    derived_from: list[str] = Field(description="A derived test's inputs (thyroid FTI).")
    done: bool
    unavailable: bool
    recommended: bool = Field(description="The advice is to order this test next.")
    value: float | None


class RiskOut(Schema):
    kind: str
    test: int | None
    risk: float


class EvidenceOut(Schema):
    """What the advice rests on, in numbers (see the model's documentation)."""

    model_config = ConfigDict(extra="allow")

    proba: list[float] = Field(description="The class probabilities, in class_labels order.")
    support: float = Field(description="How many training cases stand behind proba.")
    class_costs: list[float] = Field(description="The expected cost of concluding each class.")
    refer_cost: float | None = Field(description="The expected cost of referring now.")
    conclude_cost: float
    best_class: int
    refers_now: bool
    cost_after: float | None = Field(
        description="Order a test: the expected cost of concluding once its result is known."
    )
    nodes: list[list[float]]
    risks: list[RiskOut]
    waiting: float | None
    members: float | None


class ConclusionOut(Schema):
    kind: Literal["classify", "reject"]
    label_index: int | None
    label: str | None


class DecisionCostsOut(Schema):
    basis: Literal["expected_cost", "risk"]
    class_labels: list[str]
    matrix: list[list[float]]
    reject_cost: float | list[float] | None
    penalty: float | None
    reward: float | None


class AdviceOut(Schema):
    """The model's next action in numbers, with the names it needs."""

    model_config = ConfigDict(extra="allow")

    kind: Literal["extract", "classify", "reject"] = Field(
        description="extract: order test_name next; classify: conclude label; reject: refer."
    )
    test: int | None = Field(None, description="extract: the test's index.")
    cost: float | None = Field(None, description="extract: its price for this patient now.")
    proba: list[float] | None = Field(None, description="classify: the class probabilities.")
    expected_cost: float | None = Field(None, description="classify/reject: expected cost.")
    evidence: EvidenceOut | None = None
    test_index: int | None
    test_name: str | None
    test_label: str | None
    label_index: int | None
    label: str | None
    label_position: int | None
    class_labels: list[str]
    test_labels: dict[str, str] = Field(description="Every test the advice mentions, by index.")
    conclusion_now: ConclusionOut | None = Field(
        None, description="extract: what the model concludes if the patient stopped now."
    )
    known_count: int = Field(description="How many results the advice rests on.")
    unavailable_labels: list[str] | None = None
    costs: DecisionCostsOut | dict[str, Any] | None = Field(
        None, description="The error costs the model decides with ({} when it has none)."
    )
    branches: list[dict[str, Any]] | None = Field(
        None, description="A patient split by an unavailable test: where each share went."
    )


class ExplanationOut(Schema):
    headline: str
    why: list[str] = Field(description="Whole sentences: why this advice, in dollars.")
    proba: list[dict[str, Any]] = Field(description='Rows {"label", "p", "percent"}.')
    risks: list[dict[str, Any]] = Field(
        description='Rows {"action", "risk", "money", "key", "lowest"} (risk-weighing models).'
    )
    costs: dict[str, Any] = Field(description="The error costs, ready for a grid.")
    branches: list[str]


class CaseStateOut(Schema):
    case: int
    status: str
    is_open: bool
    patient_reference: str
    model: int
    final_label: str | None
    version: int = Field(description="Send it back as seen: a step on a changed case is a 409.")
    accumulated_cost: float = Field(description="What the patient has cost so far, in dollars.")
    advice: AdviceOut | None = Field(description="The model's next action (null when closed).")
    explanation: ExplanationOut | None
    class_labels: list[str]
    error_matrix: list[list[float]] = Field(
        description="The error costs the case is decided with, copied when it started: "
        "row = actual class, column = concluded class, both in class_labels order."
    )
    referral_cost: float | None = Field(
        description="The cost of referring the patient (null: the model never refers)."
    )
    steps: list[StepOut]
    tests: list[TestOut] = Field(
        description="Every test, priced for this patient now. A derived test (thyroid FTI) "
        "names its inputs in derived_from: when the advice is to order it, enter those inputs "
        "that are still missing (each counts as following the advice); its value is then "
        "computed, or typed in after them when the model has no formula for it."
    )


class StepIn(StrictIn):
    """One step, as in the screen: see the action list in the description."""

    action: Literal["result", "unavailable", "classify", "refer", "correct", "undo"]
    test: str | None = Field(None, max_length=100)
    value: float | str | None = Field(None, description="A number, or a choice's label or code.")
    label: int | str | None = Field(None, description="A class's index or name (classify).")
    position: int | None = Field(None, ge=0, description="The step to correct (0-based).")
    reason: str | None = Field(None, max_length=1000)
    seen: int | None = Field(None, ge=0, description="The case version you last read.")
    confirm_implausible: bool | None = Field(
        None,
        description="true: the value (result or correction) is right although outside its "
        "test's plausible range; kept with the step. Without it such a value answers 422.",
    )


# ---------------------------------------------------------------------- endpoints
@api.get("/models", response={200: list[ModelOut], **ERRORS}, summary="The models you may use")
def list_models(request: HttpRequest):
    return [
        {
            "id": m.pk,
            "name": str(m),
            "learner": m.learner,
            "dataset": m.dataset.name,
            "status": m.status,
            "ready": m.is_ready,
            "approval": m.approval,
            "class_labels": vocabulary_of(m).class_labels,
        }
        for m in selectors.models_for_user(user=request.user)
    ]


@api.get("/cases", response={200: list[CaseSummaryOut], **ERRORS}, summary="Your open cases")
def list_cases(request: HttpRequest):
    return [
        {
            "case": c.pk,
            "status": c.status,
            "patient_reference": c.patient_reference,
            "model": c.trained_model_id,
            "updated_at": c.updated_at.isoformat(),
        }
        for c in selectors.open_cases_for_user(user=request.user)
    ]


@api.post(
    "/cases", response={201: CaseStateOut, **ERRORS}, summary="Start a case with a ready model"
)
def start_case(request: HttpRequest, payload: CaseIn):
    trained = visible_model(user=request.user, pk=payload.model)
    # a draft or retired model (which a model admin sees) gets the answer a missing one gets
    if trained is None or trained.approval != TrainedModel.APPROVED:
        raise ValidationError(f"There is no ready model {payload.model} you may use.")
    # the answer's read is logged with the new case (one commit)
    opened = case_services.open_case(
        user=request.user,
        trained_model=trained,
        patient_reference=payload.patient_reference,
        access=CaseAccess.API_READ,
    )
    # answered from the new row and its (no) steps, not read back
    state = selectors.case_state(user=request.user, case=opened.case, context=opened)
    return Status(201, state_to_dict(state))


@api.get(
    "/cases/{case_id}",
    response={200: CaseStateOut, **CASE_ERRORS},
    summary="A case: advice, steps, prices",
)
def get_case(request: HttpRequest, case_id: int):
    return _state(request, case_id, access=CaseAccess.API_READ)


@api.post(
    "/cases/{case_id}/steps",
    response={200: CaseStateOut, **CASE_ERRORS, 422: ImplausibleOut},
    summary="Take one step",
)
def take_step(request: HttpRequest, case_id: int, payload: StepIn):
    command = step.command_from_fields(
        payload.action,
        test=payload.test,
        value=payload.value,
        label=payload.label,
        position=payload.position,
        reason=payload.reason,
        confirm_implausible=payload.confirm_implausible,
    )
    # The case is read and locked by the service in one query (404 when missing or not
    # readable, as case_for_user answers), which also logs the step.
    taken = step.apply_step(user=request.user, case_id=case_id, command=command, seen=payload.seen)
    return state_to_dict(taken.state)


class ConfirmedDiagnosisIn(Schema):
    """The diagnosis a closed case turned out to have (issue 27: monitoring)."""

    model_config = ConfigDict(extra="forbid")

    label: StrictInt | Annotated[StrictStr, StringConstraints(max_length=200)] = Field(
        ..., description="The confirmed class: its name or its index in the case's class_labels."
    )


class ConfirmedDiagnosisOut(Schema):
    case: int
    label: int = Field(description="The class's index in the case's class_labels.")
    label_name: str
    recorded_by: str
    recorded_at: str
    source: str


@api.post(
    "/cases/{case_id}/confirmed-diagnosis",
    response={201: ConfirmedDiagnosisOut, **CASE_ERRORS},
    summary="Record a closed case's confirmed diagnosis",
)
def record_confirmed_diagnosis(request: HttpRequest, case_id: int, payload: ConfirmedDiagnosisIn):
    """Only the case's own clinician, on a closed case (409 while it is open); the steps and
    costs stay as they are, and the model's monitoring counts it."""
    from diagnosis.clinic.services import confirmations

    case = selectors.case_for_user(user=request.user, pk=case_id)
    if case.is_open:
        return Status(
            409, {"error": "This case is still open: conclude or refer it first, then confirm."}
        )
    recorded = confirmations.record_confirmed_diagnosis(
        user=request.user, case=case, label=payload.label, source="api"
    )
    return Status(
        201,
        {
            "case": case.pk,
            "label": recorded.label,
            "label_name": recorded.label_name,
            "recorded_by": request.user.get_username(),
            "recorded_at": recorded.recorded_at.isoformat(),
            "source": recorded.source,
        },
    )


# ------------------------------------------------------------------------ FHIR
class FhirBundleOut(Schema):
    """A FHIR R4 Bundle (``collection``), valid for the fhir.resources R4B models."""

    model_config = ConfigDict(extra="allow")

    resourceType: Literal["Bundle"]  # noqa: N815 (FHIR's name)
    type: str
    entry: list[dict[str, Any]] = Field(
        description="An Observation per recorded result (coded as its test is mapped), the "
        "ServiceRequest (intent=proposal) of the advised test, RiskAssessment of the class "
        "probabilities, DiagnosticReport of a conclusion (final once closed); each names the "
        "Observations it rests on."
    )


class OperationOutcomeOut(Schema):
    """A FHIR R4 OperationOutcome: each issue's expression names the resource and field."""

    model_config = ConfigDict(extra="allow")

    resourceType: Literal["OperationOutcome"]  # noqa: N815 (FHIR's name)
    issue: list[dict[str, Any]]


_BUNDLE_IN = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "title": "FhirBundleIn",
                    "description": "A FHIR R4 Bundle whose entries are Observations, each "
                    "coded (LOINC, or the local code) as a test of the case's model is mapped, "
                    "numeric values in its UCUM unit.",
                    "type": "object",
                    "required": ["resourceType", "type", "entry"],
                    "properties": {
                        "resourceType": {"type": "string", "enum": ["Bundle"]},
                        "type": {"type": "string"},
                        "entry": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"resource": {"type": "object"}},
                            },
                        },
                    },
                }
            }
        },
    }
}


@api.get(
    "/cases/{case_id}/fhir",
    response={200: FhirBundleOut, **CASE_ERRORS},
    summary="A case as FHIR: next test, class probabilities, conclusion",
)
def get_case_fhir(request: HttpRequest, case_id: int):
    return fhir_cases.case_bundle(user=request.user, case_id=case_id)


@api.post(
    "/cases/{case_id}/fhir",
    response={200: FhirBundleOut, **CASE_ERRORS, 422: OperationOutcomeOut},
    summary="Record a FHIR Bundle of Observations as results",
    openapi_extra=_BUNDLE_IN,
)
def post_case_fhir(
    request: HttpRequest,
    case_id: int,
    seen: int | None = Query(None, ge=0, description="The case version you last read."),
    confirm_implausible: bool = Query(
        False, description="true: values outside their plausible range are right."
    ),
):
    """Each Observation becomes one result step (priced, logged), all or nothing; an unknown
    code or unit, another patient's Observation, a value the test refuses or an implausible
    one is a 422 OperationOutcome naming the resource and field, and nothing is saved.
    Answers the case as FHIR."""
    try:
        body = parse_json_object(request.body)
    except (BodyTooLarge, RequestDataTooBig):
        return Status(413, {"error": too_large_message()})
    try:
        return fhir_cases.record_bundle(
            user=request.user,
            case_id=case_id,
            bundle=body,
            seen=seen,
            confirm_implausible=confirm_implausible,
        )
    except fhir_cases.FhirRefused as exc:
        return Status(422, exc.outcome)


def _state(request: HttpRequest, case_id: int, *, access: str) -> dict[str, Any]:
    case = selectors.case_for_user(user=request.user, pk=case_id)
    log_case_access(user=request.user, case_id=case.pk, action=access)
    return state_to_dict(selectors.case_state(user=request.user, case=case))


def _without_login_redirect(patterns: list) -> list:
    """The API answers 401 JSON itself: Django's login redirect must not catch its URLs."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            _without_login_redirect(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            pattern.callback = login_not_required(pattern.callback)
    return patterns


urlpatterns = _without_login_redirect(api.urls[0])
