"""Reads of the research figures the benchmark scripts save as Plotly JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import PermissionDenied

from diagnosis.permissions import is_clinician, is_model_admin

__all__ = ["FigureGroup", "ResearchFigure", "figure_groups", "research_figures"]

# A figure file larger than this is not a chart a page should inline.
MAX_FIGURE_BYTES = 5_000_000


#: Which script writes a figure, by its file name's start, and the paper it reproduces.
#: A figure may say it itself in ``layout.meta`` (``script``, ``command``, ``note``).
SCRIPTS = (
    (
        "paper000_",
        "benchmarks/act_report.py",
        "Paper 000: ACT, anytime cost-sensitive trees, against the best existing systems",
    ),
    ("paper001_", "benchmarks/pruning.py", "Paper 001: pruning with misclassification costs"),
    ("paper002_", "benchmarks/budget_rf.py", "Paper 002: feature-budgeted random forests"),
    (
        "paper003_",
        "benchmarks/conditioned_loss_thyroid.py",
        "Paper 003: the conditioned-loss model",
    ),
    (
        "paper004_",
        "benchmarks/boosting.py",
        "Paper 004: boosting for cost-sensitive classification",
    ),
)
OTHER_GROUP = "Other figures"


@dataclass(frozen=True)
class ResearchFigure:
    """One saved figure: its file name, title, and the figure (None if unreadable).

    ``script`` and ``command`` say which benchmark produced it (from the figure's
    ``layout.meta``, else from its file name); ``note`` is the figure's own caption.
    ``figure``'s layout has no title: the page shows ``title`` above it.
    """

    name: str
    title: str
    figure: dict | None
    problem: str = ""
    script: str = ""
    command: str = ""
    note: str = ""
    group: str = OTHER_GROUP


@dataclass(frozen=True)
class FigureGroup:
    """The figures of one paper (or the others), in file-name order."""

    title: str
    figures: list[ResearchFigure]


def figure_groups(*, user) -> list[FigureGroup]:
    """:func:`research_figures` grouped by the paper they reproduce, papers in order."""
    figures = research_figures(user=user)
    order = [group for _, _, group in SCRIPTS]
    groups: dict[str, list[ResearchFigure]] = {}
    for item in figures:
        groups.setdefault(item.group, []).append(item)
    ranked = sorted(groups, key=lambda g: order.index(g) if g in order else len(order))
    return [FigureGroup(title, groups[title]) for title in ranked]


def _provenance(name: str, layout: dict) -> dict:
    """``script``, ``command``, ``note`` and ``group`` of a figure file."""
    meta = layout.get("meta")
    if not isinstance(meta, dict):
        meta = {}
    script, group = "", OTHER_GROUP
    for prefix, path, paper in SCRIPTS:
        if name.startswith(prefix):
            script, group = path, paper
            break
    script = str(meta.get("script") or script)
    module = script.removesuffix(".py").replace("/", ".") if script.endswith(".py") else ""
    command = str(meta.get("command") or (f"python -m {module}" if module else ""))
    return {
        "script": script,
        "command": command,
        "note": str(meta.get("note") or ""),
        "group": group,
    }


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
        return ResearchFigure(
            name, name, None, "the file is too large to show", **_provenance(name, {})
        )
    try:
        figure = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return ResearchFigure(
            name,
            name,
            None,
            f"not readable JSON ({exc.__class__.__name__})",
            **_provenance(name, {}),
        )
    if not isinstance(figure, dict) or not isinstance(figure.get("data"), list):
        return ResearchFigure(
            name, name, None, "not a Plotly figure (no 'data' list)", **_provenance(name, {})
        )
    layout = figure.get("layout")
    if not isinstance(layout, dict):
        layout = {}
    title = layout.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    # the page shows the title above the chart (long titles wrap there, not over the plot)
    shown = {k: v for k, v in layout.items() if k not in ("title", "meta")}
    shown.setdefault("margin", {"t": 40})
    # the legend above the plot: a legend at the side squeezes the bars on a tablet
    shown.setdefault("legend", {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"})
    return ResearchFigure(
        name,
        str(title or name),
        {"data": figure["data"], "layout": shown},
        **_provenance(name, layout),
    )
