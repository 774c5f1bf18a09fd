"""Pruning with misclassification costs (paper 001, ALGORITHMS.md §8).

Every C4.5-based tree (:mod:`learners.tree.classifiers`) grows its tree and
then prunes it by one of :data:`PRUNING_METHODS`:

``"none"``
    Keep the grown tree.
``"error"``
    C4.5's error-based pruning (:func:`learners.tree._builder.prune_tree`):
    a subtree becomes a leaf when the leaf's pessimistic ``EE`` is at most the
    sum of its leaves' ``EE``.
``"laplace"``
    Laplace-based pruning: a node's loss is :func:`laplace_loss`,
    ``n * min_j sum_c p_c M[c, j]`` with Laplace probabilities
    ``p_c = (n_c + 1) / (n + K)``; a subtree becomes a leaf when the node's
    loss is at most the sum of its leaves' losses (bottom-up, so the leaves
    are those left after pruning below).
``"cost_complexity"``
    CART's cost-complexity pruning with loss: a subtree's cost is its
    resubstitution loss (:func:`resubstitution_loss`) plus ``alpha`` per leaf.
    :func:`cost_complexity_path` gives the weakest-link sequence of subtrees;
    :func:`holdout_alpha` picks ``alpha`` on a 20% holdout (tree grown on the
    other 80%), and the tree grown on all the data is pruned with it
    (:func:`prune_cost_complexity`).
``"kl"``
    KL pruning: a node whose children are all leaves becomes a leaf when
    :func:`kl_distance` (its children's Laplace distributions against its
    own, weighted by their share of its cases) is below :data:`KL_THRESHOLD`.

Leaves of empty branches (a nominal value no training case at the parent
had) hold no cases: they count zero loss and zero KL weight.

Points the paper leaves open, and what is done here:

- *KL's logarithm*: base 2 (bits), Cover & Thomas's convention, which the
  paper cites for the distance; the 0.01 threshold is read in bits.
- *KL, which nodes*: the paper compares a node with its children only, so a
  node is considered once its children are leaves (after pruning below);
  a node above a subtree that survived is kept.
- *Cost-complexity's alpha on the full tree*: the holdout picks the subtree
  ``k`` of least holdout loss (ties: the smaller tree); the full tree is
  pruned with the geometric mean of ``alpha_k`` and ``alpha_{k+1}`` (CART's
  choice inside the interval where subtree ``k`` is optimal), or
  ``alpha_k`` for the last subtree.
- *Cost-complexity's leaf labels*: the resubstitution loss of a leaf counts
  its training cases at the label the model would decide there (Laplace or
  frequency beliefs, as the model is configured).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..policy import best_class, expected_costs
from ._builder import GrowingTree, prune_tree
from ._structure import LEAF, smoothed_proba

__all__ = [
    "KL_THRESHOLD",
    "PRUNING_METHODS",
    "HOLDOUT_FRACTION",
    "check_pruning",
    "cost_complexity_path",
    "holdout_alpha",
    "kl_distance",
    "laplace_loss",
    "prune",
    "prune_cost_complexity",
    "prune_kl",
    "prune_laplace",
    "resubstitution_loss",
]

#: The pruning methods a C4.5-based tree offers (its ``pruning`` parameter).
PRUNING_METHODS = ("none", "error", "laplace", "cost_complexity", "kl")
#: KL pruning's threshold (paper 001 set it to 0.01 "based on initial experiments").
KL_THRESHOLD = 0.01
#: Share of the training cases held out to choose cost-complexity's alpha (paper 001: 20%).
HOLDOUT_FRACTION = 0.2

_TOLERANCE = 1e-9

LeafLabel = Callable[[np.ndarray], int]


def check_pruning(method) -> str:
    """``method`` if it is one of :data:`PRUNING_METHODS`, else a ValueError naming them."""
    if method not in PRUNING_METHODS:
        raise ValueError(
            f"unknown pruning method {method!r}: expected one of {', '.join(PRUNING_METHODS)}"
        )
    return method


# ------------------------------------------------------------------ formulas
def laplace_loss(class_weight, cost_matrix) -> float:
    """Laplace-based node loss ``n * min_j sum_c p_c M[c, j]``, ``p_c = (n_c + 1)/(n + K)``.

    Zero for a node without cases (an empty branch's leaf).

    Examples
    --------
    Paper 001's Figure 2 (healthy, sick; ``M[sick, healthy] = 10``,
    ``M[healthy, sick] = 1``): a child with 20 healthy and 10 sick cases
    predicts sick at ``30 * 21/32 = 19.69``.

    >>> round(laplace_loss([20, 10], [[0, 1], [10, 0]]), 4)
    19.6875
    """
    counts = np.asarray(class_weight, dtype=float)
    n = float(counts.sum())
    if n <= 0.0:
        return 0.0
    proba = smoothed_proba(counts, 1.0)[0]
    return n * float(np.min(expected_costs(proba, cost_matrix)))


def resubstitution_loss(class_weight, cost_matrix, label: int) -> float:
    """Training loss of a leaf deciding ``label``: ``sum_c n_c M[c, label]``."""
    counts = np.asarray(class_weight, dtype=float)
    return float(counts @ np.asarray(cost_matrix, dtype=float)[:, int(label)])


def kl_distance(parent_weight, children_weights) -> float:
    """Paper 001's KL distance of a node from its children, in bits.

    ``sum_i (n_i / n) sum_c p_ic log2(p_ic / q_c)``: ``q`` the node's Laplace
    distribution, ``p_i`` child ``i``'s, ``n_i`` its cases and ``n`` the
    node's.  Children without cases contribute nothing.
    """
    parent = np.asarray(parent_weight, dtype=float)
    n = float(parent.sum())
    if n <= 0.0:
        return 0.0
    q = smoothed_proba(parent, 1.0)[0]
    total = 0.0
    for child in children_weights:
        counts = np.asarray(child, dtype=float)
        m = float(counts.sum())
        if m <= 0.0:
            continue
        p = smoothed_proba(counts, 1.0)[0]
        total += (m / n) * float(np.sum(p * np.log2(p / q)))
    return total


# ------------------------------------------------------------ pruning rules
def prune(
    tree: GrowingTree,
    method: str,
    *,
    leaf_label: LeafLabel,
    cost_matrix: np.ndarray,
    cf: float = 0.25,
    alpha: float = 0.0,
) -> GrowingTree:
    """Prune ``tree`` in place by ``method`` (see the module docstring).

    ``alpha`` is cost-complexity's penalty per leaf (choose it with
    :func:`holdout_alpha`); ``cf`` error-based pruning's confidence.

    Raises
    ------
    ValueError
        If ``method`` is not one of :data:`PRUNING_METHODS`.
    """
    check_pruning(method)
    if method == "error":
        prune_tree(tree, leaf_label, cf)
    elif method == "laplace":
        prune_laplace(tree, cost_matrix)
    elif method == "cost_complexity":
        prune_cost_complexity(tree, alpha, leaf_label=leaf_label, cost_matrix=cost_matrix)
    elif method == "kl":
        prune_kl(tree)
    return tree


def prune_laplace(tree: GrowingTree, cost_matrix) -> GrowingTree:
    """Laplace-based pruning, in place: a node whose :func:`laplace_loss` is at most the
    sum of its (already pruned) leaves' losses becomes a leaf."""
    n_nodes = len(tree.feature)
    estimate = np.zeros(n_nodes)
    for node in range(n_nodes - 1, -1, -1):  # children always have larger ids
        if tree.empty[node]:
            continue
        as_leaf = laplace_loss(tree.class_weight[node], cost_matrix)
        if tree.feature[node] == LEAF:
            estimate[node] = as_leaf
            continue
        as_subtree = sum(estimate[child] for child, _, _ in tree.edges[node])
        if as_leaf <= as_subtree + _TOLERANCE * (1.0 + abs(as_subtree)):
            tree.collapse(node)
            estimate[node] = as_leaf
        else:
            estimate[node] = as_subtree
    return tree


