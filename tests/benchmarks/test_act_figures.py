"""benchmarks/_act_figures and act_report's figure saving: paper 000 on the research page."""

import json

import pytest

from benchmarks import act_report
from benchmarks._act_figures import anytime_figure, vs_peers_figure

PEERS = {"heart": {100: 7.5, 10000: 40.3}}
TABLE = {("heart", 100.0): {"ACT": 6.78, "EG2": 7.97}, ("heart", 10000.0): {"ACT": 45.81}}
TARGETS = {("heart", 100.0): 6.75, ("heart", 10000.0): 40.3}
CURVES = {
    ("heart", 100.0): [(1, 6.78, 1.0, 1.1), (2, 6.78, 1.0, 3.2), (4, 6.9, 0.4, 4.7)],
    ("hepatitis", 100.0): [(1, 25.96, 1.0, 0.6), (2, 26.5, 0.3, 1.1), (4, 25.96, 1.0, 2.0)],
}


def test_vs_peers_bars_are_each_learners_cost_over_the_peer_with_the_target_marker():
    """One bar trace per learner holding cost / peer per cell (None where it did not run),
    then the target / peer markers: 0.9 at mc 100, 1 where the target is the peer."""
    figure = vs_peers_figure(TABLE, PEERS, TARGETS, ["ACT", "EG2"])
    act, eg2, target = figure["data"]
    assert act["x"] == ["heart mc 100", "heart mc 10000"]
    assert act["y"] == [pytest.approx(6.78 / 7.5, abs=1e-4), pytest.approx(45.81 / 40.3, abs=1e-4)]
    assert eg2["y"] == [pytest.approx(7.97 / 7.5, abs=1e-4), None]
    assert target["y"] == [pytest.approx(0.9), pytest.approx(1.0)]
    json.dumps(figure)  # plain JSON, as write_figure saves it


def test_anytime_has_a_panel_per_dataset_and_a_line_per_error_cost():
    """Each (dataset, mc) curve is a line of cost against r on its dataset's own axes."""
    figure = anytime_figure(CURVES)
    heart, hepatitis = figure["data"]
    assert (heart["x"], heart["y"]) == ([1, 2, 4], [6.78, 6.78, 6.9])
    assert (heart["xaxis"], hepatitis["xaxis"]) == ("x", "x2")
    assert "p=0.40" in heart["hovertext"][2]
    assert [a["text"] for a in figure["layout"]["annotations"]] == ["heart", "hepatitis"]
    # one legend entry and one colour per error cost across the panels
    assert heart["line"] == hepatitis["line"] and heart["name"] == hepatitis["name"] == "mc 100"
    assert (heart["showlegend"], hepatitis["showlegend"]) == (True, False)
    json.dumps(figure)


def test_only_a_run_of_the_whole_table_saves_the_research_figures(tmp_path, capsys):
    """A partial run (one dataset) writes nothing; the issue's whole table writes both files."""
    floors = {("heart", 100.0): 12.4, ("heart", 10000.0): 93.4}
    args = act_report.argparse.Namespace(
        folds=10, use_folds=None, thyroid="pooled", seed=0, r=5, figures_dir=tmp_path
    )
    act_report._save_figures(args, ["heart"], [100.0], ["ACT"], TABLE, floors, CURVES)
    assert list(tmp_path.iterdir()) == []
    assert "figures are saved only" in capsys.readouterr().out
    every = list(act_report.PEERS)
    costs = [10.0, 100.0, 1000.0, 10000.0]
    act_report._save_figures(args, every, costs, ["ACT"], TABLE, floors, CURVES)
    saved = sorted(p.name for p in tmp_path.iterdir())
    assert saved == ["paper000_act_anytime.json", "paper000_act_vs_peers.json"]
    meta = json.loads((tmp_path / "paper000_act_vs_peers.json").read_text())["layout"]["meta"]
    assert meta["note"].startswith("Seed 0, r=5.")  # the caption says which run it is
