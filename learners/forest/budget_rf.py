"""BudgetRF: a random forest of low-cost GreedyTrees grown within a test budget (paper 002).

ALGORITHMS.md §6.  Trees are grown by GreedyTree (minimax cost-weighted
impurity splits, threshold-Pairs or Powers, random stumps) on bootstrap
samples of the training part, and added while the forest's average
acquisition cost on a held-out validation part stays within ``budget``; the
tree that broke the budget is dropped.  A test is paid once per case across
the whole forest, in the order the forest's own policy orders it, priced by
``CostModel.marginal_cost`` (group discounts, derived tests).

The policy (ALGORITHMS.md §9): order the test the most trees are waiting on
(ties: the lower marginal price, then the lower index); when every tree has
reached a leaf, conclude by :func:`learners.policy.decide` over the summed
leaf class weights (reject included).  ``predict`` takes the same
minimum-expected-cost decision over the same sums, so prediction and the
policy never disagree (the paper predicts by majority vote: see the class
docstring).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import _fit_context
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from .. import _document as document
from .._estimator import CostSensitiveClassifier, constraints
from .._validation import check_cost_matrix, validate_costed_fit, validate_rows
from ..act._encoding import encode_prices
from ..costs import CostModel
from ..policy import (
    Classify,
    Evidence,
    Extract,
    Reject,
    best_class,
    conclusion_cost,
    decide,
    evidence_for,
)
from ..serialization import SerializableMixin
from ..tree._base import CaseInputMixin
from ..tree._structure import LEAF, TreeStructure, smoothed_proba
from ..tree._structure_kernels import TreeArrays, tree_arrays
from ._impurity import PAIRS, POWERS
from ._kernels import (
    Forest,
    Runs,
    describe_columns,
    forest_acquisition,
    forest_acquisition_added,
    grow_greedy_tree,
    walk_counts,
    walk_rows,
)

__all__ = ["ALPHA_GRID", "BudgetRFClassifier"]

#: The paper's grid of threshold-Pairs thresholds, searched on validation data.
ALPHA_GRID = (0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 15.0, 25.0, 35.0, 45.0)
#: Impurity below which a node counts as pure (F(S) = 0).
_TOLERANCE = 1e-9
#: Weight outside a node's largest class below which GreedyTree makes a leaf: one case.
#: Whole cases weigh 1 or more (bootstrap counts), so without missing values this is the
#: paper's F(S) = 0; with them, the fractional copies of a case sent down every branch no
#: longer make a node impure on their own (isolating them grew trees of 125,000 nodes from
#: 2,100 cases and ~900,000 from 7,000 at 5% missing: issue 29).
_MIN_IMPURE_WEIGHT = 1.0
#: What a belief smooths: the summed leaf values (frequency, laplace) or nothing more
#: (laplace_leaves: each tree's leaves already give Laplace probabilities).
_SMOOTHING = {"laplace": 1.0, "frequency": 0.0, "laplace_leaves": 0.0}
_IMPURITIES = {"pairs": PAIRS, "powers": POWERS}


class BudgetRFClassifier(CaseInputMixin, SerializableMixin, CostSensitiveClassifier):
    """Feature-budgeted random forest (Nan, Wang & Saligrama, ICML 2015).

    Parameters
    ----------
    test_costs : CostModel or sequence of float, optional
        Prices of the tests (default: every test costs 1).
    cost_matrix : array-like of shape (K, K), optional
        ``M[actual, predicted]`` for the conclusions (default 0/1 loss).
    reject_cost : float or array-like of shape (K,), optional
        Price of referring; None: the forest never refers.
    categorical_features : array-like, optional
        Accepted for the common interface; a category code is split by
        thresholds like a number (a stump is binary).
    random_state : int, RandomState, Generator or None
        Seeds the validation split, the bootstrap samples and the stumps.
    budget : float, "auto" or None, default None
        Most the average case may pay for tests, measured on the validation
        part.  None: no limit (``max_trees`` trees).  A budget below the
        cheapest test is refused: no forest could order anything.
        "auto": the budget the error costs are worth (beyond the paper, which
        takes B from the user): ``max_trees`` trees are grown and priced one by
        one, and the forest keeps its first ``k`` trees, ``k`` from 0 (one
        leaf: order nothing) to ``max_trees``, with the least validation test
        cost plus error (or referral) cost under ``cost_matrix``; alpha is
        chosen by the same total.  So a forest orders fewer tests when errors
        are cheap and more when they are dear.  What it cannot do, by the
        paper's design: GreedyTree ranks tests by price over minimax impurity
        reduction, never by the error matrix, so where the cheap tests split
        the classes to purity without separating them (thyroid) every prefix
        costs more than ordering nothing and "auto" orders nothing at every
        error cost; with a small validation part (hepatitis, 31 cases) the
        choice is noisy.
    impurity : {"pairs", "powers"}, default "pairs"
        threshold-Pairs (``alpha``) or Powers (``power``).
    alpha : float >= 0 or "auto", default "auto"
        threshold-Pairs' threshold; "auto" picks it on the validation part
        from the paper's grid :data:`ALPHA_GRID` (least validation loss, then
        least acquisition cost, then the smaller alpha).
    power : float in [2, 10], default 2
        Powers' exponent ``l``.
    max_trees : int, default 40
        Most trees, budget or not (the paper's MiniBooNE runs used 40).
    validation_fraction : float in (0, 1), default 0.3
        Share of the training cases held out (stratified) to measure the
        budget and choose alpha; the trees learn from the rest.
    min_copy_weight : float >= 0, default 0.01
        How far a case with a missing value is split between the branches
        while a tree grows (beyond the paper, which is silent on missing
        values).  Such a case goes down both branches of a split on the
        missing test with the known cases' shares (C4.5's fractional copies)
        while its copy at the node weighs at least ``min_copy_weight`` cases;
        a lighter copy goes down one branch, drawn with those shares, keeping
        its weight (each branch gets the same weight in expectation).  0:
        every copy is split (exact C4.5): a case missing the test a tree
        keeps cutting is then copied into nearly every node, and a tree takes
        time in nodes x cases (100,000 patients did not fit in 25 minutes,
        issue 29).  With ``min_copy_weight`` w a case of weight ``c`` is at
        most about ``2 c / w`` copies at any depth.  The default, a hundredth
        of a case, gave every held-out case of hepatitis and pima (the
        benchmark data with missing values) the cost 0 gives, on 3 folds x 5
        seeds, while 1 (a whole case split once) cost more there
        (``benchmarks/README.md``, ``scale.py --budget-rf-missing-copies``).
        Prediction and the policy walk every branch by share as before; only
        growing changes, and only with missing values.
    probability : {"frequency", "laplace", "laplace_leaves"}, default "frequency"
        The belief from the summed leaf class weights: their frequency (the
        paper's confidence) or with Laplace's correction; "laplace_leaves":
        each tree's leaf gives Laplace's ``(n_c + 1) / (n + K)`` of its own
        class weights (paper 001, ALGORITHMS.md §3 and §8; a pure leaf of 3
        cases says 4/5, not 1), and the belief is their mean over the trees,
        so ``decide`` can trade one error against another.  The default stays the
        paper's frequency: the forest's belief is already a sum over 40 bootstrap trees
        that rarely all agree, so ``decide`` has uncertainty to trade with (its conclusions
        change with the error costs in ``tests/learners/test_error_costs.py``), and on that
        test's tables Laplace per leaf cost more (breast cancer at an error cost of 100:
        $27.32 a patient against $23.81; wine the same at every cost).
    progress_callback : callable(fraction, message), optional
        Told after each tree kept or dropped.

    Attributes
    ----------
    trees_ : list of TreeStructure
        The member trees (class weights are bootstrap-weighted counts).
    alpha_ : float or None
        The threshold-Pairs alpha used (None for Powers).
    validation_cost_ : float
        Average acquisition cost of the forest on the validation part.
    validation_loss_ : float
        Average error (or referral) cost of its conclusions there.
    budget_trace_ : list of float
        Validation acquisition cost after each kept tree (1, 2, ... trees);
        with no budget, only the whole forest's (one entry: nothing stops it,
        so the growing forest is not priced tree by tree).
    search_ : list of dict
        For every alpha tried: ``alpha``, ``n_trees``, ``cost``, ``loss``.

    Notes
    -----
    Where the paper and ALGORITHMS.md leave choices open: the random stumps'
    thresholds are the values of randomly drawn cases of the node (stored
    halfway to the next larger value); a missing value goes down both
    branches with the known cases' shares (while growing, only while the
    case's copy weighs at least ``min_copy_weight``; see there); the price ``c(t)`` a split is
    ranked with is the test's marginal price on the path (group discounts,
    derived tests), and a test re-read lower in a tree ranks at its own price
    with nothing done, the paper's fixed ``c(t)`` (at its marginal price, 0,
    trees re-cut the first test bought and never buy a second); the paper
    predicts by majority vote, this model by least expected cost over the
    summed leaf class weights (with 0/1 loss, the class with the most summed
    weight).  A node whose weight outside its largest class is below one case
    is a leaf: only fractional copies of cases with a missing value are left
    there, and isolating them grew trees of ~900,000 nodes from 7,000 cases
    (without missing values every weight is a whole case and this is the
    paper's F(S) = 0).  When even one tree breaks the
    budget, the forest is one leaf: it orders nothing and concludes from the
    training classes.
    """

    # Attributes fit sets through validate_costed_fit (declared for the type checker only).
    classes_: np.ndarray
    cost_matrix_: np.ndarray
    reject_cost_: Any
    cost_model_: CostModel

    _parameter_constraints = constraints(
        CostSensitiveClassifier._parameter_constraints,
        budget=[Interval(Real, 0, None, closed="left"), StrOptions({"auto"}), None],
        impurity=[StrOptions(set(_IMPURITIES))],
        alpha=[Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        power=[Interval(Real, 2, 10, closed="both")],
        max_trees=[Interval(Integral, 1, 1000, closed="both")],
        validation_fraction=[Interval(Real, 0, 1, closed="neither")],
        min_copy_weight=[Interval(Real, 0, None, closed="left")],
        probability=[StrOptions(set(_SMOOTHING))],
        progress_callback=[callable, None],
    )

    _fast_test_params = {"max_trees": 5, "alpha": 0.0, "random_state": 0}

    def __init__(
        self,
        *,
        test_costs=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=None,
        random_state=None,
        budget=None,
        impurity="pairs",
        alpha="auto",
        power=2.0,
        max_trees=40,
        validation_fraction=0.3,
        min_copy_weight=0.01,
        probability="frequency",
        progress_callback=None,
    ):
        self.test_costs = test_costs
        self.cost_matrix = cost_matrix
        self.reject_cost = reject_cost
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.budget = budget
        self.impurity = impurity
        self.alpha = alpha
        self.power = power
        self.max_trees = max_trees
        self.validation_fraction = validation_fraction
        self.min_copy_weight = min_copy_weight
        self.probability = probability
        self.progress_callback = progress_callback

    # ---------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Grow forests on the training part within ``budget``; keep the best on validation.

        Raises
        ------
        ValueError
            On malformed input (shapes, labels, a cost matrix or test costs
            that do not fit the data, bad parameters) or a budget below the
            cheapest test.
        """
        X, codes = validate_costed_fit(self, X, y)
        self._check_budget()
        rng = np.random.default_rng(self._random_seed())
        train, valid = _split(codes, self.validation_fraction, rng)
        prices = encode_prices(self.cost_model_)
        kind = _IMPURITIES[self.impurity]
        if kind == POWERS:
            alphas: tuple[float | None, ...] = (None,)
        elif self.alpha == "auto":
            alphas = ALPHA_GRID
        else:
            alphas = (float(self.alpha),)
        seeds = rng.integers(0, 2**31 - 1, size=(len(alphas), self.max_trees, 2))
        # What the builder reads of the training rows whatever the weights: once for every tree.
        columns = describe_columns(X[train])
        best = None
        self.search_ = []
        # Each tree's leaf sums are a (rows x leaves) @ (leaves x K) product: tiny, and BLAS
        # threads waiting on each other cost 25x the product itself (same result).
        with threadpool_limits(limits=1, user_api="blas"):
            for a, alpha in enumerate(alphas):
                forest = self._grow_forest(
                    X, codes, train, valid, kind, alpha, prices, seeds[a], (a, len(alphas)), columns
                )
                self.search_.append(
                    {
                        "alpha": alpha,
                        "n_trees": len(forest["trees"]),
                        "cost": forest["cost"],
                        "loss": forest["loss"],
                    }
                )
                if self.budget == "auto":
                    key = (forest["cost"] + forest["loss"], forest["cost"])
                else:
                    key = (forest["loss"], forest["cost"])
                if best is None or key < best[0]:
                    best = (key, alpha, forest)
        assert best is not None
        _, alpha, forest = best
        self.alpha_ = alpha
        for tree in forest["trees"]:
            tree.validate()  # grown unchecked (_grown); only the kept forest is checked
        self.trees_ = list(forest["trees"])
        self.validation_cost_ = float(forest["cost"])
        self.validation_loss_ = float(forest["loss"])
        self.budget_trace_ = [float(c) for c in forest["trace"]]
        self._refresh_caches()
        return self

    def _check_budget(self) -> None:
        if self.budget == "auto":
            return
        problem = self.budget_problem(self.cost_model_, self.budget)
        if problem is not None:
            raise ValueError(problem)

    @staticmethod
    def budget_problem(cost_model: CostModel, budget: float | None) -> str | None:
        """Why ``budget`` cannot work with these prices (below the cheapest test), or None."""
        if budget is None:
            return None
        cheapest = min(cost_model.marginal_cost(t) for t in range(cost_model.n_features))
        if budget < cheapest:
            return (
                f"budget {budget:g} is below the cheapest test ({cheapest:g}): "
                "a forest within it could order no test at all"
            )
        return None

    def _grow_forest(self, X, codes, train, valid, kind, alpha, prices, seeds, position, columns):
        """Add bootstrap GreedyTrees while the validation acquisition cost stays in budget."""
        k = len(self.classes_)
        n_train = train.shape[0]
        X_valid = X[valid]
        trees: list[TreeStructure] = []
        walks = _ForestWalks(valid.shape[0])
        counts = np.zeros((valid.shape[0], k))
        trace: list[float] = []
        cost = 0.0
        auto = self.budget == "auto"
        if auto:
            # Prefix 0 is one leaf of the training classes: it orders nothing.
            leaf = _single_leaf(codes[train], k)
            nothing = np.repeat(self._leaf_values(leaf), valid.shape[0], axis=0)
            totals = [self._prefix_loss(nothing, codes[valid])]
        X_train, y_train = X[train], codes[train]
        for t in range(self.max_trees):
            draw = np.random.default_rng(int(seeds[t, 0])).integers(0, n_train, n_train)
            weights = np.bincount(draw, minlength=n_train).astype(float)
            tree = _grown(
                *grow_greedy_tree(
                    X_train,
                    y_train,
                    weights,
                    k,
                    kind,
                    0.0 if alpha is None else float(alpha),
                    float(self.power),
                    prices,
                    int(seeds[t, 1]),
                    _TOLERANCE,
                    True,
                    columns,
                    _MIN_IMPURE_WEIGHT,
                    float(self.min_copy_weight),
                )
            )
            tree_counts = walks.add(tree, X_valid, self._leaf_values(tree))
            if self.budget is None:
                # Nothing to stop for: the forest's cost is measured once, at the end.
                kept, mean_cost = True, float("nan")
            else:
                spent = walks.acquisition(prices)[0]
                mean_cost = float(spent.mean()) if spent.size else 0.0
                kept = auto or mean_cost <= float(self.budget) + 1e-9
            self._report(position, alpha, t, kept, mean_cost)
            if not kept:
                break  # the tree that broke the budget is left out
            walks.keep()
            trees.append(tree)
            counts += tree_counts
            trace.append(mean_cost)
            cost = mean_cost
            if auto:
                totals.append(mean_cost + self._prefix_loss(counts, codes[valid]))
        if auto:
            # The first prefix of least total (fewer trees on a tie).
            n_kept = int(np.argmin(totals))
            trees, trace = trees[:n_kept], trace[:n_kept]
            cost = trace[-1] if trace else 0.0
            counts = np.zeros((valid.shape[0], k))
            for tree in trees:
                counts += _walk(tree, X_valid, None, self._leaf_values(tree))
        if trees and self.budget is None:
            spent = walks.acquisition(prices)[0]
            cost = float(spent.mean()) if spent.size else 0.0
            trace = [cost]
        if not trees:
            trees = [_single_leaf(codes[train], k)]
            counts = np.repeat(self._leaf_values(trees[0]), valid.shape[0], axis=0)
            cost = 0.0
            trace = [0.0]
        loss = self._validation_loss(counts, codes[valid])
        return {"trees": trees, "cost": cost, "loss": loss, "trace": trace}

    def _leaf_values(self, tree: TreeStructure) -> np.ndarray:
        """What each node of ``tree`` adds to a belief: its class weights, or (laplace_leaves)
        their Laplace probabilities."""
        if self.probability == "laplace_leaves":
            return smoothed_proba(tree.class_weight, 1.0)
        return tree.class_weight

    def _prefix_loss(self, counts: np.ndarray, truth: np.ndarray) -> float:
        """Mean error (or referral) cost of the least-expected-cost conclusion on each row's
        summed leaf values: :meth:`_validation_loss` vectorized, to compare forest prefixes."""
        if truth.size == 0:
            return 0.0
        proba = smoothed_proba(counts, _SMOOTHING[self.probability])
        costs = proba @ self.cost_matrix_
        best = np.argmin(costs, axis=1)
        loss = self.cost_matrix_[truth, best]
        if self.reject_cost_ is not None:
            refer = np.broadcast_to(np.asarray(self.reject_cost_, dtype=float), (costs.shape[1],))
            refers = proba @ refer < costs[np.arange(truth.size), best]
            loss = np.where(refers, refer[truth], loss)
        return float(loss.mean())

    def _validation_loss(self, counts: np.ndarray, truth: np.ndarray) -> float:
        """Mean error or referral cost of :func:`decide` on each validation row's summed counts."""
        if truth.size == 0:
            return 0.0
        proba = smoothed_proba(counts, _SMOOTHING[self.probability])
        classes = list(range(len(self.classes_)))
        refer = (
            None
            if self.reject_cost_ is None
            else np.broadcast_to(np.asarray(self.reject_cost_, dtype=float), (len(classes),))
        )
        # Many rows share their belief: decide once per distinct belief (the same action).
        actions: dict[bytes, Classify | Reject] = {}
        total = 0.0
        for p, actual in zip(proba, truth.tolist(), strict=True):
            key = p.tobytes()
            action = actions.get(key)
            if action is None:
                action = actions[key] = decide(
                    p, classes=classes, cost_matrix=self.cost_matrix_, reject_cost=self.reject_cost_
                )
            if isinstance(action, Reject):
                total += float(refer[actual])  # type: ignore[index]
            else:
                total += float(self.cost_matrix_[actual, action.label])
        return total / truth.size

    def _report(self, position, alpha, t: int, kept: bool, cost: float) -> None:
        """Tell ``progress_callback`` how many trees are in against the budget."""
        if self.progress_callback is None:
            return
        a, n_alphas = position
        budget = "no budget" if self.budget is None else f"budget {self.budget:g}"
        setting = "" if alpha is None else f"alpha {alpha:g} ({a + 1} of {n_alphas}): "
        if kept and cost != cost:  # no budget: the cost is measured at the end
            fraction = (a + (t + 1) / self.max_trees) / n_alphas
            message = f"{setting}{t + 1} trees ({budget})"
        elif kept:
            fraction = (a + (t + 1) / self.max_trees) / n_alphas
            message = f"{setting}{t + 1} trees, validation test cost {cost:.2f} ({budget})"
        else:
            fraction = (a + 1) / n_alphas
            message = f"{setting}tree {t + 1} would cost {cost:.2f}, over {budget}: kept {t} trees"
        self.progress_callback(min(fraction, 1.0), message)

    # --------------------------------------------------------- prediction
    def predict_proba(self, X) -> np.ndarray:
        """The summed leaf class weights of every tree, as probabilities (NaN: missing)."""
        check_is_fitted(self, "trees_")
        X = validate_rows(self, X)
        return smoothed_proba(self._summed_counts(X), _SMOOTHING[self.probability])

    def predict(self, X) -> np.ndarray:
        """The class of least expected cost under ``cost_matrix_`` (the policy's decision)."""
        proba = self.predict_proba(X)
        return self.classes_[best_class(proba, self.cost_matrix_)]

    def acquisition(self, X, n_trees: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """What the policy pays per row of ``X``, and how many tests it does.

        Uses the first ``n_trees`` trees (all by default); the same rule as
        :meth:`next_action`, compiled (``evaluate`` charges the same).
        """
        check_is_fitted(self, "trees_")
        X = validate_rows(self, X)
        n = len(self.trees_) if n_trees is None else int(n_trees)
        if not 1 <= n <= len(self.trees_):
            raise ValueError(f"n_trees must be 1 to {len(self.trees_)}, got {n_trees!r}")
        walks = _ForestWalks(X.shape[0])
        for tree in self.trees_[:n]:
            walks.add(tree, X)
            walks.keep()
        return walks.acquisition(encode_prices(self.cost_model_))

    def _summed_counts(self, X: np.ndarray) -> np.ndarray:
        counts = np.zeros((X.shape[0], len(self.classes_)))
        for tree in self.trees_:
            counts += _walk(tree, X, None, self._leaf_values(tree))
        return counts

    # --------------------------------------------------------------- policy
    def next_action(
        self, known: Mapping[int, float], unavailable: Iterable[int] = ()
    ) -> Extract | Classify | Reject:
        """Next step for one patient (ALGORITHMS.md §9).

        Every tree walks the patient (:meth:`TreeStructure.reach`); a tree
        waits on a test when its walk stops at a node whose test is neither
        known nor unavailable.  While some tree waits, order the test the
        most trees wait on (ties: the lower marginal price, then the lower
        index), priced by ``CostModel.marginal_cost`` with every done test.
        When every tree has reached its leaves, conclude by
        :func:`~learners.policy.decide` over the summed leaf class weights.
        The evidence counts the trees waiting (``waiting`` of ``members``).
        """
        self._ensure_fitted()
        known, unavailable = self._check_known(known, unavailable)
        reaches = [tree.reach(known, unavailable) for tree in self.trees_]
        waiting: dict[int, int] = {}
        for tree, reach in zip(self.trees_, reaches, strict=True):
            for f in {int(tree.feature[node]) for node in reach.frontier}:
                waiting[f] = waiting.get(f, 0) + 1
        members = len(self.trees_)
        if not waiting:
            counts = self._counts_at(reaches, leaves_only=True)
            return decide(
                self._belief(counts),
                classes=self._class_list,
                cost_matrix=self.cost_matrix_,
                reject_cost=self.reject_cost_,
                support=self._support(reaches, leaves_only=True),
                waiting=0,
                members=members,
            )
        done = frozenset(known)
        price = {f: self.cost_model_.marginal_cost(f, done) for f in waiting}
        test = min(waiting, key=lambda f: (-waiting[f], price[f], f))
        return Extract(
            test=test,
            cost=price[test],
            evidence=self._extract_evidence(reaches, test, waiting[test]),
        )

    def member_reach(self, known: Mapping[int, float], unavailable: Iterable[int] = ()) -> list:
        """Where each tree's walk ends for this patient (leaves and waiting nodes), as
        :meth:`next_action` walks it; a tree has finished when its ``frontier`` is empty."""
        self._ensure_fitted()
        known, unavailable = self._check_known(known, unavailable)
        return [tree.reach(known, unavailable) for tree in self.trees_]

    def _extract_evidence(self, reaches, test: int, n_waiting: int) -> Evidence:
        """Belief now (every tree where its walk stopped) and the expected cost after ``test``.

        The result of ``test`` moves each tree waiting on it to one child.
        The trees' thresholds cut the line into intervals; the chance of each
        comes from the trees' own left shares at those thresholds (their
        training estimates of P(x <= threshold), made monotone), and in each
        interval every waiting tree's child is known.  ``cost_after`` is the
        chance-weighted cost of the best conclusion over the summed weights.
        """
        now = self._counts_at(reaches, leaves_only=False)
        base = now.copy()
        cuts, shares, moves = [], [], []
        for tree, reach in zip(self.trees_, reaches, strict=True):
            for node, weight in reach.frontier.items():
                if int(tree.feature[node]) != test:
                    continue
                start = int(tree.edge_start[node])
                left, right = int(tree.child[start]), int(tree.child[start + 1])
                values = self._leaf_values(tree)
                base -= weight * values[node]
                cuts.append(float(tree.threshold[node]))
                shares.append(float(tree.branch_weight[start]))
                moves.append((weight * values[left], weight * values[right]))
        cut = np.asarray(cuts)
        order = np.argsort(cut, kind="stable")
        cdf = np.maximum.accumulate(np.asarray(shares)[order])
        chance = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
        # Interval i holds the values in (sorted cut i-1, sorted cut i]; a tree goes left
        # there exactly when its own cut is at or above the interval's upper end.
        upper = np.append(cut[order], np.inf)
        goes_left = upper[:, None] <= cut[None, :]
        to_left = np.array([left for left, _ in moves])
        to_right = np.array([right for _, right in moves])
        counts = base + goes_left @ to_left + (~goes_left) @ to_right
        beliefs = smoothed_proba(counts, _SMOOTHING[self.probability])
        after = 0.0
        for p, belief in zip(chance.tolist(), beliefs, strict=True):
            if p > 0.0:
                after += p * conclusion_cost(belief, self.cost_matrix_, self.reject_cost_)
        members = len(self.trees_)
        return evidence_for(
            self._belief(now),
            cost_matrix=self.cost_matrix_,
            reject_cost=self.reject_cost_,
            support=self._support(reaches, leaves_only=False),
            cost_after=after,
            waiting=n_waiting,
            members=members,
        )

    def _support(self, reaches, *, leaves_only: bool) -> float:
        """Training weight where the trees' walks end, per tree (the cases behind the belief)."""
        counts = self._counts_at(reaches, leaves_only=leaves_only, raw=True)
        return float(counts.sum()) / len(self.trees_)

    def _counts_at(self, reaches, *, leaves_only: bool, raw: bool = False) -> np.ndarray:
        counts = np.zeros(len(self.classes_))
        for tree, reach in zip(self.trees_, reaches, strict=True):
            ends = reach.leaves if leaves_only else reach.ends
            values = tree.class_weight if raw else self._leaf_values(tree)
            for node, weight in ends.items():
                counts += weight * values[node]
        return counts

    def _belief(self, counts: np.ndarray) -> np.ndarray:
        return smoothed_proba(counts, _SMOOTHING[self.probability])[0]

    def _ensure_fitted(self) -> None:
        if getattr(self, "trees_", None) is None:
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call fit first."
            )

    def _refresh_caches(self) -> None:
        """Label list and the trees' walk lists, built once (prediction leaves ``__dict__``)."""
        self._class_list = [c.item() if isinstance(c, np.generic) else c for c in self.classes_]
        for tree in self.trees_:
            tree._lists()

    # ----------------------------------------------------------------- JSON
    def _fitted_state(self) -> dict:
        check_is_fitted(self, "trees_")
        reject = self.reject_cost_
        return {
            "trees": [tree.to_dict() for tree in self.trees_],
            "classes": self.classes_.tolist(),
            "n_features_in": int(self.n_features_in_),
            "cost_model": self.cost_model_.to_dict(),
            "cost_matrix": self.cost_matrix_.tolist(),
            "reject_cost": reject.tolist() if isinstance(reject, np.ndarray) else reject,
            "alpha": self.alpha_,
            "validation_cost": self.validation_cost_,
            "validation_loss": self.validation_loss_,
            "budget_trace": list(self.budget_trace_),
        }

    def _load_fitted_state(self, state: dict) -> None:
        """Restore the fitted forest from a document's ``fitted`` object, every field checked.

        Raises
        ------
        ModelDocumentError
            Naming the field that is malformed or inconsistent.
        """
        where = "fitted"
        document.no_unknown_fields(state, _STATE_FIELDS, where)
        n_features = document.read(
            state, "n_features_in", where, document.integer, low=1, high=document.MAX_FEATURES
        )
        classes = document.read(state, "classes", where, document.labels)
        k = len(classes)
        stored = document.read(state, "trees", where, document.items)
        if not 1 <= len(stored) <= _MAX_TREES:
            raise document.ModelDocumentError(
                f"{where}.trees: a forest has 1 to {_MAX_TREES} trees, got {len(stored)}"
            )
        trees = []
        for i, data in enumerate(stored):
            at = f"{where}.trees[{i}]"
            tree = TreeStructure.from_dict(data, n_features=n_features, where=at)
            if tree.n_classes != k:
                raise document.ModelDocumentError(
                    f"{at}.class_weight counts {tree.n_classes} classes, "
                    f"but {where}.classes has {k}"
                )
            nominal = np.flatnonzero((tree.n_edges > 0) & np.isnan(tree.threshold))
            if nominal.size:
                raise document.ModelDocumentError(
                    f"{at}: node {int(nominal[0])} has no threshold (a forest's stumps are numeric)"
                )
            trees.append(tree)
        cost_model = document.read(
            state, "cost_model", where, document.cost_model, n_features=n_features
        )
        matrix = document.read(
            state, "cost_matrix", where, document.table, rows=k, columns=k, low=0.0
        )
        with document.reading(f"{where}.cost_matrix"):
            matrix = check_cost_matrix(matrix, k)
        reject = document.read(state, "reject_cost", where, document.reject_cost, n_classes=k)
        alpha = document.field(state, "alpha", where)
        alpha = None if alpha is None else document.number(alpha, f"{where}.alpha", low=0.0)
        validation_cost = document.read(state, "validation_cost", where, document.number, low=0.0)
        validation_loss = document.read(state, "validation_loss", where, document.number, low=0.0)
        trace = document.read(state, "budget_trace", where, document.numbers, low=0.0)
        self.trees_ = trees
        self.classes_ = classes
        self.n_features_in_ = n_features
        self.cost_model_ = cost_model
        self.cost_matrix_ = matrix
        self.reject_cost_ = reject
        self.alpha_ = alpha
        self.validation_cost_ = validation_cost
        self.validation_loss_ = validation_loss
        self.budget_trace_ = trace.tolist()
        self._refresh_caches()


_STATE_FIELDS = (
    "trees",
    "classes",
    "n_features_in",
    "cost_model",
    "cost_matrix",
    "reject_cost",
    "alpha",
    "validation_cost",
    "validation_loss",
    "budget_trace",
)
#: Most trees a document may hold.
_MAX_TREES = 1000
#: Most bytes of waiting counts the rows' runs may take while a forest grows under a budget.
_MAX_RUN_BYTES = 256 * 2**20


class _ForestWalks:
    """The trees' arrays concatenated for :func:`._kernels.forest_acquisition`.

    ``add`` appends a candidate tree (its arrays with global ids) and returns
    the rows' leaf class weights in it; ``keep`` makes it a member.
    A candidate not kept is replaced by the next ``add``.  Nothing is kept
    per node and row: the policy's walk reads each row's own values
    (:func:`._kernels.forest_acquisition`), so memory grows with the nodes
    plus the rows (issue 29: a ``(nodes, rows)`` reach table asked for
    20 GiB at 10,000 patients).

    ``acquisition`` with a candidate prices the members and the candidate
    from the members' runs of the policy (what each row bought, in order, at
    what price, and how many trees waited on each test then), replaying each
    row with the candidate (:func:`._kernels.forest_acquisition_added`), so
    pricing a forest tree by tree is not quadratic in its trees; the runs it
    returns become the members' when the candidate is kept.  ``replay=False`` runs
    the policy on every tree each time (the reference the replay is tested
    equal to).
    """

    def __init__(self, n_rows: int, *, replay: bool = True) -> None:
        self.n_rows = n_rows
        self.replay = replay
        self.parts: list[TreeArrays] = []
        self.candidate: TreeArrays | None = None
        self.n_nodes = 0
        self.n_edges = 0
        self.X = np.zeros((n_rows, 0))
        # The members' runs (start, bought, paid, counts); None: not known (priced without them).
        self.runs: Runs | None = None
        self.candidate_runs: Runs | None = None
        #: Rows where the added tree changed a purchase (run on every tree from there), summed.
        self.n_rerun = 0

    def add(
        self, tree: TreeStructure, X: np.ndarray, values: np.ndarray | None = None
    ) -> np.ndarray:
        if not tree._numeric_only():
            raise ValueError("a forest's trees split numbers only")
        self.X = np.ascontiguousarray(X, dtype=float)
        counts = _walk(tree, self.X, None, values)
        arrays = tree_arrays(tree)
        self.candidate = arrays._replace(
            edge_start=arrays.edge_start + self.n_edges, child=arrays.child + self.n_nodes
        )
        self.candidate_runs = None
        return counts

    def keep(self) -> None:
        assert self.candidate is not None
        self.parts.append(self.candidate)
        self.n_nodes += self.candidate.feature.shape[0]
        self.n_edges += self.candidate.child.shape[0]
        self.candidate = None
        self.runs, self.candidate_runs = self.candidate_runs, None

    def acquisition(self, prices) -> tuple[np.ndarray, np.ndarray]:
        """Per row: what the policy of the members (and the candidate) pays, tests done."""
        parts = self.parts + ([self.candidate] if self.candidate is not None else [])
        sizes = [part.feature.shape[0] for part in parts]
        forest = Forest(
            trees=TreeArrays(*(np.concatenate(arrays) for arrays in zip(*parts, strict=True))),
            offset=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        )
        runs = self.runs
        if runs is None and not self.parts:
            m = prices[0].shape[0]
            runs = Runs(
                start=np.zeros(self.n_rows + 1, dtype=np.int64),
                bought=np.zeros(0, dtype=np.int64),
                paid=np.zeros(0),
                counts=np.zeros((0, m), dtype=np.int16),
            )
        if self.candidate is None or runs is None or not self.replay:
            return forest_acquisition(forest, self.X, prices)
        assert len(parts) <= _MAX_TREES  # the runs count trees in int16
        cost, n_done, candidate_runs, n_rerun = forest_acquisition_added(
            forest, self.X, prices, runs
        )
        # Runs too large to keep (many rows, many tests bought): the next tree is priced by
        # running the policy on every tree.
        if candidate_runs.counts.nbytes <= _MAX_RUN_BYTES:
            self.candidate_runs = candidate_runs
        self.n_rerun += int(n_rerun)
        return cost, n_done


def _walk(
    tree: TreeStructure,
    X: np.ndarray,
    reached: np.ndarray | None,
    values: np.ndarray | None = None,
) -> np.ndarray:
    """Each row's leaf class weights in ``tree``, mixed by its shares: ``(n_rows, K)``.

    The shares are ``tree.node_mass(X)``'s.  With no ``reached`` (the forest's own walks), a
    tree of numeric splits (every BudgetRF tree) is walked by :func:`._kernels.walk_counts`,
    which sums each leaf's weights as the row reaches it: no ``(leaves, rows)`` table.
    ``values`` (default ``tree.class_weight``): what each leaf adds, e.g. its Laplace
    probabilities.
    ``reached`` (zeroed, ``(n_nodes, ceil(n_rows / 8))``), when given, gets
    ``np.packbits(node_mass(X) > 0, axis=1)`` from :func:`._kernels.walk_rows` (equal to the
    bit to ``node_mass``; the sum over the leaves is then the product of its leaf table).
    """
    leaves = tree.feature == LEAF
    X = np.ascontiguousarray(X, dtype=float)
    values = tree.class_weight if values is None else values
    if reached is None and tree._numeric_only():
        counts = np.zeros((X.shape[0], tree.n_classes))
        walk_counts(X, tree_arrays(tree), np.ascontiguousarray(values, dtype=float), counts)
        return counts
    if tree._numeric_only():
        leaf_mass = np.zeros((int(np.count_nonzero(leaves)), X.shape[0]))
        walk_rows(X, tree_arrays(tree), np.cumsum(leaves) - 1, reached, leaf_mass)
    else:
        mass = tree.node_mass(X)
        if reached is not None:
            reached[:] = np.packbits(mass > 0.0, axis=1)
        leaf_mass = mass[leaves]
    return leaf_mass.T @ values[leaves]


def _split(codes: np.ndarray, fraction: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """Training and validation row indices: stratified by class, ``fraction`` held out.

    A class with a single case stays in training; with fewer than two rows to
    spare, the training rows are also the validation rows.
    """
    train, valid = [], []
    for c in np.unique(codes):
        rows = rng.permutation(np.flatnonzero(codes == c))
        n_valid = int(round(fraction * rows.size))
        n_valid = min(max(n_valid, 1 if rows.size > 1 else 0), rows.size - 1)
        valid.append(rows[:n_valid])
        train.append(rows[n_valid:])
    train_rows = np.sort(np.concatenate(train))
    valid_rows = np.sort(np.concatenate(valid))
    if valid_rows.size == 0:
        valid_rows = train_rows
    return train_rows, valid_rows


def _grown(feature, threshold, left, right, left_share, class_weight) -> TreeStructure:
    """The compiled builder's per-node arrays as a :class:`TreeStructure`, not yet validated."""
    inner = feature != LEAF
    n_edges = np.where(inner, 2, 0)
    edge_start = np.concatenate([[0], np.cumsum(n_edges)[:-1]])
    child = np.column_stack([left[inner], right[inner]]).ravel()
    share = np.column_stack([left_share[inner], 1.0 - left_share[inner]]).ravel()
    return TreeStructure(
        feature=feature,
        threshold=np.where(inner, threshold, np.nan),
        edge_start=edge_start,
        n_edges=n_edges,
        class_weight=class_weight,
        child=child,
        branch_value=np.full(child.shape[0], np.nan),
        branch_weight=share,
        checked=False,
    )


def _structure(feature, threshold, left, right, left_share, class_weight) -> TreeStructure:
    """A :class:`TreeStructure` from the compiled builder's per-node arrays."""
    tree = _grown(feature, threshold, left, right, left_share, class_weight)
    tree.validate()
    return tree


def _single_leaf(codes: np.ndarray, k: int) -> TreeStructure:
    """A one-leaf tree holding the training class counts (orders nothing)."""
    return _structure(
        np.array([LEAF]),
        np.array([np.nan]),
        np.array([-1]),
        np.array([-1]),
        np.array([0.0]),
        np.bincount(codes, minlength=k).astype(float)[None, :],
    )
