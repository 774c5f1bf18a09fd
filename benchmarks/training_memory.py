"""Peak memory of one training fit per (training patient x test) cell, for the worker's estimate.

    python -m benchmarks.training_memory                       # every learner, 1,000 and 3,000
    python -m benchmarks.training_memory --sizes 1000 --learners eg2 budget_rf

Each fit runs in a fresh process: the learner's kernels are loaded by a small warm-up fit, then
the peak resident size (``ru_maxrss``) is read before and after one fit with the training form's
defaults on synthetic numeric data (``--tests`` priced tests, 5% missing, the XOR of two tests
as the class), so the growth is what the fit itself held. scikit-learn's DecisionTreeClassifier
is measured the same way in the same run as the peer. The last column is the growth per cell,
which ``diagnosis/training/services/training_memory.BYTES_PER_CELL`` takes (doubled for a
margin) for the worker's up-front estimate.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

PEER = "sklearn_tree"
#: Slow at their defaults (minutes per fit on this machine): measured with a smaller knob.
LIGHTER = {"act": {"r": 1}, "icet": {"generations": 5}, "lsid3": {"r": 4}}


def _data(n: int, d: int, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, d)).round(3)
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.5)).astype(int)
    X[rng.random((n, d)) < 0.05] = np.nan
    X[:, :2] = np.where(np.isnan(X[:, :2]), 0.25, X[:, :2])  # the class's tests are never missing
    return X, y


def _estimator(key: str, d: int):
    if key == PEER:
        from sklearn.tree import DecisionTreeClassifier

        return DecisionTreeClassifier(random_state=0)
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "benchmark-only")
    django.setup()
    from diagnosis.shared import learner_registry
    from learners.costs import CostModel

    return learner_registry.build_estimator(
        key,
        LIGHTER.get(key, {}),
        cost_model=CostModel(costs=[5.0] * d),
        cost_matrix=[[0.0, 100.0], [100.0, 0.0]],
        reject_cost=None,
        categorical_features=[],
        random_state=0,
    )


def measure_one(key: str, n: int, d: int) -> dict:
    """In this process: warm up, then one fit's peak resident growth and time."""
    X, y = _data(n, d)
    small_X, small_y = _data(60, d, seed=1)
    _estimator(key, d).fit(small_X, small_y)  # loads the kernels first
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started = time.process_time()
    _estimator(key, d).fit(X, y)
    seconds = time.process_time() - started
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"learner": key, "n": n, "d": d, "seconds": seconds, "growth": max(after - before, 0)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000])
    parser.add_argument("--tests", type=int, default=20)
    parser.add_argument("--learners", nargs="+", default=None)
    parser.add_argument("--one", nargs=2, metavar=("LEARNER", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure_one(args.one[0], int(args.one[1]), args.tests)))
        return
    if args.learners is None:
        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        os.environ.setdefault("DJANGO_SECRET_KEY", "benchmark-only")
        django.setup()
        from diagnosis.shared.learner_registry import LEARNERS

        args.learners = list(LEARNERS)
    print(f"{'learner':18} {'patients':>8} {'tests':>5} {'CPU s':>8} {'peak +MB':>9} {'B/cell':>8}")
    for key in [PEER, *args.learners]:
        for n in args.sizes:
            out = subprocess.run(
                [sys.executable, "-m", "benchmarks.training_memory", "--tests", str(args.tests)]
                + ["--one", key, str(n)],
                capture_output=True,
                text=True,
                check=False,
            )
            if out.returncode != 0:
                print(f"{key:18} {n:>8} failed: {out.stderr.strip().splitlines()[-1:]}")
                continue
            row = json.loads(out.stdout.strip().splitlines()[-1])
            per_cell = row["growth"] / (n * args.tests)
            print(
                f"{key:18} {n:>8} {args.tests:>5} {row['seconds']:>8.2f} "
                f"{row['growth'] / 2**20:>9.1f} {per_cell:>8.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
