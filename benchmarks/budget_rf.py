"""BudgetRF (paper 002) against scikit-learn's RandomForest limited by its number of trees.

    python -m benchmarks.budget_rf                       # 3 folds, thyroid (ann-train) and Pima
    python -m benchmarks.budget_rf --folds 5 --budgets 1,2,3,4,6
    python -m benchmarks.budget_rf --parts table1,speed  # table1, budget, speed

Parts (every figure is measured in this run; the machine may be shared, so
timings carry that noise):

``table1``  Paper 002's Table 1 shape with unit test costs (as the paper):
            the percentage of the features used per test case by the first
            1..10 trees, and the test error with k trees, for BudgetRF
            (threshold-Pairs alpha 0, no budget, 10 trees) and scikit-learn's
            RandomForestClassifier (defaults, 10 trees) on the same stratified
            folds.  BudgetRF's features are what its policy buys
            (``acquisition``, the compiled copy of ``next_action``'s order,
            equal to what ``evaluate`` charges); RF's are the union of the
            features on the decision paths of its first k trees.
``budget``  Accuracy against budget (unit costs): for each budget B,
            BudgetRF(budget=B, alpha from the paper's grid, at most 40
            trees) and the peer, RF truncated to the largest k whose average
            number of features on the training fold is <= B (no point when
            even one tree is over B); test error and test features per case.
``speed``   On ann-thyroid train (3772 x 21, Turney's prices): fit time of
            BudgetRF with 40 trees (no budget, alpha 0, with Turney's and
            with unit prices; a budget so large
            that all 40 trees stay, which prices the forest after every
            tree; alpha searched over the grid) as a multiple of
            RandomForestClassifier(40, n_jobs=1) in the same run (median of
            --repeats; wall clock and process CPU time, which a shared
            machine disturbs less), next_action latency (median and p99,
            wall and thread CPU time, over every step of --latency-cases
            ann-test cases) for the 40-tree forest, tracemalloc peak of one
            fit, and the JSON size.  The alpha search (with and without a
            budget) grows 10 forests of 40 trees and keeps one: its ratios
            are given against RF(40), as many trees as the model it returns,
            and against RF(400), as many trees as it grows.

Figures are written as Plotly JSON to ``--figures-dir`` (default: the folder
``settings.RESEARCH_FIGURES_DIR`` names, where the research page reads them).
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc
from pathlib import Path

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from benchmarks._figures import add_figures_argument, write_figure
from datasets import load_known
from learners import CostModel, Extract
from learners.evaluation import make_folds
from learners.forest import BudgetRFClassifier

DATASETS = {"thyroid": "thyroid-train", "pima": "pima"}


def _load(key: str):
    data = load_known(DATASETS[key])
    return np.asarray(data.X, dtype=float), np.asarray(data.y), data


def _rf_features_used(forest, X: np.ndarray, k: int) -> np.ndarray:
    """Number of distinct features on the decision paths of the first k trees, per row."""
    return _rf_features_by_trees(forest, X, k)[k - 1]


def _rf_features_by_trees(forest, X: np.ndarray, k_max: int) -> list[np.ndarray]:
    """For k = 1..k_max: distinct features on the first k trees' decision paths, per row."""
    used = np.zeros((X.shape[0], X.shape[1]), dtype=bool)
    counts = []
    for tree in forest.estimators_[:k_max]:
        path = tree.decision_path(X.astype(np.float32)).tocsr()
        feature = tree.tree_.feature
        rows = np.repeat(np.arange(X.shape[0]), np.diff(path.indptr))
        nodes = path.indices
        inner = feature[nodes] >= 0
        used[rows[inner], feature[nodes[inner]]] = True
        counts.append(used.sum(axis=1))
    return counts


def _rf_error(forest, X, y, k: int) -> float:
    proba = np.mean([tree.predict_proba(X) for tree in forest.estimators_[:k]], axis=0)
    return float(np.mean(forest.classes_[np.argmax(proba, axis=1)] != y))


