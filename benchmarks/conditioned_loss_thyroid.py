"""Reproduce paper 003 (Cebe & Gunduz-Demir, ECML 2007) on ann-thyroid.

Train on ann-train (3772 cases), test on ann-test (3428).  The 16 history
answers are free, TSH / T3 / TT4 / T4U cost 22.78 / 11.41 / 14.51 / 11.41
(Turney), FTI is derived from TT4 and T4U.  REWARD 100, PENALTY 10000.

Fits the model once per random state (``--seeds``, default 0-4: the seed
moves the validation folds that choose the Parzen window width, and the
trees' tie-breaking) and prints, per seed, the test errors, the all-features
tree's errors, the referrals and the cost reduction, with their mean.  For
the first seed it prints the conditioned-loss confusion matrix with reject
counts (paper's Table 2), the all-features tree's confusion matrix (Table 3:
the same tree learner on all 21 features, i.e. the model's full-state tree),
the test cost of both and the reduction, with Turney's prices both at full
price (the paper) and with the group-A discount.  Then the sweeps of Figure 1
(PENALTY with REWARD = 100, REWARD with PENALTY = 10000, full prices), saved
as Plotly figure JSON for the research page (``--figures-dir``, the committed
fixtures/research_figures by default) and their numbers under ``--out``.

    python -m benchmarks.conditioned_loss_thyroid                 # full run (~35 min)
    python -m benchmarks.conditioned_loss_thyroid --no-sweep      # seeds and Tables 2, 3 (~7 min)
    python -m benchmarks.conditioned_loss_thyroid --figures-dir /tmp/cl   # figures elsewhere
    python -m benchmarks.conditioned_loss_thyroid --no-sweep --validation-folds none \
        --seeds 0                                                  # the single 25% hold-out
    python -m benchmarks.conditioned_loss_thyroid --no-sweep --leaf-smoothing 10 \
        --parzen-targets out_of_fold                               # a calibration variant

Every sweep point refits the model, because the window width is chosen on
validation data for that point's REWARD and PENALTY (nothing is tuned on the
test set).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks._figures import add_figures_argument, write_figure
from learners.conditioned_loss import DEFAULT_WINDOW_WIDTHS, ConditionedLossClassifier
from learners.conditioned_loss._trees import tree_proba
from learners.costs import CostModel
from learners.evaluation import evaluate

REPO = Path(__file__).resolve().parents[1]
CLASS_NAMES = ("hypothyroid", "hyperthyroid", "normal")  # ann-thyroid codes 1, 2, 3
FREE = tuple(range(16))
PRICES = {16: (22.78, 20.68), 17: (11.41, 9.31), 18: (14.51, 12.41), 19: (11.41, 9.31)}
FTI, FTI_INPUTS = 20, (18, 19)
PENALTIES = (500, 1000, 2000, 5000, 10000, 20000, 50000, 100000)
REWARDS = (10, 50, 100, 200, 500, 1000, 2000, 5000)


def thyroid_dir() -> Path:
    """``$SHARED_DIR/data/uci/thyroid-disease``, default ``<repo>/../shared``."""
    shared = Path(os.environ.get("SHARED_DIR", REPO / ".." / "shared"))
    return (shared / "data" / "uci" / "thyroid-disease").resolve()


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """ann-train / ann-test: 21 whitespace-separated features, then class 1/2/3."""
    rows = np.loadtxt(thyroid_dir() / f"ann-{name}.data")
    if rows.ndim != 2 or rows.shape[1] != 22:
        raise ValueError(f"ann-{name}.data: expected 22 columns, got shape {rows.shape}")
    return rows[:, :21], rows[:, 21].astype(int)


def cost_model(discount: bool) -> CostModel:
    """Turney's thyroid prices; history answers free (paper 003); FTI derived."""
    costs = [0.0] * 21
    discounted = [0.0] * 21
    groups: list[str | None] = [None] * 21
    for test, (full, reduced) in PRICES.items():
        costs[test] = full
        discounted[test] = reduced if discount else full
        groups[test] = "A"
    return CostModel(
        costs, discounted=discounted, groups=groups, derived={FTI: FTI_INPUTS}, free=FREE
    )


def run(model, X, y, prices: CostModel, all_tests_cost: float) -> dict:
    """Evaluate the policy (learners.evaluation) and summarize it against the all-tests cost."""
    report = evaluate(model, X, y, test_costs=prices)
    confusion = report.confusion.astype(int)
    errors = int(confusion[:, :-1].sum() - np.trace(confusion[:, :-1]))
    per_class = confusion.diagonal()[: len(CLASS_NAMES)] / confusion.sum(axis=1)
    return {
        "confusion": confusion,
        "mean_test_cost": float(report.mean_test_cost),
        "reduction": 100.0 * (1.0 - report.mean_test_cost / all_tests_cost),
        "errors": errors,
        "rejects": int(confusion[:, -1].sum()),
        "per_class_accuracy": per_class.tolist(),
        "test_frequency": report.test_frequency,
        "referred": np.array([case.decision.kind == "reject" for case in report.cases]),
    }


