"""What an error answers, whatever raised it: JSON ``{"error": ...}`` under ``/api/``, where
programs read JSON, and a page for people elsewhere.  A lost database is a 503 with
``Retry-After`` (try again shortly), not a 500; a body over Django's size limit is a 413.

These are the URLconf's ``handler400/403/404/500`` (``config/urls.py``), so they also answer
for exceptions raised in middleware, before any view runs.
"""

from __future__ import annotations

import sys

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import defaults

from ..middleware import connection_lost
from ..shared.validation import too_large_message

__all__ = ["bad_request", "not_found", "permission_denied", "server_error"]

# Seconds a client is asked to wait after a 503 (a database restart or fail-over).
RETRY_AFTER_SECONDS = 5


def _for_a_program(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def _json(message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def _page(request: HttpRequest, template: str, status: int, context: dict) -> HttpResponse:
    """A page for people, with the signed-in user's header and a link back to the page the
    request came from (when it is this site's); rendered without the request, as Django renders
    its own 400 page, if the request itself cannot be read for that."""
    referer = request.META.get("HTTP_REFERER", "")
    try:
        safe = url_has_allowed_host_and_scheme(
            referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    except Exception:  # a host that is not allowed is what this answers (DisallowedHost)
        safe = False
    context = {**context, "back": referer if safe and referer else ""}
    try:
        text = loader.render_to_string(template, context, request)
    except Exception:
        text = loader.render_to_string(template, {**context, "back": ""})
    return HttpResponse(text, status=status)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if isinstance(exception, RequestDataTooBig):
        if _for_a_program(request):
            return _json(too_large_message(), 413)
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE / (1024 * 1024)  # MB as people say it
        return _page(request, "413.html", 413, {"limit_mb": f"{limit:.3g}"})
    if _for_a_program(request):
        return _json(f"Bad request: {exception}" if str(exception) else "Bad request.", 400)
    return _page(request, "400.html", 400, {})


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _for_a_program(request):
        return _json(str(exception) or "You may not do this.", 403)
    return defaults.permission_denied(request, exception)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _for_a_program(request):
        return _json(f"There is no API endpoint at {request.path}.", 404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """500, or 503 with Retry-After when the database is out (the error being handled is the
    one Django caught: this runs inside its ``except``)."""
    exception = sys.exc_info()[1]
    if (
        exception is not None
        and isinstance(exception, DatabaseError)
        and (connection_lost(exception))
    ):
        response: HttpResponse
        if _for_a_program(request):
            response = _json(
                "The database is not answering; nothing was saved by this request unless "
                "the case shows it. Try again in a few seconds.",
                503,
            )
        else:
            # rendered without the request: its context (the signed-in user) needs the database
            response = HttpResponse(loader.render_to_string("503.html"), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    if _for_a_program(request):
        return _json("The server failed to answer this request; it has been logged.", 500)
    return HttpResponse(loader.render_to_string("500.html"), status=500)
