"""Fit time and peak memory of every learner at hospital sizes, beside scikit-learn's tree.

    python -m benchmarks.scale                  # every learner at 1,000, 10,000 and 100,000
    python -m benchmarks.scale --learners BudgetRFClassifier --sizes 1000,10000
    python -m benchmarks.scale --time-limit 300 --memory-limit-gb 6
    python -m benchmarks.scale --learners ACTClassifier --sizes 10000 --n-jobs 2

Synthetic patients (:func:`synthetic_patients`): 20 numeric tests priced 1 to 50, two
groups of three tests sharing a draw (discounted to a fifth), 5% of the values missing, two
classes from a noisy linear rule on six of the tests.  Every fit runs in a child process of
its own: it first fits the same learner on 300 patients (numba kernels compiled or loaded
from their cache, imports done), then the measured fit.  Reported per fit:

- ``cpu s``: CPU seconds of the measured fit (``time.process_time``: every thread);
- ``wall s``: its wall seconds (inflated when other work shares the cores);
- ``peak MiB``: the child's maximum resident set (``resource.getrusage``), everything the
  process held at its worst (Python, numpy, numba and the fit); ``fit MiB`` is that peak
  minus the resident set just before the measured fit (what the fit added);
- ``x tree``: CPU seconds as a multiple of scikit-learn's DecisionTreeClassifier fitted on
  the same patients in the same run (the first row of every size).

A fit over ``--time-limit`` seconds is killed and reported as such; one over
``--memory-limit-gb`` (the child's address space, ``RLIMIT_AS``) fails with its
MemoryError instead of taking the machine's memory; a learner that refuses the data says why.
Learners run at their defaults with the data's prices (``random_state=0``); ``--n-jobs``
is passed to the learners that take ``n_jobs`` (ACT's threads), default theirs.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

from learners.costs import CostModel
from learners.serialization import LEARNERS

#: The peer every row is compared with.
TREE = "sklearn DecisionTree"
N_TESTS = 20
MISSING = 0.05
WARMUP_PATIENTS = 300


def synthetic_patients(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, CostModel]:
    """``n`` patients, 20 priced numeric tests (5% missing) and two classes."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_TESTS))
    weights = np.zeros(N_TESTS)
    weights[[0, 3, 6, 9, 12, 15]] = [1.0, -0.8, 0.6, 0.5, -0.4, 0.3]
    y = (X @ weights + 0.7 * rng.normal(size=n) > 0.3).astype(int)
    X[rng.random(X.shape) < MISSING] = np.nan
    prices = np.round(np.random.default_rng(1).uniform(1.0, 50.0, N_TESTS), 2)
    groups: list[str | None] = [None] * N_TESTS
    for name, members in (("panel A", (0, 1, 2)), ("panel B", (9, 10, 11))):
        for t in members:
            groups[t] = name
    discounted = np.where([g is not None for g in groups], np.round(prices / 5.0, 2), prices)
    return X, y, CostModel(prices, discounted=discounted, groups=groups)


def _estimator(name: str, costs: CostModel, n_jobs: int | None = None):
    if name == TREE:
        from sklearn.tree import DecisionTreeClassifier

        return DecisionTreeClassifier(random_state=0)
    cls = getattr(importlib.import_module(LEARNERS[name]), name)
    params = set(inspect.signature(cls).parameters)
    chosen: dict = {"test_costs": costs}
    if "random_state" in params:
        chosen["random_state"] = 0
    if n_jobs is not None and "n_jobs" in params:
        chosen["n_jobs"] = n_jobs
    return cls(**chosen)


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def child(name: str, n: int, seed: int, n_jobs: int | None = None) -> dict:
    """One measured fit in this process (after a warm-up fit); its figures as a dict."""
    X, y, costs = synthetic_patients(WARMUP_PATIENTS, seed + 1)
    _estimator(name, costs, n_jobs).fit(X, y)
    X, y, costs = synthetic_patients(n, seed)
    before = _rss_mib()
    start = time.process_time()
    wall = time.perf_counter()
    _estimator(name, costs, n_jobs).fit(X, y)
    cpu = time.process_time() - start
    wall = time.perf_counter() - wall
    peak = _rss_mib()
    return {"cpu": cpu, "wall": wall, "peak": peak, "fit": peak - before}


