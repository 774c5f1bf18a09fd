"""The risk chart stays readable when one risk dwarfs the others (figures.risks_figure)."""

from __future__ import annotations

from diagnosis import figures
from diagnosis.shared.money import format_money

RISKS = [
    {"action": "Classify as negative", "risk": -87.92, "lowest": False},
    {"action": "Refer", "risk": 9994.0, "lowest": False},
    {"action": "Order TSH", "risk": -95.5, "lowest": True},
    {"action": "Order T3", "risk": 310.0, "lowest": False},
]


def test_one_huge_risk_is_cut_off_and_the_rest_keep_their_scale():
    """A risk over RISK_AXIS_BREAK times the rest runs off a cut axis, marked 'off scale'."""
    fig = figures.risks_figure(RISKS)
    low, high = fig["layout"]["xaxis"]["range"]
    assert high < 9994.0 and high > 310.0, "the axis ends past the comparable bars"
    assert low < -95.5, "negative risks are on the axis, left of zero"
    assert "axis cut short" in fig["layout"]["xaxis"]["title"]["text"]
    notes = {a["y"]: a["text"] for a in fig["layout"]["annotations"]}
    assert "off scale" in notes["Refer"]
    assert all("off scale" not in t for y, t in notes.items() if y != "Refer")
    assert fig["data"][0]["x"] == [r["risk"] for r in RISKS]


def test_values_sit_in_a_column_beside_the_plot_in_dollars():
    """Each value is printed right of the plot (never over a bar or a name), signed, in $."""
    fig = figures.risks_figure(RISKS)
    assert fig["data"][0]["textposition"] == "none"
    for row, note in zip(RISKS, fig["layout"]["annotations"], strict=True):
        assert note["xref"] == "paper" and note["x"] == 1.0 and note["xanchor"] == "left"
        assert format_money(row["risk"]) in note["text"]
        assert ("advised" in note["text"]) == row["lowest"]
    # d3's currency symbol, not a prefix: a negative tick reads "−$100", as the values do
    assert fig["layout"]["xaxis"]["tickformat"] == "$,.0f"
    assert "tickprefix" not in fig["layout"]["xaxis"]


def test_comparable_risks_keep_a_plain_axis():
    """Without an outlier the axis spans every bar and nothing is marked off scale."""
    fig = figures.risks_figure(
        [
            {"action": "Classify", "risk": 5758.0},
            {"action": "Refer", "risk": 4142.0, "lowest": True},
        ]
    )
    assert fig["layout"]["xaxis"]["range"][1] > 5758.0
    assert "axis cut" not in fig["layout"]["xaxis"]["title"]["text"]
    assert not any("off scale" in a["text"] for a in fig["layout"]["annotations"])