def tree_path_cost(tree, X, prices: CostModel) -> float:
    """Mean price of the tests each case meets on its way down ``tree`` (FTI costs its inputs)."""
    total = 0.0
    for row in X:
        visited = tree.reach(dict(enumerate(row.tolist()))).visited  # the tree's own walk
        tests = [int(tree.feature[node]) for node in visited if not tree.is_leaf(node)]
        total += prices.path_cost(dict.fromkeys(tests))
    return total / X.shape[0]


def print_confusion(title: str, confusion: np.ndarray, with_reject: bool) -> None:
    print(title)
    head = "".join(f"{c[:12]:>14}" for c in CLASS_NAMES) + ("       reject" if with_reject else "")
    print(f"{'actual / selected':>18}{head}")
    for name, row in zip(CLASS_NAMES, confusion, strict=True):
        cells = "".join(f"{int(v):>14}" for v in row[: len(CLASS_NAMES)])
        extra = f"{int(row[-1]):>13}" if with_reject else ""
        print(f"{name:>18}{cells}{extra}")


def fit(X, y, prices: CostModel, seed: int, **params) -> ConditionedLossClassifier:
    return ConditionedLossClassifier(test_costs=prices, random_state=seed, **params).fit(X, y)


def all_features_tree(model, X, y) -> dict:
    """Table 3: the model's full-state tree (the same learner on all 21 features)."""
    tree = model.trees_[-1]
    predicted = model.classes_[np.argmax(tree_proba(tree, X, model.leaf_smoothing), axis=1)]
    confusion = np.array(
        [[np.sum((y == a) & (predicted == b)) for b in model.classes_] for a in model.classes_]
    )
    return {
        "tree": tree,
        "predicted": predicted,
        "confusion": confusion,
        "errors": int(confusion.sum() - np.trace(confusion)),
        "tested": sorted(set(tree.feature[tree.feature >= 0].tolist())),
    }