def table1(keys, n_folds: int, seed: int, out: Path) -> None:
    print("\n== Table 1 shape: % of features used per test case (unit costs), k = 1..10 trees")
    traces = []
    for key in keys:
        X, y, _ = _load(key)
        m = X.shape[1]
        costs = CostModel.uniform(m)
        brf_used = np.zeros((n_folds, 10))
        rf_used = np.zeros((n_folds, 10))
        brf_err = np.zeros((n_folds, 10))
        rf_err = np.zeros((n_folds, 10))
        for i, (train, test) in enumerate(make_folds(y, n_splits=n_folds, random_state=seed)):
            brf = BudgetRFClassifier(test_costs=costs, alpha=0.0, max_trees=10, random_state=seed)
            brf.fit(X[train], y[train])
            rf = RandomForestClassifier(n_estimators=10, random_state=seed, n_jobs=1)
            rf.fit(X[train], y[train])
            n_trees = len(brf.trees_)
            rf_counts = _rf_features_by_trees(rf, X[test], 10)
            for k in range(1, 11):
                kk = min(k, n_trees)
                _, n_done = brf.acquisition(X[test], n_trees=kk)
                brf_used[i, k - 1] = 100.0 * n_done.mean() / m
                truncated = _truncated_predict(brf, X[test], kk)
                brf_err[i, k - 1] = float(np.mean(truncated != y[test]))
                rf_used[i, k - 1] = 100.0 * rf_counts[k - 1].mean() / m
                rf_err[i, k - 1] = _rf_error(rf, X[test], y[test], k)
        header = "trees       " + " ".join(f"{k:>6d}" for k in range(1, 11))
        print(f"\n{key} ({X.shape[0]} x {m}, {n_folds} folds)\n{header}")
        for name, values in (
            ("RF %feat", rf_used),
            ("BudgetRF %", brf_used),
            ("RF error", rf_err),
            ("BRF error", brf_err),
        ):
            mean = values.mean(axis=0)
            fmt = "{:6.2f}" if "%" in name else "{:6.3f}"
            print(f"{name:<12s}" + " ".join(fmt.format(v) for v in mean))
        for name, values in (("RF", rf_used), ("BudgetRF", brf_used)):
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": f"{key}: {name}",
                    "x": list(range(1, 11)),
                    "y": [round(float(v), 3) for v in values.mean(axis=0)],
                }
            )
    _write(
        out / "paper002_budget_rf_table1.json",
        traces,
        "BudgetRF vs random forest: % of features used per case (unit costs)",
        "trees",
        "% of features used per test case",
        f"{n_folds}-fold stratified CV (seed {seed}), unit test costs; BudgetRF alpha 0 with no"
        " budget (10 trees) against scikit-learn's RandomForestClassifier(10) on the same folds",
    )


def _truncated_predict(model: BudgetRFClassifier, X: np.ndarray, k: int) -> np.ndarray:
    """The forest's decision with only its first k trees (same rule as predict)."""
    full = model.trees_
    try:
        model.trees_ = full[:k]
        return model.predict(X)
    finally:
        model.trees_ = full


