"""Decision trees for the conditioned-loss model, held as :class:`TreeStructure`.

scikit-learn grows the trees; they are converted at once to the project's
array layout, and every posterior (during fitting, after loading from JSON)
comes from :func:`tree_proba`, so a reloaded model gives identical numbers.
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

from ..tree._structure import LEAF, TreeStructure

__all__ = ["grow_tree", "out_of_fold_proba", "tree_proba"]


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
        feature=[LEAF],
        threshold=[np.nan],
        edge_start=[0],
        n_edges=[0],
        class_weight=counts[None, :],
        child=[],
        branch_value=[],
        branch_weight=[],
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
    ``branch_weight`` (C4.5's rule), so a missing value never raises.
    """
    X = np.atleast_2d(np.asarray(X, dtype=float))
    if X.shape[0] == 1:
        return _one_row_proba(tree, X[0], smoothing)[None, :]
    mass = np.zeros((tree.n_nodes, X.shape[0]))
    mass[0] = 1.0
    proba = np.zeros((X.shape[0], tree.n_classes))
    for node in range(tree.n_nodes):  # parents precede children
        here = mass[node]
        if not here.any():
            continue
        if tree.feature[node] == LEAF:
            counts = tree.class_weight[node] + smoothing
            total = counts.sum()
            if total > 0:
                proba += here[:, None] * (counts / total)[None, :]
            continue
        values = X[:, tree.feature[node]]
        start = tree.edge_start[node]
        left, right = tree.child[start], tree.child[start + 1]
        missing = np.isnan(values)
        goes_left = ~missing & (values <= tree.threshold[node])
        goes_right = ~missing & ~goes_left
        mass[left] += here * (goes_left + missing * tree.branch_weight[start])
        mass[right] += here * (goes_right + missing * tree.branch_weight[start + 1])
    total = proba.sum(axis=1, keepdims=True)
    empty = total[:, 0] <= 0
    proba[~empty] /= total[~empty]
    proba[empty] = 1.0 / tree.n_classes
    return proba


def _one_row_proba(tree: TreeStructure, x: np.ndarray, smoothing: float) -> np.ndarray:
    """:func:`tree_proba` for one row, visiting only the nodes the row reaches."""
    proba = np.zeros(tree.n_classes)
    stack = [(0, 1.0)]
    while stack:
        node, weight = stack.pop()
        if tree.feature[node] == LEAF:
            counts = tree.class_weight[node] + smoothing
            total = counts.sum()
            if total > 0:
                proba += weight * counts / total
            continue
        value = x[tree.feature[node]]
        start = tree.edge_start[node]
        if np.isnan(value):  # missing: both edges, C4.5 weights
            stack.append((tree.child[start], weight * tree.branch_weight[start]))
            stack.append((tree.child[start + 1], weight * tree.branch_weight[start + 1]))
        else:
            stack.append(
                (
                    tree.child[start] if value <= tree.threshold[node] else tree.child[start + 1],
                    weight,
                )
            )
    total = proba.sum()
    return proba / total if total > 0 else np.full(tree.n_classes, 1.0 / tree.n_classes)