def parse_folds(text: str):
    return None if text.lower() == "none" else int(text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO / "benchmarks" / "out",
        help="folder for the sweeps' numbers (JSON)",
    )
    add_figures_argument(parser)
    parser.add_argument(
        "--seeds",
        default="0,1,2,3,4",
        help="random_state of each repeat (comma-separated); the first one gives the tables "
        "and the sweeps",
    )
    parser.add_argument("--no-sweep", action="store_true", help="skip Figure 1's sweeps")
    parser.add_argument(
        "--leaf-smoothing", type=float, default=None, help="model leaf_smoothing (default: its own)"
    )
    parser.add_argument(
        "--min-samples-leaf",
        type=int,
        default=None,
        help="model min_samples_leaf (default: its own)",
    )
    parser.add_argument(
        "--parzen-targets",
        choices=("resubstitution", "out_of_fold"),
        default=None,
        help="model parzen_targets (default: its own)",
    )
    parser.add_argument(
        "--validation-folds",
        default=None,
        help="model validation_folds, or 'none' for one 25%% hold-out (default: its own)",
    )
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    variant = {
        name: value
        for name, value in (
            ("leaf_smoothing", args.leaf_smoothing),
            ("parzen_targets", args.parzen_targets),
            ("min_samples_leaf", args.min_samples_leaf),
        )
        if value is not None
    }
    if args.validation_folds is not None:
        variant["validation_folds"] = parse_folds(args.validation_folds)

    X_train, y_train = load("train")
    X_test, y_test = load("test")
    print(
        f"ann-thyroid: train {X_train.shape[0]}, test {X_test.shape[0]}, "
        f"{X_train.shape[1]} features" + (f"; model options {variant}" if variant else "")
    )

    full, turney = cost_model(discount=False), cost_model(discount=True)
    all_tests = full.path_cost(sorted(PRICES))
    print(
        f"\nper random_state (full prices; all four tests cost {all_tests:.2f}/case; "
        "targets: reduction >= 40% and no more misclassifications than the all-features tree):"
    )
    print(
        f"{'seed':>5}{'fit s':>7}{'width':>7}{'errors':>8}{'tree errors':>13}{'rejects':>9}"
        f"{'reduction %':>13}  targets"
    )
    repeats = []
    for seed in seeds:
        started = time.time()
        policy = fit(X_train, y_train, full, seed, **variant)
        seconds = time.time() - started
        result = run(policy, X_test, y_test, full, all_tests)
        tree = all_features_tree(policy, X_test, y_test)
        met = result["reduction"] >= 40.0 and result["errors"] <= tree["errors"]
        repeats.append({"seed": seed, "model": policy, "result": result, "tree": tree, "met": met})
        print(
            f"{seed:>5}{seconds:>7.1f}{policy.window_width_[0]:>7g}{result['errors']:>8}"
            f"{tree['errors']:>13}{result['rejects']:>9}{result['reduction']:>13.2f}  "
            f"{'met' if met else 'NOT met'}",
            flush=True,
        )
    mean = {
        key: float(np.mean([r["result"][key] for r in repeats]))
        for key in ("errors", "rejects", "reduction")
    }
    mean_tree = float(np.mean([r["tree"]["errors"] for r in repeats]))
    print(
        f"{'mean':>5}{'':>14}{mean['errors']:>8.1f}{mean_tree:>13.1f}{mean['rejects']:>9.1f}"
        f"{mean['reduction']:>13.2f}  "
        f"{'met' if mean['reduction'] >= 40.0 and mean['errors'] <= mean_tree else 'NOT met'}"
    )
    n_met = sum(r["met"] for r in repeats)
    print(f"targets met in {n_met} of {len(repeats)} random states")

    first = repeats[0]
    model, paper, tree = first["model"], first["result"], first["tree"]
    print(
        f"\nrandom_state {first['seed']}: {len(model.trees_)} state trees; window half-widths "
        f"per state {np.round(model.window_width_, 4).tolist()}"
    )
    print(
        "validation loss per candidate width: "
        + ", ".join(
            f"{w:g}: {v:.1f}"
            for w, v in zip(
                np.sort(
                    DEFAULT_WINDOW_WIDTHS if model.window_widths is None else model.window_widths
                ),
                model.window_validation_[0],
                strict=True,
            )
        )
        if model.width_selection == "loss"
        else ""
    )
    print()
    print_confusion(
        "Table 2 — conditioned loss, REWARD 100, PENALTY 10000 (full prices):",
        paper["confusion"],
        with_reject=True,
    )
    print()
    print_confusion(
        "Table 3 — all-features tree (same learner, 21 features):", tree["confusion"], False
    )
    print(f"  all-features tree tests {tree['tested']}; errors {tree['errors']}")
    for label, prices in (("full price", full), ("Turney discount", turney)):
        print(
            f"  all-features tree charging only the tests on each case's path ({label}): "
            f"{tree_path_cost(tree['tree'], X_test, prices):.2f}/case"
        )
    print()
    discounted = fit(X_train, y_train, turney, first["seed"], **variant)
    turney_all_tests = turney.path_cost(sorted(PRICES))
    results = {
        "full price (paper)": {**paper, "all_tests": all_tests},
        "Turney group discount": {
            **run(discounted, X_test, y_test, turney, turney_all_tests),
            "all_tests": turney_all_tests,
        },
    }
    for label, r in results.items():
        print(
            f"{label:>22}: all-features test cost {r['all_tests']:.2f}/case, "
            f"conditioned loss {r['mean_test_cost']:.2f}/case -> reduction {r['reduction']:.2f}% "
            f"(paper 47.61%, target >= 40%)"
        )
        print(
            f"{'':>22}  misclassified {r['errors']} (all-features tree {tree['errors']}), "
            f"rejected {r['rejects']}, test frequency TSH/T3/TT4/T4U "
            f"{np.round(r['test_frequency'][16:20], 3).tolist()}"
        )
        print(
            f"{'':>22}  referrals the all-features tree classifies right: "
            f"{int(np.sum(r['referred'] & (tree['predicted'] == y_test)))} of {r['rejects']} "
            "(the paper's loss charges PENALTY for each)"
        )
    started = time.time()
    text = model.to_json()
    reloaded = ConditionedLossClassifier.from_json(text)
    same = all(
        a == b and a.evidence == b.evidence
        for a, b in zip(
            model.decide_all(X_test[:200]), reloaded.decide_all(X_test[:200]), strict=True
        )
    )
    print(
        f"model JSON {len(text) / 1e6:.2f} MB; reloaded in {time.time() - started:.1f}s; "
        f"identical actions on the first 200 test cases: {same}"
    )
    print(
        f"targets (full prices, random_state {first['seed']}): reduction >= 40%: "
        f"{'met' if paper['reduction'] >= 40.0 else 'NOT met'}; "
        f"misclassifications <= all-features tree: "
        f"{'met' if paper['errors'] <= tree['errors'] else 'NOT met'}"
    )

    if args.no_sweep:
        return 0
    sweeps: dict[str, list[dict]] = {"penalty": [], "reward": []}
    print(f"\nFigure 1 sweeps (full prices, random_state {first['seed']}):")
    print(
        f"{'REWARD':>8}{'PENALTY':>9}{'reduction %':>13}{'errors':>8}{'rejects':>9}   "
        "accuracy hypo/hyper/normal"
    )
    for kind, grid in (("penalty", PENALTIES), ("reward", REWARDS)):
        for value in grid:
            reward, penalty = (
                (100.0, float(value)) if kind == "penalty" else (float(value), 10000.0)
            )
            policy = fit(
                X_train, y_train, full, first["seed"], reward=reward, penalty=penalty, **variant
            )
            r = run(policy, X_test, y_test, full, all_tests)
            sweeps[kind].append(
                {
                    "reward": reward,
                    "penalty": penalty,
                    **{k: r[k] for k in ("reduction", "errors", "rejects", "per_class_accuracy")},
                }
            )
            print(
                f"{reward:>8g}{penalty:>9g}{r['reduction']:>13.2f}"
                f"{r['errors']:>8}{r['rejects']:>9}   "
                + "/".join(f"{a:.3f}" for a in r["per_class_accuracy"]),
                flush=True,
            )
    written = save_figures(sweeps, args.figures_dir, args.out)
    print("\nwrote " + ", ".join(str(p) for p in written))
    return 0


