"""Compare the greedy trees on Turney's priced datasets (paper 000's setting).

For each dataset and uniform error cost mc (M = mc off the diagonal), every
learner is cross-validated on the SAME stratified folds and evaluated through
its own policy (learners.evaluation), printing accuracy, mean test cost,
mean total cost and normalized cost (percent of Turney's standard cost).

    python -m benchmarks.compare_trees                       # full run
    python -m benchmarks.compare_trees --datasets heart --costs 10,1000 --folds 3

Thyroid is ann-train and ann-test pooled (7200 cases) unless
``--thyroid train`` (3772 cases).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.sklearn_policy import SklearnTreePolicy
from datasets import UCIDataset, load_known
from learners.evaluation import cross_validate, make_folds
from learners.tree import (
    C45Classifier,
    CSID3Classifier,
    DTMCClassifier,
    EG2Classifier,
    IDXClassifier,
)

#: (name, class); each is built with test_costs, cost_matrix, categorical_features.
LEARNERS = [
    ("C4.5c", C45Classifier),
    ("EG2", EG2Classifier),
    ("IDX", IDXClassifier),
    ("CS-ID3", CSID3Classifier),
    ("DTMC", DTMCClassifier),
    ("sklearn-CART", SklearnTreePolicy),
]
COST_AWARE = ("EG2", "IDX", "CS-ID3", "DTMC")


def load_dataset(key: str, thyroid: str) -> UCIDataset:
    """heart (binary), hepatitis, or thyroid (pooled train+test, or train only)."""
    if key != "thyroid":
        return load_known(key)
    train = load_known("thyroid-train")
    if thyroid == "train":
        return train
    test = load_known("thyroid-test")
    return UCIDataset(
        name="thyroid (ann-train + ann-test)",
        feature_names=train.feature_names,
        categorical=train.categorical,
        X=np.vstack([train.X, test.X]),
        y=np.concatenate([train.y, test.y]),
        class_labels=train.class_labels,
        costs=train.costs,
        description=train.description,
    )


def run(datasets, costs, n_folds, seed, delayed, thyroid, learners=LEARNERS):
    """Print one table per (dataset, mc) and return {(dataset, mc, learner): report}."""
    results = {}
    for key in datasets:
        data = load_dataset(key, thyroid)
        if data.costs is None:
            raise ValueError(f"{data.name} has no test prices")
        folds = make_folds(data.y, n_splits=n_folds, random_state=seed)
        counts = np.bincount(data.y).tolist()
        print(
            f"\n=== {data.name}: {data.X.shape[0]} cases x {data.X.shape[1]} tests, "
            f"classes {counts}, TC {data.costs.total_cost():.2f}, {n_folds}-fold CV "
            f"(seed {seed}), delayed={delayed}"
        )
        for mc in costs:
            matrix = mc * (1.0 - np.eye(len(data.class_labels)))
            print(f"\n  mc = {mc:g}")
            print(
                f"  {'learner':<13}{'acc %':>7}{'test $':>9}{'error $':>10}{'total $':>10}"
                f"{'norm %':>8}{'fit ms':>8}"
            )
            for name, cls in learners:
                estimator = cls(
                    test_costs=data.costs, cost_matrix=matrix, categorical_features=data.categorical
                )
                cv = cross_validate(estimator, data.X, data.y, folds=folds, delayed=delayed)
                r = cv.overall
                results[(key, mc, name)] = r
                print(
                    f"  {name:<13}{100 * r.accuracy:7.2f}{r.mean_test_cost:9.2f}"
                    f"{r.mean_misclassification_cost:10.2f}{r.mean_total_cost:10.2f}"
                    f"{r.normalized_cost:8.2f}{1000 * cv.mean_fit_seconds:8.1f}"
                )
    summarize(results, datasets, costs)
    return results


def summarize(results, datasets, costs) -> None:
    """The two checks the benchmark exists for, as plain lines."""
    low, high = min(costs), max(costs)
    print("\n--- checks: cost-aware vs C4.5c")
    for key in datasets:
        base_low = results[(key, low, "C4.5c")]
        base_high = results[(key, high, "C4.5c")]
        for name in COST_AWARE:
            r_low, r_high = results[(key, low, name)], results[(key, high, name)]
            ratio = (
                r_low.mean_test_cost / base_low.mean_test_cost
                if base_low.mean_test_cost
                else float("nan")
            )
            print(
                f"  {key:<10}{name:<8} mc={low:g}: test cost {r_low.mean_test_cost:7.2f} vs "
                f"{base_low.mean_test_cost:7.2f} ({ratio:.2f}x)   mc={high:g}: accuracy "
                f"{100 * r_high.accuracy:6.2f} vs {100 * base_high.accuracy:6.2f} "
                f"({100 * (r_high.accuracy - base_high.accuracy):+.2f} points)"
            )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--datasets",
        default="heart,hepatitis,thyroid",
        help="comma list of heart, hepatitis, thyroid",
    )
    parser.add_argument(
        "--costs", default="10,100,1000,10000", help="comma list of uniform misclassification costs"
    )
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--delayed", choices=("path", "turney"), default="path")
    parser.add_argument("--thyroid", choices=("pooled", "train"), default="pooled")
    args = parser.parse_args(argv)
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    unknown = set(datasets) - {"heart", "hepatitis", "thyroid"}
    if unknown:
        parser.error(f"unknown dataset(s): {sorted(unknown)}")
    costs = [float(c) for c in args.costs.split(",")]
    start = time.perf_counter()
    run(datasets, costs, args.folds, args.seed, args.delayed, args.thyroid)
    print(f"\n(total {time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
