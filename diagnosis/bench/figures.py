"""What the experiment page shows, built from the selectors' numbers: table rows, the
significance next to each comparison, the "Deploy this" box and the Plotly figures.

Pure presentation: every number comes from ``selectors.experiments`` (computed by the
engine with scipy.stats); nothing here computes a statistic.  Figures are plain Plotly
dicts drawn by ``static/js/figures.js`` with the local plotly.js.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from diagnosis.shared.money import format_money

__all__ = ["COLOURS", "cross_dataset_rows", "results_context"]

# Okabe–Ito, colour-blind safe (as diagnosis/figures.py).
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
FONT = {"family": "system-ui, -apple-system, Segoe UI, Roboto, Arial, sans-serif", "size": 13}
GRID = "#e3e8ef"


def _colour(index: int | None) -> str:
    return COLOURS[(index or 0) % len(COLOURS)]


def _translucent(colour: str, alpha: float = 0.15) -> str:
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def _ok(value) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def _num(value, digits: int = 3) -> str:
    if not _ok(value):
        return "–"
    return f"{value:.{digits}f}"


def _p(value) -> str:
    if not _ok(value):
        return "–"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _stat(
    stat, digits: int = 3, *, percent: bool = False, money: bool = False, unit: str = ""
) -> str:
    """``mean ± sd``; ``percent`` scales a share to %, ``unit`` follows numbers already in it."""
    if stat is None or not _ok(stat.mean):
        return "–"
    scale = 100.0 if percent else 1.0
    unit = "%" if percent else unit
    if money:  # dollars as everywhere (cents; the spread is dollars too)
        spread = f" ±\u00a0{format_money(stat.std)}" if _ok(stat.std) else ""
        return f"{format_money(stat.mean)}{spread}"
    spread = f" ±\u00a0{stat.std * scale:.{digits}f}" if _ok(stat.std) else ""
    return f"{stat.mean * scale:.{digits}f}{unit}{spread}"


def _layout(x_title: str, y_title: str, *, log_x: bool = False, height: int = 360) -> dict:
    return {
        "font": FONT,
        "height": height,
        "margin": {"l": 60, "r": 10, "t": 10, "b": 50},
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "legend": {"orientation": "h", "y": -0.25, "x": 0},
        "xaxis": {
            "title": {"text": x_title},
            "type": "log" if log_x else "linear",
            "gridcolor": GRID,
            "automargin": True,
        },
        "yaxis": {"title": {"text": y_title}, "gridcolor": GRID, "automargin": True},
        "hovermode": "closest",
    }


def _sweep_is_log(xs: Sequence[float], asked: bool) -> bool:
    positive = [x for x in xs if _ok(x) and x > 0]
    if asked:
        return bool(positive)
    return len(positive) > 1 and max(positive) / min(positive) >= 50


def _line_figure(series, *, x_title: str, y_title: str, log_x: bool, percent=False) -> dict:
    """One line per series with its spread as error bars; a log axis ticks at the values."""
    data = []
    for s in series:
        if not s.x:
            continue
        scale = 100.0 if percent else 1.0
        trace = {
            "type": "scatter",
            "mode": "lines+markers",
            "name": s.name,
            "x": list(s.x),
            "y": [None if not _ok(v) else v * scale for v in s.y],
            "line": {"color": _colour(s.learner_index), "width": 2},
            "marker": {"size": 8},
            "hovertemplate": "%{fullData.name}<br>%{x:g}: %{y:.3f}<extra></extra>",
        }
        if s.error:
            trace["error_y"] = {
                "type": "data",
                "array": [0.0 if not _ok(e) else e * scale for e in s.error],
                "visible": True,
                "thickness": 1,
            }
        data.append(trace)
    layout = _layout(x_title, y_title, log_x=log_x)
    xs = sorted({x for s in series for x in s.x if _ok(x) and x > 0})
    if log_x and 0 < len(xs) <= 12:  # ticks at the swept values, not at 2, 3, ... 9
        layout["xaxis"]["tickvals"] = xs
        layout["xaxis"]["ticktext"] = [f"{x:,g}" for x in xs]
    return {"data": data, "layout": layout}


def _bar_figure(series, *, y_title: str, percent=False) -> dict:
    """One matrix: a bar per learner with its spread."""
    scale = 100.0 if percent else 1.0
    names = [s.name for s in series if s.y]
    means = [s.y[0] * scale if _ok(s.y[0]) else None for s in series if s.y]
    errors = [(s.error or [0.0])[0] * scale for s in series if s.y]
    layout = _layout("", y_title)
    layout["xaxis"]["type"] = "category"
    return {
        "data": [
            {
                "type": "bar",
                "x": names,
                "y": means,
                "marker": {"color": [_colour(s.learner_index) for s in series if s.y]},
                "error_y": {"type": "data", "array": errors, "visible": True},
                "hovertemplate": "%{x}: %{y:.3f}<extra></extra>",
            }
        ],
        "layout": layout,
    }


def _figures(detail, charts, matrix_index: int) -> list[dict]:
    out: list[dict] = []
    sweep = len(detail.matrices) > 1
    xs = [x for s in charts.normalized_cost for x in s.x]
    log_x = _sweep_is_log(xs, charts.log_x)
    x_title = charts.x_title + (" (log scale)" if log_x else "")
    if sweep:
        out.append(
            {
                "id": "fig-normalized-cost",
                "title": "Normalized cost against error cost",
                "caption": "Average total cost per patient (tests, errors, referrals) as a "
                "percentage of the standard cost (every test, then the error rate of "
                "guessing the commonest class); lower is better. Bars: one standard "
                "deviation over folds and repeats (paper 000, Figure 10).",
                "figure": _line_figure(
                    charts.normalized_cost,
                    x_title=x_title,
                    y_title="Normalized cost (%)",
                    log_x=log_x,
                ),
            }
        )
        out.append(
            {
                "id": "fig-accuracy",
                "title": "Accuracy against error cost",
                "caption": "Share of held-out patients classified correctly (referrals count "
                "as not correct).",
                "figure": _line_figure(
                    charts.accuracy,
                    x_title=x_title,
                    y_title="Accuracy (%)",
                    log_x=log_x,
                    percent=True,
                ),
            }
        )
    else:
        out.append(
            {
                "id": "fig-normalized-cost",
                "title": f"Normalized cost with {detail.matrices[0]['label']}",
                "caption": "Average total cost per patient as a percentage of the standard "
                "cost; lower is better. Whiskers: one standard deviation over folds and "
                "repeats.",
                "figure": _bar_figure(charts.normalized_cost, y_title="Normalized cost (%)"),
            }
        )
        out.append(
            {
                "id": "fig-accuracy",
                "title": f"Accuracy with {detail.matrices[0]['label']}",
                "caption": "Share of held-out patients classified correctly.",
                "figure": _bar_figure(charts.accuracy, y_title="Accuracy (%)", percent=True),
            }
        )
    if charts.anytime:
        out.append(
            {
                "id": "fig-anytime",
                "title": "Anytime: normalized cost against training time",
                "caption": "ACT-like learners trained with r = 1, 2, 4, ...: more training "
                f"time should buy cheaper trees ({detail.matrices[0]['label']}).",
                "figure": _line_figure(
                    charts.anytime,
                    x_title="Training time (s)",
                    y_title="Normalized cost (%)",
                    log_x=False,
                ),
            }
        )
    if charts.budget:
        out.append(
            {
                "id": "fig-budget",
                "title": "Budget curves",
                "caption": "Budgeted learners by their test budget: normalized cost per "
                "matrix, and what the average patient paid for tests.",
                "figure": _line_figure(
                    charts.budget,
                    x_title="Test budget per patient",
                    y_title="Cost",
                    log_x=False,
                ),
            }
        )
    if charts.roc:
        roc = _line_figure(
            charts.roc,
            x_title="False-positive rate",
            y_title="True-positive rate",
            log_x=False,
        )
        bands = []
        for trace, series in zip(roc["data"], [s for s in charts.roc if s.x], strict=True):
            trace["mode"] = "lines"
            spread = trace.pop("error_y", None)
            if spread is None:  # one curve of pooled points: drawn as steps
                trace["line"]["shape"] = "hv"
                continue
            # Averaged over folds: a band of one standard deviation around the mean curve.
            low = [
                None if y is None else max(0.0, y - e)
                for y, e in zip(trace["y"], spread["array"], strict=True)
            ]
            high = [
                None if y is None else min(1.0, y + e)
                for y, e in zip(trace["y"], spread["array"], strict=True)
            ]
            colour = _colour(series.learner_index)
            common = {
                "type": "scatter",
                "mode": "lines",
                "x": trace["x"],
                "hoverinfo": "skip",
                "showlegend": False,
                "line": {"width": 0, "color": colour},
            }
            bands += [
                {**common, "y": low},
                {**common, "y": high, "fill": "tonexty", "fillcolor": _translucent(colour)},
            ]
        roc["data"] = bands + roc["data"]
        roc["data"].append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": "chance",
                "x": [0, 1],
                "y": [0, 1],
                "line": {"color": "#9aa5b1", "dash": "dot", "width": 1},
                "hoverinfo": "skip",
            }
        )
        roc["layout"]["xaxis"]["range"] = [0, 1]
        roc["layout"]["yaxis"]["range"] = [0, 1.02]
        out.append(
            {
                "id": "fig-roc",
                "title": "ROC (two classes)",
                "caption": (
                    "Mean true-positive rate over the folds at each false-positive rate "
                    "(vertical averaging); band: one standard deviation"
                    if any(series.error for series in charts.roc)
                    else "The points of every fold's curve on the held-out patients, together"
                )
                + f"; with {detail.matrices[0]['label']}.",
                "figure": roc,
            }
        )
    bars = [
        b for b in charts.tests_paid if b.matrix_label == detail.matrices[matrix_index]["label"]
    ]
    if bars:
        names = bars[0].test_names
        data = [
            {
                "type": "bar",
                "orientation": "h",
                "name": b.learner_label,
                "y": names,
                "x": [100.0 * (f or 0.0) for f in b.frequency],
                "customdata": [p or 0.0 for p in b.paid],
                "marker": {"color": _colour(i)},
                "hovertemplate": "%{fullData.name}: %{y} ordered for %{x:.0f}% of patients, "
                "%{customdata:$,.2f} per patient<extra></extra>",
            }
            for i, b in enumerate(bars)
        ]
        layout = _layout(
            "% of held-out patients made to pay for it",
            "",
            height=120 + len(names) * (10 + 12 * len(bars)),
        )
        layout["barmode"] = "group"
        layout["yaxis"]["autorange"] = "reversed"
        layout["xaxis"]["range"] = [0, 105]
        layout["margin"]["l"] = 10
        out.append(
            {
                "id": "fig-tests-paid",
                "title": f"Which tests each model makes patients pay for "
                f"({detail.matrices[matrix_index]['label']})",
                "caption": "Share of held-out patients for whom the model ordered each test; "
                "hover for the average price paid per patient.",
                "figure": {"data": data, "layout": layout},
            }
        )
    return out


def _table(detail, rows, comparisons) -> list[dict]:
    """Per matrix: its rows (best first by normalized cost), each against the best."""
    by_pair = {}
    for c in comparisons:
        by_pair[(c.matrix_index, c.a_index, c.b_index)] = c
        by_pair[(c.matrix_index, c.b_index, c.a_index)] = c
    groups = []
    for m in detail.matrices:
        mine = [r for r in rows if r.matrix_index == m["index"]]
        ranked = sorted(
            mine,
            key=lambda r: (
                not _ok(r.normalized_cost.mean),
                r.normalized_cost.mean if _ok(r.normalized_cost.mean) else 0.0,
                r.learner_index,
            ),
        )
        best = ranked[0] if ranked and _ok(ranked[0].normalized_cost.mean) else None
        out_rows = []
        for r in ranked:
            versus = None
            if best is not None and r is not best:
                c = by_pair.get((m["index"], best.learner_index, r.learner_index))
                if c is not None:
                    stats = c.result
                    effect = stats.effect_size
                    versus = {
                        "p": _p(stats.p_value),
                        "significant": c.significant,
                        "effect": _num(abs(effect), 2) if _ok(effect) else "–",
                        "effect_name": stats.effect_size_name,
                        "note": stats.note,
                    }
            out_rows.append(
                {
                    "row": r,
                    "best": r is best,
                    "colour": _colour(r.learner_index),
                    "normalized_cost": _stat(r.normalized_cost, 2, unit="%"),
                    "accuracy": _stat(r.accuracy, 1, percent=True),
                    "test_cost": _stat(r.mean_test_cost, 2, money=True),
                    "total_cost": _stat(r.mean_total_cost, 2, money=True),
                    "reject_rate": _stat(r.reject_rate, 1, percent=True),
                    "fit_seconds": _stat(r.fit_seconds, 2),
                    "auc": _stat(r.auc) if r.auc is not None else "–",
                    "versus": versus,
                }
            )
        groups.append({"matrix": m, "rows": out_rows, "best": best})
    return groups


def _comparison_rows(detail, comparisons) -> list[dict]:
    out = []
    for c in comparisons:
        stats = c.result
        difference = stats.mean_difference
        cheaper = c.learner_a if _ok(difference) and difference < 0 else c.learner_b
        out.append(
            {
                "c": c,
                "matrix_label": c.matrix_label,
                "difference": _num(difference),
                "statistic": _num(stats.statistic, 2),
                "p": _p(stats.p_value),
                "effect": _num(stats.effect_size, 2),
                "interval": (
                    f"{_num(stats.ci_low)} to {_num(stats.ci_high)}"
                    if _ok(stats.ci_low) and _ok(stats.ci_high)
                    else "–"
                ),
                "cheaper": cheaper if _ok(difference) and difference != 0 else "",
            }
        )
    return out


def results_context(
    *, detail, rows, comparisons, charts, recommendations, matrix_index: int
) -> dict[str, Any]:
    """Everything the results part of ``experiment_detail.html`` needs."""
    chosen = next((r for r in recommendations if r.matrix_index == matrix_index), None)
    return {
        "show_referrals": any(m.get("reject_cost") is not None for m in detail.matrices),
        "table_groups": _table(detail, rows, comparisons),
        "comparison_rows": _comparison_rows(detail, comparisons),
        # what the stored results were tested with (experiments before the correction: plain)
        "significance_test": comparisons[0].result.test if comparisons else "paired t-test",
        "significance_corrected": bool(comparisons)
        and comparisons[0].result.test.startswith("corrected"),
        "figures": _figures(detail, charts, matrix_index),
        "recommendation": chosen,
        "recommendation_interval": (
            f"{chosen.confidence:.0%} confidence interval {format_money(chosen.ci_low)} to "
            f"{format_money(chosen.ci_high)}"
            if chosen is not None and _ok(chosen.ci_low) and _ok(chosen.ci_high)
            else ""
        ),
        "recommendation_p": _p(chosen.p_value) if chosen is not None else "–",
        "recommendation_nothing_p": _p(chosen.nothing_p) if chosen is not None else "–",
    }


def cross_dataset_rows(comparisons) -> list[dict]:
    """Rows of the across-datasets table (Wilcoxon signed-rank, one mean per experiment)."""
    out = []
    for c in comparisons:
        stats = c.result
        lower = ""
        if _ok(stats.mean_difference) and stats.mean_difference != 0:
            lower = c.learner_a if stats.mean_difference < 0 else c.learner_b
        out.append(
            {
                "c": c,
                "mean_a": _num(stats.mean_a, 2),
                "mean_b": _num(stats.mean_b, 2),
                "statistic": _num(stats.statistic, 1),
                "p": _p(stats.p_value),
                "effect": _num(stats.effect_size, 2),
                "lower": lower,
            }
        )
    return out
