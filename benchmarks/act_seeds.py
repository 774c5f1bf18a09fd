"""ACT beside the peers over several draws of the folds (issue 12: is a cell won or lost
beyond fold-to-fold noise?).

The issue's peer figures are one draw of ten folds (seed 0), each the least of three
systems on those very folds.  This script runs ACT and peers measured live in the same
run (``PEER-sk``: scikit-learn's entropy tree relabelled by least expected cost with its
leaf size tuned by inner CV, the issue's first peer system; ``OPT-d3``: the least-cost
tree of depth 3 by exhaustive search, STreeD's kind of tree) on ``--seeds`` draws of
stratified ten-fold CV, and prints per cell each learner's normalized cost % per seed
and its mean, and for each peer a two-sided Wilcoxon signed-rank test
(``scipy.stats.wilcoxon``) over every (seed, fold) pair of ACT against it.

    python -m benchmarks.act_seeds --datasets heart,hepatitis --seeds 0,1,2,3,4
    python -m benchmarks.act_seeds --datasets heart --costs 10000 --seeds 0,1 --learners ACT,PEER-sk
    python -m benchmarks.act_seeds --datasets heart --indicators add   # one-vs-rest splits too
    python -m benchmarks.act_seeds --datasets heart --folds 3 --learners DTMC-d1,OPT-d3

``--indicators add`` adds a priced 0/1 test per category of each nominal test with three
or more categories (``benchmarks.nominal_indicators``): every learner may then split a
nominal test one category against the rest, as the issue's pystreed peer does;
``--indicators only`` also hides the multiway split, as in pystreed's trees.
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.act_report import PEERS, _fold_costs, _learners, wilcoxon_p
from benchmarks.compare_trees import load_dataset
from benchmarks.nominal_indicators import with_category_indicators
from learners.evaluation import cross_validate, make_folds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="heart,hepatitis")
    parser.add_argument("--costs", default="100,1000,10000", help="uniform error costs mc")
    parser.add_argument("--seeds", default="0,1,2,3,4", help="draws of the ten folds")
    parser.add_argument("--learners", default="ACT,PEER-sk,OPT-d3", help="ACT first")
    parser.add_argument("--r", type=int, default=5)
    parser.add_argument(
        "--folds",
        type=int,
        default=10,
        help="outer folds per draw (3: each learner trains on two thirds, as in ACT's inner CV)",
    )
    parser.add_argument("--thyroid", choices=("train", "pooled"), default="pooled")
    parser.add_argument(
        "--indicators",
        choices=("add", "only"),
        help="add a derived 0/1 test per category of nominal tests (one-vs-rest splits); "
        "'only': and hide the multiway split",
    )
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    names = [n.strip() for n in args.learners.split(",") if n.strip()]
    costs = [float(c) for c in args.costs.split(",")]
    print(
        f"# {args.folds} folds, seeds {seeds}, r={args.r}"
        f"{f', one-vs-rest indicators ({args.indicators})' if args.indicators else ''}; "
        "normalized cost % per seed, then the mean"
    )
    for key in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        data = load_dataset(key, args.thyroid)
        if args.indicators:
            data = with_category_indicators(data, keep_multiway=args.indicators == "add")
        k = len(data.class_labels)
        for mc in costs:
            matrix = mc * (1.0 - np.eye(k))
            kw = dict(
                test_costs=data.costs, cost_matrix=matrix, categorical_features=data.categorical
            )
            overall: dict[str, list[float]] = {n: [] for n in names}
            per_fold: dict[str, list[np.ndarray]] = {n: [] for n in names}
            for seed in seeds:
                folds = make_folds(data.y, n_splits=args.folds, random_state=seed)
                factories = _learners(args.r, 20, seed)
                for name in names:
                    report = cross_validate(factories[name](**kw), data.X, data.y, folds=folds)
                    overall[name].append(report.overall.normalized_cost)
                    per_fold[name].append(_fold_costs(report))
            peer = PEERS.get(key, {}).get(int(mc), float("nan"))
            print(f"\n{key} mc {mc:g} (issue's peer, seed 0: {peer:.1f})")
            for name in names:
                cells = " ".join(f"{v:6.2f}" for v in overall[name])
                line = f"  {name:<12} {cells}   mean {np.mean(overall[name]):6.2f}"
                if name != names[0]:
                    p = wilcoxon_p(
                        np.concatenate(per_fold[names[0]]), np.concatenate(per_fold[name])
                    )
                    diff = np.mean(overall[names[0]]) - np.mean(overall[name])
                    line += f"   {names[0]} - {name}: {diff:+6.2f}, p={p:.3f}"
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
