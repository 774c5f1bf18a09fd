"""Figures built on the server as plain data: Plotly dicts drawn by the local plotly.js,
and the tree's SVG geometry (``tree_drawing``) rendered by a template.

Every function here is pure: it takes already-computed numbers (a tree layout
from ``selectors.tree_layout``, a metrics dict, a list of checkpoints) and
returns a JSON-able figure dict, so the figures are tested without a database
or a browser.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

import plotly.graph_objects as go
from django.utils.safestring import SafeString, mark_safe

from .shared.money import format_money

__all__ = [
    "checkpoints_figure",
    "risks_figure",
    "test_frequency_figure",
    "node_details",
    "tidy_positions",
    "tree_drawing",
    "tree_svg",
    "tree_thumbnail_svg",
]

# Colour-blind-safe palette (Okabe–Ito) for decisions; refer gets its own.
DECISION_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442"]
REFER_COLOUR = "#7f7f7f"
FONT = dict(family="system-ui, -apple-system, Segoe UI, Roboto, Arial, sans-serif", size=14)


def _finish(fig: go.Figure) -> dict:
    """The figure as a JSON-able dict, without plotly.py's bulky default template."""
    data = json.loads(fig.to_json())
    data.get("layout", {}).pop("template", None)
    return data


# --------------------------------------------------------------------- the tree
# The tree is drawn as SVG on the server (diagnosis/clinic/templates/clinic/_tree_svg.html) from the
# geometry below, so every node is a real element: focusable, tappable, readable by a
# screen reader, and printed crisp.  static/js/tree.js fits it to the screen and zooms.
NODE_WIDTH = 150  # a test card's width in drawing units (pixels at 100%)
LEAF_WIDTH = 112  # a conclusion card's width
NODE_GAP = 18  # the least room between two cards on one level (edge labels live there)
CARD_HEIGHT = 58  # title, price and cases, class-mix bar
PATIENT_LINE = 19  # the patient's value or share, on cards the patient's walk touched
EDGE_ZONE = 48  # vertical room between levels: the branch labels sit here
BAR_MIN = 22  # the narrowest class-mix bar, so a tiny node's mix still shows
CHAR_WIDTH = 7.2  # a generous average glyph width at 12-13px, for fitting text to a card
SQUEEZE = 1.3  # how much longer than its room a line may be before it is cut
PATH_COLOUR = "#1d2733"
MARGIN = 14


