"""Shared estimator machinery of the tree learners: fitting, prediction, policy, JSON.

:class:`TreePolicyMixin` gives any model holding a ``tree_`` the policy
interface (ALGORITHMS.md §9), prediction and persistence; ACT reuses it.
:class:`GreedyTreeClassifier` adds the greedy fit shared by C4.5, EG2, IDX,
CS-ID3 and DTMC, which differ only in their split criterion.
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

from .. import _document as document
from .._estimator import CostSensitiveClassifier, constraints
from .._validation import check_cost_matrix, validate_costed_fit, validate_rows
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
from . import pruning as _pruning
from ._builder import GrowingTree, grow_tree
from ._criteria import Criterion
from ._formulas import least_cost_class
from ._structure import TreeStructure, other_edge, smoothed_proba

__all__ = ["CaseInputMixin", "GreedyTreeClassifier", "TreePolicyMixin"]

#: The node probability estimates: Laplace's correction (paper 001) or the frequency.
_SMOOTHING = {"laplace": 1.0, "frequency": 0.0}


class CaseInputMixin:
    """Checks of the cases a fitted model is given, shared by the trees and the ensembles.

    Known results for the policy (feature indices, numbers), category codes
    of nominal features, and the training input (``X``, ``y`` and the cost
    parameters, setting ``classes_``, ``n_features_in_``, ``cost_matrix_``,
    ``reject_cost_``, ``cost_model_`` and ``categories_``).
    """

    # Parameters the learner's ``__init__`` sets and attributes ``fit`` sets (declared for
    # the type checker only).
    test_costs: Any
    cost_matrix: Any
    reject_cost: Any
    categorical_features: Any
    n_features_in_: int
    classes_: np.ndarray
    cost_matrix_: np.ndarray
    reject_cost_: Any
    cost_model_: Any

    def _check_feature(self, f) -> int:
        try:
            index = int(f)
        except (TypeError, ValueError):
            raise ValueError(f"feature index expected, got {f!r}") from None
        if not 0 <= index < self.n_features_in_:
            raise ValueError(f"feature {index} is out of range for {self.n_features_in_} features")
        return index

    def _check_known(self, known, unavailable) -> tuple[dict[int, float], frozenset[int]]:
        """Known values keyed by int (JSON gives strings), None as NaN; checked indices."""
        values = {}
        for f, value in known.items():
            try:
                values[self._check_feature(f)] = np.nan if value is None else float(value)
            except TypeError:
                raise ValueError(f"value of feature {f} must be a number, got {value!r}") from None
        return values, frozenset(self._check_feature(f) for f in unavailable)

    def _check_categories(self, X: np.ndarray) -> None:
        for f, codes in self.categories_.items():
            column = X[:, f]
            known = column[~np.isnan(column)]
            unseen = known[~np.isin(known, codes)]
            if unseen.size:
                raise ValueError(
                    f"feature {f} has category code {unseen[0]:g}, not seen in training "
                    f"(known codes: {codes.tolist()})"
                )

    def __sklearn_tags__(self):
        # The learners put this mixin before scikit-learn's BaseEstimator in their bases,
        # which the type checker cannot see from the mixin alone.
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        tags.input_tags.allow_nan = True  # NaN means "missing": fractional cases
        return tags

    def _validate_fit_input(self, X, y) -> tuple[np.ndarray, np.ndarray]:
        """Check ``X``/``y`` and the cost parameters; set the fitted cost attributes.

        Sets ``classes_``, ``n_features_in_``, ``cost_matrix_``, ``reject_cost_``,
        ``cost_model_`` and ``categories_``; returns ``X`` as floats and the
        class codes of ``y``.
        """
        X, y_codes = validate_costed_fit(self, X, y)
        self.categories_ = self._categories(X)
        return X, y_codes

    def _categories(self, X: np.ndarray) -> dict[int, np.ndarray]:
        if self.categorical_features is None:
            return {}
        features = np.asarray(self.categorical_features).ravel()
        if features.dtype == bool:
            if features.shape[0] != X.shape[1]:
                raise ValueError(
                    f"categorical_features mask has {features.shape[0]} entries, "
                    f"expected {X.shape[1]}"
                )
            features = np.flatnonzero(features)
        result = {}
        for f in features.tolist():
            if not isinstance(f, Integral) or not 0 <= int(f) < X.shape[1]:
                raise ValueError(f"categorical_features entry {f!r} is not a feature index")
            column = X[:, f]
            known = column[~np.isnan(column)]
            fractional = known[known != np.round(known)]
            if fractional.size:
                raise ValueError(
                    f"categorical feature {f} has non-integer code {fractional[0]:g}; "
                    "category codes must be whole numbers"
                )
            codes = _distinct_codes(known)
            if codes.size == 0:
                codes = np.array([0.0])
            result[int(f)] = codes
        return result


class TreePolicyMixin(CaseInputMixin):
    """Prediction, the step-by-step policy and JSON state for a fitted ``tree_``.

    Expects the fitted attributes ``tree_``, ``classes_``, ``n_features_in_``,
    ``cost_model_``, ``cost_matrix_``, ``reject_cost_``, ``categories_`` and
    the parameter ``probability``.
    """

    # Parameters the learner's ``__init__`` sets (declared for the type checker only).
    probability: str
    test_costs: Any
    cost_matrix: Any
    reject_cost: Any
    categorical_features: Any

    # ------------------------------------------------------------ prediction
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities; a missing value (NaN) averages over its branches.

        Raises
        ------
        ValueError
            On a wrong number of features, or a category code of a nominal
            feature that was not seen in training.
        """
        check_is_fitted(self, "tree_")
        X = validate_rows(self, X)
        self._check_categories(X)
        return self.tree_.proba(X, self._node_proba())

    def predict(self, X) -> np.ndarray:
        """Class of least expected cost under ``cost_matrix_`` (C4.5c)."""
        proba = self.predict_proba(X)  # first: an unfitted model raises NotFittedError
        return self.classes_[best_class(proba, self.cost_matrix_)]

    # --------------------------------------------------------------- policy
    def next_action(
        self, known: Mapping[int, float], unavailable: Iterable[int] = ()
    ) -> Extract | Classify | Reject:
        """Next step for one patient (ALGORITHMS.md §9).

        Descends while each node's test is known; an unavailable test, or one
        done with no result (NaN), sends the patient down every branch,
        weighted by the training shares.  When some reached node waits on a
        test that can still be done, asks for the one most of the patient's
        weight is waiting on (ties: lowest feature index), priced with every
        done test (NaN results included: they were paid for).  Otherwise
        combines the reached leaves' probabilities and decides (classify, or
        reject when the best class costs more than ``reject_cost_``).

        Parameters
        ----------
        known : mapping int -> float
            Feature index -> result for the tests done so far (NaN or None:
            done, no result).
        unavailable : iterable of int
            Tests that cannot be done for this patient.

        Returns
        -------
        Extract, Classify or Reject
            With :class:`~learners.policy.Evidence`: the posterior of the
            nodes reached, their training support, the expected cost of
            concluding now and, for ``Extract``, after the test's result.
        """
        self._ensure_fitted()
        known, unavailable = self._check_known(known, unavailable)
        reach = self.tree_.reach(known, unavailable)
        if reach.frontier:
            feature = self.tree_.feature
            waiting: dict[int, float] = {}
            for node, weight in reach.frontier.items():
                f = int(feature[node])
                waiting[f] = waiting.get(f, 0.0) + weight
            test = min(waiting, key=lambda f: (-waiting[f], f))
            return Extract(
                test=test,
                cost=self.cost_model_.marginal_cost(test, frozenset(known)),
                evidence=self._evidence(reach.ends, after_test=test),
            )
        return self._conclude(reach.leaves)

    def node_decision(self, node: int) -> Classify | Reject:
        """What the model concludes for a patient whose walk stops wholly at ``node``.

        For a leaf this is exactly :meth:`next_action`'s conclusion there; for
        an internal node, the conclusion a patient waiting on its test would
        get by stopping now (the ``conclude_cost`` of the ``Extract``
        evidence).  The tree diagram draws these, so it shows the model's own
        decisions (Laplace or frequency probabilities, the cost matrix, the
        reject cost).
        """
        self._ensure_fitted()
        if not 0 <= int(node) < self.tree_.n_nodes:
            raise ValueError(f"node {node} is out of range for {self.tree_.n_nodes} nodes")
        return self._conclude({int(node): 1.0})

    def decision_path_nodes(
        self, known: Mapping[int, float], unavailable: Iterable[int] = ()
    ) -> list[int]:
        """Node ids the patient's walk touches (root first), for highlighting."""
        self._ensure_fitted()
        known, unavailable = self._check_known(known, unavailable)
        return self.tree_.reach(known, unavailable).visited

    def delayed_order(
        self, known: Mapping[int, float], test: int, unavailable: Iterable[int] = ()
    ) -> list[int]:
        """Tests ordered together with ``test`` under Turney's delayed-test rule.

        Every test in the subtrees under the reached nodes that ask for
        ``test``, in tree order, ``test`` first; tests already known or
        unavailable are left out.
        """
        self._ensure_fitted()
        known, blocked = self._check_known(known, unavailable)
        test = self._check_feature(test)
        reach = self.tree_.reach(known, blocked)
        ordered: dict[int, None] = {int(test): None}
        for node in sorted(reach.frontier):
            if int(self.tree_.feature[node]) != test:
                continue
            for f in self.tree_.subtree_tests(node):
                if f not in known and f not in blocked:
                    ordered.setdefault(f, None)
        return list(ordered)

    def export_text(self, feature_names=None, class_names=None) -> str:
        """Readable text of the tree: splits, class weights and leaf decisions."""
        from .export import export_text

        return export_text(self, feature_names=feature_names, class_names=class_names)

    # ----------------------------------------------------------------- JSON
    def _fitted_state(self) -> dict:
        check_is_fitted(self, "tree_")
        reject = self.reject_cost_
        return {
            "tree": self.tree_.to_dict(),
            "classes": self.classes_.tolist(),
            "n_features_in": int(self.n_features_in_),
            "cost_model": self.cost_model_.to_dict(),
            "cost_matrix": self.cost_matrix_.tolist(),
            "reject_cost": reject.tolist() if isinstance(reject, np.ndarray) else reject,
            "categories": {str(f): c.tolist() for f, c in self.categories_.items()},
        }

    def _load_fitted_state(self, state: dict) -> None:
        """Restore the fitted attributes from a document's ``fitted`` object.

        Every field is checked before use: the tree's whole structure (with
        its features below ``n_features_in``), the classes against the tree's
        class weights, a cost model of ``n_features_in`` tests, a K x K cost
        matrix, the reject cost and the category codes.

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
        tree = TreeStructure.from_dict(
            document.field(state, "tree", where), n_features=n_features, where=f"{where}.tree"
        )
        if tree.n_classes != k:
            raise document.ModelDocumentError(
                f"{where}.tree.class_weight counts {tree.n_classes} classes, "
                f"but {where}.classes has {k}"
            )
        cost_model = document.read(
            state, "cost_model", where, document.cost_model, n_features=n_features
        )
        matrix = document.read(
            state, "cost_matrix", where, document.table, rows=k, columns=k, low=0.0
        )
        with document.reading(f"{where}.cost_matrix"):
            matrix = check_cost_matrix(matrix, k)
        reject = document.read(state, "reject_cost", where, document.reject_cost, n_classes=k)
        categories = read_categories(state, where, n_features=n_features)
        check_nominal_splits(tree, categories, f"{where}.tree", f"{where}.categories")
        self.tree_ = tree
        self.classes_ = classes
        self.n_features_in_ = n_features
        self.cost_model_ = cost_model
        self.cost_matrix_ = matrix
        self.reject_cost_ = reject
        self.categories_ = categories
        self._refresh_caches()

    def _refresh_caches(self) -> None:
        """Rebuild the probability cache; call at the end of fit/load.

        Built eagerly so prediction never changes the estimator's ``__dict__``.
        """
        self._class_list = [c.item() if isinstance(c, np.generic) else c for c in self.classes_]
        self._proba_cache = ((id(self.tree_), self.probability), self._smoothed(self.tree_))
        self.tree_._lists()  # the walk's list copies, built once now

    def _smoothed(self, tree: TreeStructure) -> np.ndarray:
        if self.probability not in _SMOOTHING:
            raise ValueError(
                f"probability must be 'laplace' or 'frequency', got {self.probability!r}"
            )
        return smoothed_proba(tree.class_weight, _SMOOTHING[self.probability])

    # -------------------------------------------------------------- private
    def _node_proba(self) -> np.ndarray:
        cached = getattr(self, "_proba_cache", None)
        key = (id(self.tree_), self.probability)
        if cached is None or cached[0] != key:
            cached = (key, self._smoothed(self.tree_))
            self._proba_cache = cached
        return cached[1]

    def _mixture(self, shares: Mapping[int, float]) -> tuple[np.ndarray, float]:
        """Posterior and training support of a patient spread over ``shares`` (node -> weight)."""
        nodes = list(shares)
        weights = np.fromiter(shares.values(), dtype=float, count=len(nodes))
        total = weights.sum()
        proba = weights @ self._node_proba()[nodes] / total
        support = float(weights @ self.tree_.class_weight[nodes].sum(axis=1) / total)
        return proba, support

    def _conclude(self, shares: Mapping[int, float]) -> Classify | Reject:
        proba, support = self._mixture(shares)
        return decide(
            proba,
            classes=self._class_list,
            cost_matrix=self.cost_matrix_,
            reject_cost=self.reject_cost_,
            support=support,
            nodes=shares.items(),
        )

    def _evidence(self, shares: Mapping[int, float], *, after_test: int) -> Evidence:
        """Evidence of an ``Extract``: the belief now and the expected cost once
        ``after_test``'s result is known.

        Each reached node waiting on ``after_test`` moves to its children in
        proportion to the training shares (the model's own estimate of the
        result); every other reached node stays.  The expected cost after is
        the share-weighted cost of the best conclusion at each place the
        patient may then be, so it never exceeds the cost of concluding now.
        """
        proba, support = self._mixture(shares)
        node_proba = self._node_proba()
        tree = self.tree_
        total = sum(shares.values())
        after = 0.0
        for node, weight in shares.items():
            if int(tree.feature[node]) == after_test:
                for e in tree.edges(node):
                    share = float(tree.branch_weight[e])
                    if share > 0.0:
                        after += (
                            weight
                            * share
                            * conclusion_cost(
                                node_proba[int(tree.child[e])], self.cost_matrix_, self.reject_cost_
                            )
                        )
            else:
                after += weight * conclusion_cost(
                    node_proba[node], self.cost_matrix_, self.reject_cost_
                )
        return evidence_for(
            proba,
            cost_matrix=self.cost_matrix_,
            reject_cost=self.reject_cost_,
            support=support,
            cost_after=after / total,
            nodes=shares.items(),
        )

    def _ensure_fitted(self) -> None:
        if getattr(self, "tree_", None) is None:
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call fit first."
            )


#: the ranges of the tree-shape parameters the tree learners share (the greedy trees, ACT,
#: LSID3, ICET, Boosting), defined once
TREE_SHAPE_RULES = {
    "min_samples_leaf": [Interval(Real, 1, None, closed="left")],
    "max_depth": [Interval(Integral, 1, None, closed="left"), None],
    "probability": [StrOptions({"laplace", "frequency"})],
}


class GreedyTreeClassifier(TreePolicyMixin, SerializableMixin, CostSensitiveClassifier):
    """Base of the greedy cost-aware trees; subclasses supply :meth:`_criterion`.

    Parameters are documented on each learner.
    """

    _parameter_constraints = constraints(
        {**CostSensitiveClassifier._parameter_constraints, **TREE_SHAPE_RULES},
        cf=[Interval(Real, 0, 1, closed="neither")],
        pruning=[StrOptions(set(_pruning.PRUNING_METHODS))],
    )

    def __init__(
        self,
        *,
        test_costs=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=None,
        random_state=None,
        min_samples_leaf=2,
        cf=0.25,
        pruning="error",
        probability="laplace",
        max_depth=None,
    ):
        self.test_costs = test_costs
        self.cost_matrix = cost_matrix
        self.reject_cost = reject_cost
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.min_samples_leaf = min_samples_leaf
        self.cf = cf
        self.pruning = pruning
        self.probability = probability
        self.max_depth = max_depth

    def _criterion(self) -> Criterion:  # pragma: no cover - abstract
        raise NotImplementedError

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Grow the tree on ``X`` (NaN = missing) and ``y``, then prune it by ``pruning``.

        ``pruning="cost_complexity"`` first grows a tree on 80% of the cases
        (stratified, drawn with ``random_state``) to choose ``alpha`` on the
        other 20% (:func:`~learners.tree.pruning.holdout_alpha`); the tree
        grown on all the cases is then pruned with it (``ccp_alpha_``).

        Raises
        ------
        ValueError
            On malformed input: shapes, NaN in ``y``, a bad cost matrix or
            test costs, a non-integer category code, bad parameters (an
            unknown ``pruning`` name among them).
        """
        X, y_codes = self._validate_fit_input(X, y)
        self.tree_, self.ccp_alpha_ = self._grow_and_prune(X, y_codes)
        self._refresh_caches()
        return self

    def _grow_and_prune(
        self, X: np.ndarray, y_codes: np.ndarray
    ) -> tuple[TreeStructure, float | None]:
        """The tree grown on ``X`` (validated floats) and class codes ``y_codes``, pruned
        by ``pruning``, and cost-complexity's alpha (None for the other pruning methods).

        It uses the fitted classes, costs and categories as they are, so a learner
        validated on all the cases can grow on a part of them and still have one
        branch per category of all of them (ACT's inner cross-validation does so).
        """
        alpha = 0.0
        if self.pruning == "cost_complexity":
            alpha = self._holdout_alpha(X, y_codes)
        grown = self._grow(X, y_codes)
        _pruning.prune(
            grown,
            self.pruning,
            leaf_label=self._leaf_label,
            cost_matrix=self.cost_matrix_,
            cf=float(self.cf),
            alpha=alpha,
        )
        return grown.to_structure(), (alpha if self.pruning == "cost_complexity" else None)

    def _fitted_state(self) -> dict:
        state = super()._fitted_state()
        alpha = getattr(self, "ccp_alpha_", None)
        if alpha is not None:
            state["ccp_alpha"] = float(alpha)
        return state

    def _load_fitted_state(self, state: dict) -> None:
        super()._load_fitted_state(state)
        self.ccp_alpha_ = (
            document.read(state, "ccp_alpha", "fitted", document.number, low=0.0)
            if "ccp_alpha" in state
            else None
        )

    @classmethod
    def _upgrade_params(cls, params: dict) -> dict:
        """Documents written before ``pruning`` replaced ``prune`` (a boolean) still load."""
        if "prune" in params and "pruning" not in params:
            params = dict(params)
            prune = params.pop("prune")
            if not isinstance(prune, bool):
                raise document.ModelDocumentError(
                    f"params.prune: expected true or false, got {prune!r}"
                )
            params["pruning"] = "error" if prune else "none"
        return params

    def _grow(self, X: np.ndarray, y_codes: np.ndarray) -> GrowingTree:
        return grow_tree(
            X,
            y_codes,
            len(self.classes_),
            criterion=self._criterion(),
            cost_model=self.cost_model_,
            cost_matrix=self.cost_matrix_,
            categories=self.categories_,
            min_leaf=float(self.min_samples_leaf),
            max_depth=None if self.max_depth is None else int(self.max_depth),
        )

    def _holdout_alpha(self, X: np.ndarray, y_codes: np.ndarray) -> float:
        """Cost-complexity's alpha: grow on 80% of the cases, choose on the other 20%."""
        from sklearn.model_selection import train_test_split

        n = X.shape[0]
        n_hold = int(round(_pruning.HOLDOUT_FRACTION * n))
        if n_hold < 1 or n - n_hold < 2:
            return 0.0
        counts = np.bincount(y_codes)
        stratify = y_codes if counts[counts > 0].min() >= 2 else None
        try:
            train, hold = train_test_split(
                np.arange(n), test_size=n_hold, random_state=self._random_seed(), stratify=stratify
            )
        except ValueError:  # too few cases of a class for a stratified split
            train, hold = train_test_split(
                np.arange(n), test_size=n_hold, random_state=self._random_seed()
            )
        grown = self._grow(X[train], y_codes[train])
        alpha, _ = _pruning.holdout_alpha(
            grown,
            X[hold],
            y_codes[hold],
            leaf_label=self._leaf_label,
            cost_matrix=self.cost_matrix_,
            node_proba=self._smoothed_weights,
        )
        return alpha

    def _smoothed_weights(self, class_weight: np.ndarray) -> np.ndarray:
        return smoothed_proba(class_weight, _SMOOTHING[self.probability])

    def _leaf_label(self, class_weight: np.ndarray) -> int:
        # the one leaf label, which the compiled engine compiles from the same function
        return least_cost_class(class_weight, self.cost_matrix_, self.probability == "laplace")


