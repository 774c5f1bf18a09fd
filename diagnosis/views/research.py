"""The research page: figures saved by the benchmark scripts, drawn with the local plotly.js."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from ..selectors.research import research_figures
from .common import page


@require_GET
def research(request: HttpRequest) -> HttpResponse:
    """List every saved research figure (e.g. paper 003's REWARD/PENALTY sweeps)."""
    figures = research_figures(user=request.user)
    return page(request, "diagnosis/research.html", {"figures": figures})
