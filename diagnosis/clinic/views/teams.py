"""A lead clinician's list of their teams' cases (read only), searchable by patient reference."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from diagnosis.views.common import page

from .. import selectors


@require_GET
def team_cases(request: HttpRequest) -> HttpResponse:
    """The cases of the members of the teams the user leads; 403 for anyone else."""
    query = request.GET.get("patient", "").strip()[:200]
    cases = selectors.team_cases_for_user(user=request.user, query=query)
    return page(request, "clinic/team_cases.html", {"cases": cases, "patient_query": query})
