"""scikit-learn's DecisionTreeClassifier behind the project's policy interface.

The adapter walks the fitted ``tree_`` arrays one test at a time, so the
sklearn tree is evaluated exactly like the project's learners: it asks for a
test only when its path reaches it, and it decides at a leaf by least expected
cost (C4.5c) under the cost matrix, from Laplace-corrected leaf counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.tree import DecisionTreeClassifier

from learners import Extract, decide
from learners._validation import check_cost_matrix, check_reject_cost, check_test_costs

__all__ = ["SklearnTreePolicy", "TunedSklearnTreePolicy"]

#: leaf sizes the tuned tree's inner cross-validation compares
LEAF_GRID = (1, 2, 5, 10, 20, 40)


class SklearnTreePolicy(ClassifierMixin, BaseEstimator):
    """CART (gini, binary numeric splits) relabelled by minimum expected cost.

    Parameters
    ----------
    test_costs, cost_matrix, reject_cost :
        As for the project's learners; the tree's growth ignores them, only
        the leaf decisions use ``cost_matrix`` (and ``reject_cost``).
    min_samples_leaf : int, default 2
        Same minimum as C4.5's MINOBJS in ``learners.tree``.
    criterion : {"gini", "entropy"}, default "gini"
        sklearn's split criterion.
    ccp_alpha : float, default 0.0
        sklearn's cost-complexity pruning (0 = unpruned).
    random_state : int or None
        sklearn's tie-breaking among equally good splits.

    Notes
    -----
    Missing values (NaN, scikit-learn >= 1.3) go where ``tree_.missing_go_to_left``
    sends them, both in training and for an unavailable test; categorical
    features are treated as numeric codes.
    """

    def __init__(
        self,
        *,
        test_costs=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=None,
        min_samples_leaf=2,
        ccp_alpha=0.0,
        random_state=None,
        criterion="gini",
    ):
        self.test_costs = test_costs
        self.cost_matrix = cost_matrix
        self.reject_cost = reject_cost
        self.categorical_features = categorical_features
        self.min_samples_leaf = min_samples_leaf
        self.ccp_alpha = ccp_alpha
        self.random_state = random_state
        self.criterion = criterion

    def fit(self, X, y):
        """Fit sklearn's tree on ``X`` (NaN = missing) and ``y``."""
        return self._fit_tree(X, y, self.min_samples_leaf)

    def _fit_tree(self, X, y, min_samples_leaf):
        X = np.asarray(X, dtype=float)
        self.tree_model_ = DecisionTreeClassifier(
            min_samples_leaf=min_samples_leaf,
            criterion=self.criterion,
            ccp_alpha=self.ccp_alpha,
            random_state=self.random_state,
        ).fit(X, y)
        self.classes_ = self.tree_model_.classes_
        self.n_features_in_ = X.shape[1]
        k = len(self.classes_)
        self.cost_matrix_ = check_cost_matrix(self.cost_matrix, k)
        self.reject_cost_ = check_reject_cost(self.reject_cost, k)
        self.cost_model_ = check_test_costs(self.test_costs, X.shape[1])
        tree = self.tree_model_.tree_
        # sklearn stores class fractions per node; counts give Laplace estimates.
        fractions = tree.value[:, 0, :] / tree.value[:, 0, :].sum(axis=1, keepdims=True)
        counts = fractions * tree.weighted_n_node_samples[:, None]
        self.node_proba_ = (counts + 1.0) / (counts.sum(axis=1, keepdims=True) + k)
        return self

    def _walk(self, known: Mapping[int, float], unavailable: Iterable[int]) -> int:
        """Node where the patient's walk stops: a leaf or a node waiting on a test."""
        tree = self.tree_model_.tree_
        blocked = set(unavailable)
        node = 0
        while tree.children_left[node] != -1:
            f = int(tree.feature[node])
            value = known.get(f)
            if value is None or value != value:
                if f not in blocked and value is None:
                    return node
                left = bool(tree.missing_go_to_left[node])
            else:
                left = value <= tree.threshold[node]
            node = int(tree.children_left[node] if left else tree.children_right[node])
        return node

    def next_action(self, known: Mapping[int, float], unavailable: Iterable[int] = ()):
        """Ask for the reached node's test, or decide at the leaf."""
        tree = self.tree_model_.tree_
        node = self._walk(known, unavailable)
        if tree.children_left[node] != -1:
            test = int(tree.feature[node])
            return Extract(test=test, cost=self.cost_model_.marginal_cost(test, frozenset(known)))
        return decide(
            self.node_proba_[node],
            classes=self.classes_.tolist(),
            cost_matrix=self.cost_matrix_,
            reject_cost=self.reject_cost_,
        )

    def delayed_order(
        self, known: Mapping[int, float], test: int, unavailable: Iterable[int] = ()
    ) -> list[int]:
        """``test`` then every other test in the subtree below the reached node (pre-order)."""
        tree = self.tree_model_.tree_
        ordered: dict[int, None] = {int(test): None}
        stack = [self._walk(known, unavailable)]
        while stack:
            node = stack.pop()
            if tree.children_left[node] == -1:
                continue
            f = int(tree.feature[node])
            if f not in known and f not in set(unavailable):
                ordered.setdefault(f, None)
            stack.extend([int(tree.children_right[node]), int(tree.children_left[node])])
        return list(ordered)

    def predict(self, X) -> np.ndarray:
        """Least-expected-cost class of each row, every value known (NaN = unavailable)."""
        labels = []
        for row in np.asarray(X, dtype=float):
            known = {j: v for j, v in enumerate(row) if v == v}
            unavailable = [j for j, v in enumerate(row) if v != v]
            labels.append(self.next_action(known, unavailable).label)
        return np.asarray(labels)


class TunedSklearnTreePolicy(SklearnTreePolicy):
    """The issue-12 peer: sklearn's entropy tree relabelled by least expected cost, its
    ``min_samples_leaf`` chosen among :data:`LEAF_GRID` by a 3-fold stratified inner
    cross-validation on the training cases (least held-out cost per case, as
    ``learners.evaluation`` charges it; ties to the larger leaf).  ``chosen_leaf_`` is
    the size kept."""

    def __init__(
        self,
        *,
        test_costs=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=None,
        random_state=0,
    ):
        super().__init__(
            test_costs=test_costs,
            cost_matrix=cost_matrix,
            reject_cost=reject_cost,
            categorical_features=categorical_features,
            random_state=random_state,
            criterion="entropy",
        )

    def fit(self, X, y):
        """Choose the leaf size on inner folds, then fit on all of ``X``, ``y``."""
        from learners.evaluation import cross_validate, make_folds

        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        inner = make_folds(y, n_splits=3, random_state=self.random_state)
        costs = {}
        for leaf in sorted(LEAF_GRID, reverse=True):
            candidate = SklearnTreePolicy(
                test_costs=self.test_costs,
                cost_matrix=self.cost_matrix,
                reject_cost=self.reject_cost,
                min_samples_leaf=leaf,
                criterion="entropy",
                random_state=self.random_state,
            )
            report = cross_validate(candidate, X, y, folds=inner)
            costs[leaf] = report.overall.mean_total_cost
        self.chosen_leaf_ = min(costs, key=lambda leaf: (costs[leaf], -leaf))
        return self._fit_tree(X, y, self.chosen_leaf_)
