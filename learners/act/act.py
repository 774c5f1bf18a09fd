"""ACT (Esmeir & Markovitch 2008) and LSID3: anytime trees grown by sampled lookahead.

Both share the tree package's prediction, step-by-step policy, text export
and JSON state (:class:`~learners.tree.TreePolicyMixin`); they differ from
the greedy learners only in how each split is chosen (see :mod:`._growth`).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from .. import _document as document
from .._estimator import TRAIN_ACCURACY_CHECKS, CostSensitiveClassifier, constraints
from ..serialization import SerializableMixin
from ..tree import EG2Classifier, GreedyTreeClassifier, TreePolicyMixin
from ._encoding import encode_data, encode_prices, normal_coefficient
from ._growth import GrowthSettings, cost_prune, estimated_total, grow_lookahead_tree

__all__ = ["ACTClassifier", "LSID3Classifier", "default_w_cf"]

_STOP_RULES = ("leaf_cost", "prune")


def default_w_cf(cost_model, cost_matrix) -> tuple[float, float]:
    """ACT's ``w`` and ``cf`` from the costs (ALGORITHMS.md §4, reconstructed).

    ``x = mean off-diagonal M / TC``; ``w = 0.5 + exp(-x)``;
    ``cf = 0.2 + 0.05 (1 + (x - 1)/(x + 1))``.  Free tests (TC = 0) give
    ``x = inf``: ``w = 0.5``, ``cf = 0.3``.
    """
    matrix = np.asarray(cost_matrix, dtype=float)
    k = matrix.shape[0]
    off = matrix[~np.eye(k, dtype=bool)]
    mean_error = float(off.mean()) if off.size else 0.0
    tc = float(cost_model.total_cost())
    x = math.inf if tc <= 0 else mean_error / tc
    if math.isinf(x):
        return 0.5, 0.3
    return 0.5 + math.exp(-x), 0.2 + 0.05 * (1.0 + (x - 1.0) / (x + 1.0))


class _LookaheadTreeClassifier(TreePolicyMixin, SerializableMixin, CostSensitiveClassifier):
    """Shared fit of ACT and LSID3; subclasses set ``_by_size``."""

    _by_size = False

    _parameter_constraints = constraints(
        CostSensitiveClassifier._parameter_constraints,
        random_state=["random_state", np.random.Generator],
        r=[Interval(Integral, 0, None, closed="left")],
        min_samples_leaf=[Interval(Real, 1, None, closed="left")],
        max_depth=[Interval(Integral, 1, None, closed="left"), None],
        probability=[StrOptions({"laplace", "frequency"})],
        n_jobs=[Interval(Integral, 1, None, closed="left"), None],
        progress_callback=[callable, None],
    )

    _fast_test_params = {"r": 2, "random_state": 0}

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Grow the tree on ``X`` (NaN = missing) and ``y``.

        Raises
        ------
        ValueError
            On malformed input or parameters.
        """
        X, y_codes = self._validate_fit_input(X, y)
        n_classes = len(self.classes_)
        self.w_, self.cf_ = self._resolve_w_cf()
        settings = self._settings(X.shape[0])
        prices = encode_prices(self.cost_model_)
        progress = self.progress_callback
        if self.r == 0:
            self.tree_ = self._greedy().fit(X, y).tree_
        elif n_classes == 1:
            self.tree_ = self._greedy().fit(X, y).tree_
        else:
            data = encode_data(X, self.categories_)
            grown, node_price = grow_lookahead_tree(
                data,
                y_codes.astype(np.int64),
                n_classes,
                prices,
                self.cost_matrix_,
                settings,
                np.random.default_rng(self._random_seed()),
                progress,
            )
            if self._post_prune():
                cost_prune(grown, node_price, self.cost_matrix_, settings)
            self.tree_ = grown.to_structure()
        self.estimated_cost_ = estimated_total(self.tree_, prices, self.cost_matrix_, settings)
        self._refresh_caches()  # built now so that prediction never changes __dict__
        if progress is not None:
            progress(1.0, f"tree of {self.tree_.n_leaves} leaves")
        return self

    # ----------------------------------------------------------- JSON state
    def _fitted_state(self) -> dict:
        state = super()._fitted_state()
        state["w"] = float(self.w_)
        state["cf"] = float(self.cf_)
        state["estimated_cost"] = float(self.estimated_cost_)
        return state

    def _load_fitted_state(self, state: dict) -> None:
        """The tree's state (checked by :class:`TreePolicyMixin`) plus w, cf and the
        estimated cost, each a finite number in its range; else ModelDocumentError."""
        super()._load_fitted_state(state)
        self.w_ = document.read(state, "w", "fitted", document.number, low=0.0)
        self.cf_ = document.read(state, "cf", "fitted", document.number, low=0.0, high=1.0)
        self.estimated_cost_ = document.read(
            state, "estimated_cost", "fitted", document.number, low=0.0
        )

    # -------------------------------------------------------------- private
    def _greedy(self) -> GreedyTreeClassifier:
        return EG2Classifier(
            test_costs=self.cost_model_,
            cost_matrix=self.cost_matrix_,
            reject_cost=self.reject_cost_,
            categorical_features=self.categorical_features,
            min_samples_leaf=self.min_samples_leaf,
            cf=self.cf_,
            pruning="error",
            probability=self.probability,
            w=self.w_ if not self._by_size else 0.0,
        )

    def _settings(self, n_samples: int) -> GrowthSettings:
        return GrowthSettings(
            r=int(self.r),
            by_size=self._by_size,
            w=float(self.w_),
            cf=float(self.cf_),
            coeff=normal_coefficient(self.cf_)
            if getattr(self, "ee", "normal") == "normal"
            else -1.0,
            laplace=self.probability == "laplace",
            min_leaf=float(self.min_samples_leaf),
            max_depth=int(self.max_depth) if self.max_depth is not None else 64,
            prune_lookahead=bool(getattr(self, "prune_lookahead", False)),
            stop_at_leaf_cost=getattr(self, "stop_rule", "prune") == "leaf_cost",
            n_jobs=int(self.n_jobs or 1),
            samples_per_threshold=getattr(self, "threshold_samples", "shared") == "each",
        )

    def _resolve_w_cf(self) -> tuple[float, float]:
        w, cf = default_w_cf(self.cost_model_, self.cost_matrix_)
        return w, cf

    def _post_prune(self) -> bool:
        return False


