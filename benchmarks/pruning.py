"""Paper 001 (Bradford et al. 1998): pruning methods with frequency and Laplace leaves.

    python -m benchmarks.pruning                                  # 10-fold CV on the four datasets
    python -m benchmarks.pruning --folds 3 --datasets heart,pima  # quicker
    python -m benchmarks.pruning --figures-dir /tmp/figs          # figures elsewhere

The figures are saved as Plotly JSON into ``--figures-dir`` (default: the folder
``settings.RESEARCH_FIGURES_DIR`` names, read by the research page).

For each dataset (heart binarized, hepatitis, Pima, scikit-learn's breast cancer), each
``pruning`` method of the C4.5 tree (none, error, laplace, cost_complexity, kl) and each leaf
estimate (``probability``: frequency, laplace), C4.5 trees are cross-validated on the same
stratified folds under two 10-to-1 loss matrices, one per direction by class position:
``A`` charges 10 for calling a class-1 case class 0 (``M[1, 0] = 10``, ``M[0, 1] = 1``) and
``B`` the reverse.  Each tree is grown and pruned with the matrix it is scored under (the
Laplace and cost-complexity rules use it; error-based pruning counts errors at the
least-cost label) and run through its own policy (``learners.evaluate``).

Printed per dataset and (method, leaves): the mean loss per case under A and under B, and, over
the trees of both matrices, paper 001's normalized MSE and log-loss (bits) of the final beliefs
and the mean number of leaves.  The summary counts, per method, the datasets where Laplace
leaves beat frequency leaves on each figure, and the tree size of each method against no
pruning (the paper: Laplace helped every method; pruning mainly shrank the trees).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchmarks._figures import add_figures_argument, write_figure
from benchmarks.boosting import load, nominal
from learners import C45Classifier, evaluate
from learners.evaluation import make_folds
from learners.tree.pruning import PRUNING_METHODS

DATASETS = ("heart", "hepatitis", "pima", "cancer")
LEAVES = ("frequency", "laplace")
MATRICES = {
    "A": np.array([[0.0, 1.0], [10.0, 0.0]]),
    "B": np.array([[0.0, 10.0], [1.0, 0.0]]),
}
FIGURES = ("loss A", "loss B", "mse", "log-loss", "leaves")


def run(keys, n_folds: int, seed: int) -> dict:
    """{dataset: {(method, leaves): {figure: value}}}, printing one table per dataset."""
    results: dict = {}
    for key in keys:
        data = load(key)
        folds = make_folds(data.y, n_splits=n_folds, random_state=seed)
        print(
            f"\n=== {data.name}: {len(data.y)} cases, classes {np.bincount(data.y).tolist()}, "
            f"{n_folds}-fold CV (seed {seed})"
        )
        print(
            f"  {'pruning':<16}{'leaves':<10}{'loss A':>8}{'loss B':>8}{'MSE':>8}"
            f"{'log-loss':>10}{'#leaves':>9}"
        )
        table = {}
        for method in PRUNING_METHODS:
            for leaves in LEAVES:
                figures = _cross_validate(data, folds, method, leaves, seed)
                table[(method, leaves)] = figures
                print(
                    f"  {method:<16}{leaves:<10}{figures['loss A']:8.3f}{figures['loss B']:8.3f}"
                    f"{figures['mse']:8.4f}{figures['log-loss']:10.4f}{figures['leaves']:9.1f}"
                )
        results[key] = table
    summarize(results)
    return results


def _cross_validate(data, folds, method: str, leaves: str, seed: int) -> dict:
    losses = {name: 0.0 for name in MATRICES}
    mse = log_loss = n_leaves = 0.0
    n_cases = n_trees = 0
    for train, test in folds:
        for name, matrix in MATRICES.items():
            model = C45Classifier(
                pruning=method,
                probability=leaves,
                cost_matrix=matrix,
                categorical_features=nominal(data),
                random_state=seed,
            ).fit(data.X[train], data.y[train])
            report = evaluate(model, data.X[test], data.y[test])
            losses[name] += report.mean_misclassification_cost * len(test)
            mse += report.mse * len(test)
            log_loss += report.log_loss * len(test)
            n_leaves += model.tree_.n_leaves
            n_trees += 1
        n_cases += len(test)
    return {
        "loss A": losses["A"] / n_cases,
        "loss B": losses["B"] / n_cases,
        "mse": mse / (n_cases * len(MATRICES)),
        "log-loss": log_loss / (n_cases * len(MATRICES)),
        "leaves": n_leaves / n_trees,
    }


def summarize(results: dict) -> None:
    """Laplace against frequency leaves per method; each method's size against no pruning."""
    keys = list(results)
    print(f"\n--- Laplace leaves lower than frequency leaves (of {len(keys)} datasets)")
    print(f"  {'pruning':<16}" + "".join(f"{f:>10}" for f in FIGURES[:4]))
    for method in PRUNING_METHODS:
        wins = [
            sum(
                results[k][(method, "laplace")][f] < results[k][(method, "frequency")][f]
                for k in keys
            )
            for f in FIGURES[:4]
        ]
        print(f"  {method:<16}" + "".join(f"{w:>10}" for w in wins))
    print("\n--- mean leaves as a share of the unpruned tree's (Laplace leaves)")
    for method in PRUNING_METHODS:
        shares = [
            results[k][(method, "laplace")]["leaves"] / results[k][("none", "laplace")]["leaves"]
            for k in keys
        ]
        print(
            f"  {method:<16}"
            + "".join(f"{k}: {s:5.2f}   " for k, s in zip(keys, shares, strict=True))
        )


def save_figures(results: dict, folder: Path, n_folds: int) -> None:
    """One grouped bar chart per figure: x = dataset / method, bars = frequency vs Laplace."""
    folder.mkdir(parents=True, exist_ok=True)
    titles = {
        "loss A": "mean loss per case under matrix A (M[1,0] = 10)",
        "loss B": "mean loss per case under matrix B (M[0,1] = 10)",
        "mse": "normalized MSE of the beliefs",
        "log-loss": "log-loss of the beliefs (bits)",
        "leaves": "tree size (leaves)",
    }
    labels = [f"{k} / {m}" for k in results for m in PRUNING_METHODS]
    for figure_name, title in titles.items():
        data = [
            {
                "type": "bar",
                "name": f"{leaves} leaves",
                "x": labels,
                "y": [
                    float(results[k][(m, leaves)][figure_name])
                    for k in results
                    for m in PRUNING_METHODS
                ],
            }
            for leaves in LEAVES
        ]
        figure = {
            "data": data,
            "layout": {
                "title": {"text": f"Paper 001: {title}, by pruning method ({n_folds}-fold CV)"},
                "barmode": "group",
                "xaxis": {"tickangle": -45},
            },
        }
        write_figure(folder / f"paper001_pruning_{figure_name.replace(' ', '_')}.json", figure)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    add_figures_argument(parser)
    args = parser.parse_args(argv)
    keys = [k.strip() for k in args.datasets.split(",") if k.strip()]
    unknown = set(keys) - set(DATASETS)
    if unknown:
        parser.error(f"unknown dataset(s) {sorted(unknown)}; known: {', '.join(DATASETS)}")
    results = run(keys, args.folds, args.seed)
    save_figures(results, args.figures_dir, args.folds)


if __name__ == "__main__":
    main()
