"""The EHR's side of the CDS Hooks tests: its keys (made by joserfc), its signed JWTs, its
registration, the toy dataset's codes, FHIR Bundles, and a real HTTP server (a thread) for
the EHR's JWKS and FHIR endpoint."""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import requests
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey

from diagnosis.integration.models import (
    ICD_10,
    LOCAL_CLASSES,
    LOCAL_TESTS,
    LOINC,
    ClassCode,
    TestCode,
)
from diagnosis.integration.services.cds_clients import register_client

ISSUER = "https://ehr.test.example"
ORIGIN = "https://ehr.test.example"
GLUCOSE = (LOINC, "2345-7")
INSULIN = (LOCAL_TESTS, "insulin")
SEX = (LOINC, "46098-0")


def new_key(kind: str = "EC", kid: str | None = None):
    """A private signing key (EC P-384 for ES384, or RSA 2048 for RS384)."""
    kid = kid or uuid.uuid4().hex[:8]
    if kind == "EC":
        return ECKey.generate_key("P-384", parameters={"kid": kid}, private=True)
    return RSAKey.generate_key(2048, parameters={"kid": kid}, private=True)


def public_jwks(*keys) -> dict[str, Any]:
    return {"keys": [k.as_dict(private=False) for k in keys]}


def sign(key, *, aud: str, iss: str = ISSUER, **overrides: Any) -> str:
    """A CDS Hooks JWT as an EHR makes it: iss, sub, aud, iat, exp (5 minutes), jti."""
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": iss,
        "sub": "ehr-client",
        "aud": aud,
        "iat": now,
        "exp": now + 300,
        "jti": uuid.uuid4().hex,
    }
    claims.update(overrides)
    claims = {k: v for k, v in claims.items() if v is not None}
    alg = "ES384" if isinstance(key, ECKey) else "RS384"
    return jwt.encode({"alg": alg, "kid": key.kid, "typ": "JWT"}, claims, key, algorithms=[alg])


def register(
    clinician,
    key=None,
    *,
    jwks_url: str = "",
    origins=(ORIGIN,),
    issuer=ISSUER,
    fhir_servers=(),
):
    """The EHR registered as a client acting as ``clinician``, with ``key``'s public half."""
    return register_client(
        name="Test EHR",
        issuer=issuer,
        clinician=clinician,
        jwks=public_jwks(key) if key is not None else None,
        jwks_url=jwks_url,
        allowed_origins=list(origins),
        fhir_servers=list(fhir_servers),
    )


def code_toy_dataset(dataset) -> None:
    """The toy dataset's codes: glucose LOINC 2345-7, insulin local, sex LOINC 46098-0."""
    tests = {t.name: t for t in dataset.tests.all()}
    TestCode.objects.create(test=tests["glucose"], system=LOINC, code="2345-7", unit="mg/dL")
    TestCode.objects.create(
        test=tests["insulin"], system=LOCAL_TESTS, code="insulin", unit="u[IU]/mL"
    )
    TestCode.objects.create(test=tests["sex"], system=LOINC, code="46098-0")
    ClassCode.objects.create(dataset=dataset, label_index=0, system=LOCAL_CLASSES, code="healthy")
    ClassCode.objects.create(dataset=dataset, label_index=1, system=ICD_10, code="E14")


def observation(
    oid: str,
    coding: tuple[str, str],
    value: Any,
    *,
    unit: str | None = None,
    patient: str = "p1",
    when: str = "2026-11-27T08:00:00Z",
) -> dict[str, Any]:
    resource: dict[str, Any] = {
        "resourceType": "Observation",
        "id": oid,
        "status": "final",
        "code": {"coding": [{"system": coding[0], "code": coding[1]}]},
        "subject": {"reference": f"Patient/{patient}"},
        "effectiveDateTime": when,
    }
    if isinstance(value, str):
        resource["valueCodeableConcept"] = {"text": value}
    else:
        resource["valueQuantity"] = {
            "value": value,
            "system": "http://unitsofmeasure.org",
            "code": unit or "",
        }
        if unit is None:
            del resource["valueQuantity"]["code"], resource["valueQuantity"]["system"]
    return resource


def bundle(*resources: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceType": "Bundle",
        "type": "searchset",
        "entry": [{"resource": r} for r in resources],
    }


def hook_body(
    hook: str = "patient-view",
    *,
    patient: str = "p1",
    observations=None,
    prefetch: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "hook": hook,
        "hookInstance": str(uuid.uuid4()),
        "context": {"userId": "Practitioner/dr-1", "patientId": patient},
    }
    if prefetch:
        body["prefetch"] = {
            "patient": {"resourceType": "Patient", "id": patient},
            "observations": bundle(*(observations or [])),
        }
    body.update(extra)
    return body


def call(
    base: str, path: str, key, body: Any = None, *, token: str | None = None, **headers: str
) -> requests.Response:
    """A call over HTTP as the EHR makes it: a fresh JWT whose aud is the endpoint's URL."""
    url = base + path
    token = token or sign(key, aud=url)
    sent = {"Authorization": f"Bearer {token}", **headers}
    if body is None:
        return requests.get(url, headers=sent, timeout=30)
    return requests.post(url, json=body, headers=sent, timeout=30)


class LocalServer:
    """A real HTTP server on 127.0.0.1 in a thread: ``routes`` maps a path (without the query)
    to (status, JSON); every request's path and headers are kept in ``seen``."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, Any]] = {}
        self.seen: list[tuple[str, dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                server.seen.append((self.path, dict(self.headers.items())))
                status, document = server.routes.get(self.path.split("?")[0], (404, {}))
                payload = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> LocalServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
