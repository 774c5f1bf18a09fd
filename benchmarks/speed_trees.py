"""Fit time, policy latency and memory of the tree learners on ann-thyroid train.

    python -m benchmarks.speed_trees                 # 7 timed fits per learner
    python -m benchmarks.speed_trees --repeats 3

Each learner is fitted once cold (the "first" column: includes any numba
compilation or cache load in this process), then ``--repeats`` more times;
the median of those is compared with scikit-learn's DecisionTreeClassifier
measured in the same run.  ``next_action`` latency is timed over every step
of every ann-test case (models fitted on ann-train).  Peak Python memory of
one warm fit comes from ``tracemalloc``; the process's max RSS from
``resource.getrusage`` (covers everything the process did, numba included).
Add a learner by appending (name, factory) to LEARNERS; a factory takes the
dataset and returns an unfitted estimator.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
import tracemalloc

import numpy as np

from benchmarks.sklearn_policy import SklearnTreePolicy
from datasets import load_known
from learners import Extract
from learners.tree import (
    C45Classifier,
    CSID3Classifier,
    DTMCClassifier,
    EG2Classifier,
    IDXClassifier,
)


def _priced(cls):
    return lambda data: cls(test_costs=data.costs, categorical_features=data.categorical)


def _sklearn(data):
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(random_state=0)


#: (name, factory(dataset) -> unfitted estimator).  The first is the baseline.
LEARNERS = [
    ("sklearn DecisionTree", _sklearn),
    ("C45Classifier", _priced(C45Classifier)),
    ("EG2Classifier", _priced(EG2Classifier)),
    ("IDXClassifier", _priced(IDXClassifier)),
    ("CSID3Classifier", _priced(CSID3Classifier)),
    ("DTMCClassifier", _priced(DTMCClassifier)),
    ("CART policy adapter", _priced(SklearnTreePolicy)),
]


def time_fits(factory, data, repeats: int) -> tuple[float, list[float], object]:
    """Cold first fit time, warm fit times, and the last fitted model."""
    start = time.perf_counter()
    model = factory(data).fit(data.X, data.y)
    first = time.perf_counter() - start
    warm = []
    for _ in range(repeats):
        estimator = factory(data)
        start = time.perf_counter()
        model = estimator.fit(data.X, data.y)
        warm.append(time.perf_counter() - start)
    return first, warm, model


def peak_fit_memory(factory, data) -> int:
    """Peak bytes Python allocated during one fit (tracemalloc)."""
    estimator = factory(data)
    tracemalloc.start()
    try:
        estimator.fit(data.X, data.y)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def policy_latency(model, X) -> list[float]:
    """Seconds per next_action call over every step of every case in X."""
    times = []
    for row in X:
        known: dict[int, float] = {}
        unavailable: set[int] = set()
        for _ in range(len(row) + 1):
            start = time.perf_counter()
            action = model.next_action(known, unavailable)
            times.append(time.perf_counter() - start)
            if not isinstance(action, Extract):
                break
            value = float(row[action.test])
            if value != value:
                unavailable.add(action.test)
            else:
                known[action.test] = value
    return times


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed warm fits per learner")
    parser.add_argument(
        "--latency-cases",
        type=int,
        default=0,
        help="limit next_action timing to this many ann-test cases (0 = all)",
    )
    args = parser.parse_args(argv)
    train, test = load_known("thyroid-train"), load_known("thyroid-test")
    X_test = test.X if args.latency_cases <= 0 else test.X[: args.latency_cases]
    print(
        f"ann-thyroid train {train.X.shape[0]}x{train.X.shape[1]}; {args.repeats} warm fits "
        f"each; next_action over {X_test.shape[0]} ann-test cases"
    )
    print(
        f"{'learner':<22}{'first s':>9}{'median s':>10}{'x sklearn':>10}{'peak MiB':>10}"
        f"{'nodes':>7}{'step us med':>13}{'p99':>9}{'steps':>8}"
    )
    baseline = None
    for name, factory in LEARNERS:
        first, warm, model = time_fits(factory, train, args.repeats)
        median = statistics.median(warm)
        baseline = baseline if baseline is not None else median
        peak = peak_fit_memory(factory, train) / 2**20
        nodes = _node_count(model)
        line = (
            f"{name:<22}{first:9.4f}{median:10.4f}{median / baseline:10.2f}{peak:10.2f}{nodes:>7}"
        )
        if hasattr(model, "next_action"):
            steps = np.array(policy_latency(model, X_test)) * 1e6
            line += f"{np.median(steps):13.1f}{np.percentile(steps, 99):9.1f}{steps.size:8d}"
        print(line)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"process max RSS: {rss:.1f} MiB")


def _node_count(model) -> int:
    tree = getattr(model, "tree_", None)
    if tree is None and hasattr(model, "tree_model_"):
        tree = model.tree_model_.tree_
    if tree is None:
        return -1
    return int(getattr(tree, "n_nodes", getattr(tree, "node_count", -1)))


if __name__ == "__main__":
    main()