def budget_curve(keys, budgets, n_folds: int, seed: int, out: Path) -> None:
    print("\n== Accuracy against budget (unit costs): test error / test features per case")
    traces = []
    for key in keys:
        X, y, _ = _load(key)
        m = X.shape[1]
        costs = CostModel.uniform(m)
        folds = make_folds(y, n_splits=n_folds, random_state=seed)
        rows = []
        for budget in budgets:
            brf_err, brf_cost, rf_err, rf_cost, rf_k, brf_trees = [], [], [], [], [], []
            for train, test in folds:
                brf = BudgetRFClassifier(
                    test_costs=costs, budget=budget, max_trees=40, random_state=seed
                ).fit(X[train], y[train])
                cost, _ = brf.acquisition(X[test])
                brf_err.append(float(np.mean(brf.predict(X[test]) != y[test])))
                brf_cost.append(float(cost.mean()))
                brf_trees.append(len(brf.trees_))
                rf = RandomForestClassifier(n_estimators=40, random_state=seed, n_jobs=1)
                rf.fit(X[train], y[train])
                k = 0
                for j, used in enumerate(_rf_features_by_trees(rf, X[train], 40), start=1):
                    if used.mean() <= budget:
                        k = j
                    else:
                        break
                rf_k.append(k)
                if k:
                    rf_err.append(_rf_error(rf, X[test], y[test], k))
                    rf_cost.append(float(_rf_features_used(rf, X[test], k).mean()))
            feasible = len(rf_err) == len(folds)
            rows.append(
                (
                    budget,
                    np.mean(brf_err),
                    np.mean(brf_cost),
                    np.mean(brf_trees),
                    np.mean(rf_err) if feasible else np.nan,
                    np.mean(rf_cost) if feasible else np.nan,
                    np.mean(rf_k),
                )
            )
        print(f"\n{key} ({X.shape[0]} x {m}, {n_folds} folds)")
        print("budget  BRF err  BRF feat  BRF trees   RF err  RF feat  RF k")
        for b, be, bc, bt, re, rc, rk in rows:
            print(f"{b:6g}  {be:7.3f}  {bc:8.2f}  {bt:9.1f}  {re:7.3f}  {rc:7.2f}  {rk:4.1f}")
        for name, err, cost in (("BudgetRF", 1, 2), ("RF truncated", 4, 5)):
            points = [(r[cost], r[err]) for r in rows if r[err] == r[err]]
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": f"{key}: {name}",
                    "x": [round(float(c), 3) for c, _ in points],
                    "y": [round(1.0 - float(e), 4) for _, e in points],
                    "text": [f"budget {r[0]:g}" for r in rows if r[err] == r[err]],
                }
            )
    _write(
        out / "paper002_budget_rf_accuracy_budget.json",
        traces,
        "BudgetRF vs random forest truncated to k trees: accuracy against test cost",
        "average features bought per test case (unit costs)",
        "test accuracy",
        f"{n_folds}-fold stratified CV (seed {seed}); budgets "
        f"{', '.join(f'{b:g}' for b in budgets)};"
        " BudgetRF alpha from the paper's grid, at most 40 trees; RF(40) truncated to the largest k"
        " whose features per case on the training fold stay within the budget",
    )


