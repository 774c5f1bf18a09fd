"""The conditioned-loss classifier: classify, extract a test, or refer (paper 003)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold, train_test_split
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from .. import _document as document
from .._estimator import TRAIN_ACCURACY_CHECKS, CostSensitiveClassifier, constraints
from .._validation import check_reject_cost, check_test_costs
from ..costs import CostModel
from ..policy import (
    Classify,
    Extract,
    Reject,
    Risk,
    conclusion_cost,
    evidence_for,
    reject_expected_cost,
)
from ..serialization import SerializableMixin
from ..tree._structure import TreeStructure
from ._checks import candidate_widths, categorical_mask, check_case
from ._risks import classify_risk, extract_risk, reject_risk
from ._subsets import FeatureRoles
from ._trees import grow_tree, out_of_fold_proba, row_posterior, tree_proba
from ._widths import policy_losses, posterior_errors
from .parzen import FeatureScaler, window_average, window_distances

__all__ = ["DEFAULT_WINDOW_WIDTHS", "ConditionedLossClassifier"]

#: Candidate hypercube half-widths, in scaled units ([0, 1] per feature).  The
#: narrow end matters: inside ann-train the cross-validated loss was lowest
#: below 0.005 in 4 of 12 folds (benchmarks/conditioned_loss_cv), so the grid
#: reaches down to 0.001 (about four training ranks either side with rank
#: scaling on 3772 cases).
DEFAULT_WINDOW_WIDTHS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5)


class ConditionedLossClassifier(SerializableMixin, CostSensitiveClassifier):
    """Test-cost sensitive diagnosis by conditioned loss (Cebe & Gunduz-Demir 2007).

    For the tests known so far the model weighs three kinds of action with the
    conditioned loss of ALGORITHMS.md §5: classify with the current classifier,
    buy one more test k, or refer (reject).  Extraction is rewarded only when
    the classifier one test away is expected to *change* the decision and be
    right, so the model stops buying tests once every candidate test is
    expected to confirm the current decision.

    Parameters
    ----------
    test_costs : CostModel or sequence of float, optional
        Test prices.  Features with zero price are free (asked first, at no
        cost); derived features (``CostModel.derived``) are never bought but
        become usable once all their inputs are known; every other feature is
        a *priced test*.  None means every test costs 1.
    reward, penalty : float
        REWARD and PENALTY of the conditioned loss (paper: 100 and 10000).
    reject_cost : float or array-like of shape (n_classes,), optional
        What the evaluator charges for a referral.  It does not influence the
        decisions (the conditioned loss does).  None means 0: referrals are
        counted, not priced.
    categorical_features : sequence of int, optional
        Nominal features: the Parzen window requires an exact match on them
        (the trees still split them as ordered codes).
    random_state : int, RandomState or None
        Seeds the validation split and the trees' tie-breaking.
    max_subsets : int
        Upper bound on 2^m, m = number of priced tests.
    window_widths : sequence of float, optional
        Candidate hypercube half-widths in scaled units, chosen on held-out
        validation data (see ``width_selection``).  Defaults to
        :data:`DEFAULT_WINDOW_WIDTHS`.
    validation_folds : int or None
        The window width is chosen by ``validation_folds``-fold cross-
        validation inside the training cases: trees grown on the other folds,
        the policy replayed on each held-out fold under every candidate
        width, the scores summed over all training cases.  None: a single
        split holding out ``validation_fraction`` (the earlier behaviour).
        Misclassifications are rare and each weighs PENALTY, so one 25%
        hold-out decides on a handful of errors and its choice swings with
        the seed.  On ann-test, random states 0-4, the single hold-out chose
        widths from 0.001 to 0.05 and made 29.8 errors on average, the
        4-fold search 0.001 to 0.01 and 20.4 errors
        (benchmarks/conditioned_loss_thyroid).  Inside ann-train (4 folds x
        3, benchmarks/conditioned_loss_cv) the two made 74 and 75 errors:
        the gain is steadier choices, at about four times the fitting time.
    validation_repeats : int
        How many times the folds are redrawn (``RepeatedStratifiedKFold``).
    validation_fraction : float
        Share of the training cases held out when ``validation_folds`` is None.
    min_samples_leaf : int
        Smallest leaf of the decision trees.  On three 4-fold CV repeats
        inside ann-train, 3 had a lower realized conditioned loss and
        fewer referrals than 5 (2 and 10 were worse), but its error counts
        were within the repeat-to-repeat spread, and it made more
        misclassifications on a small synthetic problem; 5 is kept.
    max_depth : int, optional
        Depth bound of the decision trees.
    feature_scaling : {"rank", "range"}
        How features are mapped to [0, 1] before windowing.
    leaf_smoothing : float
        Added to every class count of a leaf before normalizing (1 = Laplace).
        The conditioned loss needs graded beliefs: with a raw pure leaf
        (p = 1) classify always has the lowest risk (-REWARD), so the model
        would stop at the first leaf that happens to be pure.  Larger
        values (7-10) cut misclassifications on CV inside ann-train but
        referred two to three times as many cases the full-feature tree
        gets right, doubling the realized conditioned loss; hence 1.
    width_selection : {"loss", "posterior"}
        "loss": one width for every state, the one whose policy has the
        lowest realized conditioned loss on the validation cases (test costs,
        -REWARD / PENALTY per right / wrong decision; the objective the
        policy itself minimizes).  "posterior": per state, the width whose
        q_k is closest (squared error) to Y_k's actual posterior on the
        validation cases.  On a split of ann-train, "posterior" favoured
        wide windows whose blurred q_k made the policy stop early and
        misclassify more; hence the default.
    parzen_targets : {"resubstitution", "out_of_fold"}
        What the Parzen window averages for q_k.  "resubstitution" (paper
        003): ``Y_k``'s posteriors on its own training cases, which are too
        sure (each case sits in a leaf that counted it), so q_k promises
        that the next test will settle a case more often than it will.
        "out_of_fold": each training case's ``Y_k`` posterior comes from a
        tree grown without its fold (``parzen_folds`` folds), i.e. what
        ``Y_k`` would say about a new case.  On 4-fold CV inside ann-train
        it made q_k less sure, extraction less attractive (R(extract_k)
        charges (1 - q_k(j)) PENALTY) and the realized conditioned loss
        slightly worse, hence the default.
    parzen_folds : int
        Number of folds for ``parzen_targets="out_of_fold"`` (at least 2).

    Attributes
    ----------
    classes_ : ndarray
    n_features_in_ : int
    cost_model_ : CostModel
    cost_matrix_ : ndarray of shape (K, K)
        PENALTY off the diagonal, 0 on it: the misclassification view used
        for ``Classify.expected_cost`` (``sum_i p_i M[i, label]``).
    reject_cost_ : float or ndarray
    free_features_, priced_tests_ : tuple of int
    trees_ : list of TreeStructure
        ``trees_[S]`` is the classifier of state S (bit i = ``priced_tests_[i]``
        bought) on the free features, the tests of S and the derived features
        whose inputs are all in S.  ``Y_k`` in state S is ``trees_[S | k]``.
    window_width_ : ndarray of shape (2^m,)
        Half-width chosen for each state's Parzen windows.
    window_validation_ : ndarray of shape (1, n_widths) or (2^m, n_widths)
        Validation score of each candidate width: the mean realized loss
        ("loss"), or per state the mean squared error of q_k against Y_k's
        posterior ("posterior"; NaN for the full state).

    Notes
    -----
    REWARD and PENALTY enter the decisions and, with ``width_selection=
    "loss"``, the choice of window width; the trees do not depend on them.
    ``set_params(reward=..., penalty=...)`` on a fitted model changes its
    policy at once but keeps the widths chosen under the fitted values;
    refit to choose them again.

    How the loss trades tests against errors (the risk functions with
    three classes, REWARD 100, PENALTY 10000): with ``q_k = p`` (an empty
    window) buying a 22.78 test beats classifying only once the classes
    other than the most likely one hold more than about 1.2% of p, so a
    case may be concluded with that much doubt left, about twice the
    all-features tree's error rate on ann-test.  A ``q_k`` less sure than p
    makes extraction dearer still (R(extract_k) charges (1 - q_k(j))
    PENALTY under the belief p q_k): with p = 0.944 normal, q_k = 0.91
    normal already makes classify the cheaper action.  The loss buys a test
    when the next classifier is expected to confirm the current decision
    more firmly, and declines one that is expected to overturn a confident
    p, which is why narrow windows (more empty, q_k = p) make fewer errors.

    Scaling with m priced tests: 2^m trees and m 2^(m-1) (state, test)
    estimators.  The estimators are not stored separately: ``q_k(S)``
    averages ``trees_[S | k]``'s posteriors on the training cases, so the
    model keeps the training matrix once (n x d floats) and each tree's
    training posteriors (2^m x n x K floats).  For ann-thyroid (m = 4,
    n = 3772, d = 21, K = 3) that is 0.6 MB + 1.4 MB in memory; the JSON
    document stores the training matrix and the trees and recomputes the
    posteriors on loading.  Because of the training matrix, a saved model
    contains the training cases.
    """

    _parameter_constraints = constraints(
        CostSensitiveClassifier._parameter_constraints,
        without=("cost_matrix",),  # PENALTY prices the errors
        reward=[Interval(Real, 0, None, closed="left")],
        penalty=[Interval(Real, 0, None, closed="left")],
        max_subsets=[Interval(Integral, 1, None, closed="left")],
        window_widths=["array-like", None],
        validation_folds=[Interval(Integral, 2, None, closed="left"), None],
        validation_repeats=[Interval(Integral, 1, None, closed="left")],
        validation_fraction=[Interval(Real, 0, 1, closed="neither")],
        min_samples_leaf=[Interval(Integral, 1, None, closed="left")],
        max_depth=[Interval(Integral, 1, None, closed="left"), None],
        feature_scaling=[StrOptions({"rank", "range"})],
        leaf_smoothing=[Interval(Real, 0, None, closed="left")],
        width_selection=[StrOptions({"loss", "posterior"})],
        parzen_targets=[StrOptions({"resubstitution", "out_of_fold"})],
        parzen_folds=[Interval(Integral, 2, None, closed="left")],
    )

    _fast_test_params = {"validation_folds": 2, "window_widths": (0.05, 0.5), "random_state": 0}

    _expected_failed_checks = {
        **dict.fromkeys(
            TRAIN_ACCURACY_CHECKS,
            "with no free feature the first decision is taken in the empty state, whose "
            "Parzen window holds every training case, so q_k averages Y_k's posteriors to the "
            "class prior; on balanced binary blobs q_k = p = (0.5, 0.5), and the risks of "
            "ALGORITHMS.md §5 then put classify below every test by REWARD/4 + its cost: the "
            "model concludes untested (accuracy 0.5)",
        ),
        **dict.fromkeys(
            ("check_dtype_object", "check_array_api_input"),
            "by design the model grows one classifier per subset of priced tests: the "
            "check's 10 features, all priced at the default 1, need 2^10 = 1024 classifiers, "
            "above max_subsets, and fit refuses them with that message",
        ),
    }

    def __init__(
        self,
        *,
        test_costs=None,
        reward=100.0,
        penalty=10000.0,
        reject_cost=None,
        categorical_features=None,
        random_state=None,
        max_subsets=64,
        window_widths=None,
        validation_folds=4,
        validation_repeats=1,
        validation_fraction=0.25,
        min_samples_leaf=5,
        max_depth=None,
        feature_scaling="rank",
        leaf_smoothing=1.0,
        width_selection="loss",
        parzen_targets="resubstitution",
        parzen_folds=5,
    ):
        self.test_costs = test_costs
        self.reward = reward
        self.penalty = penalty
        self.reject_cost = reject_cost
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.max_subsets = max_subsets
        self.window_widths = window_widths
        self.validation_folds = validation_folds
        self.validation_repeats = validation_repeats
        self.validation_fraction = validation_fraction
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.feature_scaling = feature_scaling
        self.leaf_smoothing = leaf_smoothing
        self.width_selection = width_selection
        self.parzen_targets = parzen_targets
        self.parzen_folds = parzen_folds

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN means "missing"
        return tags

    # ------------------------------------------------------------------ fit
    @staticmethod
    def states_needed(test_costs: CostModel) -> tuple[int, int]:
        """``(m, 2^m)``: the priced tests of ``test_costs`` and the state classifiers they need.

        What :meth:`fit` compares with ``max_subsets``; callers (the app's
        training form) ask here before queueing a fit that would be refused.
        """
        roles = FeatureRoles.from_cost_model(test_costs)
        return len(roles.priced), roles.n_states

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Grow the 2^m state classifiers and choose each state's window width.

        Raises
        ------
        ValueError
            If 2^m exceeds ``max_subsets``, or on malformed input.
        """
        X, y_codes = self._check_training_data(X, y)
        self.cost_model_ = check_test_costs(self.test_costs, X.shape[1])
        self.reject_cost_ = (
            0.0
            if self.reject_cost is None
            else check_reject_cost(self.reject_cost, len(self.classes_))
        )
        roles = FeatureRoles.from_cost_model(self.cost_model_)
        if roles.n_states > self.max_subsets:
            raise ValueError(
                f"{len(roles.priced)} priced tests need 2^{len(roles.priced)} = {roles.n_states} "
                f"classifiers, above max_subsets={self.max_subsets}; pass "
                f"max_subsets={roles.n_states} (or more) to allow it, or make some tests free "
                "or derived in test_costs"
            )
        self.categorical_mask_ = categorical_mask(self.categorical_features, X.shape[1])
        rng = check_random_state(self.random_state)
        tree_seed = int(rng.randint(np.iinfo(np.int32).max))
        widths = candidate_widths(self.window_widths, DEFAULT_WINDOW_WIDTHS)

        splits = self._validation_splits(y_codes, rng)
        n_validated = sum(val_idx.size for _, val_idx in splits)
        scores = np.zeros(())  # 0-d: the first fold's scores broadcast it to their shape
        for fit_idx, val_idx in splits:
            trees = self._grow_all(X[fit_idx], y_codes[fit_idx], roles, tree_seed)
            targets = self._out_of_fold_targets(X[fit_idx], y_codes[fit_idx], roles, tree_seed)
            if self.width_selection == "posterior":
                fold_scores = posterior_errors(
                    trees,
                    X[fit_idx],
                    X[val_idx],
                    roles,
                    widths,
                    categorical=self.categorical_mask_,
                    scaling=self.feature_scaling,
                    smoothing=self.leaf_smoothing,
                    fit_posteriors=targets,
                )
            else:
                self._install(X[fit_idx], trees, roles, targets)
                fold_scores = policy_losses(self, X[val_idx], y_codes[val_idx], widths)[None, :]
            scores = scores + val_idx.size * fold_scores
        self.window_validation_ = scores / n_validated
        if self.width_selection == "posterior":
            best = np.argmin(np.nan_to_num(self.window_validation_, nan=0.0), axis=1)
            self.window_width_ = widths[best]
        else:
            best_width = widths[np.argmin(self.window_validation_[0])]
            self.window_width_ = np.full(roles.n_states, best_width)

        targets = self._out_of_fold_targets(X, y_codes, roles, tree_seed)
        self._install(X, self._grow_all(X, y_codes, roles, tree_seed), roles, targets)
        return self

    def _out_of_fold_targets(self, X, y_codes, roles, seed) -> list[np.ndarray] | None:
        """Per state, out-of-fold posteriors on ``X`` (None for resubstitution targets)."""
        if self.parzen_targets == "resubstitution":
            return None
        return [
            out_of_fold_proba(
                X,
                y_codes,
                roles.usable(state),
                len(self.classes_),
                n_folds=int(self.parzen_folds),
                smoothing=self.leaf_smoothing,
                min_samples_leaf=self.min_samples_leaf,
                max_depth=self.max_depth,
                random_state=seed,
            )
            for state in range(roles.n_states)
        ]

    def _grow_all(self, X, y_codes, roles, seed) -> list[TreeStructure]:
        return [
            grow_tree(
                X,
                y_codes,
                roles.usable(state),
                len(self.classes_),
                min_samples_leaf=self.min_samples_leaf,
                max_depth=self.max_depth,
                random_state=seed,
            )
            for state in range(roles.n_states)
        ]

    def _install(
        self,
        X_train: np.ndarray,
        trees: list[TreeStructure],
        roles: FeatureRoles,
        targets: list[np.ndarray] | None = None,
    ) -> None:
        """Set the fitted attributes that follow from the stored state.

        ``targets``: per state, the posteriors the Parzen windows average
        (None: the trees' resubstitution posteriors on ``X_train``).
        """
        self.X_train_ = X_train
        self.trees_ = trees
        self.free_features_ = roles.free
        self.priced_tests_ = roles.priced
        self.n_features_in_ = X_train.shape[1]
        self._roles = roles
        self._scaler = FeatureScaler(X_train, self.categorical_mask_, self.feature_scaling)
        self._scaled_train = self._scaler.transform(X_train)
        self._out_of_fold = targets
        self._train_posteriors = (
            [tree_proba(t, X_train, self.leaf_smoothing) for t in trees]
            if targets is None
            else targets
        )
        self._usable = [roles.usable(state) for state in range(roles.n_states)]

    @property
    def cost_matrix_(self) -> np.ndarray:
        """PENALTY off the diagonal, 0 on it (follows the current ``penalty``)."""
        check_is_fitted(self, "trees_")
        n_classes = len(self.classes_)
        return float(self.penalty) * (1.0 - np.eye(n_classes))

    # --------------------------------------------------------------- policy
    def next_action(self, known: Mapping[int, float], unavailable: Iterable[int] = ()):
        """Minimum-risk action for one case whose results ``known`` maps index to value.

        Free features and derived features whose inputs are known are asked
        for first (they cost nothing; the evidence then has no ``risks``).
        Otherwise the state S is the set of priced tests in ``known`` (a NaN
        or None value is a test done with no result: bought, value missing);
        every priced test neither known nor unavailable is a candidate, and
        unavailable tests count as not bought in the reject risk.

        Returns
        -------
        Extract, Classify or Reject
            Its evidence holds the posterior p, the training support of the
            state's leaf, and ``risks``: a :class:`~learners.policy.Risk` for
            classify, reject and every candidate test.
        """
        check_is_fitted(self, "trees_")
        known, unavailable = check_case(known, unavailable, self.n_features_in_)
        return self._next_action(known, unavailable, self.window_width_, None)

    def _next_action(self, known, unavailable, widths, memo):
        """:meth:`next_action` on checked input, with the window half-width of each state.

        ``memo`` (a dict, or None) keeps, per state, what depends only on the
        case's known values and not on the width: the current posterior, its
        support and the window distances.  The width search replays one case
        under every candidate width with one memo, so each is computed once
        per state.
        """
        roles = self._roles
        done = frozenset(known)
        state = roles.state_of(known)
        usable = self._usable[state]
        refer = self.reject_cost_ if self.reject_cost is not None else None
        for feature in usable:
            if feature not in known and feature not in unavailable:
                # Free (or computable) tests first: they cost nothing and risk nothing.
                # Not memoized: the free answers still change within this state.
                p, support = row_posterior(
                    self.trees_[state], self._state_row(known, usable), self.leaf_smoothing
                )
                return Extract(
                    test=int(feature),
                    cost=self.cost_model_.marginal_cost(int(feature), done),
                    evidence=evidence_for(
                        p, cost_matrix=self.cost_matrix_, reject_cost=refer, support=support
                    ),
                )

        not_bought = [k for k in roles.priced if k not in known]
        seen = None if memo is None else memo.get(state)
        if seen is None:
            x = self._state_row(known, usable)
            p, support = row_posterior(self.trees_[state], x, self.leaf_smoothing)
            distances = self._distances(x, usable) if not_bought else None
            seen = (p, support, distances)
            if memo is not None:
                memo[state] = seen
        p, support, distances = seen
        q = self._estimate(state, distances, float(widths[state]), not_bought, p)
        candidates = [k for k in not_bought if k not in unavailable]

        risks = [
            Risk("classify", classify_risk(p, self.reward, self.penalty)),
            Risk("reject", reject_risk(p, q, self.reward, self.penalty)),
        ]
        costs = {}
        for k in candidates:
            costs[k] = self.cost_model_.marginal_cost(k, done)
            risks.append(
                Risk("extract", extract_risk(p, q[k], costs[k], self.reward, self.penalty), int(k))
            )
        # ties: classify, then reject, then tests in index order
        best = int(np.argmin([r.risk for r in risks]))
        proba = tuple(float(v) for v in p)
        if best == 0:
            label_index = int(np.argmax(p))
            return Classify(
                label=self._label(label_index),
                proba=proba,
                expected_cost=float(p @ self.cost_matrix_[:, label_index]),
                evidence=evidence_for(
                    p,
                    cost_matrix=self.cost_matrix_,
                    reject_cost=refer,
                    support=support,
                    risks=risks,
                ),
            )
        if best == 1:
            return Reject(
                expected_cost=reject_expected_cost(p, self.reject_cost_),
                proba=proba,
                evidence=evidence_for(
                    p,
                    cost_matrix=self.cost_matrix_,
                    reject_cost=refer,
                    support=support,
                    risks=risks,
                ),
            )
        test = candidates[best - 2]
        return Extract(
            test=int(test),
            cost=float(costs[test]),
            evidence=evidence_for(
                p,
                cost_matrix=self.cost_matrix_,
                reject_cost=refer,
                support=support,
                # the model's own estimate of the posterior once the test is read: q_k
                cost_after=conclusion_cost(q[test], self.cost_matrix_, refer),
                risks=risks,
            ),
        )

    def _state_row(self, known: Mapping[int, float], usable: np.ndarray) -> np.ndarray:
        """A full-width row holding the known values of the state's usable features."""
        x = np.full(self.n_features_in_, np.nan)
        for feature in usable:
            if feature in known:
                x[feature] = known[feature]
        return x

    def _distances(self, x: np.ndarray, usable: np.ndarray) -> np.ndarray:
        """Chebyshev distances, on the features ``usable``, from ``x`` to every training case."""
        z = self._scaler.transform(x[None, :])
        return window_distances(z, self._scaled_train, usable, self.categorical_mask_)

    def _estimate(self, state, distances, width, tests, p) -> dict[int, np.ndarray]:
        """Parzen estimate q_k of Y_{S+k}'s posterior for each test k in ``tests``."""
        return {
            k: window_average(
                distances,
                width,
                self._train_posteriors[self._roles.with_test(state, k)],
                p[None, :],
            )[0]
            for k in tests
        }

    # ------------------------------------------------------ whole-row helpers
    def decide_all(self, X, unavailable=None, *, return_tests: bool = False):
        """Run the policy on each full row of ``X``, revealing only what it asks for.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN marks a test done with no result (paid for, value missing).
        unavailable : iterable of int, optional
            Tests unavailable for every case.
        return_tests : bool
            Also return, per case, the tests asked for in order.

        Returns
        -------
        list of Classify or Reject (and list of tuple of int when ``return_tests``)
        """
        check_is_fitted(self, "trees_")
        X = self._check_rows(X)
        blocked = frozenset(int(t) for t in (unavailable or ()))
        actions, paths = [], []
        for row in X:
            action, asked = self._decide_case(row, blocked, self.window_width_, None)
            actions.append(action)
            paths.append(asked)
        return (actions, paths) if return_tests else actions

    def _decide_case(self, row, blocked, widths, memo):
        """Walk one full row to its decision; returns the decision and the tests asked."""
        known: dict[int, float] = {}
        missing = set(blocked)
        asked: list[int] = []
        while True:
            action = self._next_action(known, missing, widths, memo)
            if action.kind != "extract":
                return action, tuple(asked)
            asked.append(action.test)
            # NaN: the test was done (and paid) but gave no result, as in learners.evaluate
            known[action.test] = float(row[action.test])

    def predict_proba(self, X) -> np.ndarray:
        """Belief at the end of the policy for each row (aligned with ``classes_``)."""
        return np.array([a.proba for a in self.decide_all(X)])

    def predict(self, X) -> np.ndarray:
        """Label reached by the policy; a referred case gets its most probable class."""
        labels = [
            a.label if a.kind == "classify" else self._label(int(np.argmax(a.proba)))
            for a in self.decide_all(X)
        ]
        return np.asarray(labels, dtype=self.classes_.dtype)

    # -------------------------------------------------------- serialization
    def _fitted_state(self) -> dict:
        check_is_fitted(self, "trees_")
        refer = self.reject_cost_
        return {
            "classes": self.classes_.tolist(),
            "cost_model": self.cost_model_.to_dict(),
            "reject_cost": refer.tolist() if isinstance(refer, np.ndarray) else refer,
            "categorical": self.categorical_mask_.tolist(),
            "X_train": [
                [None if np.isnan(v) else v for v in row] for row in self.X_train_.tolist()
            ],
            "trees": [t.to_dict() for t in self.trees_],
            "window_width": self.window_width_.tolist(),
            "parzen_targets": (
                None if self._out_of_fold is None else [t.tolist() for t in self._out_of_fold]
            ),
            "window_validation": [
                [None if np.isnan(v) else v for v in row]
                for row in self.window_validation_.tolist()
            ],
        }

    def _load_fitted_state(self, state: dict) -> None:
        """Restore the fitted attributes from a document's ``fitted`` object.

        Every field is checked before use: the training matrix (numbers or
        null), a cost model of as many tests as it has columns, one tree per
        state (2^m for m priced tests) whose structure is valid and which
        tests only the features its state can use, one positive window width
        per state, and the stored Parzen targets (posteriors: rows of
        non-negative numbers summing to 1).

        Raises
        ------
        ModelDocumentError
            Naming the field that is malformed or inconsistent.
        """
        where = "fitted"
        classes = document.read(state, "classes", where, document.labels)
        k = len(classes)
        X_train = document.read(state, "X_train", where, document.table, allow_none=True)
        n_cases, n_features = X_train.shape
        if not 1 <= n_cases <= document.MAX_CASES or not 1 <= n_features <= document.MAX_FEATURES:
            raise document.ModelDocumentError(
                f"{where}.X_train: {n_cases} cases x {n_features} features, expected 1 to "
                f"{document.MAX_CASES} cases and 1 to {document.MAX_FEATURES} features"
            )
        cost_model = document.read(
            state, "cost_model", where, document.cost_model, n_features=n_features
        )
        reject = document.read(
            state, "reject_cost", where, document.reject_cost, n_classes=k, allow_none=False
        )
        categorical = document.read(state, "categorical", where, document.flags, length=n_features)
        roles = FeatureRoles.from_cost_model(cost_model)
        stored = document.read(state, "trees", where, document.items)
        if len(roles.priced) > 30 or len(stored) != roles.n_states:
            raise document.ModelDocumentError(
                f"{where}.trees: the cost model has {len(roles.priced)} priced tests, so "
                f"2^{len(roles.priced)} states, but the document has {len(stored)} trees"
            )
        trees = []
        for s, data in enumerate(stored):
            at = f"{where}.trees[{s}]"
            tree = TreeStructure.from_dict(data, n_features=n_features, where=at)
            if tree.n_classes != k:
                raise document.ModelDocumentError(
                    f"{at}.class_weight counts {tree.n_classes} classes, "
                    f"but {where}.classes has {k}"
                )
            unusable = np.setdiff1d(tree.feature[tree.feature >= 0], roles.usable(s))
            if unusable.size:
                raise document.ModelDocumentError(
                    f"{at} tests feature {int(unusable[0])}, which its state (tests "
                    f"{list(roles.bought(s))} bought) cannot use"
                )
            trees.append(tree)
        widths = document.read(
            state, "window_width", where, document.numbers, length=roles.n_states, low=0.0
        )
        if not (widths > 0).all():
            raise document.ModelDocumentError(f"{where}.window_width: widths must be positive")
        validation = document.read(
            state, "window_validation", where, document.table, allow_none=True
        )
        targets = None
        if state.get("parzen_targets") is not None:
            targets = [
                _posteriors(table, f"{where}.parzen_targets[{s}]", n_cases, k)
                for s, table in enumerate(
                    document.read(
                        state, "parzen_targets", where, document.items, length=roles.n_states
                    )
                )
            ]
        self.classes_ = classes
        self.cost_model_ = cost_model
        self.reject_cost_ = reject
        self.categorical_mask_ = categorical
        self.window_width_ = widths
        self.window_validation_ = validation
        self._install(X_train, trees, roles, targets)

    # ----------------------------------------------------------- validation
    def _check_training_data(self, X, y):
        """``X`` as floats (NaN = missing, infinity refused) and ``y`` as class codes."""
        X, y = validate_data(
            self, X, y, ensure_all_finite="allow-nan", dtype=np.float64, ensure_min_samples=2
        )
        check_classification_targets(y)
        self.classes_, y_codes = np.unique(y, return_inverse=True)
        return X, y_codes.astype(np.int64)

    def _check_rows(self, X) -> np.ndarray:
        return validate_data(self, X, reset=False, ensure_all_finite="allow-nan", dtype=np.float64)

    def _validation_splits(self, y_codes, rng) -> list[tuple[np.ndarray, np.ndarray]]:
        """(fit rows, validation rows) pairs on which the window width is chosen.

        ``validation_folds`` folds (stratified when every class has that many
        cases), repeated ``validation_repeats`` times; or, with
        ``validation_folds=None``, one split holding out ``validation_fraction``.
        """
        seed = rng.randint(np.iinfo(np.int32).max)
        n_cases = y_codes.shape[0]
        counts = np.bincount(y_codes)
        if self.validation_folds is None:
            n_val = round(self.validation_fraction * n_cases)
            if n_val < 1 or n_val >= n_cases:
                raise ValueError("too few training cases to hold out validation data")
            stratify = y_codes if counts.min() >= 2 and n_val >= len(counts) else None
            fit_idx, val_idx = train_test_split(
                np.arange(n_cases), test_size=n_val, stratify=stratify, random_state=seed
            )
            return [(np.sort(fit_idx), np.sort(val_idx))]
        folds, repeats = int(self.validation_folds), int(self.validation_repeats)
        if folds > n_cases:
            raise ValueError(
                f"validation_folds={folds} needs at least {folds} training cases, got {n_cases}"
            )
        splitter = (
            RepeatedStratifiedKFold(n_splits=folds, n_repeats=repeats, random_state=seed)
            if counts.min() >= folds
            else RepeatedKFold(n_splits=folds, n_repeats=repeats, random_state=seed)
        )
        return list(splitter.split(np.zeros((n_cases, 1)), y_codes))

    def _label(self, index: int):
        label = self.classes_[index]
        return label.item() if isinstance(label, np.generic) else label


def _posteriors(value, where: str, n_cases: int, n_classes: int) -> np.ndarray:
    """A stored table of posteriors: one row per training case, each a distribution."""
    table = document.table(value, where, rows=n_cases, columns=n_classes, low=0.0)
    sums = table.sum(axis=1)
    off = np.flatnonzero(np.abs(sums - 1.0) > 1e-6)
    if off.size:
        raise document.ModelDocumentError(
            f"{where}[{int(off[0])}] sums to {sums[off[0]]:g}, not 1 (a posterior)"
        )
    return table
