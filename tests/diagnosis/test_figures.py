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
            "class_counts": {"healthy": 50, "sick": 40},
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
            "class_counts": {"healthy": 40, "sick": 10},
            "expected_cost": 10.0,
            "decision": "healthy",
        },
        {
            "id": 2,
            "parent": 1,
            "edge_label": "normal",
            "is_leaf": True,
            "decision": "healthy",
            "class_counts": {"healthy": 35, "sick": 2},
            "expected_cost": 2.0,
        },
        {
            "id": 3,
            "parent": 1,
            "edge_label": "reversible defect",
            "is_leaf": True,
            "decision": "sick",
            "class_counts": {"healthy": 5, "sick": 8},
            "expected_cost": 5.0,
        },
        {
            "id": 4,
            "parent": 0,
            "edge_label": "> 240",
            "is_leaf": True,
            "decision": "sick",
            "class_counts": {"healthy": 10, "sick": 30},
            "expected_cost": 10.0,
        },
    ],
    "highlight": [0, 1, 3],
}


def test_neighbours_are_a_gap_apart_and_parents_centred():
    """Nodes on one level are at least one unit apart; every parent is centred over its children."""
    pos = figures.tidy_positions(LAYOUT["nodes"])
    assert pos[3][0] - pos[2][0] == pytest.approx(1.0)
    assert pos[4][0] - pos[1][0] == pytest.approx(1.0)
    assert pos[1][0] == pytest.approx((pos[2][0] + pos[3][0]) / 2)
    assert pos[0][0] == pytest.approx((pos[1][0] + pos[4][0]) / 2)
    assert min(x for x, _ in pos.values()) == 0.0
    assert pos[0][1] == 0 and pos[1][1] == -1 and pos[2][1] == -2 and pos[4][1] == -1


def test_lopsided_tree_is_narrower_than_its_leaves():
    """A chain with one leaf per level packs its leaves under each other's subtrees (contours)."""
    nodes = [{"id": 0, "parent": None}]
    for depth in range(1, 9):  # each test node has a leaf on the left and the rest on the right
        nodes.append({"id": 2 * depth - 1, "parent": 2 * depth - 2})
        nodes.append({"id": 2 * depth, "parent": 2 * depth - 2})
    pos = figures.tidy_positions(nodes)
    leaves = [n["id"] for n in nodes if n["id"] not in {m["parent"] for m in nodes}]
    width = max(x for x, _ in pos.values()) - min(x for x, _ in pos.values())
    assert width < len(leaves) - 1
    by_level: dict[float, list[float]] = {}
    for x, y in pos.values():
        by_level.setdefault(y, []).append(x)
    for xs in by_level.values():
        xs.sort()
        assert all(b - a >= 1.0 - 1e-9 for a, b in zip(xs, xs[1:], strict=False))


def test_widths_keep_cards_apart():
    """With widths, the room between two cards on a level is at least the gap."""
    widths = {0: 150, 1: 150, 2: 112, 3: 112, 4: 112}
    pos = figures.tidy_positions(LAYOUT["nodes"], widths=widths, gap=18)
    assert pos[3][0] - pos[2][0] == pytest.approx(112 + 18)
    assert pos[4][0] - pos[1][0] == pytest.approx((150 + 112) / 2 + 18)
    assert pos[2][0] - widths[2] / 2 == pytest.approx(0.0)


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


def boxes_overlap(a, b) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def test_tree_drawing_cards_never_overlap_and_labels_have_room():
    """No two cards overlap; sibling branch labels are centred a card and a gap apart."""
    drawing = figures.tree_drawing(LAYOUT)
    cards = drawing["nodes"]
    for i, a in enumerate(cards):
        for b in cards[i + 1 :]:
            assert not boxes_overlap(a, b), (a["id"], b["id"])
    labels = sorted(drawing["labels"], key=lambda lab: (lab["y"], lab["x"]))
    for a, b in zip(labels, labels[1:], strict=False):
        if a["y"] == b["y"]:
            assert b["x"] - a["x"] >= figures.LEAF_WIDTH + figures.NODE_GAP - 1e-6
    assert {lab["full"] for lab in labels} == {"≤ 240", "> 240", "normal", "reversible defect"}
    assert all(lab["fit"] >= figures.LEAF_WIDTH for lab in labels)


def test_tree_drawing_node_size_is_the_number_of_cases():
    """The class-mix bar is longer for more training cases, split by the class counts."""
    drawing = figures.tree_drawing(LAYOUT)
    by_id = {n["id"]: n for n in drawing["nodes"]}
    assert by_id[0]["bar_width"] > by_id[4]["bar_width"] > by_id[3]["bar_width"]
    segments = by_id[3]["segments"]
    assert [s["label"] for s in segments] == ["healthy", "sick"]
    ratio = segments[1]["width"] / segments[0]["width"]
    assert ratio == pytest.approx(8 / 5, rel=0.01)  # widths are rounded to 2 decimals
    assert sum(s["width"] for s in segments) == pytest.approx(by_id[3]["bar_width"], abs=0.02)
    assert "90 cases" in by_id[0]["subtitle"] and "$7.27" in by_id[0]["subtitle"]
    colours = {item["label"]: item["colour"] for item in drawing["legend"]}
    assert colours["healthy"] != colours["sick"]
    assert by_id[3]["colour"] == colours["sick"] and by_id[2]["colour"] == colours["healthy"]


