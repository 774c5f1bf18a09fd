"""ACT against its baselines on Turney's priced datasets (paper 000's comparison).

For each dataset and uniform error cost mc (M = mc off the diagonal), every
learner is cross-validated on the SAME stratified folds and evaluated through
its own policy (``learners.evaluation``), printing normalized cost (percent
of Turney's standard cost), accuracy, mean total cost and mean fit time.

    python -m benchmarks.act_report                                   # full run (long)
    python -m benchmarks.act_report --datasets heart --costs 100,1000 --folds 3
    python -m benchmarks.act_report --learners ACT,ACT-prune,ACT-rawlook --datasets hepatitis

Learners: C4.5c, EG2, DTMC (``learners.tree``), LSID3, ICET, ACT(r=5, the
defaults) and ACT variants for the open points of ALGORITHMS.md §4:
``ACT-prune`` grows while any split is valid and relies on post-pruning
(``stop_rule="prune"``), ``ACT-prunelook`` scores cost-pruned lookahead trees
(``prune_lookahead=True``), ``ACT-rawlook`` unpruned ones (the default),
``ACT-exactEE`` uses the exact binomial EE instead of C4.5's normal approximation,
``ACT-each`` gives every numeric threshold all r samples (``threshold_samples="each"``).
Thyroid is ann-train (3772 cases) unless ``--thyroid pooled``.
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.compare_trees import load_dataset
from learners.act import ACTClassifier, ICETClassifier, LSID3Classifier
from learners.evaluation import cross_validate, make_folds
from learners.tree import C45Classifier, DTMCClassifier, EG2Classifier


def _learners(r: int, generations: int, seed: int) -> dict:
    """name -> factory(test_costs, cost_matrix, categorical_features)."""
    return {
        "C4.5c": lambda **kw: C45Classifier(**kw),
        "EG2": lambda **kw: EG2Classifier(**kw),
        "DTMC": lambda **kw: DTMCClassifier(**kw),
        "LSID3": lambda **kw: LSID3Classifier(r=r, random_state=seed, **kw),
        "ICET": lambda **kw: ICETClassifier(generations=generations, random_state=seed, **kw),
        "ACT": lambda **kw: ACTClassifier(r=r, random_state=seed, **kw),
        "ACT-prune": lambda **kw: ACTClassifier(r=r, random_state=seed, stop_rule="prune", **kw),
        "ACT-rawlook": lambda **kw: ACTClassifier(
            r=r, random_state=seed, prune_lookahead=False, **kw
        ),
        "ACT-prunelook": lambda **kw: ACTClassifier(
            r=r, random_state=seed, prune_lookahead=True, **kw
        ),
        "ACT-each": lambda **kw: ACTClassifier(
            r=r, random_state=seed, threshold_samples="each", **kw
        ),
        "ACT-exactEE": lambda **kw: ACTClassifier(r=r, random_state=seed, ee="exact", **kw),
    }


DEFAULT_LEARNERS = "C4.5c,EG2,DTMC,LSID3,ICET,ACT"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="heart,hepatitis,thyroid")
    parser.add_argument("--costs", default="10,100,1000,10000", help="uniform error costs mc")
    parser.add_argument(
        "--learners",
        default=DEFAULT_LEARNERS,
        help=f"comma list among {','.join(_learners(5, 20, 0))}",
    )
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--r", type=int, default=5, help="ACT/LSID3 sample size")
    parser.add_argument("--generations", type=int, default=20, help="ICET generations")
    parser.add_argument("--thyroid", choices=("train", "pooled"), default="train")
    args = parser.parse_args(argv)

    factories = _learners(args.r, args.generations, args.seed)
    names = [n.strip() for n in args.learners.split(",") if n.strip()]
    unknown = [n for n in names if n not in factories]
    if unknown:
        parser.error(f"unknown learners {unknown}; choose among {list(factories)}")
    costs = [float(c) for c in args.costs.split(",")]
    print(f"# folds={args.folds} seed={args.seed} r={args.r} ICET generations={args.generations}")
    print("# EE in ACT: C4.5's normal approximation (ACT-exactEE: exact); tree baselines: exact")
    for key in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        data = load_dataset(key, "pooled" if args.thyroid == "pooled" else "train")
        folds = make_folds(data.y, n_splits=args.folds, random_state=args.seed)
        k = len(data.class_labels)
        print(
            f"\n## {data.name}: {data.X.shape[0]} cases, {data.X.shape[1]} tests, "
            f"{k} classes, TC={data.costs.total_cost():.2f}"
        )
        print(
            f"{'mc':>7} {'learner':<12} {'norm %':>7} {'acc %':>6} {'total $':>9} "
            f"{'test $':>8} {'fit s':>7}"
        )
        for mc in costs:
            matrix = mc * (1.0 - np.eye(k))
            for name in names:
                model = factories[name](
                    test_costs=data.costs, cost_matrix=matrix, categorical_features=data.categorical
                )
                report = cross_validate(model, data.X, data.y, folds=folds)
                overall = report.overall
                print(
                    f"{mc:>7g} {name:<12} {overall.normalized_cost:>7.2f} "
                    f"{100 * overall.accuracy:>6.1f} {overall.mean_total_cost:>9.2f} "
                    f"{overall.mean_test_cost:>8.2f} {report.mean_fit_seconds:>7.3f}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