def tidy_positions(
    nodes: Sequence[Mapping[str, Any]],
    *,
    widths: Mapping[Any, float] | None = None,
    gap: float = 1.0,
) -> dict[Any, tuple[float, float]]:
    """A compact layered layout: neighbours on a level ``gap`` apart, parents centred.

    Each subtree is pushed as close to its left sibling as their outlines
    allow (Reingold–Tilford's contour rule), level by level, so a lopsided
    tree is not as wide as its number of leaves.  Two nodes on one level
    never come closer than ``gap`` between their edges.

    Parameters
    ----------
    nodes : sequence of mappings with ``id`` and ``parent`` (None for the root)
        Children are placed in the order they appear in ``nodes``.
    widths : mapping id -> width, optional
        Each node's width (0 when missing: points ``gap`` apart).
    gap : float
        The least room between the edges of two nodes on one level.

    Returns
    -------
    dict
        ``id -> (x, y)``: ``x`` the node's centre, the leftmost edge at 0;
        ``y = -depth`` (root at 0, children below).
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
    # Post-order without recursion (deep trees must not hit Python's limit).  A subtree's
    # outline is two lists indexed by depth below its root: the leftmost and rightmost x,
    # relative to the root.  ``offset`` is a node's x relative to its parent.
    offset: dict[Any, float] = {}
    outline: dict[Any, tuple[list[float], list[float]]] = {}
    order: list[Any] = []
    for root in roots:
        stack = [root]
        while stack:
            node_id = stack.pop()
            order.append(node_id)
            stack.extend(children.get(node_id, []))
    if len(order) != len(nodes):
        raise ValueError("the tree layout has a cycle or unreachable nodes")
    half = {n["id"]: float((widths or {}).get(n["id"], 0.0)) / 2.0 for n in nodes}
    for node_id in reversed(order):
        kids = children.get(node_id, [])
        own = half[node_id]
        if not kids:
            outline[node_id] = ([-own], [own])
            continue
        placed = [0.0]
        left, right = (list(outline[kids[0]][0]), list(outline[kids[0]][1]))
        for kid in kids[1:]:
            kid_left, kid_right = outline.pop(kid)
            common = min(len(right), len(kid_left))
            shift = max(right[d] - kid_left[d] for d in range(common)) + gap
            placed.append(shift)
            for d in range(len(kid_left)):
                if d < len(left):
                    right[d] = kid_right[d] + shift
                else:
                    left.append(kid_left[d] + shift)
                    right.append(kid_right[d] + shift)
        outline.pop(kids[0], None)
        middle = (placed[0] + placed[-1]) / 2.0
        for kid, x in zip(kids, placed, strict=True):
            offset[kid] = x - middle
        outline[node_id] = (
            [-own] + [x - middle for x in left],
            [own] + [x - middle for x in right],
        )
    positions: dict[Any, tuple[float, float]] = {}
    start = 0.0
    for root in roots:
        root_left = min(outline[root][0])
        stack2: list[tuple[Any, float, int]] = [(root, start - root_left, 0)]
        while stack2:
            node_id, x, depth = stack2.pop()
            positions[node_id] = (x, -float(depth))
            for kid in children.get(node_id, []):
                stack2.append((kid, x + offset[kid], depth + 1))
        start += max(outline[root][1]) - root_left + gap
    return positions


def _share_text(share: float | None) -> str:
    if share is None or share >= 0.9995:
        return ""
    return f"{100.0 * share:.0f}% of this patient"


def _percent(share: float) -> str:
    """A share in whole percent; never "0%" or "100%" for a share that is neither."""
    if 0.0 < share < 0.005:
        return "<1%"
    if 0.995 <= share < 1.0:
        return ">99%"
    return f"{100.0 * share:.0f}%"


def _cases_text(cases: float) -> str:
    whole = round(cases)
    return f"{whole:,} case" + ("" if whole == 1 else "s")


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def _lines(text: str, chars: int, most: int = 2) -> list[str]:
    """``text`` broken into at most ``most`` lines of about ``chars`` characters."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= chars:
            lines[-1] += " " + word
        else:
            lines.append(word)
    if len(lines) > most:
        lines = lines[: most - 1] + [" ".join(lines[most - 1 :])]
    return [_clip(line, chars) for line in lines]


def class_colours(classes: Sequence[str]) -> dict[str, str]:
    """One colour per class (Okabe–Ito, colour-blind safe), in the dataset's order; refer grey."""
    colours = {
        label: DECISION_COLOURS[i % len(DECISION_COLOURS)] for i, label in enumerate(classes)
    }
    colours["Refer"] = REFER_COLOUR
    return colours


_STATUS_WORDS = {
    # test_status -> (card subtitle, details row)
    "done": ("done", "none: this patient has had it"),
    "unavailable": ("unavailable", "none: unavailable for this patient"),
    "asked above": ("asked above", "none: a test above on this path asks it"),
}


def _price_text(node: Mapping[str, Any], *, long: bool = False) -> str:
    """A test node's price for this patient, or that the patient has had it or cannot."""
    words = _STATUS_WORDS.get(node.get("test_status") or "")
    if words:
        return words[1] if long else words[0]
    return format_money(node.get("price"))