def save_figures(sweeps: dict, figures: Path, out: Path) -> list[Path]:
    """Figure 1 (a)-(d) as two Plotly figures in ``figures`` (the research page's folder,
    see :func:`sweep_figure`), the sweeps' numbers in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for kind in ("penalty", "reward"):
        path = figures / f"paper003_conditioned_loss_{kind}.json"
        note = "Trained on ann-train, tested on ann-test; every point refits the model."
        write_figure(path, sweep_figure(kind, sweeps[kind]), note)
        written.append(path)
    summary = out / "conditioned_loss_thyroid_sweeps.json"
    summary.write_text(json.dumps(sweeps, indent=1))
    written.append(summary)
    return written


_SWEEP_AXES = {"penalty": "PENALTY (REWARD = 100)", "reward": "REWARD (PENALTY = 10000)"}


def _short(value: float) -> str:
    return f"{value / 1000:g}k" if value >= 1000 else f"{value:g}"


def sweep_figure(kind: str, points: list[dict]) -> dict:
    """One sweep (``kind`` "penalty" or "reward") as plain Plotly JSON: the accuracy per
    class beside the cost reduction (left axis) and the errors and rejects (right axis, in
    cases), each point ticked on a log x axis, the legend below the panels."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    x = [p[kind] for p in points]
    figure = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("test-set accuracy per class", "test-cost reduction, errors and rejects"),
        specs=[[{}, {"secondary_y": True}]],
        horizontal_spacing=0.14,
    )
    for c, name in enumerate(CLASS_NAMES):
        accuracy = [p["per_class_accuracy"][c] for p in points]
        figure.add_trace(go.Scatter(x=x, y=accuracy, mode="lines+markers", name=name), row=1, col=1)
    reduction = [p["reduction"] for p in points]
    figure.add_trace(
        go.Scatter(x=x, y=reduction, mode="lines+markers", name="cost reduction %"),
        row=1,
        col=2,
    )
    for key in ("errors", "rejects"):
        figure.add_trace(
            go.Scatter(
                x=x,
                y=[p[key] for p in points],
                mode="lines+markers",
                name=f"{key} (cases)",
                line={"dash": "dot"},
            ),
            row=1,
            col=2,
            secondary_y=True,
        )
    figure.update_xaxes(
        type="log", title_text=_SWEEP_AXES[kind], tickvals=x, ticktext=[_short(v) for v in x]
    )
    figure.update_yaxes(title_text="accuracy", range=[0, 1.02], row=1, col=1)
    figure.update_yaxes(title_text="reduction %", row=1, col=2, secondary_y=False)
    most = max(max(p["errors"], p["rejects"]) for p in points)
    figure.update_yaxes(
        title_text="cases",
        range=[0, 1.1 * most],
        tickmode="auto",
        tickformat="d",
        showgrid=False,
        row=1,
        col=2,
        secondary_y=True,
    )
    figure.update_layout(
        title=f"Conditioned loss on ann-thyroid: sweep of {kind.upper()}",
        legend={"orientation": "h", "y": -0.3},
    )
    plain = json.loads(figure.to_json())
    # plotly.js's own look, as the other paper figures (plotly.py's template is a grey theme)
    plain["layout"].pop("template", None)
    return plain


if __name__ == "__main__":
    sys.exit(main())
