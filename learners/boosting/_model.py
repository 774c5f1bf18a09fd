"""Boosting and Cost-Boosting over pruned C4.5 trees (paper 004, ALGORITHMS.md §7, §9)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import _document as document
from .._estimator import CostSensitiveClassifier, constraints
from .._validation import check_cost_matrix, validate_rows
from ..policy import (
    Classify,
    Extract,
    Reject,
    best_class,
    conclusion_cost,
    decide,
    evidence_for,
)
from ..serialization import SerializableMixin
from ..tree._base import (
    TREE_SHAPE_RULES,
    CaseInputMixin,
    check_nominal_splits,
    read_categories,
)
from ..tree._builder import grow_tree, prune_tree
from ..tree._criteria import GainRatio
from ..tree._formulas import least_cost_class
from ..tree._structure import Reach, TreeStructure
from . import _weights

__all__ = ["BoostingClassifier"]

#: Most trials a model may ask for (a document is refused beyond it).
MAX_TRIALS = 10_000


#: The largest vote a fit can give: AdaBoost's ``1/2 ln((1 - eps) / eps)`` at the smallest
#: positive error a float holds.  A document's vote above it is refused on load.
MAX_ALPHA = 0.5 * math.log(1.0 / float(np.finfo(float).tiny))


class BoostingClassifier(CaseInputMixin, SerializableMixin, CostSensitiveClassifier):
    """Boosted C4.5 trees voting by minimum expected cost (Ting & Zheng 1998).

    Each trial grows a pruned C4.5 tree on the training cases weighted by
    ``N w_k(n)`` (C4.5's fractional cases carry the weights), classifies the
    training cases with it and updates the weights:

    - **Boosting** (``cost_sensitive=False``): AdaBoost's update,
      ``alpha_k = 1/2 ln((1 - eps_k)/eps_k)``; a tree's errors are counted at
      its majority class, so training never looks at the cost matrix and one
      model serves any matrix chosen later (:meth:`set_cost_matrix`, or
      ``cost_matrix=`` to :meth:`next_action`, :meth:`predict` and
      :func:`learners.evaluate`).  By that design it buys the same tests whatever
      they and the errors cost, so when errors are cheap next to the tests it costs
      more than ordering nothing.
    - **Cost-Boosting** (``cost_sensitive=True``): a misclassified case gets
      weight ``M[actual, predicted]``, a correct one ``N w_k(n)``, and every
      tree votes with ``alpha_k = 1``; a tree's errors are counted at its
      least-expected-cost class under ``cost_matrix``.  The trees depend on
      the matrix, so another matrix means retraining; the matrix must meet
      the unity condition (every error costs at least 1).  The update uses
      the matrix divided by its cheapest error
      (:func:`~learners.boosting._weights.unit_error_scale`), so only the
      ratios between errors steer the weights, never their scale in money.

    When ``eps_k >= 0.5`` or ``eps_k = 0`` the weights are reset to equal
    plus small uniform noise and the trial is grown again (at most
    :data:`~learners.boosting._weights.MAX_RESETS` times in a row; then
    boosting stops with the trees it has, a perfect first tree kept alone).

    Both vote by ``EC_j(x) = sum_i sum_k alpha_k W_i(t_k(x)) M[i, j]``,
    ``W_i(t_k(x))`` the training weight of class ``i`` in the leaf tree ``k``
    puts ``x`` in: the belief is ``sum_k alpha_k W(t_k(x))`` normalized, and
    :func:`learners.policy.decide` concludes (reject included).

    Parameters
    ----------
    test_costs : CostModel or sequence of float, optional
        Price of each test; None means every test costs 1.
    cost_matrix : array-like of shape (K, K), optional
        ``M[actual, predicted]`` over ``classes_``; None is 0/1 loss.  What
        plain Boosting decides with until :meth:`set_cost_matrix`; what
        Cost-Boosting trains and decides with.
    reject_cost : float or array of K floats, optional
        Cost of referring the patient; None never refers.
    categorical_features : sequence of int or boolean mask, optional
        Nominal features (whole-number codes).
    random_state : int, RandomState or None
        Seeds the noise of the weight resets.
    n_trials : int, default 10
        ``K``, the number of boosting trials (trees), at least 1.
    cost_sensitive : bool, default False
        Cost-Boosting instead of Boosting.
    min_samples_leaf : float, default 2
        C4.5's MINOBJS, in weighted cases.
    cf : float, default 0.25
        Confidence of the member trees' error-based pruning.
    pruning : {"error", "none"}, default "error"
        The member trees' pruning (paper 004 boosts pruned trees).
    progress_callback : callable(fraction, message), optional
        Called after each trial (not saved with the model).

    Attributes
    ----------
    members_ : list of TreeStructure
        The trees, in trial order; their class weights are the trial's
        weighted cases.
    alphas_ : ndarray
        Each tree's vote ``alpha_k``.
    trial_errors_ : ndarray
        Each kept tree's weighted training error ``eps_k``.
    n_resets_ : int
        How many times the weights were reset.
    classes_, n_features_in_, cost_model_, cost_matrix_, reject_cost_, categories_
        As for the trees; ``cost_matrix_`` is the matrix in force.
    """

    _parameter_constraints = constraints(
        CostSensitiveClassifier._parameter_constraints,
        random_state=["random_state", np.random.Generator],
        n_trials=[Interval(Integral, 1, MAX_TRIALS, closed="both")],
        cost_sensitive=["boolean"],
        min_samples_leaf=TREE_SHAPE_RULES["min_samples_leaf"],
        cf=[Interval(Real, 0, 1, closed="neither")],
        pruning=[StrOptions({"error", "none"})],
        progress_callback=[callable, None],
    )

    _fast_test_params = {"n_trials": 3, "random_state": 0}

    def __init__(
        self,
        *,
        test_costs=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=None,
        random_state=None,
        n_trials=10,
        cost_sensitive=False,
        min_samples_leaf=2,
        cf=0.25,
        pruning="error",
        progress_callback=None,
    ):
        self.test_costs = test_costs
        self.cost_matrix = cost_matrix
        self.reject_cost = reject_cost
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.n_trials = n_trials
        self.cost_sensitive = cost_sensitive
        self.min_samples_leaf = min_samples_leaf
        self.cf = cf
        self.pruning = pruning
        self.progress_callback = progress_callback

    # -------------------------------------------------------------- fitting
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Run ``n_trials`` boosting trials on ``X`` (NaN = missing) and ``y``.

        Raises
        ------
        ValueError
            On malformed input or parameters (``n_trials`` below 1 among them),
            or, with ``cost_sensitive=True``, a cost matrix without the unity
            condition (the message says why Cost-Boosting needs it).
        """
        X, y_codes = self._validate_fit_input(X, y)
        n, k = X.shape[0], len(self.classes_)
        if self.cost_sensitive:
            _weights.check_unity(self.cost_matrix_)
            # The cheapest error weighs 1 at any scale of costs (paper 004's unity condition
            # met with equality): the weights stay bounded when errors cost 10,000.
            unit_errors = _weights.unit_error_scale(self.cost_matrix_)
        # Boosting counts a tree's errors at its majority class (cost-blind); Cost-Boosting
        # at its least-cost class under the matrix it trains for.
        judge = self.cost_matrix_ if self.cost_sensitive else 1.0 - np.eye(k)
        rng = np.random.default_rng(self._random_seed())
        weights = np.full(n, 1.0 / n)
        members: list[TreeStructure] = []
        alphas: list[float] = []
        errors: list[float] = []
        resets = 0
        for trial in range(int(self.n_trials)):
            in_a_row = 0
            while True:
                tree = self._member(X, y_codes, weights)
                predicted = np.asarray(best_class(_leaf_weights(tree, X), judge))
                eps = _weights.weighted_error(weights, predicted != y_codes)
                if not _weights.needs_reset(eps) or in_a_row >= _weights.MAX_RESETS:
                    break
                in_a_row += 1
                resets += 1
                weights = _weights.reset_weights(n, rng)
            if _weights.needs_reset(eps):
                # every reset in a row failed: stop; a first tree stays, alone, with vote 1
                if not members:
                    members.append(tree)
                    alphas.append(1.0)
                    errors.append(eps)
                self._report(
                    1.0,
                    f"trial {trial + 1} of {int(self.n_trials)}: weighted error {eps:.3f} after "
                    f"{in_a_row} resets; stopped with {len(members)} trees",
                )
                break
            members.append(tree)
            alphas.append(1.0 if self.cost_sensitive else _weights.adaboost_alpha(eps))
            errors.append(eps)
            self._report(
                (trial + 1) / int(self.n_trials),
                f"trial {trial + 1} of {int(self.n_trials)}: weighted error {eps:.3f}",
            )
            if trial + 1 < int(self.n_trials):
                if self.cost_sensitive:
                    weights = _weights.cost_boosting_update(
                        weights, y_codes, predicted, unit_errors
                    )
                else:
                    weights = _weights.adaboost_update(weights, predicted != y_codes, eps)
        self.members_ = members
        self.alphas_ = np.array(alphas)
        self.trial_errors_ = np.array(errors)
        self.n_resets_ = resets
        self._refresh_caches()
        return self

    def _report(self, fraction: float, message: str) -> None:
        if self.progress_callback is not None:
            self.progress_callback(fraction, message)

    def _member(self, X: np.ndarray, y_codes: np.ndarray, weights: np.ndarray) -> TreeStructure:
        """One pruned C4.5 tree grown on the cases weighted ``N w(n)``; cost-blind pruning."""
        k = len(self.classes_)
        zero_one = 1.0 - np.eye(k)
        grown = grow_tree(
            X,
            y_codes,
            k,
            criterion=GainRatio(),
            cost_model=self.cost_model_,
            cost_matrix=zero_one,
            categories=self.categories_,
            min_leaf=float(self.min_samples_leaf),
            # equal weights are plain counts, so the first tree is C4.5's own (paper 004)
            sample_weight=None if np.all(weights == weights[0]) else weights * X.shape[0],
        )
        if self.pruning == "error":
            prune_tree(grown, lambda cw: least_cost_class(cw, zero_one, False), float(self.cf))
        return grown.to_structure()

    # ---------------------------------------------------- the cost matrix
    def set_cost_matrix(self, cost_matrix) -> BoostingClassifier:
        """Decide with ``cost_matrix`` from now on, without retraining (plain Boosting).

        Raises
        ------
        ValueError
            If the matrix is not a valid K x K cost matrix, or the model is
            Cost-Boosting and the matrix differs from the one it was trained
            with (its trees were grown for that matrix: retrain instead).
        """
        self._ensure_fitted()
        self.cost_matrix_ = self._decision_matrix(cost_matrix)
        return self

    def _decision_matrix(self, cost_matrix) -> np.ndarray:
        """The matrix to decide with: ``cost_matrix_``, or ``cost_matrix`` checked."""
        if cost_matrix is None:
            return self.cost_matrix_
        matrix = check_cost_matrix(cost_matrix, len(self.classes_))
        if self.cost_sensitive and not np.array_equal(matrix, self.cost_matrix_):
            raise ValueError(
                "Cost-Boosting's trees were grown for the cost matrix it was trained with "
                f"({self.cost_matrix_.tolist()}); retrain it for another matrix, or use plain "
                "Boosting (cost_sensitive=False), which takes any matrix without retraining"
            )
        return matrix

    # ------------------------------------------------------------ prediction
    def predict_proba(self, X) -> np.ndarray:
        """The ensemble's belief: ``sum_k alpha_k W(t_k(x))`` normalized (NaN = missing)."""
        check_is_fitted(self, "members_")
        X = validate_rows(self, X)
        self._check_categories(X)
        scores = np.zeros((X.shape[0], len(self.classes_)))
        for alpha, tree in zip(self.alphas_, self.members_, strict=True):
            scores += alpha * _leaf_weights(tree, X)
        return _normalized(scores)

    def predict(self, X, cost_matrix=None) -> np.ndarray:
        """Class of least expected cost under ``cost_matrix`` (default ``cost_matrix_``)."""
        proba = self.predict_proba(X)
        return self.classes_[best_class(proba, self._decision_matrix(cost_matrix))]

    # --------------------------------------------------------------- policy
    def next_action(
        self, known: Mapping[int, float], unavailable: Iterable[int] = (), *, cost_matrix=None
    ) -> Extract | Classify | Reject:
        """Next step for one patient (ALGORITHMS.md §9).

        Every member tree walks the known results (:meth:`TreeStructure.reach`;
        an unavailable test or a NaN result splits a tree's share over its
        branches).  While some tree waits on a test that can still be done,
        orders the test the most vote weight (``alpha_k`` times the tree's
        share waiting there) waits on; ties go to the lower marginal price
        (:meth:`CostModel.marginal_cost`), then the lower index.  When every
        tree has reached its leaves, decides on the vote
        (:func:`learners.policy.decide`, reject included).

        Parameters
        ----------
        known : mapping int -> float
            Feature index -> result (NaN or None: done, no result).
        unavailable : iterable of int
            Tests that cannot be done for this patient.
        cost_matrix : array-like (K, K), optional
            Decide with this matrix instead of ``cost_matrix_`` (plain
            Boosting; Cost-Boosting accepts only its own).

        Returns
        -------
        Extract, Classify or Reject
            With :class:`~learners.policy.Evidence`: the vote's belief now,
            its training support, ``waiting`` (the vote weight waiting on the
            ordered test; 0 for a conclusion) of ``members`` (the total vote
            weight) and, for ``Extract``, ``cost_after`` (:meth:`_cost_after`).
        """
        self._ensure_fitted()
        matrix = self._decision_matrix(cost_matrix)
        known, unavailable = self._check_known(known, unavailable)
        reaches = self.member_reach(known, unavailable)
        waiting: dict[int, float] = {}
        for alpha, tree, reach in zip(self.alphas_, self.members_, reaches, strict=True):
            feature = tree._lists()["feature"]
            for node, share in reach.frontier.items():
                f = feature[node]
                waiting[f] = waiting.get(f, 0.0) + float(alpha) * share
        belief, support = self._vote(reaches)
        total = float(self.alphas_.sum())
        if waiting:
            done = frozenset(known)
            prices = {f: self.cost_model_.marginal_cost(f, done) for f in waiting}
            test = min(waiting, key=lambda f: (-round(waiting[f], 9), prices[f], f))
            return Extract(
                test=test,
                cost=prices[test],
                evidence=evidence_for(
                    belief,
                    cost_matrix=matrix,
                    reject_cost=self.reject_cost_,
                    support=support,
                    cost_after=self._cost_after(reaches, test, matrix),
                    waiting=waiting[test],
                    members=total,
                ),
            )
        return decide(
            belief,
            classes=self._class_list,
            cost_matrix=matrix,
            reject_cost=self.reject_cost_,
            support=support,
            waiting=0.0,
            members=total,
        )

    def member_reach(
        self, known: Mapping[int, float], unavailable: Iterable[int] = ()
    ) -> list[Reach]:
        """Where each member tree's walk ends for this patient (leaves and waiting nodes);
        a tree has finished when its ``frontier`` is empty."""
        self._ensure_fitted()
        known, blocked = self._check_known(known, unavailable)
        return [tree.reach(known, blocked) for tree in self.members_]

    def _cost_after(self, reaches: list[Reach], test: int, matrix: np.ndarray) -> float:
        """Expected cost of the best conclusion once ``test``'s result is known.

        One result moves every tree waiting on ``test`` at once, so the
        outcomes are joint: for a number, the waiting trees' thresholds cut
        the line into intervals, each interval's chance taken from the trees'
        own training shares left of their thresholds (in threshold order, made
        monotone by a running maximum), and in each interval every waiting tree's
        branch is known; for a category, each code's chance is the
        vote-weighted mean of the waiting nodes' shares for it.  In each
        outcome the vote is recomputed (the other trees stay where they are)
        and priced by :func:`~learners.policy.conclusion_cost`.
        """
        k = len(self.classes_)
        base = np.zeros(k)
        moving = []  # (vote x share, tree, node) of the trees waiting on ``test``
        for alpha, tree, reach in zip(self.alphas_, self.members_, reaches, strict=True):
            for node, share in reach.ends.items():
                weight = float(alpha) * share
                if node in reach.frontier and int(tree.feature[node]) == test:
                    moving.append((weight, tree, node))
                else:
                    base += weight * tree.class_weight[node]
        outcomes: list[tuple[float, np.ndarray]] = []
        if test in self.categories_:
            codes = self.categories_[test].tolist()
            total = sum(weight for weight, _, _ in moving)
            for code in codes:
                scores = base.copy()
                chance = 0.0
                for weight, tree, node in moving:
                    for e in tree.edges(node):
                        if tree.branch_value[e] == code:
                            chance += weight * float(tree.branch_weight[e]) / total
                            scores += weight * tree.class_weight[int(tree.child[e])]
                outcomes.append((chance, scores))
        else:
            cuts = np.array([float(tree.threshold[node]) for _, tree, node in moving])
            left_share = np.array(
                [float(tree.branch_weight[tree.edge_start[node]]) for _, tree, node in moving]
            )
            order = np.argsort(cuts, kind="stable")
            # P(x <= cut): each tree's own training share left of its cut, made monotone
            cdf = np.maximum.accumulate(left_share[order])
            chances = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
            uppers = np.append(cuts[order], np.inf)
            for upper, chance in zip(uppers, chances, strict=True):
                scores = base.copy()
                for (weight, tree, node), cut in zip(moving, cuts, strict=True):
                    start = int(tree.edge_start[node])
                    child = int(tree.child[start if upper <= cut else start + 1])
                    scores += weight * tree.class_weight[child]
                outcomes.append((float(chance), scores))
        return float(
            sum(
                chance * conclusion_cost(_normalized(scores[None, :])[0], matrix, self.reject_cost_)
                for chance, scores in outcomes
                if chance > 0.0
            )
        )

    def _vote(self, reaches: list[Reach]) -> tuple[np.ndarray, float]:
        """Belief ``sum_k alpha_k W(ends_k)`` normalized, and its vote-weighted support."""
        scores = np.zeros(len(self.classes_))
        support = 0.0
        for alpha, tree, reach in zip(self.alphas_, self.members_, reaches, strict=True):
            ends = reach.ends
            nodes = list(ends)
            shares = np.fromiter(ends.values(), dtype=float, count=len(nodes))
            weight = shares @ tree.class_weight[nodes]
            scores += alpha * weight
            support += alpha * float(weight.sum()) / float(shares.sum())
        return _normalized(scores[None, :])[0], support / float(self.alphas_.sum())

    def _ensure_fitted(self) -> None:
        if getattr(self, "members_", None) is None:
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call fit first."
            )

    def _refresh_caches(self) -> None:
        self._class_list = [c.item() if isinstance(c, np.generic) else c for c in self.classes_]
        for tree in self.members_:
            tree._lists()  # the walk's list copies, built once now

    # ----------------------------------------------------------------- JSON
    def _fitted_state(self) -> dict:
        check_is_fitted(self, "members_")
        reject = self.reject_cost_
        return {
            "members": [tree.to_dict() for tree in self.members_],
            "alphas": [float(a) for a in self.alphas_],
            "trial_errors": [float(e) for e in self.trial_errors_],
            "n_resets": int(self.n_resets_),
            "classes": self.classes_.tolist(),
            "n_features_in": int(self.n_features_in_),
            "cost_model": self.cost_model_.to_dict(),
            "cost_matrix": self.cost_matrix_.tolist(),
            "reject_cost": reject.tolist() if isinstance(reject, np.ndarray) else reject,
            "categories": {str(f): c.tolist() for f, c in self.categories_.items()},
        }

    def _load_fitted_state(self, state: dict) -> None:
        """Restore the fitted attributes, checking every field first.

        The member trees (each a valid tree over ``n_features_in`` features and
        the classes, its nominal splits covering the category codes), one
        positive finite vote and one error in [0, 1] per tree, at most
        ``n_trials`` trees, the cost model, the K x K matrix in force (for
        Cost-Boosting: the one it was trained with, meeting the unity
        condition), the reject cost and the category codes.

        Raises
        ------
        ModelDocumentError
            Naming the field that is malformed or inconsistent.
        """
        where = "fitted"
        n_features = document.read(
            state, "n_features_in", where, document.integer, low=1, high=document.MAX_FEATURES
        )
        classes = document.read(state, "classes", where, document.labels)
        k = len(classes)
        stored = document.items(document.field(state, "members", where), f"{where}.members")
        if not 1 <= len(stored) <= int(self.n_trials):
            raise document.ModelDocumentError(
                f"{where}.members: expected 1 to n_trials ({self.n_trials}) trees, "
                f"got {len(stored)}"
            )
        categories = read_categories(state, where, n_features=n_features)
        members = []
        for i, data in enumerate(stored):
            at = f"{where}.members[{i}]"
            tree = TreeStructure.from_dict(data, n_features=n_features, where=at)
            if tree.n_classes != k:
                raise document.ModelDocumentError(
                    f"{at}.class_weight counts {tree.n_classes} classes, "
                    f"but {where}.classes has {k}"
                )
            check_nominal_splits(tree, categories, at, f"{where}.categories")
            members.append(tree)
        alphas = document.read(
            state, "alphas", where, document.numbers, length=len(members), low=0.0
        )
        if not (alphas > 0).all():
            raise document.ModelDocumentError(f"{where}.alphas: every vote must be positive")
        if (alphas > MAX_ALPHA).any():
            raise document.ModelDocumentError(
                f"{where}.alphas: a vote above {MAX_ALPHA:.1f} cannot come from a fit "
                "(1/2 ln((1 - eps) / eps) for the smallest error a float holds), and summing "
                "such votes overflows"
            )
        errors = document.read(
            state, "trial_errors", where, document.numbers, length=len(members), low=0.0
        )
        if (errors > 1.0).any():
            raise document.ModelDocumentError(
                f"{where}.trial_errors: a weighted error is at most 1"
            )
        resets = document.read(state, "n_resets", where, document.integer, low=0, high=2**31)
        cost_model = document.read(
            state, "cost_model", where, document.cost_model, n_features=n_features
        )
        matrix = document.read(
            state, "cost_matrix", where, document.table, rows=k, columns=k, low=0.0
        )
        with document.reading(f"{where}.cost_matrix"):
            matrix = check_cost_matrix(matrix, k)
        if self.cost_sensitive:
            with document.reading(f"{where}.cost_matrix"):
                trained = check_cost_matrix(self.cost_matrix, k)
                _weights.check_unity(matrix)
            if not np.array_equal(trained, matrix):
                raise document.ModelDocumentError(
                    f"{where}.cost_matrix: Cost-Boosting decides with the matrix it was "
                    "trained with (params.cost_matrix), not another"
                )
        reject = document.read(state, "reject_cost", where, document.reject_cost, n_classes=k)
        self.members_ = members
        self.alphas_ = alphas
        self.trial_errors_ = errors
        self.n_resets_ = resets
        self.classes_ = classes
        self.n_features_in_ = n_features
        self.cost_model_ = cost_model
        self.cost_matrix_ = matrix
        self.reject_cost_ = reject
        self.categories_ = categories
        self._refresh_caches()


def _leaf_weights(tree: TreeStructure, X: np.ndarray) -> np.ndarray:
    """``W(t(x))`` for each row: the class weights of the leaves it reaches, mixed by share."""
    return tree.leaf_mix(X, tree.class_weight)


def _normalized(scores: np.ndarray) -> np.ndarray:
    """Rows scaled to sum 1; a row of zeros becomes uniform."""
    total = scores.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        proba = scores / total
    proba[total[:, 0] <= 0] = 1.0 / scores.shape[1]
    return proba