class ACTClassifier(_LookaheadTreeClassifier):
    """ACT: anytime cost-sensitive tree learner (Esmeir & Markovitch 2008).

    Grows top-down; a candidate test ``theta`` at a node with cases ``E``
    scores ``c(theta | path) + sum_k |E_k|/|E| * best_k``, where ``best_k``
    is the least ``Total(T, E_k) = tcost + mcost/|E_k|`` among ``r`` sample
    trees (1 EG2 + ``r - 1`` stochastic EG2) grown on the child's cases with
    the path's tests free.  A numeric feature offers its ``r`` thresholds of
    highest information gain, which share the same ``r`` samples: one EG2
    tree per child each when it has ``r`` thresholds, ``r // t`` when it has
    only ``t`` (a binary numeric feature gets what a nominal one gets).  The
    test of least score is chosen; ``r = 0`` is plain EG2 (the same tree as
    :class:`~learners.tree.EG2Classifier` with ``w_`` and ``cf_``).

    The pessimistic error ``EE`` is C4.5's normal approximation by default
    (see ``ee``); the ``r = 0`` tree is EG2's, pruned with the exact limit.

    Parameters
    ----------
    test_costs : CostModel or sequence of float, optional
        Price of each test; None means every test costs 1.
    cost_matrix : array-like of shape (K, K), optional
        ``M[actual, predicted]`` over ``classes_``; None is 0/1 loss.
    reject_cost : float or array of K floats, optional
        Cost of referring the patient; None never refers.
    categorical_features : sequence of int or boolean mask, optional
        Nominal features (whole-number codes, one branch per code).
    random_state : int, RandomState, Generator or None
        Seeds the stochastic EG2 samples.
    r : int, default 5
        Sample size, the anytime knob: time grows about linearly with it.
    w : float, optional
        EG2's cost emphasis in the samples; None derives it from the costs
        (``0.5 + exp(-x)``, ``x = mean off-diagonal M / TC``).
    cf : float, optional
        Confidence of the pessimistic error; None derives it from the costs
        (``0.2 + 0.05 (1 + (x - 1)/(x + 1))``).
    stop_rule : {"leaf_cost", "prune"}, default "leaf_cost"
        ``"leaf_cost"``: a node becomes a leaf when no candidate scores below
        its own leaf cost ``mcost / |E|``; ``"prune"``: grow while any split
        is valid, then rely on post-pruning.
    prune_lookahead : bool, default False
        Score each sample tree as if cost-pruned (bottom-up, a subtree
        counts as a leaf when that is cheaper).  False scored lower costs on
        the Turney data (heart, hepatitis, thyroid; benchmarks/act_report.py);
        True is what lets ACT find hard concepts such as parity, where a
        sample that goes astray would otherwise drown the good ones in the
        pessimistic errors of its tiny leaves.
    threshold_samples : {"shared", "each"}, default "shared"
        ``"shared"`` (ALGORITHMS.md §4): a numeric feature's ``r`` thresholds
        share the ``r`` samples a nominal feature gets (one EG2 tree per
        child each).  ``"each"``: every threshold gets all ``r`` samples
        (1 EG2 + ``r - 1`` SEG2), about ``r`` times the work; it removes the
        bias of ``"shared"`` toward nominal tests, whose children take the
        least of ``r`` noisy samples (on ann-thyroid at high error costs that
        bias buys a chain of cheap, useless history questions).
    post_prune : bool, default True
        Cost-sensitive post-pruning of the final tree.
    min_samples_leaf : float, default 2
        A split needs two branches with at least this much known weight.
    max_depth : int, optional
        Depth limit for the final and the sample trees (None: 64).
    probability : {"laplace", "frequency"}, default "laplace"
        Leaf probabilities, and the beliefs leaf labels are decided from.
    ee : {"normal", "exact"}, default "normal"
        Pessimistic error ``EE``: C4.5's normal approximation (fast), or the
        exact binomial limit (the tree package's; about twice the fit time).
    n_jobs : int, optional
        Threads scoring the candidates of a node in parallel.
    progress_callback : callable(fraction, message), optional
        Called as the tree grows with the fraction of training weight that
        has reached a leaf.  Not serialized.

    Attributes
    ----------
    tree_ : TreeStructure
    estimated_cost_ : float
        ``Total`` of the final tree on the training data (per case).
    w_, cf_ : float
        The ``w`` and ``cf`` used.
    classes_, n_features_in_, cost_model_, cost_matrix_, reject_cost_, categories_
        As for every learner.
    """

    _parameter_constraints = constraints(
        _LookaheadTreeClassifier._parameter_constraints,
        w=[Interval(Real, 0, None, closed="left"), None],
        cf=[Interval(Real, 0, 1, closed="neither"), None],
        stop_rule=[StrOptions(set(_STOP_RULES))],
        prune_lookahead=["boolean"],
        threshold_samples=[StrOptions({"shared", "each"})],
        post_prune=["boolean"],
        ee=[StrOptions({"normal", "exact"})],
    )

    _expected_failed_checks = dict.fromkeys(
        TRAIN_ACCURACY_CHECKS,
        "with the default unit test costs and 0/1 loss a test costs as much as the "
        "error it can remove, so ACT rightly buys few tests and stays below 0.83 accuracy",
    )

    def __init__(
        self,
        *,
        test_costs=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=None,
        random_state=None,
        r=5,
        w=None,
        cf=None,
        stop_rule="leaf_cost",
        prune_lookahead=False,
        threshold_samples="shared",
        post_prune=True,
        min_samples_leaf=2,
        max_depth=None,
        probability="laplace",
        ee="normal",
        n_jobs=None,
        progress_callback=None,
    ):
        self.test_costs = test_costs
        self.cost_matrix = cost_matrix
        self.reject_cost = reject_cost
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.r = r
        self.ee = ee
        self.w = w
        self.cf = cf
        self.stop_rule = stop_rule
        self.prune_lookahead = prune_lookahead
        self.threshold_samples = threshold_samples
        self.post_prune = post_prune
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.probability = probability
        self.n_jobs = n_jobs
        self.progress_callback = progress_callback

    def _resolve_w_cf(self) -> tuple[float, float]:
        w, cf = default_w_cf(self.cost_model_, self.cost_matrix_)
        return (
            float(self.w) if self.w is not None else w,
            float(self.cf) if self.cf is not None else cf,
        )

    def _post_prune(self) -> bool:
        return bool(self.post_prune)


