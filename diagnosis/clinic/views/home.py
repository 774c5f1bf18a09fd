"""The start page: trained models to start a case with, and open cases to resume."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from diagnosis.permissions import is_clinician
from diagnosis.shared import learner_registry
from diagnosis.views.common import page

from .. import selectors
from ..selectors import case_audit


def home(request: HttpRequest) -> HttpResponse:
    user = request.user
    try:
        trained = list(selectors.models_for_user(user=user))
    except PermissionDenied:
        return page(request, "clinic/no_role.html", {}, status=403)
    for model in trained:
        spec = learner_registry.LEARNERS.get(model.learner)
        # the template's name of the learner; the model declares no such attribute
        model.learner_label = spec.label if spec else model.learner  # type: ignore[attr-defined]
    # Only the user's own cases, and none for a user who is not a clinician.
    open_cases = (
        list(case_audit.with_others_acted(selectors.open_cases_for_user(user=user))[:50])
        if is_clinician(user)
        else []
    )
    recent_closed = list(
        case_audit.with_others_acted(selectors.closed_cases_for_user(user=user))[:10]
    )
    # Patient history: the user's own cases only, searched by patient reference.
    patient_query = request.GET.get("patient", "").strip()[:200]
    patient_cases = case_audit.cases_for_patient(user=user, reference=patient_query)
    return page(
        request,
        "clinic/home.html",
        {
            "trained_models": trained,
            "open_cases": open_cases,
            "recent_closed": recent_closed,
            "patient_query": patient_query,
            "patient_cases": patient_cases,
        },
    )
