"""The paper benchmarks' figure writer (benchmarks/_figures.py): Plotly JSON that says which
script and command line measured it."""

from __future__ import annotations

import argparse
import json
import sys

from benchmarks._figures import FIGURES_DIR, REPO, add_figures_argument, write_figure


def test_write_figure_records_script_command_and_note(tmp_path, monkeypatch):
    """The saved figure keeps its data and layout and adds layout.meta with the script's path
    in the repository, the command as typed (python -m and the arguments) and the note."""
    monkeypatch.setattr(
        sys, "argv", [str(REPO / "benchmarks" / "boosting.py"), "--folds", "3", "--parts", "cost"]
    )
    figure = {"data": [{"type": "bar", "x": ["heart"], "y": [0.5]}], "layout": {"barmode": "group"}}
    write_figure(tmp_path / "sub" / "f.json", figure, "3-fold CV")
    saved = json.loads((tmp_path / "sub" / "f.json").read_text(encoding="utf-8"))
    assert saved["data"] == figure["data"]
    assert saved["layout"]["barmode"] == "group"
    assert saved["layout"]["meta"] == {
        "script": "benchmarks/boosting.py",
        "command": "python -m benchmarks.boosting --folds 3 --parts cost",
        "note": "3-fold CV",
    }
    assert "meta" not in figure["layout"]  # the caller's figure is left as it was


def test_figures_dir_option_defaults_to_the_research_folder(tmp_path):
    """--figures-dir defaults to FIGURES_DIR and takes another folder."""
    parser = argparse.ArgumentParser()
    add_figures_argument(parser)
    assert parser.parse_args([]).figures_dir == FIGURES_DIR
    assert parser.parse_args(["--figures-dir", str(tmp_path)]).figures_dir == tmp_path
