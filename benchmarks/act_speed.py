"""How fast ACT, LSID3 and ICET fit, against scikit-learn's CART in the same run.

    python -m benchmarks.act_speed                    # all parts on ann-thyroid train (3772 x 21)
    python -m benchmarks.act_speed --parts learners   # only the learner table
    python -m benchmarks.act_speed --parts learners --only "EG2,ACT r=5"
    python -m benchmarks.act_speed --parts learners --only "ACT r=5" --dataset heart

Parts:
  learners  every learner's fit time on ann-thyroid train (M = mc off the
            diagonal), as a multiple of ``DecisionTreeClassifier.fit``, with
            the peak of Python-tracked allocations during one more fit (the
            time is taken untraced); "ACT r=5 before" is ``tune="off"`` (the
            single growth before issue 12), "ACT r=5" the default (inner-CV
            tuning), "2 jobs" with ``n_jobs=2``, "multiway" with
            ``one_vs_rest=False`` (no one-vs-rest splits of nominal tests: ACT
            only makes them for tests of three or more categories, which heart
            has and ann-thyroid does not; ``--dataset heart``);
  r         ACT's fit time for r = 1, 2, 5, 10 (should grow about linearly);
  n         ACT(r=5) on the data resampled to 1x, 2x, 4x its size (with
            replacement), against n log n.
The numba kernels are compiled (or loaded from cache) by a warm-up fit first.
"""

from __future__ import annotations

import argparse
import math
import resource
import time
import tracemalloc

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from datasets import load_known
from learners.act import ACTClassifier, ICETClassifier, LSID3Classifier
from learners.tree import C45Classifier, DTMCClassifier, EG2Classifier, OptimalTreeClassifier


def _timed(model, X, y, repeats: int = 1, *, traced: bool = True) -> tuple[float, float]:
    """Best wall-clock fit time over ``repeats`` untraced fits, and the allocation peak
    (MB) of one more fit under ``tracemalloc`` (0 when not ``traced``).

    The time is never taken under tracemalloc: it hooks every allocation, which made an
    ACT fit about 50% slower and took away the ``n_jobs=2`` speed-up (3.7 s serial and
    2.0 s with 2 jobs untraced, 5.6 and 5.4-6.6 s traced, ann-thyroid, mc 10000).
    """
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        model.fit(X, y)
        best = min(best, time.perf_counter() - start)
    peak = 0.0
    if traced:
        tracemalloc.start()
        model.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return best, peak


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="learners,r,n")
    parser.add_argument("--mc", type=float, default=10000.0)
    parser.add_argument("--dataset", default="thyroid-train", choices=("thyroid-train", "heart"))
    parser.add_argument(
        "--only", default="", help="comma list of learner-table names (prefixes) to run"
    )
    args = parser.parse_args(argv)
    parts = {p.strip() for p in args.parts.split(",")}

    data = load_known(args.dataset)
    X, y = data.X, data.y
    k = len(data.class_labels)
    kwargs = dict(
        test_costs=data.costs,
        cost_matrix=args.mc * (1.0 - np.eye(k)),
        categorical_features=data.categorical,
    )
    print(f"# {data.name} {X.shape[0]}x{X.shape[1]}, mc={args.mc:g}")
    ACTClassifier(r=1, random_state=0, **kwargs).fit(X[:300], y[:300])  # warm-up / compile
    ICETClassifier(population=2, generations=0, random_state=0, **kwargs).fit(X[:300], y[:300])
    cart = DecisionTreeClassifier(random_state=0)
    cart_seconds, _ = _timed(cart, np.nan_to_num(X, nan=-1.0), y, repeats=5, traced=False)
    print(f"# sklearn DecisionTreeClassifier.fit: {cart_seconds * 1000:.1f} ms (best of 5)")

    if "learners" in parts:
        print(f"\n{'learner':<17} {'fit s':>8} {'x CART':>8} {'peak MB':>8} {'leaves':>7}")
        learners = [
            ("C4.5c", C45Classifier(**kwargs)),
            ("EG2", EG2Classifier(**kwargs)),
            ("DTMC", DTMCClassifier(**kwargs)),
            ("OPT-d2", OptimalTreeClassifier(max_depth=2, **kwargs)),
            ("OPT-d3", OptimalTreeClassifier(max_depth=3, **kwargs)),
            ("OPT-d3-gain", OptimalTreeClassifier(max_depth=3, threshold_rule="gain", **kwargs)),
            ("LSID3 r=5", LSID3Classifier(r=5, random_state=0, **kwargs)),
            ("ICET g=20", ICETClassifier(random_state=0, **kwargs)),
            ("ACT r=5 before", ACTClassifier(r=5, random_state=0, tune="off", **kwargs)),
            ("ACT r=5", ACTClassifier(r=5, random_state=0, **kwargs)),
            ("ACT r=5 2 jobs", ACTClassifier(r=5, random_state=0, n_jobs=2, **kwargs)),
            ("ACT r=5 multiway", ACTClassifier(r=5, random_state=0, one_vs_rest=False, **kwargs)),
        ]
        only = [n.strip() for n in args.only.split(",") if n.strip()]
        for name, model in learners:
            if only and not any(name.startswith(prefix) for prefix in only):
                continue
            seconds, peak = _timed(model, X, y)
            print(
                f"{name:<17} {seconds:>8.2f} {seconds / cart_seconds:>8.0f} {peak:>8.1f} "
                f"{model.tree_.n_leaves:>7}",
                flush=True,
            )

    if "r" in parts:
        print(f"\n{'r':>3} {'ACT fit s':>10} {'s per r':>8}")
        for r in (1, 2, 5, 10):
            seconds, _ = _timed(ACTClassifier(r=r, random_state=0, **kwargs), X, y, traced=False)
            print(f"{r:>3} {seconds:>10.2f} {seconds / r:>8.2f}", flush=True)

    if "n" in parts:
        print(f"\n{'n':>6} {'ACT r=5 fit s':>14} {'/ (n log n) x1e6':>17}")
        rng = np.random.default_rng(0)
        for factor in (1, 2, 4):
            rows = (
                rng.integers(0, X.shape[0], size=factor * X.shape[0])
                if factor > 1
                else np.arange(X.shape[0])
            )
            model = ACTClassifier(r=5, random_state=0, **kwargs)
            seconds, _ = _timed(model, X[rows], y[rows], traced=False)
            n = len(rows)
            print(f"{n:>6} {seconds:>14.2f} {1e6 * seconds / (n * math.log(n)):>17.2f}", flush=True)

    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"\n# process peak RSS: {peak_rss:.0f} MB (numba's own allocations are not traced "
        "by tracemalloc, so 'peak MB' above undercounts the compiled builder's buffers)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
