"""The paper figures on the research page: a committed default folder, grouped by paper,
each titled and captioned with the script and command that measured it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from diagnosis.bench.selectors.research import figure_groups, research_figures

pytestmark = pytest.mark.django_db

DEFAULT = Path(settings.BASE_DIR) / "fixtures" / "research_figures"


def _figure(title: str, **layout) -> str:
    return json.dumps(
        {"data": [{"type": "bar", "x": ["a"], "y": [0.86]}], "layout": {"title": title, **layout}}
    )


def test_the_default_folder_is_committed_and_is_the_benchmarks_default(monkeypatch):
    """Without the environment variable, settings and the benchmarks' helper both name
    fixtures/research_figures, and git does not ignore it (a fresh clone has its figures)."""
    import importlib

    import benchmarks._figures
    import config.settings

    monkeypatch.delenv("RESEARCH_FIGURES_DIR", raising=False)
    assert importlib.reload(config.settings).RESEARCH_FIGURES_DIR == DEFAULT
    assert importlib.reload(benchmarks._figures).FIGURES_DIR == DEFAULT
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", str(DEFAULT / "paper004_boosting_cost_ratios.json")],
        cwd=settings.BASE_DIR,
        check=False,
    )
    assert ignored.returncode == 1  # 1: not ignored


def test_every_committed_figure_is_a_drawable_plotly_figure(settings, model_admin):
    """Each JSON file in the committed folder reads as a Plotly figure with a title and the
    script that made it."""
    settings.RESEARCH_FIGURES_DIR = DEFAULT
    files = sorted(p.name for p in DEFAULT.glob("*.json"))
    figures = research_figures(user=model_admin)
    assert [f.name for f in figures] == files
    for item in figures:
        assert item.figure is not None, (item.name, item.problem)
        assert item.title != item.name and item.script.startswith("benchmarks/"), item


def test_figures_are_grouped_by_paper_with_their_provenance(tmp_path, settings, clinician):
    """Files are grouped by the paper they reproduce (in paper order), the caption names the
    script and command (a figure's own layout.meta wins), and the title moves out of the chart."""
    settings.RESEARCH_FIGURES_DIR = tmp_path
    (tmp_path / "paper004_boosting_cost_ratios.json").write_text(_figure("Boosting ratios"))
    (tmp_path / "paper001_pruning_mse.json").write_text(_figure("Pruning MSE"))
    meta = {"command": "python -m benchmarks.budget_rf --folds 2", "note": "A quick run."}
    (tmp_path / "paper002_budget_rf_table1.json").write_text(_figure("Table 1", meta=meta))
    (tmp_path / "notes.json").write_text(_figure("Something else"))
    (tmp_path / "paper003_conditioned_loss_reward.json").write_text(_figure("REWARD sweep"))
    (tmp_path / "paper000_act_anytime.json").write_text(_figure("ACT anytime"))
    groups = figure_groups(user=clinician)
    assert [g.title.split(":")[0] for g in groups] == [
        "Paper 000",
        "Paper 001",
        "Paper 002",
        "Paper 003",
        "Paper 004",
        "Other figures",
    ]
    act, pruning, forest, conditioned, boosting, other = (g.figures[0] for g in groups)
    assert act.command == "python -m benchmarks.act_report"
    assert conditioned.command == "python -m benchmarks.conditioned_loss_thyroid"
    assert (pruning.script, pruning.command) == (
        "benchmarks/pruning.py",
        "python -m benchmarks.pruning",
    )
    assert boosting.command == "python -m benchmarks.boosting"
    assert (forest.command, forest.note) == (meta["command"], meta["note"])
    assert other.script == "" and other.command == ""
    assert "title" not in pruning.figure["layout"] and "meta" not in forest.figure["layout"]


def test_research_page_shows_titles_and_captions(tmp_path, settings, clinician, client):
    """The page heads each chart with its title and captions it as a measured output of the
    named script and command."""
    settings.RESEARCH_FIGURES_DIR = tmp_path
    (tmp_path / "paper001_pruning_leaves.json").write_text(_figure("Tree size by pruning"))
    client.force_login(clinician)
    html = client.get(reverse("research")).content.decode()
    assert "Paper 001: pruning with misclassification costs" in html
    assert "Tree size by pruning" in html
    assert "Measured by <code>benchmarks/pruning.py</code>" in html
    assert "<code>python -m benchmarks.pruning</code>" in html
    assert 'data-figure="paper001_pruning_leaves.json"' in html
