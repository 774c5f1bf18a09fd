"""Walking a fitted :class:`TreeStructure` for one patient or many cases.

Shared by every model whose policy is a tree (the greedy learners and ACT).
A missing or unavailable value sends the walk down every edge of the node,
weighted by ``branch_weight`` (C4.5's fractional cases).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from ._structure import TreeStructure

__all__ = ["FastTree", "Reach", "leaf_probabilities", "tree_predict_proba"]


class Reach:
    """Where one patient's walk ended: leaves reached and tests still needed.

    Attributes
    ----------
    leaves : dict node -> weight
        Leaves reached, with the share of the patient that got there.
    frontier : dict node -> weight
        Internal nodes whose test is neither known nor unavailable.
    visited : list of int
        Every node the walk touched, in the order visited (root first).
    """

    __slots__ = ("leaves", "frontier", "visited")

    def __init__(self) -> None:
        self.leaves: dict[int, float] = {}
        self.frontier: dict[int, float] = {}
        self.visited: list[int] = []


class FastTree:
    """Plain-Python copy of a tree's arrays: per-node access without numpy overhead.

    A walk touches a handful of nodes, so Python lists beat numpy scalar
    indexing by a wide margin (``next_action`` must answer in well under 1 ms).
    """

    __slots__ = ("feature", "threshold", "edge_start", "n_edges", "child",
                 "branch_value", "branch_weight", "class_weight")

    def __init__(self, tree: TreeStructure) -> None:
        self.feature = tree.feature.tolist()
        self.threshold = tree.threshold.tolist()
        self.edge_start = tree.edge_start.tolist()
        self.n_edges = tree.n_edges.tolist()
        self.child = tree.child.tolist()
        self.branch_value = tree.branch_value.tolist()
        self.branch_weight = tree.branch_weight.tolist()
        self.class_weight = tree.class_weight.tolist()

    def reach(self, known: Mapping[int, float], unavailable: Iterable[int] = ()) -> Reach:
        """Walk from the root with the values ``known`` (NaN = missing).

        Raises
        ------
        ValueError
            If a known value of a nominal test matches no branch (a category
            not seen in training).
        """
        blocked = unavailable if isinstance(unavailable, (set, frozenset)) else set(unavailable)
        result = Reach()
        stack = [(0, 1.0)]
        while stack:
            node, weight = stack.pop()
            result.visited.append(node)
            f = self.feature[node]
            if f < 0:
                result.leaves[node] = result.leaves.get(node, 0.0) + weight
                continue
            value = known.get(f) if f not in blocked else None
            start = self.edge_start[node]
            stop = start + self.n_edges[node]
            if value is None and f not in blocked and f not in known:
                result.frontier[node] = result.frontier.get(node, 0.0) + weight
                continue
            if value is None or value != value:  # unavailable or NaN: every branch
                for edge in range(stop - 1, start - 1, -1):
                    share = self.branch_weight[edge]
                    if share > 0.0:
                        stack.append((self.child[edge], weight * share))
                continue
            stack.append((self.child[self.route(node, float(value))], weight))
        return result

    def route(self, node: int, value: float) -> int:
        """Edge taken at ``node`` by a known, non-missing ``value``."""
        start = self.edge_start[node]
        threshold = self.threshold[node]
        if threshold == threshold:
            return start if value <= threshold else start + 1
        for edge in range(start, start + self.n_edges[node]):
            if self.branch_value[edge] == value:
                return edge
        raise ValueError(
            f"feature {self.feature[node]} has value {value:g}, a category not seen in training"
        )

    def subtree_tests(self, node: int) -> list[int]:
        """Tests of the subtree under ``node`` (itself included), in preorder, once each."""
        seen: dict[int, None] = {}
        stack = [node]
        while stack:
            current = stack.pop()
            f = self.feature[current]
            if f < 0:
                continue
            seen.setdefault(f, None)
            start = self.edge_start[current]
            for edge in range(start + self.n_edges[current] - 1, start - 1, -1):
                stack.append(self.child[edge])
        return list(seen)


def leaf_probabilities(tree: TreeStructure, method: str = "laplace") -> np.ndarray:
    """Class probabilities of every node from its class weights.

    ``"laplace"``: ``(n_c + 1) / (n + K)`` (paper 001); ``"frequency"``:
    ``n_c / n``, uniform for a node with no weight.
    """
    counts = tree.class_weight
    k = counts.shape[1]
    total = counts.sum(axis=1, keepdims=True)
    if method == "laplace":
        return (counts + 1.0) / (total + k)
    if method == "frequency":
        with np.errstate(invalid="ignore", divide="ignore"):
            proba = counts / total
        proba[total[:, 0] <= 0] = 1.0 / k
        return proba
    raise ValueError(f"probability must be 'laplace' or 'frequency', got {method!r}")


def tree_predict_proba(tree: TreeStructure, node_proba: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Probabilities for every row of ``X``: missing values average over branches.

    Raises
    ------
    ValueError
        If a nominal test meets a category that has no branch.
    """
    n = X.shape[0]
    out = np.zeros((n, node_proba.shape[1]))
    stack = [(0, np.arange(n), np.ones(n))]
    while stack:
        node, rows, weights = stack.pop()
        if rows.size == 0:
            continue
        f = int(tree.feature[node])
        if f < 0:
            out[rows] += weights[:, None] * node_proba[node]
            continue
        values = X[rows, f]
        missing = np.isnan(values)
        edges = tree.edges(node)
        threshold = tree.threshold[node]
        if threshold == threshold:
            chosen = [~missing & (values <= threshold), ~missing & (values > threshold)]
        else:
            chosen = [values == tree.branch_value[e] for e in edges]
            matched = np.logical_or.reduce(chosen) | missing
            if not matched.all():
                bad = values[~matched][0]
                raise ValueError(
                    f"feature {f} has value {bad:g}, a category not seen in training"
                )
        for e, take in zip(edges, chosen):
            share = tree.branch_weight[e]
            child_rows = np.concatenate([rows[take], rows[missing]]) if share > 0 else rows[take]
            child_weights = (
                np.concatenate([weights[take], weights[missing] * share])
                if share > 0
                else weights[take]
            )
            stack.append((int(tree.child[e]), child_rows, child_weights))
    return out