def run_one(
    name: str, n: int, seed: int, time_limit: float, memory_gb: float, n_jobs: int | None = None
) -> dict:
    """``child`` in a process of its own, killed past ``time_limit`` seconds."""
    limit = int(memory_gb * 2**30)

    def cap_memory() -> None:
        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    command = [sys.executable, "-m", "benchmarks.scale", "--child", name, str(n), str(seed)]
    if n_jobs is not None:
        command += ["--n-jobs", str(n_jobs)]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=cap_memory
    )
    try:
        out, err = process.communicate(timeout=time_limit)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.communicate()
        return {"error": f"over the {time_limit:g} s limit (killed)"}
    if process.returncode != 0:
        lines = [line for line in err.strip().splitlines() if line.strip()]
        last = lines[-1] if lines else f"exit {process.returncode}"
        if "MemoryError" in err or "std::bad_alloc" in err:
            last = f"over the {memory_gb:g} GB memory limit ({last[:80]})"
        return {"error": last[:160]}
    return json.loads(out.strip().splitlines()[-1])


def budget_rf_costs(keys: list[str]) -> None:
    """BudgetRF at its defaults on 3 stratified folds (seed 0) of known datasets, uniform
    error costs 100 and 1000: mean held-out total cost (to show a change costs no more)."""
    from datasets import load_known
    from learners import BudgetRFClassifier, evaluate
    from learners.evaluation import make_folds

    for key in keys:
        data = load_known(key, binary=True) if key == "heart" else load_known(key)
        k = len(np.unique(data.y))
        folds = make_folds(data.y, n_splits=3, random_state=0)
        for mc in (100.0, 1000.0):
            matrix = mc * (1 - np.eye(k))
            totals: list[float] = []
            cpu, nodes = 0.0, 0
            for train, test in folds:
                start = time.process_time()
                model = BudgetRFClassifier(
                    test_costs=data.costs, cost_matrix=matrix, random_state=0
                ).fit(data.X[train], data.y[train])
                cpu += time.process_time() - start
                nodes += sum(tree.n_nodes for tree in model.trees_)
                report = evaluate(model, data.X[test], data.y[test])
                totals += [case.total_cost for case in report.cases]
            se = np.std(totals, ddof=1) / np.sqrt(len(totals))
            print(
                f"{key} mc {mc:g}: mean total {np.mean(totals):.2f} (se {se:.2f}), "
                f"fit cpu {cpu:.1f} s, nodes {nodes}",
                flush=True,
            )