def read_categories(state, where: str, *, n_features: int) -> dict[int, np.ndarray]:
    """The ``categories`` field of a document's fitted state: feature -> whole-number codes.

    Raises
    ------
    ModelDocumentError
        Naming the malformed entry.
    """
    stored = document.read(state, "categories", where, document.mapping)
    categories = {}
    for key, codes in stored.items():
        at = f"{where}.categories[{key!r}]"
        feature = document.feature_key(key, at, n_features=n_features)
        codes = document.numbers(codes, at)
        if codes.size == 0 or np.any(codes != np.round(codes)):
            raise document.ModelDocumentError(f"{at}: expected whole-number category codes")
        categories[feature] = codes
    return categories


def check_nominal_splits(
    tree: TreeStructure, categories: Mapping[int, np.ndarray], where: str, categories_at: str
) -> None:
    """Every nominal split of ``tree`` has one edge per category code of its feature, or
    edges for some of them and an "other" edge for the rest (a one-vs-rest split); otherwise
    a valid case could match no edge.

    Raises
    ------
    ModelDocumentError
        Naming the node and the codes.
    """
    for node in np.flatnonzero((tree.n_edges > 0) & np.isnan(tree.threshold)).tolist():
        f = int(tree.feature[node])
        codes = tree.branch_value[tree.edges(node)]
        named = set(codes[~np.isnan(codes)].tolist())
        known = set(categories[f].tolist()) if f in categories else set()
        fits = named == known if other_edge(tree, node) is None else named < known
        if f not in categories or not fits:
            raise document.ModelDocumentError(
                f"{where}: node {node} splits feature {f} on the codes "
                f"{codes.tolist()}, but {categories_at} gives it "
                f"{categories[f].tolist() if f in categories else 'none'}"
            )


def _distinct_codes(codes: np.ndarray) -> np.ndarray:
    """Sorted distinct whole-number codes; a bincount when their range is small."""
    if codes.size == 0:
        return codes
    lowest, highest = codes.min(), codes.max()
    if highest - lowest > 4 * codes.size + 1024:
        return np.unique(codes)
    present = np.bincount((codes - lowest).astype(np.int64)) > 0
    return np.flatnonzero(present).astype(float) + lowest
