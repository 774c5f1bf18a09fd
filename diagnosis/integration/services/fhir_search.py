"""An EHR's FHIR server asked for a patient's Observations of a model's tests: by the CDS
Hooks service when a call has no ``prefetch``, and by the SMART launch with its access token.

One search, ``Observation?patient=<id>&code=<system|code,...>`` (every test's code), read
with a time limit and a size limit, no redirects; :class:`FhirUnreadable` says in words why
it gave nothing.  The answer is the search's JSON object, for ``fhir.observations_to_results``
to read strictly."""

from __future__ import annotations

import json
from typing import Any

import requests

from diagnosis.integration.selectors.codes import CodeBook

__all__ = ["FETCH_MAX_BYTES", "FETCH_TIMEOUT", "FhirUnreadable", "observation_query", "search"]

FETCH_TIMEOUT = 5
FETCH_MAX_BYTES = 1024 * 1024


class FhirUnreadable(Exception):
    """The FHIR server gave no Observations to read; the message says why."""


def observation_query(book: CodeBook, patient: str) -> str:
    """The search for ``patient``'s Observations of the book's tests (``patient`` may be the
    CDS Hooks template ``{{context.patientId}}``)."""
    codes = ",".join(f"{c.system}|{c.code}" for c in book.of_test.values())
    return f"Observation?patient={patient}&code={codes}"


def search(base: str, patient: str, book: CodeBook, access_token: str | None) -> dict[str, Any]:
    """The Observation search on the FHIR server at ``base`` (with ``access_token`` as its
    bearer when given), as a JSON object; :class:`FhirUnreadable` otherwise."""
    url = base.rstrip("/") + "/" + observation_query(book, patient) + "&_count=200"
    headers = {"Accept": "application/fhir+json"}
    if access_token:
        headers["Authorization"] = f"Bearer {access_token}"
    try:
        with requests.get(
            url, headers=headers, timeout=FETCH_TIMEOUT, stream=True, allow_redirects=False
        ) as answer:
            if answer.status_code != 200:
                raise FhirUnreadable(
                    f"The FHIR server answered {answer.status_code} to the Observation search."
                )
            body = answer.raw.read(FETCH_MAX_BYTES + 1, decode_content=True)
    except requests.RequestException as exc:
        raise FhirUnreadable(f"The FHIR server could not be read ({type(exc).__name__}).") from None
    if len(body) > FETCH_MAX_BYTES:
        raise FhirUnreadable("The FHIR server's Observation search is over 1 MB.")
    try:
        document = json.loads(body)
    except ValueError:
        raise FhirUnreadable("The FHIR server's answer is not JSON.") from None
    if not isinstance(document, dict):
        raise FhirUnreadable("The FHIR server's answer is not a Bundle.")
    return document
