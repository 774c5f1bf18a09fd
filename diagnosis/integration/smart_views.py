"""SMART App Launch 2 (EHR launch): ``/smart/launch`` and its OAuth 2 callback
(``services/smart_launch.py`` does the work).  The clinician signs in first, as everywhere;
a refused launch says why on a page of the app (400, or 502 when the EHR's side failed).

A clinician not yet signed in is sent to the sign-in page and back to the launch, marked
``signed_in=1``.  The launch then sends the browser on to the EHR from a page of its own (a
refresh and a link), not by a redirect: the sign-in form's answer may only lead to this site
(the Content-Security-Policy's ``form-action 'self'`` also covers the redirects after a form
is posted), so a redirect chain from it to the EHR would be stopped by the browser."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from diagnosis.integration.services import smart_launch
from diagnosis.permissions import is_clinician

__all__ = ["callback", "launch"]

_PENDING = "smart-launch"


def _refused(request: HttpRequest, reason: str, status: int) -> HttpResponse:
    """A launch that opened nothing, said on a page of the app (400, or 502 when the EHR's
    side failed)."""
    context = {"reason": reason, "from_ehr": status == 502}
    return render(request, "integration/smart_refused.html", context, status=status)


def _clinicians_only(request: HttpRequest) -> None:
    if not is_clinician(request.user):
        raise PermissionDenied("Only clinicians open cases from an EHR.")


@login_not_required  # signed out: to the sign-in page, and back here marked signed_in
@require_GET
def launch(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        query = {k: request.GET.get(k, "")[:2000] for k in ("iss", "launch")}
        back = f"{reverse('smart-launch')}?{urlencode({**query, 'signed_in': '1'})}"
        return redirect_to_login(back)
    _clinicians_only(request)
    try:
        url, pending = smart_launch.begin_launch(
            user=request.user,
            iss=request.GET.get("iss", ""),
            launch=request.GET.get("launch", ""),
            redirect_uri=request.build_absolute_uri(reverse("smart-callback")),
        )
    except smart_launch.LaunchRefused as exc:
        return _refused(request, str(exc), exc.status)
    request.session[_PENDING] = pending
    if request.GET.get("signed_in") == "1":  # just back from the sign-in form: see above
        return render(
            request,
            "integration/smart_continue.html",
            {"authorize_url": url, "ehr": pending["ehr"]},
        )
    return HttpResponseRedirect(url)


@require_GET
def callback(request: HttpRequest) -> HttpResponse:
    _clinicians_only(request)
    if "error" in request.GET:
        reason = f"The EHR did not authorize the launch: {request.GET['error'][:200]}."
        return _refused(request, reason, 400)
    try:
        launched = smart_launch.finish_launch(
            user=request.user,
            pending=request.session.pop(_PENDING, None),
            code=request.GET.get("code", ""),
            state=request.GET.get("state", ""),
            redirect_uri=request.build_absolute_uri(reverse("smart-callback")),
        )
    except smart_launch.LaunchRefused as exc:
        return _refused(request, str(exc), exc.status)
    if launched.recorded:
        messages.success(
            request,
            f"{launched.recorded} result{'s' if launched.recorded != 1 else ''} from the EHR "
            "recorded, each at its price.",
        )
    if launched.problem:
        messages.warning(request, f"The EHR's results were not recorded: {launched.problem[:300]}")
    return HttpResponseRedirect(reverse("case-detail", args=[launched.case.pk]))
