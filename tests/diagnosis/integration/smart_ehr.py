"""A small EHR for the SMART launch tests, on a real local HTTP server: authlib's OAuth 2
authorization server (the authorization code grant, PKCE S256 required, a public client) and a
FHIR endpoint serving the launch patient's Observations as a searchset Bundle built and
validated with fhir.resources.

``GET  /fhir/.well-known/smart-configuration``  its endpoints and PKCE S256;
``GET  /authorize``   the clinician is signed in at the EHR already: answered at once with a
                      code for the launch's patient (authlib validates the request);
``POST /token``       the code exchanged for a bearer token carrying ``patient`` (authlib checks
                      the client, the redirect URI and the code verifier);
``GET  /fhir/Observation?patient=...``  the patient's ``observations``, only with a token it
                      gave.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from authlib.oauth2 import AuthorizationServer, OAuth2Error, OAuth2Request
from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, grants
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7636 import CodeChallenge
from fhir.resources.R4B.bundle import Bundle

CLIENT_ID = "cost-aware-app"
SCOPES = "launch openid fhirUser patient/Patient.read patient/Observation.read"


@dataclass
class _App(ClientMixin):
    """The app as the EHR registered it: a public client (PKCE, no secret) that may come back
    to ``/smart/callback`` of the test servers only."""

    client_id: str = CLIENT_ID

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return None

    def get_allowed_scope(self, scope: str) -> str:
        allowed = set(SCOPES.split())
        return " ".join(s for s in (scope or "").split() if s in allowed)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        parts = urlsplit(redirect_uri)
        hosts = {"127.0.0.1", "localhost", "testserver"}  # live servers; Django's test client
        return parts.hostname in hosts and parts.path == "/smart/callback"

    def check_client_secret(self, client_secret: str) -> bool:
        return False

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "none"

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type == "authorization_code"


@dataclass
class _Code(AuthorizationCodeMixin):
    code: str
    redirect_uri: str
    scope: str
    code_challenge: str
    code_challenge_method: str
    launch: str
    auth_time: int = field(default_factory=lambda: int(time.time()))

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope

    def get_auth_time(self) -> int:
        return self.auth_time

    def get_nonce(self) -> None:
        return None


@dataclass
class _Clinician:
    """The EHR's signed-in user."""

    def get_user_id(self) -> str:
        return "Practitioner/ehr-1"


class _Request(OAuth2Request):
    """A request as authlib's grants read it: the query (``args``), the form body (``form``)
    and both as the payload, as its Flask and Django integrations give them."""

    def __init__(self, method: str, uri: str, body: bytes, headers: dict) -> None:
        super().__init__(method, uri, headers=headers)
        self._args = {k: v[0] for k, v in parse_qs(urlsplit(uri).query).items()}
        self._form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        self.payload = BasicOAuth2Payload({**self._args, **self._form})

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class _Server(AuthorizationServer):
    """authlib's authorization server over plain (method, url, body, headers) requests."""

    def __init__(self, ehr: TestEhr) -> None:
        super().__init__(scopes_supported=SCOPES.split())
        self.ehr = ehr
        self.register_token_generator("default", BearerTokenGenerator(self._access_token))
        ehr_of_grant = ehr

        class CodeGrant(grants.AuthorizationCodeGrant):
            TOKEN_ENDPOINT_AUTH_METHODS = ["none"]  # a public client: PKCE instead of a secret

            def save_authorization_code(self, code: str, request: Any) -> None:
                data = request.payload.data
                ehr_of_grant.codes[code] = _Code(
                    code=code,
                    redirect_uri=data["redirect_uri"],
                    scope=request.payload.scope or "",
                    code_challenge=data.get("code_challenge", ""),
                    code_challenge_method=data.get("code_challenge_method", ""),
                    launch=data.get("launch", ""),
                )

            def query_authorization_code(self, code: str, client: Any) -> _Code | None:
                return ehr_of_grant.codes.get(code)

            def delete_authorization_code(self, authorization_code: _Code) -> None:
                ehr_of_grant.codes.pop(authorization_code.code, None)

            def authenticate_user(self, authorization_code: _Code) -> _Clinician:
                return _Clinician()

        self.register_grant(CodeGrant, [CodeChallenge(required=True)])

    @staticmethod
    def _access_token(**_kwargs: Any) -> str:
        return secrets.token_urlsafe(24)

    def query_client(self, client_id: str) -> _App | None:
        return _App() if client_id == CLIENT_ID else None

    def save_token(self, token: dict, request: Any) -> None:
        # SMART's launch context rides on the token response
        token["patient"] = self.ehr.patient
        self.ehr.tokens.add(token["access_token"])

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        return _Request(*request)

    def create_json_request(self, request: Any) -> Any:
        raise NotImplementedError  # no JSON endpoints here

    def handle_response(self, status: int, body: Any, headers: Any) -> tuple:
        return status, body, headers

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass


class TestEhr:
    """The EHR's side of a SMART launch (see the module docstring); ``authorize_queries`` and
    ``searches`` keep what the app asked."""

    __test__ = False

    def __init__(self, patient: str = "p7", observations: list[dict] | None = None) -> None:
        self.patient = patient
        self.observations = observations or []
        self.codes: dict[str, _Code] = {}
        self.tokens: set[str] = set()
        self.authorize_queries: list[dict[str, str]] = []
        self.searches: list[dict[str, str]] = []
        server = _Server(self)
        ehr = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, status: int, body: Any, headers: Any = ()) -> None:
                payload = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                if not any(name.lower() == "content-type" for name, _ in headers):
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _request(self, body: bytes = b"") -> tuple:
                return (self.command, ehr.url + self.path, body, dict(self.headers))

            def do_GET(self) -> None:  # noqa: N802
                parts = urlsplit(self.path)
                if parts.path == "/fhir/.well-known/smart-configuration":
                    return self._answer(200, {
                        "authorization_endpoint": ehr.url + "/authorize",
                        "token_endpoint": ehr.url + "/token",
                        "code_challenge_methods_supported": ["S256"],
                        "capabilities": ["launch-ehr", "client-public", "context-ehr-patient"],
                    })  # fmt: skip
                if parts.path == "/authorize":
                    ehr.authorize_queries.append(
                        {k: v[0] for k, v in parse_qs(parts.query).items()}
                    )
                    asked, user = self._request(), _Clinician()
                    try:  # authlib validates the request (client, redirect URI, PKCE) first
                        grant = server.get_consent_grant(request=asked, end_user=user)
                    except OAuth2Error as error:
                        return self._answer(error.status_code, dict(error.get_body()))
                    status, body, headers = server.create_authorization_response(
                        asked, grant_user=user, grant=grant
                    )
                    return self._answer(status, body or b"", headers)
                if parts.path == "/fhir/Observation":
                    bearer = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    if bearer not in ehr.tokens:
                        return self._answer(401, {"resourceType": "OperationOutcome"})
                    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                    ehr.searches.append(query)
                    found = ehr.observations if query.get("patient") == ehr.patient else []
                    searchset = Bundle.model_validate(
                        {
                            "resourceType": "Bundle",
                            "type": "searchset",
                            "total": len(found),
                            "entry": [{"resource": r} for r in found],
                        }
                    )
                    return self._answer(
                        200,
                        searchset.model_dump_json(exclude_none=True).encode(),
                        [("Content-Type", "application/fhir+json")],
                    )
                return self._answer(404, {})

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if urlsplit(self.path).path != "/token":
                    return self._answer(404, {})
                status, answer, headers = server.create_token_response(self._request(body))
                return self._answer(status, answer, headers)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.iss = self.url + "/fhir"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
