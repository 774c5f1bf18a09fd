"""The selector (``CostSelectedClassifier``, issue 27) beside the single learners it chooses among.

Part ``table``: for each dataset and uniform error cost mc (M = mc off the
diagonal), every learner is cross-validated on the SAME stratified folds
(``make_folds``, seed 0) and priced through its own policy
(``learners.evaluation``, path rule); the figure is the normalized cost %
(percent of Turney's standard cost).  Rows: ``SELECTOR`` (the selector at its
defaults: it chooses inside each outer training fold only), every candidate of
``learners.selection.CANDIDATES`` alone at its declared settings (the two
baselines among them: ``order-nothing``, ``order-everything``), and ``PEER-sk``
(scikit-learn's entropy tree relabelled by least expected cost, its leaf size
tuned by inner CV: ``benchmarks.sklearn_policy``).  Each cell also prints the
cheapest single learner, the selector's gap to it in points, and the candidate
the selector chose on each fold.

Part ``timing``: the selector's fit time on ann-thyroid (``--timing-data``:
``train``, ann-train's 3772 cases, or ``pooled``, ann-train + ann-test, 7200)
with ``n_jobs=2`` at mc 1000, as a ratio to one default ACT fit measured in the
same run.

    python -m benchmarks.selector                                         # everything (long)
    python -m benchmarks.selector --datasets heart,pima --parts table
    python -m benchmarks.selector --datasets thyroid --use-folds 3 --parts table
    python -m benchmarks.selector --parts timing
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import numpy as np
from sklearn.base import BaseEstimator

from benchmarks.compare_trees import load_dataset
from benchmarks.sklearn_policy import TunedSklearnTreePolicy
from learners.act import ACTClassifier
from learners.evaluation import cross_validate, make_folds
from learners.selection import CANDIDATES, CostSelectedClassifier, fit_candidate

_PARTS = {"table", "timing"}


class SingleCandidate(BaseEstimator):
    """One candidate of ``CANDIDATES`` alone, as an estimator ``cross_validate`` can clone."""

    def __init__(
        self,
        *,
        name="order-nothing",
        test_costs=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=None,
        random_state=0,
    ):
        self.name = name
        self.test_costs = test_costs
        self.cost_matrix = cost_matrix
        self.reject_cost = reject_cost
        self.categorical_features = categorical_features
        self.random_state = random_state

    def fit(self, X, y):
        self.model_ = fit_candidate(
            self.name,
            X,
            y,
            test_costs=self.test_costs,
            cost_matrix=self.cost_matrix,
            reject_cost=self.reject_cost,
            categorical_features=self.categorical_features,
            random_state=self.random_state,
        )
        for attribute in ("classes_", "n_features_in_", "cost_model_", "cost_matrix_"):
            setattr(self, attribute, getattr(self.model_, attribute))
        self.reject_cost_ = getattr(self.model_, "reject_cost_", None)
        return self

    def next_action(self, known, unavailable=()):
        return self.model_.next_action(known, unavailable)


def _table(args, keys, costs) -> None:
    names = [c.name for c in CANDIDATES]
    for key in keys:
        data = load_dataset(key, args.thyroid)
        folds = make_folds(data.y, n_splits=args.folds, random_state=args.seed)
        used = folds[: args.use_folds] if args.use_folds else folds
        k = len(data.class_labels)
        print(
            f"\n## {data.name}: {data.X.shape[0]} cases, {data.X.shape[1]} tests, {k} classes; "
            f"{args.folds}-fold CV (seed {args.seed}), {len(used)} of {len(folds)} folds run"
        )
        for mc in costs:
            matrix = mc * (1.0 - np.eye(k))
            kw = dict(
                test_costs=data.costs,
                cost_matrix=matrix,
                categorical_features=list(data.categorical) or None,
                random_state=args.seed,
            )
            rows: dict[str, tuple[float, float]] = {}
            skipped: list[str] = []
            for name in names:
                try:
                    report = cross_validate(
                        SingleCandidate(name=name, **kw), data.X, data.y, folds=used
                    )
                except ValueError as exc:  # a candidate that refuses this data
                    skipped.append(f"{name} ({str(exc)[:60]})")
                    continue
                rows[name] = (report.overall.normalized_cost, report.mean_fit_seconds)
            peer = cross_validate(TunedSklearnTreePolicy(**kw), data.X, data.y, folds=used)
            rows["PEER-sk"] = (peer.overall.normalized_cost, peer.mean_fit_seconds)
            selector = cross_validate(
                CostSelectedClassifier(n_jobs=args.n_jobs, **kw),
                data.X,
                data.y,
                folds=used,
                keep_models=True,
            )
            rows["SELECTOR"] = (selector.overall.normalized_cost, selector.mean_fit_seconds)
            chosen = Counter(model.winner_.name for model in selector.models)
            singles = {n: v for n, v in rows.items() if n not in ("SELECTOR", "PEER-sk")}
            best = min(singles, key=lambda n: singles[n][0])
            print(f"\n  mc = {mc:g}")
            print(f"  {'learner':<18}{'norm %':>8}{'fit s':>9}")
            for name, (cost, seconds) in sorted(rows.items(), key=lambda item: item[1][0]):
                print(f"  {name:<18}{cost:>8.2f}{seconds:>9.2f}")
            gap = rows["SELECTOR"][0] - singles[best][0]
            print(
                f"  SUMMARY {key} mc={mc:g}: selector {rows['SELECTOR'][0]:.2f}, cheapest single "
                f"{best} {singles[best][0]:.2f} (gap {gap:+.2f} points), PEER-sk "
                f"{rows['PEER-sk'][0]:.2f}, order-nothing {rows['order-nothing'][0]:.2f}"
            )
            print(f"  selector's choices per fold: {dict(chosen)}")
            if skipped:
                print(f"  not run: {'; '.join(skipped)}")


def _timing(args) -> None:
    data = load_dataset("thyroid", args.timing_data)
    k = len(data.class_labels)
    kw = dict(
        test_costs=data.costs,
        cost_matrix=1000.0 * (1.0 - np.eye(k)),
        categorical_features=list(data.categorical) or None,
        random_state=args.seed,
    )
    start = time.perf_counter()
    ACTClassifier(**kw).fit(data.X, data.y)
    act = time.perf_counter() - start
    start = time.perf_counter()
    model = CostSelectedClassifier(n_jobs=2, **kw).fit(data.X, data.y)
    selector = time.perf_counter() - start
    print(f"\n## fit time on {data.name} ({data.X.shape[0]} cases), mc 1000")
    print(f"  one default ACT fit: {act:.1f} s")
    print(f"  selector, n_jobs=2:  {selector:.1f} s (ratio {selector / act:.2f} x ACT)")
    print(f"  winner: {model.winner_.name}")
    for line in model.selection_report_:
        cost = "-" if line.mean_cost is None else f"{line.mean_cost:.2f}"
        error = "-" if line.standard_error is None else f"{line.standard_error:.2f}"
        fit = "-" if line.fit_seconds is None else f"{line.fit_seconds:.2f}"
        print(f"  {line.name:<18}{cost:>10}{error:>8}{fit:>8}  {line.note}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="heart,hepatitis,thyroid,pima")
    parser.add_argument("--costs", default="10,100,1000,10000", help="uniform error costs mc")
    parser.add_argument("--parts", default="table,timing")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--use-folds", type=int, default=None, help="run only the first N folds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=2, help="the selector's n_jobs in the table")
    parser.add_argument("--thyroid", choices=("train", "pooled"), default="pooled")
    parser.add_argument("--timing-data", choices=("train", "pooled"), default="train")
    args = parser.parse_args(argv)
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    if not parts or not parts <= _PARTS:
        parser.error(f"--parts: a comma list among {sorted(_PARTS)}, got {args.parts!r}")
    costs = [float(c) for c in args.costs.split(",")]
    keys = [d.strip() for d in args.datasets.split(",") if d.strip()]
    print(
        f"# folds={args.folds} (used {args.use_folds or args.folds}) seed={args.seed} "
        f"thyroid={args.thyroid} selector n_jobs={args.n_jobs}"
    )
    if "timing" in parts:
        _timing(args)
    if "table" in parts:
        _table(args, keys, costs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
