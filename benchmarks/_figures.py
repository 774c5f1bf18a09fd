"""Where the paper benchmarks save their Plotly figures, without importing Django.

``FIGURES_DIR`` is ``settings.RESEARCH_FIGURES_DIR``'s default computed the same way (the
``RESEARCH_FIGURES_DIR`` environment variable, else the committed folder the research page
reads); ``tests/diagnosis/test_research_figures.py`` checks the two agree.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIGURES_DIR = Path(os.environ.get("RESEARCH_FIGURES_DIR", REPO / "fixtures" / "research_figures"))


def add_figures_argument(parser: argparse.ArgumentParser) -> None:
    """``--figures-dir``, defaulting to :data:`FIGURES_DIR`."""
    parser.add_argument(
        "--figures-dir",
        type=Path,
        default=FIGURES_DIR,
        help=f"folder for the Plotly JSON figures (default {FIGURES_DIR})",
    )


def write_figure(path: Path, figure: dict, note: str = "") -> None:
    """Save one Plotly figure (``data`` + ``layout``) as JSON, creating the folder.

    ``layout.meta`` records the script and the command line that measured it (and ``note``),
    which the research page prints under the figure.
    """
    script = Path(sys.argv[0]).resolve()
    try:
        script_name = script.relative_to(REPO).as_posix()
    except ValueError:
        script_name = script.name
    module = script_name.removesuffix(".py").replace("/", ".")
    meta = {"script": script_name, "command": " ".join(["python -m", module, *sys.argv[1:]])}
    if note:
        meta["note"] = note
    figure = {**figure, "layout": {**figure.get("layout", {}), "meta": meta}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figure), encoding="utf-8")
    print(f"(figure written to {path})")


def line_at_one(**line) -> dict:
    """A dotted horizontal line at y = 1 across the plot (a ratio's "the same as"), as a
    Plotly layout shape; ``line`` adds to its style (e.g. ``width=1``)."""
    return {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "y0": 1,
        "y1": 1,
        "line": {"dash": "dot", **line},
    }