def test_tree_drawing_path_is_drawn_last_under_the_labels():
    """The patient's edges come after the others (drawn over them); labels are a later layer."""
    drawing = figures.tree_drawing(LAYOUT)
    flags = [e["on_path"] for e in drawing["edges"]]
    assert flags == sorted(flags) and sum(flags) == 2
    assert {e["target"] for e in drawing["edges"] if e["on_path"]} == {1, 3}
    assert {n["id"] for n in drawing["nodes"] if n["on_path"]} == {0, 1, 3}
    plain = figures.tree_drawing({**LAYOUT, "highlight": []})
    assert not any(e["on_path"] for e in plain["edges"]) and not plain["has_patient"]


def test_tree_drawing_shows_the_patient_and_the_shares():
    """A patient's value is on its card; a split patient's branches and ends carry their shares."""
    nodes = [dict(n) for n in LAYOUT["nodes"]]
    nodes[0].update(patient={"status": "known", "text": "230 mg/dl"}, share=1.0)
    nodes[1].update(patient={"status": "unavailable", "text": "Not available"}, share=1.0)
    nodes[2].update(patient={"status": "end", "text": "Ends here"}, share=0.75)
    nodes[3].update(patient={"status": "end", "text": "Ends here"}, share=0.25)
    drawing = figures.tree_drawing({**LAYOUT, "nodes": nodes, "highlight": [0, 1, 3, 2]})
    by_id = {n["id"]: n for n in drawing["nodes"]}
    assert by_id[0]["patient_text"] == "Patient: 230 mg/dl"
    assert by_id[1]["patient_text"] == "Unavailable: split"
    assert by_id[2]["patient_text"] == "75% ends here"
    assert by_id[3]["patient_text"] == "25% ends here"
    shares = {lab["full"]: lab["lines"][1:] for lab in drawing["labels"] if lab["on_path"]}
    assert shares["normal"] == ["75%"] and shares["reversible defect"] == ["25%"]
    assert shares["≤ 240"] == []  # the whole patient went that way


def test_node_details_say_test_price_cases_and_decision():
    """A node's details (shown on tap or focus) name the test, price, cases, mix and decision."""
    rows = dict(figures.node_details({**LAYOUT["nodes"][0], "proba": {"healthy": 0.55}}))
    assert rows["Test"] == "Cholesterol" and rows["Price here"] == "$7.27"
    assert rows["Training cases"] == "90 cases"
    assert rows["Class mix"] == "healthy 50 (56%), sick 40 (44%)"
    assert rows["If stopped here"] == "healthy"
    assert rows["Expected cost of that conclusion"] == "$44.00"
    leaf = dict(figures.node_details(LAYOUT["nodes"][3]))
    assert leaf["Conclusion"] == "sick" and "Test" not in leaf


def test_figures_are_json_without_template():
    """Figure dicts serialise to JSON and do not carry plotly.py's large default template."""
    for fig in (
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
        figures.tree_drawing({"nodes": []})
    with pytest.raises(ValueError):
        figures.risks_figure([])
    with pytest.raises(ValueError):
        figures.checkpoints_figure([{"elapsed_seconds": 1, "estimated_cost": None}])


def test_node_details_never_round_a_few_cases_to_zero():
    """A class with a handful of a node's cases reads '<1%', not '0%' (nor the rest '100%')."""
    rows = dict(
        figures.node_details(
            {
                "is_leaf": True,
                "decision": "negative",
                "class_counts": {"hyper": 3, "negative": 997},
                "proba": {"hyper": 0.003, "negative": 0.997},
            }
        )
    )
    assert rows["Class mix"] == "hyper 3 (<1%), negative 997 (>99%)"
    assert rows["Model's probabilities"] == "hyper <1%, negative >99%"


def test_tree_svg_escapes_text_and_makes_every_node_a_button():
    """The SVG has one focusable button per node, named by its details; every text is escaped."""
    nodes = [dict(n) for n in LAYOUT["nodes"]]
    nodes[2]["edge_label"] = '<script>alert("x")</script>'
    nodes[0]["test_label"] = "Chol & <b>HDL</b>"
    svg = str(figures.tree_svg(figures.tree_drawing({**LAYOUT, "nodes": nodes})))
    assert "<script>" not in svg and "<b>" not in svg
    assert "&lt;script&gt;" in svg and "Chol &amp; &lt;b&gt;HDL&lt;/b&gt;" in svg
    assert svg.count('role="button"') == len(nodes) == svg.count('tabindex="0"')
    assert svg.count("data-parent=") == len(nodes) - 1
    assert svg.count('class="tree-edge on-path"') == 2
    assert svg.index('class="tree-edges"') < svg.index('class="tree-labels"')
    assert svg.index('class="tree-labels"') < svg.index('class="tree-nodes"')