def prune_kl(tree: GrowingTree, threshold: float = KL_THRESHOLD) -> GrowingTree:
    """KL pruning, in place: a node whose children are all leaves becomes a leaf when
    their :func:`kl_distance` from it is below ``threshold``."""
    for node in range(len(tree.feature) - 1, -1, -1):
        edges = tree.edges[node]
        if tree.feature[node] == LEAF or any(tree.feature[c] != LEAF for c, _, _ in edges):
            continue
        children = [tree.class_weight[c] for c, _, _ in edges if not tree.empty[c]]
        if kl_distance(tree.class_weight[node], children) < threshold:
            tree.collapse(node)
    return tree


def cost_complexity_path(
    tree: GrowingTree, *, leaf_label: LeafLabel, cost_matrix
) -> list[tuple[float, frozenset[int]]]:
    """CART's weakest-link sequence with loss: ``[(alpha_k, nodes collapsed in T_k)]``.

    ``T_0`` (``alpha_0 = 0``) is the grown tree less every subtree that does
    not lower the resubstitution loss; each next ``T_k`` collapses the
    internal nodes of least ``g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1)``,
    ``R`` the resubstitution loss, and ``alpha_k`` is that ``g``.  The last
    entry is the root alone.  ``tree`` is not changed.
    """
    matrix = np.asarray(cost_matrix, dtype=float)
    n_nodes = len(tree.feature)
    own = np.array(
        [
            0.0
            if tree.empty[node]
            else resubstitution_loss(
                tree.class_weight[node], matrix, leaf_label(tree.class_weight[node])
            )
            for node in range(n_nodes)
        ]
    )
    collapsed: set[int] = set()
    path: list[tuple[float, frozenset[int]]] = []
    alpha = 0.0
    while True:
        g = _weakest_links(tree, collapsed, own)
        if not g:  # the root alone
            path.append((alpha, frozenset(collapsed)))
            return path
        weakest = min(g.values())
        if weakest <= alpha + _TOLERANCE:
            # collapse into the subtree for this alpha (g <= 0 too: no loss is lost)
            collapsed.update(t for t, value in g.items() if value <= alpha + _TOLERANCE)
            continue
        path.append((alpha, frozenset(collapsed)))
        alpha = weakest


