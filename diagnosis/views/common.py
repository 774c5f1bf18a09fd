"""Small helpers shared by the views."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ..permissions import roles_of


def page(
    request: HttpRequest, template: str, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    """Render a page with the role flags the header needs."""
    roles = roles_of(request.user)  # one query for the three flags
    context = {
        "can_train": roles["model_admin"],
        "can_diagnose": roles["clinician"],
        "can_lead": roles["lead"],
        **context,
    }
    return render(request, template, context, status=status)


def messages_of(exc: ValidationError) -> list[str]:
    """The human messages of a ValidationError, however it was raised."""
    return [str(m) for m in exc.messages]
