"""Paper 004 (Ting & Zheng 1998): Boosting and Cost-Boosting against C4.5c, plus speed.

    python -m benchmarks.boosting                          # paper's setup: 10 folds x 10 matrices
    python -m benchmarks.boosting --folds 3 --matrices 3   # quicker
    python -m benchmarks.boosting --parts speed            # fit vs scikit-learn, latency, memory
    python -m benchmarks.boosting --figures-dir /tmp/figs  # figures elsewhere

The ``cost`` part saves its figures as Plotly JSON into ``--figures-dir`` (default: the
folder ``settings.RESEARCH_FIGURES_DIR`` names, read by the research page).

``cost`` part: for each dataset, stratified k-fold CV (``learners.evaluation.make_folds``);
in each fold ``--matrices`` random integer cost matrices (off-diagonal 1..10 with the unity
condition: two classes, one error costs 1 and the other 2..10; more classes, at least one
entry is 1), each used for training and testing as in the paper:

- C4.5c: one pruned C4.5 tree per fold (cost-blind growth and pruning, frequency leaves),
  deciding ``argmin_j sum_i p_i M[i, j]`` under each matrix (``policy.best_class``);
- Boosting: one ``BoostingClassifier`` per fold (K trials), deciding under each matrix
  with ``predict(X, cost_matrix=M)`` (no retraining);
- Cost-Boosting: one ``BoostingClassifier(cost_sensitive=True, cost_matrix=M)`` per
  (fold, matrix).

Printed per dataset: C4.5c's mean total misclassification cost per test fold and mean number
of high-cost errors (cost > 1), then the ratios (of those means) Boosting/C4.5c,
Cost-Boosting/C4.5c and Cost-Boosting/Boosting, and their means over the datasets next to the
paper's (.86/.57, .75/.68, .89/2.43).  The wall-time rows: all folds' Boosting fits plus every
matrix's predictions against every Cost-Boosting fit and prediction, and, on one fold of
``--timing-dataset``, one Boosting fit serving 10 matrices against 10 Cost-Boosting fits.

``speed`` part, on ann-thyroid train (3772 x 21): Boosting's fit (K = 10) as a multiple of
scikit-learn's ``AdaBoostClassifier(DecisionTreeClassifier(min_samples_leaf=2), 10)`` (median
of warm fits in the same run; scikit-learn stops early when a tree is perfect, so the number
of trees each fitted and the time per tree are printed too), ``next_action`` latency (median,
p99) over every step of the ann-test cases, the tracemalloc peak of one fit and the JSON size.
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc
from pathlib import Path

import numpy as np

from benchmarks._figures import add_figures_argument, line_at_one, write_figure
from datasets import UCIDataset, load_known
from learners import BoostingClassifier, C45Classifier, Extract
from learners.evaluation import make_folds
from learners.policy import best_class

DATASETS = ("heart", "hepatitis", "thyroid", "pima", "bupa", "cancer")
#: The paper's Table 1 means over its 20 domains: (cost ratio, high-cost-error ratio).
PAPER_MEANS = {
    "Boosting/C4.5c": (0.86, 0.57),
    "Cost-Boosting/C4.5c": (0.75, 0.68),
    "Cost-Boosting/Boosting": (0.89, 2.43),
}


def load(key: str) -> UCIDataset:
    """heart (binary), hepatitis, thyroid (ann-train, 3 classes), pima, bupa, or scikit-learn's
    breast cancer (``cancer``, no prices)."""
    if key == "thyroid":
        return load_known("thyroid-train")
    if key == "cancer":
        from sklearn.datasets import load_breast_cancer

        data = load_breast_cancer()
        return UCIDataset(
            name="breast cancer (scikit-learn)",
            feature_names=list(data.feature_names),
            categorical=[],
            X=np.asarray(data.data, dtype=float),
            y=np.asarray(data.target, dtype=np.int64),
            class_labels=list(data.target_names),
            costs=None,
        )
    return load_known(key)


def nominal(data: UCIDataset) -> list[int] | None:
    """The nominal features with more than two codes; a two-code feature splits the same way
    as a number (two branches, one threshold between the codes) and, as a number, a code that
    one training fold never saw (thyroid's rare flags) is not refused at prediction."""
    many = [f for f in data.categorical if np.unique(data.X[~np.isnan(data.X[:, f]), f]).size > 2]
    return many or None


def random_matrix(n_classes: int, rng: np.random.Generator) -> np.ndarray:
    """Paper 004's random cost matrix: off-diagonal integers 1..10 with the unity condition."""
    matrix = np.zeros((n_classes, n_classes))
    off = np.argwhere(~np.eye(n_classes, dtype=bool))
    if n_classes == 2:
        one = rng.integers(2)
        for k, (i, j) in enumerate(off):
            matrix[i, j] = 1 if k == one else rng.integers(2, 11)
        return matrix
    for i, j in off:
        matrix[i, j] = rng.integers(1, 11)
    i, j = off[rng.integers(len(off))]
    matrix[i, j] = 1
    return matrix


def _scores(
    matrix: np.ndarray, truth: np.ndarray, predicted: np.ndarray | int
) -> tuple[float, int]:
    """Total misclassification cost and number of high-cost errors (cost > 1)."""
    costs = matrix[truth, predicted]
    return float(costs.sum()), int(np.count_nonzero(costs > 1))


def run_costs(keys, n_folds, n_matrices, trials, seed) -> dict:
    """The Table 1 comparison; returns {dataset: {learner: (mean cost, mean hce)}, ...}."""
    results: dict = {}
    timing = {"Boosting": 0.0, "Cost-Boosting": 0.0}
    print(
        f"\n=== Boosting vs C4.5c (paper 004): {n_folds}-fold CV, {n_matrices} random matrices "
        f"per fold, K = {trials}, seed {seed}"
    )
    header = (
        f"{'dataset':<10}{'cases':>6}{'C4.5c cost':>11}{'#hce':>7}"
        f"{'B/C cost':>10}{'#hce':>7}{'CB/C cost':>10}{'#hce':>7}{'CB/B cost':>10}{'#hce':>7}"
        f"{'B s':>8}{'CB s':>8}"
    )
    print(header)
    for key in keys:
        data = load(key)
        rng = np.random.default_rng(seed)
        k = len(data.class_labels)
        sums = {name: np.zeros(2) for name in ("C4.5c", "Boosting", "Cost-Boosting")}
        times = {"Boosting": 0.0, "Cost-Boosting": 0.0}
        runs = 0
        for train, test in make_folds(data.y, n_splits=n_folds, random_state=seed):
            X, y, Xt, yt = data.X[train], data.y[train], data.X[test], data.y[test]
            common = {"categorical_features": nominal(data)}
            c45 = C45Classifier(probability="frequency", **common).fit(X, y)
            c45_proba = c45.predict_proba(Xt)
            started = time.perf_counter()
            boosted = BoostingClassifier(n_trials=trials, random_state=seed, **common).fit(X, y)
            times["Boosting"] += time.perf_counter() - started
            for _ in range(n_matrices):
                matrix = random_matrix(k, rng)
                runs += 1
                sums["C4.5c"] += _scores(matrix, yt, best_class(c45_proba, matrix))
                started = time.perf_counter()
                predicted = boosted.predict(Xt, cost_matrix=matrix)
                times["Boosting"] += time.perf_counter() - started
                sums["Boosting"] += _scores(matrix, yt, predicted)
                started = time.perf_counter()
                cost_boosted = BoostingClassifier(
                    n_trials=trials,
                    cost_sensitive=True,
                    cost_matrix=matrix,
                    random_state=seed,
                    **common,
                ).fit(X, y)
                predicted = cost_boosted.predict(Xt)
                times["Cost-Boosting"] += time.perf_counter() - started
                sums["Cost-Boosting"] += _scores(matrix, yt, predicted)
        means = {name: total / runs for name, total in sums.items()}
        for name in timing:
            timing[name] += times[name]
        # a zero denominator leaves that ratio undefined (nan)
        b = _safe_ratio(means["Boosting"], means["C4.5c"])
        cb = _safe_ratio(means["Cost-Boosting"], means["C4.5c"])
        cbb = _safe_ratio(means["Cost-Boosting"], means["Boosting"])
        results[key] = {"means": means, "ratios": {"B/C": b, "CB/C": cb, "CB/B": cbb}}
        print(
            f"{key:<10}{len(data.y):>6}{means['C4.5c'][0]:11.1f}{means['C4.5c'][1]:7.2f}"
            f"{b[0]:10.2f}{b[1]:7.2f}{cb[0]:10.2f}{cb[1]:7.2f}{cbb[0]:10.2f}{cbb[1]:7.2f}"
            f"{times['Boosting']:8.1f}{times['Cost-Boosting']:8.1f}"
        )
    table = np.array(
        [
            [*r["ratios"]["B/C"], *r["ratios"]["CB/C"], *r["ratios"]["CB/B"]]
            for r in results.values()
        ]
    )
    mean = np.nanmean(table, axis=0) if len(table) else np.full(6, np.nan)
    print(
        f"{'mean':<10}{'':>6}{'':>11}{'':>7}{mean[0]:10.2f}{mean[1]:7.2f}{mean[2]:10.2f}"
        f"{mean[3]:7.2f}{mean[4]:10.2f}{mean[5]:7.2f}"
    )
    paper = [v for pair in PAPER_MEANS.values() for v in pair]
    print(
        f"{'paper':<10}{'':>6}{'':>11}{'':>7}{paper[0]:10.2f}{paper[1]:7.2f}{paper[2]:10.2f}"
        f"{paper[3]:7.2f}{paper[4]:10.2f}{paper[5]:7.2f}"
    )
    print(
        f"high-cost errors against C4.5c's (mean ratio): Boosting {100 * (1 - mean[1]):.0f}% "
        f"fewer (paper 43%), Cost-Boosting {100 * (1 - mean[3]):.0f}% fewer (paper 32%)"
    )
    print(
        f"wall time over all folds and matrices: Boosting (one fit per fold, every matrix by "
        f"prediction) {timing['Boosting']:.1f} s; Cost-Boosting (one fit per fold and matrix) "
        f"{timing['Cost-Boosting']:.1f} s"
    )
    return results


def _safe_ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)


