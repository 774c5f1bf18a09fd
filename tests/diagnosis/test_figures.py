"""Figures are pure functions of already-computed numbers: checked without a database."""

from __future__ import annotations

import json

import pytest

from diagnosis import figures

# root tests chol; left child tests thal (two leaves), right child is a leaf.
LAYOUT = {
    "class_labels": ["healthy", "sick"],
    "nodes": [
        {
            "id": 0,
            "parent": None,
            "is_leaf": False,
            "test_label": "Cholesterol",
            "price": 7.27,
            "class_counts": [50, 40],
            "expected_cost": 44.0,
            "decision": "healthy",
        },
        {
            "id": 1,
            "parent": 0,
            "edge_label": "≤ 240",
            "is_leaf": False,
            "test_label": "Thal",
            "price": 102.9,
            "class_counts": [40, 10],
            "expected_cost": 10.0,
            "decision": "healthy",
        },
        {
            "id": 2,
            "parent": 1,
            "edge_label": "normal",
            "is_leaf": True,
            "decision": "healthy",
            "class_counts": [35, 2],
            "expected_cost": 2.0,
        },
        {
            "id": 3,
            "parent": 1,
            "edge_label": "reversible defect",
            "is_leaf": True,
            "decision": "sick",
            "class_counts": [5, 8],
            "expected_cost": 5.0,
        },
        {
            "id": 4,
            "parent": 0,
            "edge_label": "> 240",
            "is_leaf": True,
            "decision": "sick",
            "class_counts": [10, 30],
            "expected_cost": 10.0,
        },
    ],
    "highlight": [0, 1, 3],
}


def test_leaves_are_evenly_spaced_and_parents_centred():
    """Leaves sit one unit apart in order; every parent is centred over its children."""
    pos = figures.tidy_positions(LAYOUT["nodes"])
    assert [pos[i][0] for i in (2, 3, 4)] == [0.0, 1.0, 2.0]
    assert pos[1][0] == pytest.approx((pos[2][0] + pos[3][0]) / 2)
    assert pos[0][0] == pytest.approx((pos[1][0] + pos[4][0]) / 2)
    assert pos[0][1] == 0 and pos[1][1] == -1 and pos[2][1] == -2 and pos[4][1] == -1


def test_tidy_positions_rejects_unknown_parent():
    """A node pointing at a missing parent is a clear error, not a silent misdrawing."""
    with pytest.raises(ValueError, match="unknown parent"):
        figures.tidy_positions([{"id": 0, "parent": None}, {"id": 1, "parent": 7}])


def test_deep_chain_does_not_recurse():
    """A 3000-deep chain lays out (no recursion limit), each node directly above its child."""
    nodes = [{"id": 0, "parent": None}] + [{"id": i, "parent": i - 1} for i in range(1, 3000)]
    pos = figures.tidy_positions(nodes)
    assert {x for x, _ in pos.values()} == {0.0}
    assert pos[2999][1] == -2999


def test_tree_hover_text_has_price_and_counts():
    """Hovering a test node shows its test, price, class counts and expected cost."""
    fig = figures.tree_figure(LAYOUT)
    hovers = [h for trace in fig["data"] for h in (trace.get("hovertext") or [])]
    root = next(h for h in hovers if "Cholesterol" in h)
    assert "$7.27" in root
    assert "healthy: 50" in root and "sick: 40" in root
    assert "$44.00" in root
    leaf = next(h for h in hovers if "Decision: sick" in h and "sick: 8" in h)
    assert "healthy: 5" in leaf