def budget_rf_missing_copies(
    keys: list[str], exact: float = 0.0, seeds: int = 1, weight: float | None = None
) -> None:
    """BudgetRF at its defaults against the same with ``min_copy_weight=exact`` (every copy of
    a case with a missing value split, C4.5's fractional cases) on 3 stratified folds (seed 0)
    of known datasets, uniform error costs 100 and 1000: each fold's mean held-out total cost
    for both, and the mean paired per-case difference (default minus exact) with its standard
    error, to show the default's cost does not rise.  With ``seeds`` > 1 each case's cost is
    its mean over forests of ``random_state`` 0 to ``seeds - 1`` (the forests' own noise
    averaged out before the pairing)."""
    from datasets import load_known
    from learners import BudgetRFClassifier, evaluate
    from learners.evaluation import make_folds

    default = BudgetRFClassifier().get_params()["min_copy_weight"] if weight is None else weight
    for key in keys:
        data = load_known(key, binary=True) if key == "heart" else load_known(key)
        k = len(np.unique(data.y))
        missing = float(np.isnan(data.X).mean())
        folds = make_folds(data.y, n_splits=3, random_state=0)
        for mc in (100.0, 1000.0):
            matrix = mc * (1 - np.eye(k))
            diffs: list[float] = []
            line = []
            cpu = {exact: 0.0, default: 0.0}
            for train, test in folds:
                totals = {}
                for weight in (exact, default):
                    totals[weight] = np.zeros(test.size)
                    for seed in range(seeds):
                        start = time.process_time()
                        model = BudgetRFClassifier(
                            test_costs=data.costs,
                            cost_matrix=matrix,
                            random_state=seed,
                            min_copy_weight=weight,
                        ).fit(data.X[train], data.y[train])
                        cpu[weight] += time.process_time() - start
                        report = evaluate(model, data.X[test], data.y[test])
                        totals[weight] += np.array([case.total_cost for case in report.cases])
                    totals[weight] /= seeds
                diffs += (totals[default] - totals[exact]).tolist()
                line.append(f"{totals[exact].mean():.2f} / {totals[default].mean():.2f}")
            d = np.asarray(diffs)
            seeds_note = f" (mean of {seeds} forests a case)" if seeds > 1 else ""
            se = d.std(ddof=1) / np.sqrt(d.size)
            print(
                f"{key} ({missing:.1%} missing) mc {mc:g}{seeds_note}: fold mean total "
                f"exact / {default:g} {'; '.join(line)}; paired {default:g} - exact "
                f"{d.mean():+.2f} (se {se:.2f}); fit cpu {cpu[exact]:.1f} / {cpu[default]:.1f} s",
                flush=True,
            )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="patients, comma-separated")
    parser.add_argument(
        "--learners", default="all", help="learner class names, comma-separated (default all)"
    )
    parser.add_argument("--time-limit", type=float, default=600.0, help="seconds per fit")
    parser.add_argument("--memory-limit-gb", type=float, default=8.0, help="per fit process")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--n-jobs", type=int, help="passed to learners that take n_jobs (default: theirs)"
    )
    parser.add_argument(
        "--budget-rf-costs",
        metavar="DATASETS",
        help="instead: BudgetRF's held-out cost on 3 folds of these known datasets",
    )
    parser.add_argument(
        "--budget-rf-missing-copies",
        metavar="DATASETS",
        help="instead: BudgetRF's default min_copy_weight against 0 (exact) on 3 folds",
    )
    parser.add_argument(
        "--copy-weight",
        type=float,
        help="min_copy_weight compared with 0 (default: the estimator's default)",
    )
    parser.add_argument(
        "--rf-seeds", type=int, default=1, help="forests per fold for --budget-rf-missing-copies"
    )
    parser.add_argument(
        "--child", nargs=3, metavar=("LEARNER", "N", "SEED"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.child:
        name, n, seed = args.child
        print(json.dumps(child(name, int(n), int(seed), args.n_jobs)))
        return
    if args.budget_rf_missing_copies:
        budget_rf_missing_copies(
            args.budget_rf_missing_copies.split(","), seeds=args.rf_seeds, weight=args.copy_weight
        )
        return
    if args.budget_rf_costs:
        budget_rf_costs(args.budget_rf_costs.split(","))
        return
    names = list(LEARNERS) if args.learners == "all" else args.learners.split(",")
    unknown = [n for n in names if n not in LEARNERS]
    if unknown:
        parser.error(f"unknown learners {unknown}; known: {sorted(LEARNERS)}")
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        f"# python -m benchmarks.scale --sizes {args.sizes} --learners {args.learners} "
        f"--time-limit {args.time_limit:g} --memory-limit-gb {args.memory_limit_gb:g} "
        f"--seed {args.seed}" + (f" --n-jobs {args.n_jobs}" if args.n_jobs is not None else "")
    )
    print(f"# {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    header = (
        f"{'learner':<26} {'patients':>9} {'cpu s':>9} {'x tree':>8} {'wall s':>9} "
        f"{'peak MiB':>9} {'fit MiB':>8}"
    )
    for n in sizes:
        print()
        print(header)
        base = None
        for name in [TREE, *names]:
            result = run_one(name, n, args.seed, args.time_limit, args.memory_limit_gb, args.n_jobs)
            if "error" in result:
                print(f"{name:<26} {n:>9,} {result['error']}", flush=True)
                continue
            if name == TREE:
                base = result["cpu"]
            ratio = f"{result['cpu'] / base:8.1f}" if base else f"{'-':>8}"
            print(
                f"{name:<26} {n:>9,} {result['cpu']:9.3f} {ratio} {result['wall']:9.1f} "
                f"{result['peak']:9.0f} {result['fit']:8.0f}",
                flush=True,
            )
    print(f"# load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
