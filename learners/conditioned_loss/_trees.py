"""Decision trees for the conditioned-loss model, held as :class:`TreeStructure`.

scikit-learn grows the trees; they are converted at once to the project's
array layout, and every posterior (during fitting, after loading from JSON)
comes from :func:`tree_proba`, so a reloaded model gives identical numbers.
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

from ..tree._structure import LEAF, TreeStructure, smoothed_proba

__all__ = ["grow_tree", "out_of_fold_proba", "row_posterior", "tree_proba"]


def grow_tree(
    X: np.ndarray,
    y: np.ndarray,
    features: np.ndarray,
    n_classes: int,
    *,
    min_samples_leaf: int,
    max_depth: int | None,
    random_state,
) -> TreeStructure:
    """Grow an entropy tree on the columns ``features`` of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        All training columns; only ``features`` are used.
    y : ndarray of int
        Class codes ``0..n_classes-1``.
    features : ndarray of int
        Global column indices the tree may test (may be empty: a one-leaf tree).

    Returns
    -------
    TreeStructure
        Node ``feature`` entries are global column indices.
    """
    counts = np.bincount(y, minlength=n_classes).astype(float)
    if features.size == 0:
        return _single_leaf(counts)
    learner = DecisionTreeClassifier(
        criterion="entropy",
        min_samples_leaf=min_samples_leaf,
        max_depth=max_depth,
        random_state=random_state,
    )
    learner.fit(X[:, features], y)
    return _from_sklearn(learner, features, n_classes)


def out_of_fold_proba(
    X: np.ndarray,
    y: np.ndarray,
    features: np.ndarray,
    n_classes: int,
    *,
    n_folds: int,
    smoothing: float,
    min_samples_leaf: int,
    max_depth: int | None,
    random_state,
) -> np.ndarray:
    """Each training row's posterior from a tree grown without that row's fold.

    A tree's posteriors on its own training cases are resubstitution
    estimates: a case always lands in a leaf that counted it, so the
    posterior is too sure of its class.  Here the rows are cut into
    ``n_folds`` folds (stratified when every class has ``n_folds`` cases)
    and a fold's posteriors come from a tree grown on the other folds, as
    the tree would see a new case.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
    """
    counts = np.bincount(y, minlength=n_classes)
    present = counts[counts > 0]
    splitter = (
        StratifiedKFold(n_folds, shuffle=True, random_state=random_state)
        if present.min() >= n_folds
        else KFold(n_folds, shuffle=True, random_state=random_state)
    )
    proba = np.zeros((X.shape[0], n_classes))
    for fit_rows, held_rows in splitter.split(X, y):
        tree = grow_tree(
            X[fit_rows],
            y[fit_rows],
            features,
            n_classes,
            min_samples_leaf=min_samples_leaf,
            max_depth=max_depth,
            random_state=random_state,
        )
        proba[held_rows] = tree_proba(tree, X[held_rows], smoothing)
    return proba


def _single_leaf(counts: np.ndarray) -> TreeStructure:
    return TreeStructure(
        feature=np.array([LEAF], dtype=np.int64),
        threshold=np.array([np.nan]),
        edge_start=np.zeros(1, dtype=np.int64),
        n_edges=np.zeros(1, dtype=np.int64),
        class_weight=counts[None, :],
        child=np.empty(0, dtype=np.int64),
        branch_value=np.empty(0),
        branch_weight=np.empty(0),
    )


def _from_sklearn(learner: DecisionTreeClassifier, features: np.ndarray, n_classes: int):
    tree = learner.tree_
    n_nodes = tree.node_count
    weight = tree.weighted_n_node_samples
    # sklearn stores per-node class fractions over the classes it saw.
    class_weight = np.zeros((n_nodes, n_classes))
    class_weight[:, learner.classes_.astype(int)] = tree.value[:, 0, :] * weight[:, None]
    is_leaf = tree.children_left == -1
    feature = np.where(is_leaf, LEAF, features[np.maximum(tree.feature, 0)])
    threshold = np.where(is_leaf, np.nan, tree.threshold)
    n_edges = np.where(is_leaf, 0, 2)
    edge_start = np.concatenate([[0], np.cumsum(n_edges)[:-1]])
    child, branch_weight = [], []
    for node in np.flatnonzero(~is_leaf):
        left, right = tree.children_left[node], tree.children_right[node]
        total = weight[left] + weight[right]
        child += [left, right]
        branch_weight += [weight[left] / total, weight[right] / total]
    return TreeStructure(
        feature=feature,
        threshold=threshold,
        edge_start=edge_start,
        n_edges=n_edges,
        class_weight=class_weight,
        child=np.asarray(child, dtype=np.int64),
        branch_value=np.full(len(child), np.nan),
        branch_weight=np.asarray(branch_weight, dtype=float),
    )


def tree_proba(tree: TreeStructure, X: np.ndarray, smoothing: float = 0.0) -> np.ndarray:
    """Leaf class posteriors reached by each row of ``X`` (full-width rows).

    A leaf with class counts ``n_j`` gives ``(n_j + smoothing) / (n + K smoothing)``
    (``smoothing=1`` is Laplace's correction: a pure leaf is not certainty).
    A NaN in a tested column sends the row down both edges, weighted by
    ``branch_weight`` (C4.5's rule), so a missing value never raises.  The
    walk is the tree's own (:meth:`TreeStructure.node_mass`).
    """
    X = np.atleast_2d(np.asarray(X, dtype=float))
    if X.shape[0] == 1:
        return row_posterior(tree, X[0], smoothing)[0][None, :]
    return tree.proba(X, smoothed_proba(tree.class_weight, smoothing))


def row_posterior(tree: TreeStructure, x: np.ndarray, smoothing: float) -> tuple[np.ndarray, float]:
    """One row's posterior and its training support (the reached leaves' weight, by share).

    Visits only the nodes the row reaches (:meth:`TreeStructure.reach`, NaN = missing).
    """
    reach = tree.reach({f: float(v) for f, v in enumerate(x)})
    nodes = list(reach.leaves)
    shares = np.fromiter(reach.leaves.values(), dtype=float, count=len(nodes))
    proba = shares @ smoothed_proba(tree.class_weight[nodes], smoothing)
    support = float(shares @ tree.class_weight[nodes].sum(axis=1))
    return proba / proba.sum(), support
