"""A refused CSRF check: JSON for the API's programs, Django's page for people."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.csrf import csrf_failure as page_for_people


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """403 ``{"error": ...}`` under ``/api/``, where the caller reads JSON; else the usual page."""
    if request.path.startswith("/api/"):
        return JsonResponse(
            {
                "error": "CSRF check failed: this API takes a signed-in session and the "
                "X-CSRFToken header; programs should use /api/v1 with a bearer token."
            },
            status=403,
        )
    return page_for_people(request, reason)
