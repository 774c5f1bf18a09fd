"""Recording confirmed diagnoses: on a closed case's screen, and from a CSV (issue 27).

Thin: the forms only carry text; ``services.confirmations`` checks everything and writes.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from diagnosis.permissions import require_clinician
from diagnosis.views.common import messages_of, page

from .. import selectors
from ..models import CaseAccess
from ..permissions import CaseNotFound, require_case_access
from ..services import confirmations
from ..services.access_log import log_case_access
from .cases import _summary_page

__all__ = ["case_confirmed_diagnosis", "confirmed_diagnoses_upload"]


@require_http_methods(["GET", "POST"])
def case_confirmed_diagnosis(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the form alone (a link target); POST: record the closed case's confirmed diagnosis
    (``label``: a class code or name).  The case's own clinician only: 404 for anyone who may
    not read it, 403 for a lead who reads it."""
    reading = request.method == "GET"
    try:
        case = selectors.case_for_user(user=request.user, pk=pk)
    except CaseNotFound as exc:
        raise Http404(str(exc)) from exc
    if reading:  # a POST is logged by the service that records the diagnosis
        log_case_access(user=request.user, case_id=case.pk, action=CaseAccess.VIEW)
    if reading:
        require_case_access(request.user, case)
        state = selectors.case_state(user=request.user, case=case)
        return page(
            request,
            "clinic/case_confirmed_diagnosis.html",
            {"case": case, "state": state, "read_only": False},
        )
    try:
        recorded = confirmations.record_confirmed_diagnosis(
            user=request.user, case=case, label=request.POST.get("label", "")
        )
    except ValidationError as exc:
        for message in messages_of(exc):
            messages.error(request, message)
        state = selectors.case_state(user=request.user, case=case)
        response = _summary_page(request, case, state)
        response.status_code = 400
        return response
    messages.success(
        request,
        f"Confirmed diagnosis recorded: {recorded.label_name}. The model's monitoring counts it.",
    )
    return redirect("case-summary", pk=case.pk)


class ConfirmationsUploadForm(forms.Form):
    file = forms.FileField(
        label="CSV file",
        help_text="First line: patient_reference,confirmed_label; then one closed case of "
        "yours per line, the label as a class name or code.",
    )


@require_http_methods(["GET", "POST"])
def confirmed_diagnoses_upload(request: HttpRequest) -> HttpResponse:
    """Confirm several closed cases from a CSV; all or nothing, every bad line said."""
    require_clinician(request.user)
    form = ConfirmationsUploadForm(request.POST or None, request.FILES or None)
    recorded: list = []
    problems: list[str] = []
    if request.method == "POST" and form.is_valid():
        try:
            recorded = confirmations.record_confirmed_diagnoses_csv(
                user=request.user, file=form.cleaned_data["file"]
            )
        except ValidationError as exc:
            problems = messages_of(exc)
    status = 400 if request.method == "POST" and (problems or not form.is_valid()) else 200
    return page(
        request,
        "clinic/confirmed_diagnoses_upload.html",
        {"form": form, "recorded": recorded, "problems": problems},
        status=status,
    )
