"""SMART App Launch 2, EHR launch (issue 31): the EHR opens ``/smart/launch?iss=...&launch=...``
in its frame; this service reads the EHR's ``.well-known/smart-configuration``, sends the
signed-in clinician through its authorization server with the authorization code flow and
PKCE (S256, authlib's OAuth 2 client), takes ``patient`` from the token response, opens
that patient's open case on the registered model (or starts one with ``open_case``), and
records the patient's results the EHR's FHIR server holds, read with the access token
(``patient/Observation.read``), as the case's results."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import requests
from authlib.common.security import generate_token
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from django.core.exceptions import ValidationError
from django.db import transaction

from diagnosis.catalog.selectors.vocabulary import vocabulary_of
from diagnosis.clinic.models import DiagnosisCase
from diagnosis.clinic.services import cases as case_services
from diagnosis.clinic.services import step
from diagnosis.integration import fhir
from diagnosis.integration.models import SmartClient
from diagnosis.integration.selectors.codes import code_book
from diagnosis.integration.services import fhir_search
from diagnosis.integration.services.fhir_cases import not_yet_recorded
from diagnosis.permissions import require_clinician
from diagnosis.training.models import TrainedModel

__all__ = ["SCOPE", "LaunchRefused", "Launched", "begin_launch", "finish_launch"]

#: what the app asks the EHR for: the launch context, the user, the patient's data
SCOPE = "launch openid fhirUser patient/Patient.read patient/Observation.read"
_FHIR_ID = re.compile(r"^[A-Za-z0-9\-.]{1,64}$")
_TIMEOUT = 5


class LaunchRefused(Exception):
    """A launch that cannot go on: ``status`` (400, or 502 when the EHR fails) and why."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _configuration(iss: str) -> dict[str, Any]:
    url = iss.rstrip("/") + "/.well-known/smart-configuration"
    try:
        answer = requests.get(
            url, headers={"Accept": "application/json"}, timeout=_TIMEOUT, allow_redirects=False
        )
        answer.raise_for_status()
        document = answer.json()
    except (requests.RequestException, ValueError) as exc:
        raise LaunchRefused(
            f"The EHR's SMART configuration could not be read ({exc}).", 502
        ) from None
    if not isinstance(document, dict):
        raise LaunchRefused("The EHR's SMART configuration is not a JSON object.", 502)
    for key in ("authorization_endpoint", "token_endpoint"):
        if not isinstance(document.get(key), str) or not document[key].startswith("http"):
            raise LaunchRefused(f"The EHR's SMART configuration has no {key}.", 502)
    if "S256" not in (document.get("code_challenge_methods_supported") or []):
        raise LaunchRefused("The EHR does not offer PKCE with S256, which SMART 2 requires.", 502)
    return document


def _session(registration: SmartClient, redirect_uri: str, **kwargs: Any) -> OAuth2Session:
    return OAuth2Session(
        registration.client_id,
        redirect_uri=redirect_uri,
        scope=SCOPE,
        code_challenge_method="S256",
        token_endpoint_auth_method="none",  # a public client: PKCE instead of a secret
        **kwargs,
    )


def begin_launch(*, user, iss: str, launch: str, redirect_uri: str) -> tuple[str, dict[str, str]]:
    """The EHR's authorization URL to send the clinician to, and what the callback needs
    (kept in the clinician's session: state, the PKCE verifier, the token endpoint; and the
    EHR's registered name, for the page a clinician just signed in sees)."""
    require_clinician(user)
    if not iss or not launch or len(launch) > 1000:
        raise LaunchRefused("A SMART launch needs iss and launch.")
    registration = SmartClient.objects.filter(iss=iss).first()
    if registration is None:
        raise LaunchRefused(f"{iss[:200]} is not a registered SMART EHR.")
    configuration = _configuration(iss)
    verifier = generate_token(64)
    url, state = _session(registration, redirect_uri).create_authorization_url(
        configuration["authorization_endpoint"], code_verifier=verifier, launch=launch, aud=iss
    )
    pending = {
        "iss": iss,
        "ehr": registration.name,
        "state": state,
        "verifier": verifier,
        "token_endpoint": configuration["token_endpoint"],
    }
    return url, pending


@dataclass(frozen=True)
class Launched:
    """The case a launch opened, how many of the EHR's results it recorded, and why it
    recorded none when the EHR's results could not be taken (``problem``, in words)."""

    case: DiagnosisCase
    recorded: int = 0
    problem: str | None = None


def finish_launch(
    *, user, pending: dict[str, str] | None, code: str, state: str, redirect_uri: str
) -> Launched:
    """Exchange ``code`` (with the PKCE verifier) for the token, open the case of its
    ``patient`` for ``user`` on the registration's model, and record the patient's results the
    EHR's FHIR server holds (an Observation search with the access token) that the case lacks,
    through the step service, all or nothing.  Results that cannot be read or taken leave the
    case as it was, and ``problem`` says why: the launch itself still opens the case."""
    require_clinician(user)
    if not pending or not state or state != pending.get("state"):
        raise LaunchRefused("This launch is unknown or expired (state); launch again from the EHR.")
    if not code:
        raise LaunchRefused("The EHR sent no authorization code.")
    registration = (
        SmartClient.objects.select_related("trained_model").filter(iss=pending["iss"]).first()
    )
    if registration is None:
        raise LaunchRefused("The EHR is no longer registered.")
    try:
        token = _session(registration, redirect_uri, state=state).fetch_token(
            pending["token_endpoint"],
            code=code,
            code_verifier=pending["verifier"],
            timeout=_TIMEOUT,
        )
    except (OAuthError, requests.RequestException, ValueError) as exc:
        raise LaunchRefused(f"The EHR refused the authorization code ({exc}).", 502) from None
    patient = token.get("patient")
    if not isinstance(patient, str) or not _FHIR_ID.match(patient):
        raise LaunchRefused("The EHR's token names no patient; launch from a patient's chart.", 502)
    trained = registration.trained_model
    book = code_book(trained.dataset_id, vocabulary_of(trained).class_labels)
    found: dict[str, fhir.ObservedResult] = {}
    problem = None
    try:  # read before the case is locked: the EHR may be slow
        bundle = fhir_search.search(pending["iss"], patient, book, token.get("access_token"))
        found = fhir.observations_to_results(
            bundle, book=book, patient_id=patient, where="Observation search"
        )
    except (fhir_search.FhirUnreadable, fhir.FhirInvalid) as exc:
        problem = str(exc)
    with transaction.atomic():
        case = _patient_case(user, trained, f"FHIR Patient/{patient}")
        new = not_yet_recorded(case, found) if found else {}
        if not new:
            return Launched(case=case, problem=problem)
        try:
            taken = step.apply_step(
                user=user, case_id=case.pk, command=step.RecordResults(results=new)
            )
        except step.ImplausibleValue as exc:
            return Launched(case=case, problem=" ".join(f.message for f in exc.found))
        except ValidationError as exc:
            return Launched(case=case, problem=" ".join(exc.messages))
        return Launched(case=case, recorded=len(taken.steps))


def _patient_case(user, trained: TrainedModel, reference: str) -> DiagnosisCase:
    """``user``'s open case of the patient on the model (the newest), else a new one."""
    case = (
        DiagnosisCase.objects.filter(
            clinician=user,
            trained_model=trained,
            patient_reference=reference,
            status=DiagnosisCase.OPEN,
        )
        .order_by("-created_at")
        .first()
    )
    if case is not None:
        return case
    return case_services.open_case(
        user=user, trained_model=trained, patient_reference=reference
    ).case