def test_tree_highlight_draws_the_path_heavier():
    """The case's path is a separate, thicker edge trace and its nodes get a thick outline."""
    fig = figures.tree_figure(LAYOUT)
    path = [t for t in fig["data"] if t.get("name") == "This patient's path"]
    assert len(path) == 1
    branches = next(t for t in fig["data"] if t.get("name") == "Branches")
    assert path[0]["line"]["width"] > branches["line"]["width"]
    # two highlighted edges (0-1, 1-3): each is x0, x1, None
    assert len(path[0]["x"]) == 6
    assert fig["highlight"] == [0, 1, 3]
    widths = {}
    for trace in fig["data"]:
        if trace.get("customdata"):
            for node_id, w in zip(
                trace["customdata"], trace["marker"]["line"]["width"], strict=True
            ):
                widths[node_id] = w
    assert widths[3] > widths[2] and widths[0] > widths[4]


def test_tree_without_highlight_has_no_path_trace():
    """Without a case, no edge is drawn as the patient's path."""
    fig = figures.tree_figure({**LAYOUT, "highlight": []})
    assert not [t for t in fig["data"] if t.get("name") == "This patient's path"]


def test_tree_edge_labels_and_decision_colours():
    """Edge labels are drawn; leaves with different decisions get different colours."""
    fig = figures.tree_figure(LAYOUT)
    text = next(t for t in fig["data"] if t.get("mode") == "text")
    assert set(text["text"]) == {"≤ 240", "> 240", "normal", "reversible defect"}
    colours = {
        t["name"]: t["marker"]["color"]
        for t in fig["data"]
        if str(t.get("name", "")).startswith("Leaf")
    }
    assert colours["Leaf: healthy"] != colours["Leaf: sick"]


def test_figures_are_json_without_template():
    """Figure dicts serialise to JSON and do not carry plotly.py's large default template."""
    for fig in (
        figures.tree_figure(LAYOUT),
        figures.risks_figure(
            [{"action": "healthy", "risk": 3.0}, {"action": "refer", "risk": 1.0, "lowest": True}]
        ),
        figures.test_frequency_figure({"chol": 0.9, "thal": 0.25}),
        figures.checkpoints_figure([{"elapsed_seconds": 1, "estimated_cost": 5.0, "label": "r=1"}]),
    ):
        text = json.dumps(fig)
        assert "template" not in fig["layout"]
        assert len(text) < 20000


def test_risks_figure_marks_the_advised_action():
    """The row flagged lowest (the advised action) is coloured apart and labelled as advised."""
    fig = figures.risks_figure(
        [{"action": "healthy", "risk": 3.0}, {"action": "refer", "risk": 1.0, "lowest": True}]
    )
    bar = fig["data"][0]
    colours = dict(zip(bar["y"], bar["marker"]["color"], strict=True))
    assert colours["refer"] != colours["healthy"]
    assert [("advised" in t) for t in bar["text"]] == [False, True]


def test_frequency_figure_sorted_in_percent():
    """Test frequencies are shown in percent, most-ordered first, with human labels."""
    fig = figures.test_frequency_figure(
        {"chol": 0.25, "thal": 0.9}, labels={"thal": "Thallium scan"}
    )
    bar = fig["data"][0]
    assert bar["y"] == ["Thallium scan", "chol"]
    assert bar["x"] == [pytest.approx(90.0), pytest.approx(25.0)]


def test_checkpoints_figure_sorted_by_time():
    """Checkpoints are plotted in time order; ones without an estimate are left out."""
    fig = figures.checkpoints_figure(
        [
            {"elapsed_seconds": 5, "estimated_cost": 3.0, "label": "r=2"},
            {"elapsed_seconds": 1, "estimated_cost": 5.0, "label": "r=1"},
            {"elapsed_seconds": 2, "estimated_cost": None},
        ]
    )
    assert fig["data"][0]["x"] == [1.0, 5.0]
    assert fig["data"][0]["y"] == [5.0, 3.0]


def test_empty_inputs_are_clear_errors():
    """Empty inputs raise ValueError instead of drawing an empty chart."""
    with pytest.raises(ValueError):
        figures.tree_figure({"nodes": []})
    with pytest.raises(ValueError):
        figures.risks_figure([])
    with pytest.raises(ValueError):
        figures.checkpoints_figure([{"elapsed_seconds": 1, "estimated_cost": None}])