def serve_ten(key: str, trials: int, seed: int) -> tuple[float, float]:
    """One fold of ``key``: one Boosting fit + 10 matrices' predictions vs 10 Cost-Boosting fits."""
    data = load(key)
    train, test = make_folds(data.y, n_splits=10, random_state=seed)[0]
    rng = np.random.default_rng(seed)
    matrices = [random_matrix(len(data.class_labels), rng) for _ in range(10)]
    common = {"categorical_features": nominal(data), "random_state": seed}
    started = time.perf_counter()
    boosted = BoostingClassifier(n_trials=trials, **common).fit(data.X[train], data.y[train])
    for matrix in matrices:
        boosted.predict(data.X[test], cost_matrix=matrix)
    one = time.perf_counter() - started
    started = time.perf_counter()
    for matrix in matrices:
        BoostingClassifier(n_trials=trials, cost_sensitive=True, cost_matrix=matrix, **common).fit(
            data.X[train], data.y[train]
        ).predict(data.X[test])
    ten = time.perf_counter() - started
    print(
        f"\n=== one model for 10 matrices ({key}, one fold of 10, K = {trials}): Boosting "
        f"1 fit + 10 predictions {one:.2f} s; Cost-Boosting 10 fits + predictions {ten:.2f} s "
        f"({ten / one:.1f}x)"
    )
    return one, ten


