"""Plotly figures built on the server as plain dicts, drawn by the local plotly.js.

Every function here is pure: it takes already-computed numbers (a tree layout
from ``selectors.tree_layout``, a metrics dict, a list of checkpoints) and
returns a JSON-able figure dict, so the figures are tested without a database
or a browser.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

__all__ = [
    "checkpoints_figure",
    "risks_figure",
    "test_frequency_figure",
    "tidy_positions",
    "tree_figure",
]

# Colour-blind-safe palette (Okabe–Ito) for decisions; refer gets its own.
DECISION_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442"]
REFER_COLOUR = "#7f7f7f"
TEST_NODE_COLOUR = "#ffffff"
EDGE_COLOUR = "#9aa5b4"
HIGHLIGHT_COLOUR = "#111111"
PIXELS_PER_LEAF = 92
MIN_SCROLL_WIDTH = 1150
FONT = dict(family="system-ui, -apple-system, Segoe UI, Roboto, Arial, sans-serif", size=14)


def _finish(fig: go.Figure) -> dict:
    """The figure as a JSON-able dict, without plotly.py's bulky default template."""
    data = json.loads(fig.to_json())
    data.get("layout", {}).pop("template", None)
    return data


def _money(value: float | None) -> str:
    if value is None:
        return "–"
    return f"${value:,.2f}"


# --------------------------------------------------------------------- the tree
def tidy_positions(nodes: Sequence[Mapping[str, Any]]) -> dict[Any, tuple[float, float]]:
    """A tidy layered layout: leaves one unit apart left to right, parents centred over children.

    Parameters
    ----------
    nodes : sequence of mappings with ``id`` and ``parent`` (None for the root)
        Children are placed in the order they appear in ``nodes``.

    Returns
    -------
    dict
        ``id -> (x, y)`` with ``y = -depth`` (root at 0, children below).
    """
    children: dict[Any, list] = {}
    roots = []
    ids = {n["id"] for n in nodes}
    for node in nodes:
        parent = node.get("parent")
        if parent is None:
            roots.append(node["id"])
        elif parent not in ids:
            raise ValueError(f"node {node['id']!r} has unknown parent {parent!r}")
        else:
            children.setdefault(parent, []).append(node["id"])
    positions: dict[Any, tuple[float, float]] = {}
    next_leaf_x = 0.0
    # Iterative post-order: deep trees must not hit Python's recursion limit.
    for root in roots:
        stack: list[tuple[Any, int, bool]] = [(root, 0, False)]
        while stack:
            node_id, depth, expanded = stack.pop()
            kids = children.get(node_id, [])
            if not kids:
                positions[node_id] = (next_leaf_x, -float(depth))
                next_leaf_x += 1.0
            elif expanded:
                xs = [positions[k][0] for k in kids]
                positions[node_id] = ((xs[0] + xs[-1]) / 2.0, -float(depth))
            else:
                stack.append((node_id, depth, True))
                for kid in reversed(kids):
                    stack.append((kid, depth + 1, False))
    if len(positions) != len(nodes):
        raise ValueError("the tree layout has a cycle or unreachable nodes")
    return positions


def _counts_text(counts: Any, class_labels: Sequence[str]) -> str:
    if counts is None:
        return ""
    if isinstance(counts, Mapping):
        pairs = list(counts.items())
    else:
        pairs = [
            (class_labels[k] if k < len(class_labels) else str(k), c) for k, c in enumerate(counts)
        ]
    return ", ".join(f"{label}: {float(c):g}" for label, c in pairs)


def _proba_text(proba: Any) -> str:
    if not proba:
        return ""
    return ", ".join(f"{label} {float(p):.2f}" for label, p in proba.items())


def node_hover_text(node: Mapping[str, Any], class_labels: Sequence[str] = ()) -> str:
    """What a clinician sees when pointing at a node: test and price, or decision; belief; cost.

    The decision, probabilities and expected cost are the model's own for a
    patient who stops at the node (``selectors.tree_layout``).
    """
    lines = []
    if node.get("is_leaf"):
        lines.append(f"<b>Decision: {node.get('decision') or '–'}</b>")
    else:
        lines.append(f"<b>Test: {node.get('test_label') or node.get('text') or '–'}</b>")
        if node.get("price") is not None:
            lines.append(f"Price here: {_money(node.get('price'))}")
        if node.get("decision"):
            lines.append(f"If stopped here: {node['decision']}")
    proba = _proba_text(node.get("proba"))
    if proba:
        lines.append(f"Probabilities: {proba}")
    if node.get("expected_cost") is not None:
        lines.append(f"Expected cost of that decision: {_money(node['expected_cost'])}")
    if node.get("refer_cost") is not None and node.get("decision_kind") != "reject":
        lines.append(f"Referring instead: {_money(node['refer_cost'])}")
    counts = _counts_text(node.get("class_counts"), class_labels)
    if counts:
        lines.append(f"Training cases: {counts}")
    return "<br>".join(lines)


