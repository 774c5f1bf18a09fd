"""/cds-services: the CDS Hooks 2.0 endpoints (JSON only; ``services/cds_hooks.py`` does the
work).

``GET /cds-services`` (discovery), ``POST /cds-services/{id}`` (a hook call),
``POST /cds-services/{id}/feedback``.  Every call carries the EHR's JWT
(``services/cds_auth.verify_call``: 401, or 403 for a switched-off client); the body is read
by the strict JSON reader and the hook's schema (400 naming the field, 413 over 64 KB);
403 for a ``fhirServer`` the client's registration does not name (before anything is
fetched); 412 when neither prefetch nor the FHIR server gives the patient's observations; 404
for a service or card that is not there.  CORS answers the registered clients' origins only
(a preflight ``OPTIONS`` included); no session, no CSRF token, no login redirect."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from pydantic import ValidationError as SchemaError

from diagnosis.integration.models import CdsClient
from diagnosis.integration.services import cds_hooks
from diagnosis.integration.services.cds_auth import CdsRefused, remember_jti, verify_token
from diagnosis.shared.validation import BodyTooLarge, parse_json_object

__all__ = ["discovery", "feedback", "service"]


def _registered_origins() -> set[str]:
    origins: set[str] = set()
    for listed in CdsClient.objects.filter(active=True).values_list("allowed_origins", flat=True):
        origins.update(o for o in listed or [] if isinstance(o, str))
    return origins


def _with_cors(request: HttpRequest, response: HttpResponse, origins: set[str]) -> HttpResponse:
    origin = request.headers.get("Origin")
    response["Vary"] = "Origin"
    if origin and origin.lower() in origins:
        response["Access-Control-Allow-Origin"] = origin
    return response


def _error(message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def _preflight(request: HttpRequest, methods: str) -> HttpResponse:
    origins = _registered_origins()
    origin = request.headers.get("Origin", "")
    if origin.lower() not in origins:
        return _with_cors(request, _error("This origin is not a registered EHR's.", 403), origins)
    response = HttpResponse(status=204)
    response["Access-Control-Allow-Methods"] = methods
    response["Access-Control-Allow-Headers"] = "Authorization, Content-Type"
    response["Access-Control-Max-Age"] = "600"
    return _with_cors(request, response, origins)


def _endpoint(methods: str):
    """A CDS endpoint: OPTIONS answered here, other methods than ``methods`` 405, the JWT
    verified (its client passed on), every answer JSON with CORS for the client's origins."""

    def wrap(view: Callable[..., HttpResponse]):
        @csrf_exempt
        @login_not_required
        def endpoint(request: HttpRequest, **kwargs: Any) -> HttpResponse:
            if request.method == "OPTIONS":
                return _preflight(request, methods)
            if request.method not in methods.split(", "):
                response = _error(f"Use {methods.split(',')[0]}.", 405)
                response["Allow"] = methods
                return _with_cors(request, response, _registered_origins())
            audiences = [
                request.build_absolute_uri(request.path),
                request.build_absolute_uri(reverse("cds-discovery")),
            ]
            try:
                token = verify_token(
                    authorization=request.headers.get("Authorization", ""), audiences=audiences
                )
                # the jti is spent in the transaction of the call's own work: a call whose
                # connection is lost before the commit leaves none (DatabaseRetryMiddleware
                # may run it again); an answered call, a refusal too, has spent it
                with transaction.atomic():
                    remember_jti(token)
                    answer = _answer(view, request, token.client, kwargs)
            except CdsRefused as exc:
                response = _error(str(exc), exc.status)
                if exc.status == 401:
                    response["WWW-Authenticate"] = 'Bearer error="invalid_token"'
                return _with_cors(request, response, _registered_origins())
            return _with_cors(request, answer, set(token.client.allowed_origins or []))

        return endpoint

    return wrap


def _answer(
    view: Callable[..., HttpResponse],
    request: HttpRequest,
    client: CdsClient,
    kwargs: dict[str, Any],
) -> HttpResponse:
    """The view's answer, its refusals as JSON (whatever they wrote undone by their own
    transactions; the caller's, holding the jti, goes on)."""
    try:
        return view(request, client, **kwargs)
    except cds_hooks.HookRefused as exc:
        return _error(str(exc), exc.status)
    except PermissionDenied as exc:  # the client's user is no longer a clinician
        return _error(str(exc) or "The client's user may not do this.", 403)
    except BodyTooLarge as exc:
        return _error(" ".join(exc.messages), 413)
    except ValidationError as exc:
        return _error(" ".join(exc.messages), 400)
    except SchemaError as exc:
        return _error(_schema_words(exc), 400)


def _schema_words(exc: SchemaError) -> str:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first.get("loc", ())) or "body"
    more = len(exc.errors()) - 1
    return f"The request does not fit CDS Hooks: {field}: {first['msg']}" + (
        f" (and {more} more)." if more else "."
    )


@_endpoint("GET")
def discovery(request: HttpRequest, client: CdsClient) -> HttpResponse:
    return JsonResponse(cds_hooks.discovery(client))


@_endpoint("POST")
def service(request: HttpRequest, client: CdsClient, service_id: str) -> HttpResponse:
    hook = cds_hooks.HookIn.model_validate(parse_json_object(request.body))

    def case_url(pk: int | None) -> str:
        where = reverse("case-detail", args=[pk]) if pk is not None else reverse("home")
        return request.build_absolute_uri(where)

    return JsonResponse(
        cds_hooks.answer_hook(client=client, service=service_id, hook=hook, case_url=case_url)
    )


@_endpoint("POST")
def feedback(request: HttpRequest, client: CdsClient, service_id: str) -> HttpResponse:
    cds_hooks.service_of(client, service_id)  # 404 for no such service
    body = cds_hooks.FeedbackIn.model_validate(parse_json_object(request.body))
    saved = cds_hooks.record_feedback(client=client, service=service_id, feedback=body)
    return JsonResponse({"saved": saved})