def node_details(node: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The rows of a node's details panel (shown on tap, click or keyboard focus).

    Everything comes from the layout (``selectors.tree_layout``): the test and
    its price for this patient, the training cases and their class mix, and the
    model's own decision for a patient who stops at the node.
    """
    rows: list[tuple[str, str]] = []
    if node.get("is_leaf"):
        rows.append(("Conclusion", str(node.get("decision") or "–")))
    else:
        rows.append(("Test", str(node.get("test_label") or node.get("text") or "–")))
        if node.get("price") is not None:
            rows.append(("Price here", _price_text(node, long=True)))
    if node.get("branch"):
        rows.append(("Reached by", str(node["branch"])))
    patient = node.get("patient")
    if patient:
        rows.append(("This patient", str(patient.get("text") or "")))
    share = _share_text(node.get("share"))
    if share:
        rows.append(("Share", share))
    counts = node.get("class_counts") or {}
    cases = float(node.get("cases", sum(float(c) for c in counts.values())))
    rows.append(("Training cases", _cases_text(cases)))
    if counts and cases > 0:
        rows.append(
            (
                "Class mix",
                ", ".join(
                    f"{label} {round(float(c)):,} ({_percent(float(c) / cases)})"
                    for label, c in counts.items()
                ),
            )
        )
    if not node.get("is_leaf") and node.get("decision"):
        rows.append(("If stopped here", str(node["decision"])))
    proba = node.get("proba") or {}
    if proba:
        rows.append(
            (
                "Model's probabilities",
                ", ".join(f"{label} {_percent(float(p))}" for label, p in proba.items()),
            )
        )
    if node.get("expected_cost") is not None:
        rows.append(("Expected cost of that conclusion", format_money(node["expected_cost"])))
    if node.get("refer_cost") is not None and node.get("decision_kind") != "reject":
        rows.append(("Referring instead", format_money(node["refer_cost"])))
    return rows


# The patient's line on a card is short (a card is narrow); the details panel says it in full.
CARD_STATUS = {
    "unavailable": "Unavailable: split",
    "no_result": "No result: split",
    "waiting": "Next test here",
}


def _card_patient_text(node: Mapping[str, Any]) -> str:
    patient = node.get("patient") or {}
    share = node.get("share")
    part = f"{100.0 * share:.0f}%" if share is not None and share < 0.9995 else ""
    if node.get("is_leaf"):
        return f"{part} ends here" if part else "Ends here"
    status = patient.get("status")
    if status == "known":
        return f"Patient: {patient.get('text')}"
    text = CARD_STATUS.get(str(status), str(patient.get("text") or ""))
    return f"{part}: {text.split(':')[0].lower()}" if part else text


def _aria(node: Mapping[str, Any]) -> str:
    return "; ".join(f"{k}: {v}" for k, v in node_details(node))


def tree_drawing(layout: Mapping[str, Any]) -> dict:
    """The tree as SVG geometry: cards, elbow edges, branch labels, the patient's path.

    Parameters
    ----------
    layout : mapping
        ``selectors.tree_layout``'s answer: ``nodes`` (``id``, ``parent``,
        ``edge_label``, ``is_leaf``, ``decision``, ``test_label``, ``price``,
        ``class_counts``, ``cases``, ``patient``, ``share`` ...), ``highlight``
        (the patient's walk), ``classes`` or ``class_labels``.

    Returns
    -------
    dict
        ``width``/``height`` of the drawing; ``nodes`` (card box, texts and the
        class-mix bar, whose length is proportional to the training cases);
        ``edges`` (an SVG path each, the patient's edges flagged ``on_path``
        and listed last, so they are drawn over the others but under every
        label); ``labels`` (branch labels centred on the edge's own drop into
        its child, so sibling labels are at least ``NODE_WIDTH + NODE_GAP``
        apart); ``legend``; ``details`` (``node_details`` per node id).
    """
    nodes = list(layout.get("nodes") or [])
    if not nodes:
        raise ValueError("the tree layout has no nodes")
    classes = list(layout.get("classes") or layout.get("class_labels") or [])
    for node in nodes:
        for label in node.get("class_counts") or {}:
            if label not in classes:
                classes.append(label)
    colour_of = class_colours(classes)
    highlight = set(layout.get("highlight") or [])
    has_patient = bool(highlight)
    width_of = {n["id"]: LEAF_WIDTH if n.get("is_leaf") else NODE_WIDTH for n in nodes}
    pos = tidy_positions(nodes, widths=width_of, gap=NODE_GAP)
    card_top = CARD_HEIGHT + (PATIENT_LINE if has_patient else 0)
    level = card_top + EDGE_ZONE
    by_id = {n["id"]: n for n in nodes}

    def cases_of(node) -> float:
        counts = node.get("class_counts") or {}
        return float(node.get("cases", sum(float(c) for c in counts.values())))

    root_cases = max((cases_of(n) for n in nodes if n.get("parent") is None), default=0.0)
    drawn_nodes, boxes = [], {}
    for node in nodes:
        x, y = pos[node["id"]]
        on_path = node["id"] in highlight
        height = CARD_HEIGHT + (PATIENT_LINE if on_path else 0)
        card_width = width_of[node["id"]]
        # tree.js narrows a line that is a little too long (SVG textLength); a much longer
        # one is cut here, with its full text in the details and the tooltip.
        chars = int(SQUEEZE * (card_width - 12) / CHAR_WIDTH)
        left = MARGIN + x - card_width / 2
        top = MARGIN + (-y) * level
        boxes[node["id"]] = (left, top, height)
        cases = cases_of(node)
        full = card_width - 16
        bar_width = full if root_cases <= 0 else BAR_MIN + (full - BAR_MIN) * cases / root_cases
        segments, at = [], left + 8
        counts = node.get("class_counts") or {}
        for label, count in counts.items():
            if cases <= 0 or float(count) <= 0:
                continue
            width = bar_width * float(count) / cases
            segments.append(
                {
                    "x": round(at, 2),
                    "width": round(width, 2),
                    "colour": colour_of.get(label, REFER_COLOUR),
                    "label": label,
                }
            )
            at += width
        if node.get("is_leaf"):
            title = str(node.get("decision") or "–")
            subtitle = _cases_text(cases)
        else:
            title = str(node.get("test_label") or node.get("text") or "–")
            price = _price_text(node) if node.get("price") is not None else None
            subtitle = (price + " · " if price else "") + _cases_text(cases)
        patient = node.get("patient") or {}
        share = _share_text(node.get("share"))
        patient_text = _card_patient_text(node) if on_path else ""
        drawn_nodes.append(
            {
                "id": node["id"],
                "x": round(left, 2),
                "y": round(top, 2),
                "cx": round(left + card_width / 2, 2),
                "width": card_width,
                "height": height,
                "is_leaf": bool(node.get("is_leaf")),
                "is_root": node.get("parent") is None,
                "parent": node.get("parent"),
                "on_path": on_path,
                "colour": colour_of.get(str(node.get("decision")), REFER_COLOUR)
                if node.get("is_leaf")
                else None,
                "title": _clip(title, chars),
                "fit": card_width - 12,
                "full_title": title,
                "subtitle": subtitle,
                "bar_x": round(left + 8, 2),
                "bar_y": round(top + 41, 2),
                "bar_width": round(bar_width, 2),
                "segments": segments,
                "patient_text": _clip(patient_text, chars + 1),
                "patient_status": patient.get("status", ""),
                "aria": _aria(node),
            }
        )
    edges, labels = [], []
    for node in nodes:
        parent = node.get("parent")
        if parent is None:
            continue
        p_left, p_top, p_height = boxes[parent]
        c_left, c_top, _ = boxes[node["id"]]
        px, cx = p_left + width_of[parent] / 2, c_left + width_of[node["id"]] / 2
        bus = c_top - EDGE_ZONE + 8
        on_path = node["id"] in highlight and parent in highlight
        edges.append(
            {
                "d": f"M{px:.1f},{p_top + p_height:.1f} V{bus:.1f} H{cx:.1f} V{c_top:.1f}",
                "on_path": on_path,
                "target": node["id"],
            }
        )
        text = str(node.get("edge_label") or "")
        fit = width_of[node["id"]] + NODE_GAP - 8
        room = int(SQUEEZE * fit / CHAR_WIDTH)
        lines = _lines(text, room, most=1) if text else []
        share = _share_text(by_id[node["id"]].get("share")) if on_path else ""
        if share:
            lines.append(share.split(" of")[0])
        if lines:
            labels.append(
                {
                    "x": round(cx, 2),
                    # the middle of the drop from the bus into the child's card
                    "y": round((bus + c_top) / 2 - 7 * (len(lines) - 1) + 4, 2),
                    "lines": lines,
                    "fit": fit,
                    "on_path": on_path,
                    "full": text,
                }
            )
    edges.sort(key=lambda e: e["on_path"])
    width = MARGIN * 2 + max(x + width_of[k] / 2 for k, (x, _) in pos.items())
    drawing_height = MARGIN * 2 + max(-y for _, y in pos.values()) * level + card_top
    decisions = {str(n.get("decision")) for n in nodes if n.get("is_leaf")}
    legend = [{"label": label, "colour": colour_of[label]} for label in classes]
    if "Refer" in decisions:
        legend.append({"label": "Refer", "colour": REFER_COLOUR})
    return {
        "width": round(width, 2),
        "height": round(drawing_height, 2),
        "nodes": drawn_nodes,
        "edges": edges,
        "labels": labels,
        "legend": legend,
        "has_patient": has_patient,
        "highlight": [n for n in (layout.get("highlight") or [])],
        "details": {
            str(n["id"]): [{"label": k, "value": v} for k, v in node_details(n)] for n in nodes
        },
        "positions": {str(k): [x, y] for k, (x, y) in pos.items()},
    }


def _attrs(**attrs: Any) -> str:
    """SVG attributes, escaped; ``None`` and ``False`` leave an attribute out."""
    parts = []
    for name, value in attrs.items():
        if value is None or value is False:
            continue
        parts.append(f' {name.rstrip("_").replace("_", "-")}="{escape(str(value))}"')
    return "".join(parts)


def tree_svg(drawing: Mapping[str, Any]) -> SafeString:
    """The SVG markup of :func:`tree_drawing`'s geometry, every text escaped.

    Built here rather than in a template: a tree has hundreds of elements and
    Python strings render them in a few milliseconds.  Layers, bottom to top:
    edges (the patient's last), branch labels (on a halo, so no line hides
    them), node cards.  Every card is a focusable button whose accessible
    name is its details; ``static/js/tree.js`` zooms and shows the details.
    """
    help_text = (
        f"Decision tree: {len(drawing['nodes'])} nodes. Tab or the arrow keys move from node "
        "to node (down: first branch, up: parent, left and right: neighbouring branches); "
        "a node's details appear over the tree."
    )
    out = [
        "<svg"
        + _attrs(
            class_="tree-svg",
            xmlns="http://www.w3.org/2000/svg",
            tabindex="-1",
            width=drawing["width"],
            height=drawing["height"],
            viewBox=f"0 0 {drawing['width']} {drawing['height']}",
            role="group",
            aria_label=help_text,
        )
        + '>\n<g class="tree-viewport">\n<g class="tree-edges" aria-hidden="true">'
    ]
    for edge in drawing["edges"]:
        kind = "tree-edge on-path" if edge["on_path"] else "tree-edge"
        out.append(f"<path{_attrs(d=edge['d'], class_=kind)}/>")
    out.append('</g>\n<g class="tree-labels" aria-hidden="true">')
    for label in drawing["labels"]:
        kind = "tree-edge-label on-path" if label["on_path"] else "tree-edge-label"
        out.append(f"<text{_attrs(x=label['x'], y=label['y'], class_=kind)}>")
        for i, line in enumerate(label["lines"]):
            extra = _attrs(dy=14, class_="tree-share") if i else ""
            tspan = _attrs(x=label["x"], data_fit=label["fit"]) + extra
            out.append(f"<tspan{tspan}>{escape(line)}</tspan>")
        if label["lines"] and label["full"] != label["lines"][0]:
            out.append(f"<title>{escape(label['full'])}</title>")
        out.append("</text>")
    out.append('</g>\n<g class="tree-nodes">')
    for node in drawing["nodes"]:
        kind = " ".join(
            ["tree-node"]
            + (["leaf"] if node["is_leaf"] else [])
            + (["on-path"] if node["on_path"] else [])
            + (["root"] if node["is_root"] else [])
        )
        group = _attrs(
            class_=kind,
            data_node=node["id"],
            data_parent=None if node["is_root"] else node["parent"],
            tabindex=0,
            role="button",
            aria_label=node["aria"],
        )
        x, y, cx, fit = node["x"], node["y"], node["cx"], node["fit"]
        out.append(f"<g{group}>")
        box = _attrs(class_="tree-card-box", x=x, y=y, width=node["width"], height=node["height"])
        out.append(f'<rect{box} rx="6"/>')
        if node["is_leaf"]:
            stripe = _attrs(x=x, y=y, width=6, height=node["height"], fill=node["colour"])
            out.append(f'<rect{stripe} rx="3"/>')
        title = _attrs(
            x=cx,
            y=y,
            dy=18,
            class_="tree-title",
            data_fit=fit,
            fill=node["colour"] if node["is_leaf"] else None,
        )
        tip = (
            f"<title>{escape(node['full_title'])}</title>"
            if node["title"] != node["full_title"]
            else ""
        )
        out.append(f"<text{title}>{escape(node['title'])}{tip}</text>")
        sub = _attrs(x=cx, y=y, dy=34, class_="tree-sub", data_fit=fit)
        out.append(f"<text{sub}>{escape(node['subtitle'])}</text>")
        frame = _attrs(
            class_="tree-bar-frame", x=node["bar_x"], y=node["bar_y"], width=node["bar_width"]
        )
        out.append(f'<rect{frame} height="9"/>')
        for seg in node["segments"]:
            piece = _attrs(x=seg["x"], y=node["bar_y"], width=seg["width"], fill=seg["colour"])
            out.append(f'<rect{piece} height="9"><title>{escape(seg["label"])}</title></rect>')
        if node["patient_text"]:
            status = node["patient_status"] or "end"
            line = _attrs(
                x=cx, y=y, dy=70, class_=f"tree-patient tree-patient-{status}", data_fit=fit
            )
            out.append(f"<text{line}>{escape(node['patient_text'])}</text>")
        out.append("</g>")
    out.append("</g>\n</g>\n</svg>")
    return mark_safe("\n".join(out))  # noqa: S308  every text above is escaped


def tree_thumbnail_svg(drawing: Mapping[str, Any], *, label: str) -> SafeString:
    """A small, text-free picture of :func:`tree_drawing`'s geometry (a forest's member).

    Cards, leaf colours, class-mix bars and the patient's path only: at the
    size of a small multiple no text is readable, and none is focusable (the
    member opens in the full viewer).  ``label`` is the picture's accessible name.
    """
    width, height = drawing["width"], drawing["height"]
    out = [
        "<svg"
        + _attrs(
            class_="tree-thumb",
            xmlns="http://www.w3.org/2000/svg",
            viewBox=f"0 0 {width} {height}",
            preserveAspectRatio="xMidYMin meet",
            role="img",
            aria_label=label,
        )
        + ">"
    ]
    for edge in drawing["edges"]:
        kind = "tree-edge on-path" if edge["on_path"] else "tree-edge"
        out.append(f"<path{_attrs(d=edge['d'], class_=kind)}/>")
    for node in drawing["nodes"]:
        kind = "tree-node leaf" if node["is_leaf"] else "tree-node"
        kind += " on-path" if node["on_path"] else ""
        kind += f" tree-patient-{node['patient_status']}" if node["patient_status"] else ""
        out.append(f"<g{_attrs(class_=kind)}>")
        box = _attrs(
            class_="tree-card-box",
            x=node["x"],
            y=node["y"],
            width=node["width"],
            height=node["height"],
        )
        out.append(f'<rect{box} rx="6"/>')
        if node["is_leaf"]:
            stripe = _attrs(x=node["x"], y=node["y"], width=node["width"], height=22)
            out.append(f'<rect{stripe} fill="{escape(node["colour"])}" rx="5"/>')
        for seg in node["segments"]:
            piece = _attrs(x=seg["x"], y=node["bar_y"], width=seg["width"], fill=seg["colour"])
            out.append(f'<rect{piece} height="9"/>')
        out.append("</g>")
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308  only numbers and escaped colours above


# --------------------------------------------------------------------- bar charts
#: A risk more than this many times the next largest one is cut off (broken axis), so
#: one huge risk (a referral at $9,994) does not squash the bars worth comparing.
RISK_AXIS_BREAK = 4.0
RISK_ADVISED_COLOUR = "#1f7a4d"
RISK_OTHER_COLOUR = "#8aa4c8"


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
                format_money(v) + ("  ◀ advised" if low_ else "") + ("  (off scale)" if o else "")
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
            text=(f"<b>{format_money(value)}  ◀ advised</b>" if lowest else format_money(value))
            + ("  ▶ off scale" if o else ""),
            font=dict(color=RISK_ADVISED_COLOUR if lowest else "#1d2733"),
        )
    # Short enough for the chart's width on a tablet (820 px: about 300 px of plot).
    title = "Risk in $ (lower is better)"
    if limit is not None:
        title = "Risk in $ (lower is better; axis cut short)"
    fig.update_layout(
        font=FONT,
        # The value column: "−$9,999.99  ◀ advised" or "... ⫽ off scale" at the chart's font.
        margin=dict(l=10, r=215 if any(off) else 185, t=10, b=70),
        height=110 + 36 * len(rows),
        plot_bgcolor="#ffffff",
        paper_bgcolor="#ffffff",
        showlegend=False,
        xaxis=dict(
            title=dict(text=title, standoff=12),
            automargin=True,  # the tick labels and the title below them both stay in view
            gridcolor="#e3e8ef",
            zeroline=True,
            zerolinecolor="#5b6675",
            zerolinewidth=1,
            tickformat="$,.0f",  # d3's currency symbol: "−$100", as format_money writes it
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
            hovertemplate="%{x:.1f} s: estimated cost %{y:$,.2f} (%{text})<extra></extra>",
        )
    )
    fig.update_layout(font=FONT, height=320, plot_bgcolor="#ffffff", paper_bgcolor="#ffffff")
    fig.update_layout(ANYTIME_AXES)
    return _finish(fig)


# The anytime chart's axes, here and in static/js/anytime.js (the live chart while training).
# The cost axis starts at $0: fitted to the data, a change of a few cents filled the chart's
# height like a cliff.  automargin makes room for the dollar ticks beside the axis title (a
# fixed 10 px left margin put the ticks under the title).
ANYTIME_AXES = {
    "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
    "xaxis": {
        "title": {"text": "Training time (s)"},
        "gridcolor": "#e3e8ef",
        "rangemode": "tozero",
        "automargin": True,
    },
    "yaxis": {
        "title": {"text": "Estimated cost per patient", "standoff": 8},
        "gridcolor": "#e3e8ef",
        "rangemode": "tozero",
        "tickprefix": "$",
        "tickformat": ",.2~f",
        "automargin": True,
    },
}
