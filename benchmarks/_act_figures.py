"""Paper 000's figures for the research page, from `act_report`'s measured table and curves.

Plain Plotly JSON (``data`` + ``layout``), saved by ``benchmarks._figures.write_figure``:
- ``vs_peers_figure``: each learner's normalized cost as a multiple of the best existing
  system's (the issue's fixed peer figure), per dataset and error cost, with the target;
- ``anytime_figure``: ACT's normalized cost against its sample size r, one line per error
  cost, one panel per dataset.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from benchmarks._figures import line_at_one

#: log-axis ticks a reader can name (Plotly's own log ticks label every digit)
_RATIO_TICKS = [0.5, 0.75, 1, 1.5, 2, 5, 10, 20, 50]
_COST_TICKS = [1, 2, 5, 10, 20, 50, 100]
#: one colour per error cost, the same in every panel
_MC_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]


def _cell(key: str, mc: float) -> str:
    return f"{key} mc {mc:g}"


def vs_peers_figure(
    table: Mapping[tuple[str, float], Mapping[str, float]],
    peers: Mapping[str, Mapping[int, float]],
    targets: Mapping[tuple[str, float], float],
    names: Sequence[str],
) -> dict:
    """Bars of ``cost / peer`` per cell for each learner of ``names``; the target as a
    marker; 1 (the peer) as a line.  Hover texts carry the normalized costs themselves."""
    cells = [cell for cell in table if cell[0] in peers and int(cell[1]) in peers[cell[0]]]
    labels = [_cell(key, mc) for key, mc in cells]
    data: list[dict] = []
    for name in names:
        ratios, texts = [], []
        for key, mc in cells:
            value = table[(key, mc)].get(name)
            peer = peers[key][int(mc)]
            ratios.append(None if value is None else round(value / peer, 4))
            texts.append(
                "" if value is None else f"{name}: {value:.2f}% against the peer's {peer:.1f}%"
            )
        data.append({"type": "bar", "name": name, "x": labels, "y": ratios, "hovertext": texts})
    data.append(
        {
            "type": "scatter",
            "mode": "markers",
            "name": "target (10% below the peer at mc 100 and 1000)",
            "x": labels,
            "y": [round(targets[cell] / peers[cell[0]][int(cell[1])], 4) for cell in cells],
            "marker": {"symbol": "line-ew-open", "size": 18, "line": {"width": 3}},
        }
    )
    return {
        "data": data,
        "layout": {
            "title": "Paper 000 (issue 12): normalized cost as a multiple of the best "
            "existing system's, 10-fold CV",
            "barmode": "group",
            "yaxis": {
                "title": {"text": "cost / best existing system (log)"},
                "type": "log",
                "tickvals": _RATIO_TICKS,
            },
            "xaxis": {"title": {"text": "dataset and uniform error cost"}},
            "shapes": [line_at_one(width=1)],
            "legend": {"orientation": "h", "y": -0.3},
        },
    }


def anytime_figure(
    curves: Mapping[tuple[str, float], Sequence[tuple[int, float, float, float]]],
) -> dict:
    """ACT's normalized cost at each r (``curves[(dataset, mc)]`` = ``(r, cost, p, fit s)``
    rows, as `act_report` measures them): one panel per dataset, one line per mc (the same
    colour and one legend entry per mc across panels), log y."""
    datasets = list(dict.fromkeys(key for key, _ in curves))
    costs = sorted({mc for _, mc in curves})
    width = 1.0 / max(len(datasets), 1)
    layout: dict = {
        "title": "Paper 000 (issue 12): ACT's normalized cost as its sample size r grows",
        "legend": {"orientation": "h", "y": -0.25},
        "annotations": [],
    }
    data = []
    for i, key in enumerate(datasets):
        suffix = "" if i == 0 else str(i + 1)
        layout[f"xaxis{suffix}"] = {
            "domain": [i * width + 0.04, (i + 1) * width - 0.04],
            "title": {"text": "r"},
            "type": "log",
            "tickvals": sorted({r for cell, rows in curves.items() for r, *_ in rows}),
            "anchor": f"y{suffix}",
        }
        layout[f"yaxis{suffix}"] = {
            "type": "log",
            "tickvals": _COST_TICKS,
            "anchor": f"x{suffix}",
            **({"title": {"text": "normalized cost %"}} if i == 0 else {}),
        }
        layout["annotations"].append(
            {
                "text": key,
                "showarrow": False,
                "xref": "paper",
                "yref": "paper",
                "x": (i + 0.5) * width,
                "y": 1.04,
            }
        )
        for (cell_key, mc), rows in curves.items():
            if cell_key != key:
                continue
            colour = _MC_COLOURS[costs.index(mc) % len(_MC_COLOURS)]
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": f"mc {mc:g}",
                    "legendgroup": f"mc {mc:g}",
                    "showlegend": i == 0,
                    "line": {"color": colour},
                    "marker": {"color": colour},
                    "x": [r for r, *_ in rows],
                    "y": [round(cost, 4) for _, cost, *_ in rows],
                    "hovertext": [
                        f"{_cell(key, mc)}, r={r}: {cost:.2f}% ({seconds:.2f} s a fit)"
                        + ("" if r == rows[0][0] else f", p={p:.2f} against r={rows[0][0]}")
                        for r, cost, p, seconds in rows
                    ],
                    "xaxis": f"x{suffix}",
                    "yaxis": f"y{suffix}",
                }
            )
    return {"data": data, "layout": layout}
