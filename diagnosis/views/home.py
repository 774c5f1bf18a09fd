"""The start page: trained models to start a case with, and open cases to resume."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from .. import selectors
from ..permissions import is_clinician
from ..services import learner_registry
from .common import page


def home(request: HttpRequest) -> HttpResponse:
    user = request.user
    try:
        trained = list(selectors.models_for_user(user=user))
    except PermissionDenied:
        return page(request, "diagnosis/no_role.html", {}, status=403)
    for model in trained:
        spec = learner_registry.LEARNERS.get(model.learner)
        model.learner_label = spec.label if spec else model.learner
    # Only the user's own cases, and none for a user who is not a clinician.
    open_cases = list(selectors.open_cases_for_user(user=user)[:50]) if is_clinician(user) else []
    recent_closed = list(selectors.closed_cases_for_user(user=user)[:10])
    return page(
        request,
        "diagnosis/home.html",
        {
            "trained_models": trained,
            "open_cases": open_cases,
            "recent_closed": recent_closed,
        },
    )
