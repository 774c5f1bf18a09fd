"""benchmarks/conditioned_loss_thyroid's sweep figure (paper 003 on the research page)."""

import json

from benchmarks.conditioned_loss_thyroid import sweep_figure

POINTS = [
    {"penalty": v, "reduction": r, "errors": e, "rejects": j, "per_class_accuracy": [a, a, 0.99]}
    for v, r, e, j, a in [(500, 84.2, 173, 0, 0.29), (10000, 49.3, 26, 23, 0.88)]
]


def test_sweep_figure_is_plain_json_with_each_point_ticked_and_cases_from_zero():
    """Three class lines, then reduction, errors and rejects; x ticks at the sweep points
    ("500", "10k"); the cases axis starts at 0; no plotly.py theme (the page's own look)."""
    figure = sweep_figure("penalty", POINTS)
    json.dumps(figure)
    names = [trace["name"] for trace in figure["data"]]
    assert names[3:] == ["cost reduction %", "errors (cases)", "rejects (cases)"]
    layout = figure["layout"]
    assert "template" not in layout
    assert layout["xaxis"]["ticktext"] == ["500", "10k"]
    cases_axis = next(
        v
        for k, v in layout.items()
        if k.startswith("yaxis") and "range" in v and v.get("title", {}).get("text") == "cases"
    )
    assert cases_axis["range"][0] == 0 and cases_axis["range"][1] >= 173