def run_speed(trials: int, repeats: int, seed: int) -> None:
    """Fit time against scikit-learn's AdaBoost, policy latency, memory and JSON size."""
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    train, test = load_known("thyroid-train"), load_known("thyroid-test")
    X, y = train.X, train.y
    ours = BoostingClassifier(
        n_trials=trials, categorical_features=nominal(train), random_state=seed
    )
    ours.fit(X, y)  # warm-up: numba caches
    times, sk_times, sk_trees = [], [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        model = BoostingClassifier(
            n_trials=trials, categorical_features=nominal(train), random_state=seed
        ).fit(X, y)
        times.append(time.perf_counter() - started)
        started = time.perf_counter()
        ada = AdaBoostClassifier(
            DecisionTreeClassifier(min_samples_leaf=2, random_state=seed),
            n_estimators=trials,
            random_state=seed,
        ).fit(np.nan_to_num(X, nan=-1.0), y)
        sk_times.append(time.perf_counter() - started)
        sk_trees = len(ada.estimators_)
    ours_s, sk_s = float(np.median(times)), float(np.median(sk_times))
    n_ours = len(model.members_)
    print(f"\n=== speed on ann-thyroid train {X.shape} (median of {repeats} warm fits)")
    print(
        f"Boosting fit {ours_s * 1000:.0f} ms ({n_ours} trees, {model.n_resets_} resets); "
        f"scikit-learn AdaBoost(DecisionTree) {sk_s * 1000:.0f} ms ({sk_trees} trees): "
        f"{ours_s / sk_s:.1f}x; per tree {ours_s / n_ours * 1000:.1f} ms vs "
        f"{sk_s / sk_trees * 1000:.1f} ms ({(ours_s / n_ours) / (sk_s / sk_trees):.1f}x)"
    )
    latencies, cpu = [], []
    for row in test.X:
        known: dict[int, float] = {}
        for _ in range(row.shape[0] + 1):
            started, started_cpu = time.perf_counter(), time.thread_time()
            action = model.next_action(known)
            latencies.append(time.perf_counter() - started)
            cpu.append(time.thread_time() - started_cpu)
            if not isinstance(action, Extract):
                break
            known[action.test] = float(row[action.test])
    micro, cpu_micro = np.array(latencies) * 1e6, np.array(cpu) * 1e6
    print(
        f"next_action over {len(test.y)} ann-test cases ({len(micro)} calls): wall median "
        f"{np.median(micro):.0f} us, p99 {np.percentile(micro, 99):.0f} us; this thread's CPU "
        f"time median {np.median(cpu_micro):.0f} us, p99 {np.percentile(cpu_micro, 99):.0f} us "
        f"(wall minus CPU is time waiting for a core: load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores)"
    )
    tracemalloc.start()
    kept = BoostingClassifier(
        n_trials=trials, categorical_features=nominal(train), random_state=seed
    ).fit(X, y)
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    print(
        f"peak memory of one fit (tracemalloc) {peak / 2**20:.1f} MiB, fitted model held "
        f"{held / 2**20:.1f} MiB; JSON document "
        f"{len(model.to_json()) / 1024:.0f} KiB; {sum(t.n_nodes for t in model.members_)} nodes"
    )


def save_figures(results: dict, folder: Path, n_folds: int, n_matrices: int, trials: int) -> None:
    """Grouped bars of the ratios per dataset, as Plotly JSON for the research page."""
    folder.mkdir(parents=True, exist_ok=True)
    keys = list(results)
    for index, (what, file) in enumerate(
        [("total misclassification cost", "cost"), ("high-cost errors", "hce")]
    ):
        data = [
            {
                "type": "bar",
                "name": name,
                "x": keys + ["mean"],
                "y": [_plain(results[k]["ratios"][short][index]) for k in keys]
                + [_plain(np.nanmean([results[k]["ratios"][short][index] for k in keys]))],
            }
            for name, short in [
                ("Boosting / C4.5c", "B/C"),
                ("Cost-Boosting / C4.5c", "CB/C"),
                ("Cost-Boosting / Boosting", "CB/B"),
            ]
        ]
        figure = {
            "data": data,
            "layout": {
                "title": {
                    "text": f"Paper 004: ratio of {what} ({n_folds}-fold CV, {n_matrices} "
                    f"matrices per fold, K = {trials}); below 1 = fewer"
                },
                "barmode": "group",
                "yaxis": {"title": {"text": "ratio"}},
                "shapes": [line_at_one()],
            },
        }
        write_figure(folder / f"paper004_boosting_{file}_ratios.json", figure)


def _plain(value) -> float | None:
    value = float(value)
    return None if value != value else value


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--matrices", type=int, default=10)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parts", default="cost,speed")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--timing-dataset", default="pima")
    add_figures_argument(parser)
    args = parser.parse_args(argv)
    keys = [k.strip() for k in args.datasets.split(",") if k.strip()]
    unknown = set(keys) - set(DATASETS)
    if unknown:
        parser.error(f"unknown dataset(s) {sorted(unknown)}; known: {', '.join(DATASETS)}")
    parts = {p.strip() for p in args.parts.split(",")}
    if "cost" in parts:
        results = run_costs(keys, args.folds, args.matrices, args.trials, args.seed)
        serve_ten(args.timing_dataset, args.trials, args.seed)
        save_figures(results, args.figures_dir, args.folds, args.matrices, args.trials)
    if "speed" in parts:
        run_speed(args.trials, args.repeats, args.seed)


if __name__ == "__main__":
    main()