def prune_cost_complexity(
    tree: GrowingTree, alpha: float, *, leaf_label: LeafLabel, cost_matrix
) -> GrowingTree:
    """Prune ``tree`` in place to the subtree of least ``R(T) + alpha |leaves(T)|``
    (the last subtree of :func:`cost_complexity_path` with ``alpha_k <= alpha``)."""
    path = cost_complexity_path(tree, leaf_label=leaf_label, cost_matrix=cost_matrix)
    chosen = path[0][1]
    for a, nodes in path:
        if a <= alpha + _TOLERANCE:
            chosen = nodes
    for node in chosen:
        tree.collapse(node)
    return tree


def holdout_alpha(
    tree: GrowingTree,
    X_holdout: np.ndarray,
    y_holdout: np.ndarray,
    *,
    leaf_label: LeafLabel,
    cost_matrix,
    node_proba: Callable[[np.ndarray], np.ndarray],
) -> tuple[float, list[float]]:
    """Cost-complexity's ``alpha`` chosen on a holdout.

    ``tree`` was grown on the other cases.  Each subtree ``T_k`` of
    :func:`cost_complexity_path` decides the holdout cases (the model's own
    decision: least expected cost over ``node_proba`` of the class weights,
    a missing value mixing its branches); the subtree of least total loss
    under ``cost_matrix`` wins, ties to the smaller tree.

    Returns
    -------
    (alpha, losses)
        The ``alpha`` to prune the full tree with (the geometric mean of the
        winner's ``alpha_k`` and the next one, or ``alpha_k`` for the last
        subtree) and the holdout loss of every subtree.
    """
    matrix = np.asarray(cost_matrix, dtype=float)
    path = cost_complexity_path(tree, leaf_label=leaf_label, cost_matrix=matrix)
    if len(y_holdout) == 0:
        return 0.0, []
    order = tree.preorder()
    structure = tree.to_structure()
    mass = structure.node_mass(X_holdout)  # rows in preorder numbering
    proba = node_proba(np.array([tree.class_weight[old] for old in order]))
    position = {old: new for new, old in enumerate(order)}
    y_holdout = np.asarray(y_holdout, dtype=np.int64)
    losses = []
    for _, collapsed in path:
        ends = [
            position[n] for n in _reachable(tree, set(collapsed)) if _is_end(tree, n, collapsed)
        ]
        belief = mass[ends].T @ proba[ends]
        decided = np.atleast_1d(best_class(belief, matrix))
        losses.append(float(matrix[y_holdout, decided].sum()))
    least = min(losses)
    best = max(k for k in range(len(path)) if losses[k] <= least + _TOLERANCE * (1.0 + least))
    alpha = path[best][0]
    if best + 1 < len(path):
        alpha = float(np.sqrt(alpha * path[best + 1][0]))
    return alpha, losses


# ------------------------------------------------------------------ helpers
def _is_end(tree: GrowingTree, node: int, collapsed) -> bool:
    return tree.feature[node] == LEAF or node in collapsed


def _reachable(tree: GrowingTree, collapsed) -> list[int]:
    """Nodes reachable from the root without going below a collapsed node, in preorder."""
    order: list[int] = []
    stack = [0]
    while stack:
        node = stack.pop()
        order.append(node)
        if node in collapsed:
            continue
        stack.extend(child for child, _, _ in reversed(tree.edges[node]))
    return order


def _weakest_links(tree: GrowingTree, collapsed, own: np.ndarray) -> dict[int, float]:
    """``g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1)`` of every internal node of the
    current subtree (``collapsed`` nodes are its leaves)."""
    n_nodes = len(tree.feature)
    sub_loss = np.zeros(n_nodes)
    sub_leaves = np.zeros(n_nodes)
    g: dict[int, float] = {}
    for node in reversed(_reachable(tree, collapsed)):
        if _is_end(tree, node, collapsed):
            sub_loss[node] = own[node]
            sub_leaves[node] = 1.0
            continue
        for child, _, _ in tree.edges[node]:
            sub_loss[node] += sub_loss[child]
            sub_leaves[node] += sub_leaves[child]
        g[node] = (own[node] - sub_loss[node]) / (sub_leaves[node] - 1.0)
    return g
