"""What ACT could cost if its inner cross-validation chose with the answers (issue 12: is
a cell lost by ACT's candidates, or by its choice among them?).

ACT's default fit compares a fixed list of candidate trees by an inner cross-validation
of the training fold and refits the winner (``ACTClassifier._candidates``: lookahead
growths at each final pruning strength, then greedy EG2, accuracy-driven and least-cost
DTMC trees).  This script fits every candidate alone on each outer training fold of one
draw of ten folds, and prints per cell:

- each candidate's normalized cost %, the same candidate on every fold;
- ``best fixed``: the least of those, a candidate picked by looking at the test folds;
- ``best per fold``: on each fold the candidate of least cost on that fold's test
  cases, a bound no rule choosing among these candidates can beat, honest or not;
- ACT as it is (the inner cross-validation's choice on every fold), and the issue's
  peer and target;
- which candidate ACT kept on each fold: the first whose tree on that fold is ACT's tree
  (several candidates can grow the same tree).

When ``best per fold`` is above the target, no way of choosing among ACT's candidates wins
the cell on this draw; when only ``best fixed`` is below it, a single candidate would,
but picking it needs the test folds.

    python -m benchmarks.act_hindsight --datasets heart,hepatitis --costs 100,1000,10000
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from benchmarks.act_report import PEERS, _target
from benchmarks.compare_trees import load_dataset
from learners.act.act import ACTClassifier, _Greedy
from learners.baselines import OrderNothing
from learners.evaluation import cross_validate, make_folds


def forced_candidate(index: int) -> type[ACTClassifier]:
    """ACT that fits candidate ``index`` of its own list instead of running its inner
    cross-validation (a subclass, so that ``sklearn.clone``, which ACT's one-vs-rest
    fit uses, keeps the choice)."""

    class Forced(ACTClassifier):
        def _tune(self, X, y, y_codes, folds, settings, prices, seed):
            return self._candidates(settings)[index]

    return Forced


def describe(candidate) -> str:
    """A short name of one of ``ACTClassifier._candidates``' entries."""
    if isinstance(candidate, _Greedy):
        if candidate.criterion == "dtmc":
            return f"DTMC depth {candidate.max_depth}"
        if candidate.w == 0.0:
            return f"gain, leaf {candidate.min_leaf:g}"
        return f"EG2 w={candidate.w:.2f}"
    grow, pruning = candidate
    look = "pruned" if grow.prune_lookahead else "raw"
    if pruning is None:
        prune = "no pruning"
    elif pruning[0] == "leaf":
        prune = "no-test leaf"
    else:
        prune = f"cf {pruning[1]:.3f}"
    return f"r={grow.r} {look} look, {prune}"


def _tree_key(model) -> str:
    """A fitted model's tree, as comparable text."""
    return json.dumps(model.tree_.to_dict(), sort_keys=True)


def _fold_totals(report) -> np.ndarray:
    """Each fold's total cost (all its test cases)."""
    return np.array([fold.mean_total_cost * fold.n_cases for fold in report.folds])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="heart,hepatitis")
    parser.add_argument("--costs", default="100,1000,10000", help="uniform error costs mc")
    parser.add_argument("--seed", type=int, default=0, help="draw of the ten folds")
    parser.add_argument("--r", type=int, default=5)
    parser.add_argument("--thyroid", choices=("train", "pooled"), default="pooled")
    args = parser.parse_args(argv)
    print(
        f"# ten folds, seed {args.seed}, r={args.r}: each of ACT's candidates fitted alone "
        "on every training fold; normalized cost %"
    )
    for key in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        data = load_dataset(key, args.thyroid)
        k = len(data.class_labels)
        folds = make_folds(data.y, n_splits=10, random_state=args.seed)
        for mc in [float(c) for c in args.costs.split(",")]:
            kw = dict(
                test_costs=data.costs,
                cost_matrix=mc * (1.0 - np.eye(k)),
                categorical_features=data.categorical,
                r=args.r,
                random_state=args.seed,
            )
            act = cross_validate(ACTClassifier(**kw), data.X, data.y, folds=folds, keep_models=True)
            standard = act.overall.standard_cost
            n = act.overall.n_cases
            plain = dict(test_costs=data.costs, cost_matrix=kw["cost_matrix"])
            floor = cross_validate(
                OrderNothing(**plain), data.X, data.y, folds=folds
            ).overall.normalized_cost
            first = act.models[0]  # the list is the same on every fold
            candidates = first._candidates(first._settings(len(folds[0][0])))
            totals = []
            trees = []  # per candidate, its tree on each fold
            peer = PEERS.get(key, {}).get(int(mc), float("nan"))
            target = _target(peer, floor, mc)
            print(f"\n{key} mc {mc:g}: peer {peer:.1f}, target {target:.2f}, no-test {floor:.2f}")
            for i, candidate in enumerate(candidates):
                report = cross_validate(
                    forced_candidate(i)(**kw), data.X, data.y, folds=folds, keep_models=True
                )
                totals.append(_fold_totals(report))
                trees.append([_tree_key(model) for model in report.models])
                print(f"  {i:2d} {describe(candidate):<30} {report.overall.normalized_cost:7.2f}")
            totals_arr = np.array(totals)
            fixed = totals_arr.sum(axis=1)
            best = int(np.argmin(fixed))
            per_fold = totals_arr.min(axis=0).sum()
            print(f"  best fixed:    {100 * fixed[best] / n / standard:7.2f}  ({best})")
            print(f"  best per fold: {100 * per_fold / n / standard:7.2f}")
            print(f"  ACT:           {act.overall.normalized_cost:7.2f}")
            kept = [
                next((i for i, grown in enumerate(trees) if grown[f] == _tree_key(model)), None)
                for f, model in enumerate(act.models)
            ]
            print(f"  ACT kept, fold by fold: {kept}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