def _wrap(text: str, width: int = 16) -> str:
    """Break a caption into lines of about ``width`` characters (Plotly's ``<br>``)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def _node_caption(node: Mapping[str, Any]) -> str:
    if node.get("is_leaf"):
        return _wrap(str(node.get("decision") or ""))
    return _wrap(str(node.get("test_label") or node.get("text") or ""))


def tree_figure(layout: Mapping[str, Any], *, class_labels: Sequence[str] | None = None) -> dict:
    """The tree as a node-link diagram; nodes on ``layout["highlight"]`` are drawn heavier.

    Parameters
    ----------
    layout : mapping
        ``nodes``: list of dicts with ``id``, ``parent``, ``edge_label``,
        ``is_leaf``, ``decision``, ``test_label``, ``price``, ``class_counts``,
        ``expected_cost``; ``highlight``: node ids on a case's path (optional);
        ``class_labels`` (optional).
    class_labels : sequence of str, optional
        Overrides ``layout["class_labels"]`` for the hover counts.
    """
    nodes = list(layout.get("nodes") or [])
    if not nodes:
        raise ValueError("the tree layout has no nodes")
    labels = list(class_labels or layout.get("class_labels") or [])
    highlight = set(layout.get("highlight") or [])
    pos = tidy_positions(nodes)

    fig = go.Figure()
    for on_path in (False, True):
        xs: list = []
        ys: list = []
        for node in nodes:
            parent = node.get("parent")
            if parent is None:
                continue
            if (node["id"] in highlight and parent in highlight) != on_path:
                continue
            (x0, y0), (x1, y1) = pos[parent], pos[node["id"]]
            xs += [x0, x1, None]
            ys += [y0, y1, None]
        if xs:
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    hoverinfo="skip",
                    name="This patient's path" if on_path else "Branches",
                    showlegend=on_path,
                    line=dict(
                        color=HIGHLIGHT_COLOUR if on_path else EDGE_COLOUR,
                        width=5 if on_path else 1.5,
                    ),
                )
            )
    # Edge labels sit at the middle of each edge, on the outer side: a left branch's
    # label extends leftwards and a right branch's rightwards, so siblings never collide.
    label_x, label_y, label_text, label_side = [], [], [], []
    for node in nodes:
        if node.get("parent") is None or not node.get("edge_label"):
            continue
        (x0, y0), (x1, y1) = pos[node["parent"]], pos[node["id"]]
        label_x.append(x0 + 0.5 * (x1 - x0))
        label_y.append(y0 + 0.5 * (y1 - y0))
        label_text.append(str(node["edge_label"]))
        label_side.append(
            "middle left"
            if x1 < x0 - 1e-9
            else "middle right"
            if x1 > x0 + 1e-9
            else "middle center"
        )
    if label_x:
        fig.add_trace(
            go.Scatter(
                x=label_x,
                y=label_y,
                mode="text",
                text=label_text,
                textposition=label_side,
                hoverinfo="skip",
                showlegend=False,
                name="Branch values",
                textfont=dict(size=12, color="#33404f"),
            )
        )
    # One marker trace per decision gives a legend that explains the colours.
    groups: dict[str, list] = {}
    for node in nodes:
        key = "Test" if not node.get("is_leaf") else str(node.get("decision") or "–")
        groups.setdefault(key, []).append(node)
    decisions = [k for k in groups if k != "Test"]
    colour_of = {}
    palette = iter(DECISION_COLOURS * 4)
    for decision in sorted(decisions, key=lambda d: (labels.index(d) if d in labels else 99, d)):
        colour_of[decision] = (
            REFER_COLOUR if decision.lower().startswith("refer") else next(palette)
        )
    for key in ["Test"] + sorted(decisions, key=lambda d: list(colour_of).index(d)):
        members = groups[key]
        on = [n["id"] in highlight for n in members]
        fig.add_trace(
            go.Scatter(
                x=[pos[n["id"]][0] for n in members],
                y=[pos[n["id"]][1] for n in members],
                mode="markers+text",
                name="Test node" if key == "Test" else f"Leaf: {key}",
                text=[_node_caption(n) for n in members],
                textposition="bottom center" if key != "Test" else "top center",
                textfont=dict(size=12),
                hovertext=[node_hover_text(n, labels) for n in members],
                hoverinfo="text",
                customdata=[n["id"] for n in members],
                marker=dict(
                    symbol="square" if key == "Test" else "circle",
                    size=[22 if h else 16 for h in on],
                    color=TEST_NODE_COLOUR if key == "Test" else colour_of[key],
                    line=dict(
                        color=[HIGHLIGHT_COLOUR if h else "#33404f" for h in on],
                        width=[4 if h else 1.5 for h in on],
                    ),
                ),
            )
        )
    depth = max(-y for _, y in pos.values())
    width = max(x for x, _ in pos.values())
    n_leaves = sum(1 for n in nodes if n["id"] not in {m.get("parent") for m in nodes})
    # Wide trees get a fixed pixel width (the page scrolls sideways) so captions stay legible.
    pixel_width = PIXELS_PER_LEAF * (n_leaves + 1)
    if pixel_width > MIN_SCROLL_WIDTH:
        fig.update_layout(autosize=False, width=pixel_width)
    fig.update_layout(
        font=FONT,
        margin=dict(l=10, r=10, t=30, b=10),
        plot_bgcolor="#ffffff",
        paper_bgcolor="#ffffff",
        hovermode="closest",
        dragmode="pan",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0),
        xaxis=dict(visible=False, range=[-0.8, width + 0.8]),
        yaxis=dict(visible=False, range=[-depth - 0.6, 0.5]),
        height=max(420, 140 * (depth + 1)),
    )
    figure = _finish(fig)
    # Kept alongside the figure so tests and the page can read positions by node id.
    figure["positions"] = {str(k): [x, y] for k, (x, y) in pos.items()}
    figure["highlight"] = sorted(highlight, key=str)
    return figure


# --------------------------------------------------------------------- bar charts
#: A risk more than this many times the next largest one is cut off (broken axis), so
#: one huge risk (a referral at $9,994) does not squash the bars worth comparing.
RISK_AXIS_BREAK = 4.0
RISK_ADVISED_COLOUR = "#1f7a4d"
RISK_OTHER_COLOUR = "#8aa4c8"


def _signed_money(value: float) -> str:
    return f"−${-value:,.2f}" if value < 0 and round(value, 2) != 0 else f"${abs(value):,.2f}"


def risks_figure(risks: Iterable[Mapping[str, Any]]) -> dict:
    """Horizontal bars: the model's risk (expected loss, in dollars) of each possible action now.

    ``risks`` are the rows of ``selectors.explain(...).risks``: ``action``,
    ``risk`` and ``lowest`` (the advised action, drawn green).  The exact
    values are printed in a column right of the plot, never over a bar or an
    action's name, with "◀ advised" on the lowest.  When one risk is more
    than :data:`RISK_AXIS_BREAK` times every other, the axis is cut just
    past the others (a broken axis): the long bar runs off the scale, is
    marked "off scale" and its value is still printed.  ``x`` holds the
    risks themselves.
    """
    rows = [(str(r["action"]), float(r["risk"]), bool(r.get("lowest"))) for r in risks]
    if not rows:
        raise ValueError("no risks to draw")
    values = [r for _, r, _ in rows]
    sizes = sorted((abs(v) for v in values), reverse=True)
    limit = None
    if len(sizes) > 1 and sizes[1] > 0 and sizes[0] > RISK_AXIS_BREAK * sizes[1]:
        limit = 1.5 * sizes[1]  # the axis ends here; only the outlier passes it
    low = min(0.0, *values) if limit is None else max(min(0.0, *values), -limit)
    high = max(0.0, *values) if limit is None else min(max(0.0, *values), limit)
    pad = 0.06 * ((high - low) or 1.0)
    off = [limit is not None and abs(v) > limit for v in values]
    fig = go.Figure(
        go.Bar(
            x=values,
            y=[a for a, _, _ in rows],
            orientation="h",
            marker_color=[RISK_ADVISED_COLOUR if low_ else RISK_OTHER_COLOUR for *_, low_ in rows],
            text=[
                _signed_money(v) + ("  ◀ advised" if low_ else "") + ("  (off scale)" if o else "")
                for (_, v, low_), o in zip(rows, off, strict=True)
            ],
            textposition="none",  # printed as the value column instead (annotations below)
            hovertemplate="%{y}: risk %{text}<extra></extra>",
        )
    )
    for (action, value, lowest), o in zip(rows, off, strict=True):
        fig.add_annotation(
            xref="paper",
            x=1.0,
            xanchor="left",
            xshift=10,
            yref="y",
            y=action,
            showarrow=False,
            align="left",
            text=(f"<b>{_signed_money(value)}  ◀ advised</b>" if lowest else _signed_money(value))
            + ("  ▶ off scale" if o else ""),
            font=dict(color=RISK_ADVISED_COLOUR if lowest else "#1d2733"),
        )
    title = "Risk in $: expected loss, lower is better"
    if limit is not None:
        title += " (axis cut short: the longest bar runs off it)"
    fig.update_layout(
        font=FONT,
        # The value column: "−$9,999.99  ◀ advised" or "... ⫽ off scale" at the chart's font.
        margin=dict(l=10, r=215 if any(off) else 185, t=10, b=60),
        height=100 + 36 * len(rows),
        plot_bgcolor="#ffffff",
        paper_bgcolor="#ffffff",
        showlegend=False,
        xaxis=dict(
            title=title,
            gridcolor="#e3e8ef",
            zeroline=True,
            zerolinecolor="#5b6675",
            zerolinewidth=1,
            tickprefix="$",
            tickformat=",.0f",
            range=[low - (pad if low < 0 else 0.0), high + pad],
        ),
        yaxis=dict(autorange="reversed", automargin=True),
    )
    return _finish(fig)


def test_frequency_figure(
    frequency: Mapping[str, float], labels: Mapping[str, str] | None = None
) -> dict:
    """Bars: the share of held-out patients for whom the model ordered each test."""
    labels = dict(labels or {})
    rows = sorted(frequency.items(), key=lambda kv: (-float(kv[1]), kv[0]))
    if not rows:
        raise ValueError("no test frequencies to draw")
    fig = go.Figure(
        go.Bar(
            x=[100.0 * float(f) for _, f in rows],
            y=[labels.get(name, name) for name, _ in rows],
            orientation="h",
            marker_color="#1f5fbf",
            text=[f"{100.0 * float(f):.0f}%" for _, f in rows],
            textposition="auto",
            hovertemplate="%{y}: ordered for %{x:.1f}% of held-out patients<extra></extra>",
        )
    )
    fig.update_layout(
        font=FONT,
        margin=dict(l=10, r=10, t=10, b=60),
        height=100 + 30 * len(rows),
        plot_bgcolor="#ffffff",
        paper_bgcolor="#ffffff",
        xaxis=dict(title="% of held-out patients", range=[0, 105], gridcolor="#e3e8ef"),
        yaxis=dict(autorange="reversed", automargin=True),
    )
    return _finish(fig)


def checkpoints_figure(checkpoints: Iterable[Mapping[str, Any]]) -> dict:
    """Line: an anytime learner's estimated cost against the time it had been training."""
    points = sorted(
        (
            (float(c["elapsed_seconds"]), float(c["estimated_cost"]), str(c.get("label") or ""))
            for c in checkpoints
            if c.get("estimated_cost") is not None
        ),
        key=lambda p: p[0],
    )
    if not points:
        raise ValueError("no checkpoints with an estimated cost")
    fig = go.Figure(
        go.Scatter(
            x=[p[0] for p in points],
            y=[p[1] for p in points],
            mode="lines+markers+text",
            text=[p[2] for p in points],
            textposition="top center",
            line=dict(color="#1f5fbf", width=2, shape="hv"),
            hovertemplate="%{x:.1f} s: estimated cost %{y:,.2f} (%{text})<extra></extra>",
        )
    )
    fig.update_layout(
        font=FONT,
        margin=dict(l=10, r=10, t=20, b=60),
        height=320,
        plot_bgcolor="#ffffff",
        paper_bgcolor="#ffffff",
        xaxis=dict(title="Training time (s)", gridcolor="#e3e8ef", rangemode="tozero"),
        yaxis=dict(title="Estimated cost per patient", gridcolor="#e3e8ef"),
    )
    return _finish(fig)
