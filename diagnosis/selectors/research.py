"""Reads of the research figures the benchmark scripts save as Plotly JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import PermissionDenied

from ..permissions import is_clinician, is_model_admin

__all__ = ["ResearchFigure", "research_figures"]

# A figure file larger than this is not a chart a page should inline.
MAX_FIGURE_BYTES = 5_000_000


@dataclass(frozen=True)
class ResearchFigure:
    """One saved figure: its file name, title, and the figure (None if unreadable)."""

    name: str
    title: str
    figure: dict | None
    problem: str = ""


def research_figures(*, user) -> list[ResearchFigure]:
    """Every ``*.json`` Plotly figure in ``settings.RESEARCH_FIGURES_DIR``, by name.

    A file that is not a Plotly figure is listed with the reason instead of
    breaking the page.
    """
    if not (is_clinician(user) or is_model_admin(user)):
        raise PermissionDenied("Only clinicians and model administrators may see research figures.")
    folder = Path(settings.RESEARCH_FIGURES_DIR)
    if not folder.is_dir():
        return []
    return [_read(path) for path in sorted(folder.glob("*.json"))]


def _read(path: Path) -> ResearchFigure:
    name = path.name
    if path.stat().st_size > MAX_FIGURE_BYTES:
        return ResearchFigure(name, name, None, "the file is too large to show")
    try:
        figure = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return ResearchFigure(name, name, None, f"not readable JSON ({exc.__class__.__name__})")
    if not isinstance(figure, dict) or not isinstance(figure.get("data"), list):
        return ResearchFigure(name, name, None, "not a Plotly figure (no 'data' list)")
    layout = figure.get("layout") if isinstance(figure.get("layout"), dict) else {}
    title = layout.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    return ResearchFigure(name, str(title or name), {"data": figure["data"], "layout": layout})
