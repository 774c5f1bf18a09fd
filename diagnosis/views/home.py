"""The start page: trained models to start a case with, and open cases to resume."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from .. import selectors
from ..models import DiagnosisCase
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
    open_cases = (
        DiagnosisCase.objects.filter(status=DiagnosisCase.OPEN)
        .select_related("trained_model", "trained_model__dataset", "clinician")
        .order_by("-updated_at")
    )
    if not user.is_staff:
        open_cases = open_cases.filter(clinician=user)
    recent_closed = (
        DiagnosisCase.objects.exclude(status=DiagnosisCase.OPEN)
        .filter(clinician=user)
        .select_related("trained_model", "trained_model__dataset")
        .order_by("-closed_at")[:10]
    )
    return page(
        request,
        "diagnosis/home.html",
        {
            "trained_models": trained,
            "open_cases": list(open_cases[:50]),
            "recent_closed": list(recent_closed),
        },
    )