def speed(repeats: int, latency_cases: int, seed: int) -> None:
    print("\n== Speed and memory on ann-thyroid train (3772 x 21, Turney's prices)")
    train = load_known("thyroid-train")
    test = load_known("thyroid-test")
    X, y = np.asarray(train.X, float), np.asarray(train.y)
    Xt = np.asarray(test.X, float)

    def brf(alpha, budget=None):
        return BudgetRFClassifier(
            test_costs=train.costs, alpha=alpha, max_trees=40, random_state=seed, budget=budget
        )

    brf(0.0).fit(X, y)  # numba: compile or load the cache once
    runs = (
        ("RandomForest(40), n_jobs=1", lambda: RandomForestClassifier(40, random_state=seed)),
        ("BudgetRF 40 trees, alpha 0", lambda: brf(0.0)),
        (
            "BudgetRF 40 trees, alpha 0, unit prices",
            lambda: BudgetRFClassifier(alpha=0.0, max_trees=40, random_state=seed),
        ),
        ("BudgetRF alpha 0, budget 1e9 (priced per tree)", lambda: brf(0.0, 1e9)),
        ("BudgetRF 40 trees x 10 alphas", lambda: brf("auto")),
        ("BudgetRF 40 trees x 10 alphas, budget 1e9", lambda: brf("auto", 1e9)),
        # The alpha search grows 10 forests of 40 and keeps one: the peer growing as many trees.
        ("RandomForest(400), n_jobs=1", lambda: RandomForestClassifier(400, random_state=seed)),
    )
    wall: dict[str, list[float]] = {name: [] for name, _ in runs}
    cpu: dict[str, list[float]] = {name: [] for name, _ in runs}
    for _ in range(repeats):
        for name, factory in runs:
            start, start_cpu = time.perf_counter(), time.process_time()
            factory().fit(X, y)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    rf_name = runs[0][0]
    rf_wall, rf_cpu = statistics.median(wall[rf_name]), statistics.median(cpu[rf_name])
    for name, _ in runs:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(
            f"fit {name:<48s} wall {w:7.3f} s (x RF {w / rf_wall:6.2f})  "
            f"cpu {c:7.3f} s (x RF {c / rf_cpu:6.2f})  median of {repeats}"
        )
    big_wall = statistics.median(wall["RandomForest(400), n_jobs=1"])
    big_cpu = statistics.median(cpu["RandomForest(400), n_jobs=1"])
    print("as many trees grown (the alpha search grows 400 trees and keeps 40):")
    for name in ("BudgetRF 40 trees x 10 alphas", "BudgetRF 40 trees x 10 alphas, budget 1e9"):
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(
            f"fit {name:<48s} wall x RF(400) {w / big_wall:6.2f}  cpu x RF(400) {c / big_cpu:6.2f}"
        )
    unit = BudgetRFClassifier(alpha=0.0, max_trees=40, random_state=seed).fit(X, y)
    model = brf(0.0).fit(X, y)
    print(
        f"nodes per tree: Turney's prices {np.mean([t.n_nodes for t in model.trees_]):.0f}"
        " (16 questionnaire tests at 1 against 11-23 for the lab tests: R(t) = c(t) / reduction"
        " ranks the cheap tests' weak splits first, so trees grow long chains of them), unit"
        f" prices {np.mean([t.n_nodes for t in unit.trees_]):.0f}"
    )
    tracemalloc.start()
    kept_model = brf(0.0).fit(X, y)
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    tracemalloc.start()
    kept_rf = RandomForestClassifier(n_estimators=40, random_state=seed, n_jobs=1).fit(X, y)
    rf_held, rf_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept_model, kept_rf
    text = model.to_json()
    print(
        f"trees {len(model.trees_)}, nodes {sum(t.n_nodes for t in model.trees_)}; "
        f"fit peak (tracemalloc) {peak / 2**20:.1f} MiB (RF {rf_peak / 2**20:.1f} MiB); "
        f"fitted model held {held / 2**20:.1f} MiB (RF {rf_held / 2**20:.1f} MiB); "
        f"JSON {len(text) / 2**10:.0f} KiB"
    )
    latencies, cpu_latencies = [], []
    rows = Xt[:latency_cases]
    for row in rows:
        known: dict[int, float] = {}
        for _ in range(X.shape[1] + 1):
            start, start_cpu = time.perf_counter(), time.thread_time()
            action = model.next_action(known)
            cpu_latencies.append(time.thread_time() - start_cpu)
            latencies.append(time.perf_counter() - start)
            if not isinstance(action, Extract):
                break
            for t in [action.test, *sorted(model.cost_model_.done_closure([action.test]))]:
                known[t] = float(row[t])
    for label, values in (("wall", latencies), ("thread cpu", cpu_latencies)):
        ms = np.array(values) * 1000.0
        print(
            f"next_action (40 trees), {label}, over {ms.size} steps of {rows.shape[0]} "
            f"ann-test cases: median {np.median(ms):.2f} ms, p99 {np.percentile(ms, 99):.2f} ms, "
            f"max {ms.max():.2f} ms"
        )


def _write(path: Path, traces, title: str, x_title: str, y_title: str, note: str = "") -> None:
    figure = {
        "data": traces,
        "layout": {
            "title": {"text": title},
            "xaxis": {"title": {"text": x_title}},
            "yaxis": {"title": {"text": y_title}},
        },
    }
    write_figure(path, figure, note)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="table1,budget,speed")
    parser.add_argument("--datasets", default="thyroid,pima")
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--budgets", default="1,2,3,4,6")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency-cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    add_figures_argument(parser)
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    keys = [k for k in args.datasets.split(",") if k]
    out = Path(args.figures_dir)
    if "table1" in parts:
        table1(keys, args.folds, args.seed, out)
    if "budget" in parts:
        budgets = [float(b) for b in args.budgets.split(",")]
        budget_curve(keys, budgets, args.folds, args.seed, out)
    if "speed" in parts:
        speed(args.repeats, args.latency_cases, args.seed)


if __name__ == "__main__":
    main()