class LSID3Classifier(_LookaheadTreeClassifier):
    """LSID3 (Esmeir & Markovitch 2007): lookahead by stochastic ID3, scored by size.

    Cost-blind: a candidate test scores the sum over its children of the
    fewest leaves among ``r`` sample trees (1 ID3 + ``r - 1`` SID3, which
    picks a test with probability proportional to its information gain); a
    numeric feature offers its ``r`` best thresholds with one ID3 tree per
    child.  Grows until the leaves are pure or no split is valid; no
    pruning.  ``r = 0`` is plain ID3 (EG2 with ``w = 0``, C4.5-pruned).
    Leaves still decide by least expected cost under ``cost_matrix``.

    Parameters
    ----------
    test_costs, cost_matrix, reject_cost, categorical_features, random_state
        As for :class:`ACTClassifier` (test costs only price the policy).
    r : int, default 5
        Sample size (the anytime knob).
    min_samples_leaf : float, default 2
    max_depth : int, optional
    probability : {"laplace", "frequency"}, default "laplace"
    n_jobs : int, optional
    progress_callback : callable(fraction, message), optional

    Attributes
    ----------
    tree_, estimated_cost_, classes_, n_features_in_, cost_model_,
    cost_matrix_, reject_cost_, categories_
        As for :class:`ACTClassifier` (``estimated_cost_`` with ``cf = 0.25``).
    """

    _by_size = True

    def __init__(
        self,
        *,
        test_costs=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=None,
        random_state=None,
        r=5,
        min_samples_leaf=2,
        max_depth=None,
        probability="laplace",
        n_jobs=None,
        progress_callback=None,
    ):
        self.test_costs = test_costs
        self.cost_matrix = cost_matrix
        self.reject_cost = reject_cost
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.r = r
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.probability = probability
        self.n_jobs = n_jobs
        self.progress_callback = progress_callback

    def _resolve_w_cf(self) -> tuple[float, float]:
        return 0.0, 0.25
