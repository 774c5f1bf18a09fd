"""Compare conditioned-loss variants by cross-validation inside ann-train (never ann-test).

Choices about the model (how the window width is chosen, leaf sizes,
Parzen targets) must be made without looking at the test set the paper
reports on.  This script cuts ann-train (3772 cases) into stratified folds,
fits each variant on the other folds with the paper's setup (history free,
Turney's blood-test prices at full price, FTI derived, REWARD 100, PENALTY
10000) and sums, over the held-out folds, the misclassifications, the
all-features tree's misclassifications (the model's full-state tree), the
referrals and the test cost.

    python -m benchmarks.conditioned_loss_cv                      # default vs single hold-out
    python -m benchmarks.conditioned_loss_cv --variant '{"window_widths": [0.005]}' \\
        --variant '{"window_widths": [0.01]}' --repeats 2          # any keyword arguments
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from sklearn.model_selection import RepeatedStratifiedKFold

from benchmarks.conditioned_loss_thyroid import PRICES, all_features_tree, cost_model, fit, load

DEFAULT_VARIANTS = ("{}", '{"validation_folds": null}')


def one_fold(job: tuple[str, int, int, int, int]) -> tuple[int, int, int, float, int, float]:
    """Errors, tree errors, referrals, test cost, cases and chosen width of one held-out fold."""
    variant, folds, repeats, index, seed = job
    X, y = load("train")
    prices = cost_model(discount=False)
    splits = RepeatedStratifiedKFold(n_splits=folds, n_repeats=repeats, random_state=seed)
    fit_rows, held_rows = list(splits.split(X, y))[index]
    model = fit(X[fit_rows], y[fit_rows], prices, seed, **json.loads(variant))
    actions, paths = model.decide_all(X[held_rows], return_tests=True)
    truth = y[held_rows]
    errors = sum(a.kind == "classify" and a.label != t for a, t in zip(actions, truth, strict=True))
    referrals = sum(a.kind == "reject" for a in actions)
    cost = float(sum(prices.path_cost(path) for path in paths))
    tree_errors = all_features_tree(model, X[held_rows], truth)["errors"]
    width = float(model.window_width_[0])
    return int(errors), int(tree_errors), int(referrals), cost, len(held_rows), width


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--variant",
        action="append",
        help="model keyword arguments as JSON (repeatable; default: the model's defaults and "
        "the single 25%% hold-out)",
    )
    parser.add_argument("--folds", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    args = parser.parse_args(argv)
    variants = args.variant or list(DEFAULT_VARIANTS)
    all_tests = cost_model(discount=False).path_cost(sorted(PRICES))
    print(
        f"ann-train, {args.folds}-fold CV x {args.repeats} (seed {args.seed}); REWARD 100, "
        f"PENALTY 10000; reduction against all four tests ({all_tests:.2f}/case)"
    )
    print(
        f"{'errors':>7}{'tree errors':>13}{'referrals':>11}{'reduction %':>13}{'s':>6}  "
        "variant; widths chosen"
    )
    n_jobs = args.folds * args.repeats
    with ProcessPoolExecutor(args.jobs) as pool:
        for variant in variants:
            json.loads(variant)  # refuse bad JSON before starting the workers
            started = time.time()
            jobs = [(variant, args.folds, args.repeats, i, args.seed) for i in range(n_jobs)]
            folds = list(pool.map(one_fold, jobs))
            errors, tree_errors, referrals, cost, cases = (
                sum(fold[i] for fold in folds) for i in range(5)
            )
            widths = Counter(fold[5] for fold in folds)
            reduction = 100.0 * (1.0 - cost / cases / all_tests)
            print(
                f"{errors:>7}{tree_errors:>13}{referrals:>11}{reduction:>13.2f}"
                f"{time.time() - started:>6.0f}  {variant}; "
                + ", ".join(f"{w:g} x{n}" for w, n in sorted(widths.items())),
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
