"""The research page: figures saved by the benchmark scripts, drawn with the local plotly.js."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from diagnosis.bench.selectors.experiments import list_experiments
from diagnosis.bench.selectors.research import figure_groups
from diagnosis.views.common import page


@require_GET
def research(request: HttpRequest) -> HttpResponse:
    """List every saved research figure (e.g. paper 003's REWARD/PENALTY sweeps)."""
    groups = figure_groups(user=request.user)  # grouped by paper, with their provenance
    figures = [item for group in groups for item in group.figures]
    experiments = list_experiments(user=request.user)  # the bench's saved experiments
    return page(
        request,
        "bench/research.html",
        {"figures": figures, "figure_groups": groups, "experiments": experiments},
    )
