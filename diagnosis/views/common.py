"""Small helpers shared by the views."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ..permissions import is_clinician, is_model_admin


def page(
    request: HttpRequest, template: str, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    """Render a page with the role flags the header needs."""
    user = request.user
    context = {
        "can_train": is_model_admin(user),
        "can_diagnose": is_clinician(user),
        **context,
    }
    return render(request, template, context, status=status)


def messages_of(exc: ValidationError) -> list[str]:
    """The human messages of a ValidationError, however it was raised."""
    return [str(m) for m in exc.messages]
