"""The one array-based tree structure every tree learner produces.

A fitted tree is a :class:`TreeStructure`: flat numpy arrays indexed by node
id (node 0 is the root), with each node's outgoing edges stored contiguously
in edge arrays.  It holds no Python objects, so it serializes to plain JSON
and loads without running code.

Node arrays (length ``n_nodes``)
    ``feature[n]``         feature tested at node n, or -1 for a leaf.
    ``threshold[n]``       numeric split: edge 0 takes ``x <= threshold``,
                           edge 1 takes ``x > threshold``.  NaN for a nominal
                           split and for a leaf.
    ``edge_start[n]``      index of node n's first edge in the edge arrays.
    ``n_edges[n]``         number of children (0 for a leaf).
    ``class_weight[n, k]`` training weight of class k that reached node n
                           (fractional under C4.5's missing-value handling).
                           A leaf of an empty nominal branch (a category no
                           training case at the parent had) carries its
                           parent's class weights, as in C4.5; its edge has
                           ``branch_weight`` 0.

Edge arrays (length ``n_edges.sum()``)
    ``child[e]``           node id the edge leads to.
    ``branch_value[e]``    nominal split: the category code that takes this
                           edge.  NaN for numeric splits.
    ``branch_weight[e]``   share of the parent's training weight with a known
                           value that went down this edge.  A case whose value
                           is missing or unavailable goes down every edge with
                           these weights (C4.5), so they sum to 1 per node.

Labels are not stored: a node's decision is recomputed from ``class_weight``
and the model's cost matrix, so a model can be relabelled for a new matrix
without refitting.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TreeStructure", "LEAF"]

LEAF = -1


@dataclass
class TreeStructure:
    """Flat arrays describing one tree (see the module docstring)."""

    feature: np.ndarray
    threshold: np.ndarray
    edge_start: np.ndarray
    n_edges: np.ndarray
    class_weight: np.ndarray
    child: np.ndarray
    branch_value: np.ndarray
    branch_weight: np.ndarray

    def __post_init__(self) -> None:
        self.feature = np.asarray(self.feature, dtype=np.int64)
        self.threshold = np.asarray(self.threshold, dtype=float)
        self.edge_start = np.asarray(self.edge_start, dtype=np.int64)
        self.n_edges = np.asarray(self.n_edges, dtype=np.int64)
        self.class_weight = np.asarray(self.class_weight, dtype=float)
        self.child = np.asarray(self.child, dtype=np.int64)
        self.branch_value = np.asarray(self.branch_value, dtype=float)
        self.branch_weight = np.asarray(self.branch_weight, dtype=float)
        self.validate()

    @property
    def n_nodes(self) -> int:
        """Number of nodes, leaves included."""
        return int(self.feature.shape[0])

    @property
    def n_leaves(self) -> int:
        """Number of leaves."""
        return int(np.count_nonzero(self.feature == LEAF))

    @property
    def n_classes(self) -> int:
        """Number of classes the class weights are counted over."""
        return int(self.class_weight.shape[1])

    def is_leaf(self, node: int) -> bool:
        """True when ``node`` has no children."""
        return bool(self.feature[node] == LEAF)

    def children(self, node: int) -> np.ndarray:
        """Child node ids of ``node``, in edge order."""
        start = self.edge_start[node]
        return self.child[start : start + self.n_edges[node]]

    def edges(self, node: int) -> range:
        """Edge indices leaving ``node``."""
        start = int(self.edge_start[node])
        return range(start, start + int(self.n_edges[node]))

    def route(self, node: int, value: float) -> int | None:
        """Edge taken at ``node`` by a known ``value``; None if no edge matches.

        NaN means missing and never matches: the caller then splits the case
        over every edge with ``branch_weight``.
        """
        if value != value:  # NaN
            return None
        start = int(self.edge_start[node])
        threshold = self.threshold[node]
        if threshold == threshold:
            return start if value <= threshold else start + 1
        for edge in range(start, start + int(self.n_edges[node])):
            if self.branch_value[edge] == value:
                return edge
        return None

    def depth(self) -> int:
        """Length of the longest root-to-leaf path (a single leaf has depth 0)."""
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        best = 0
        for node in range(self.n_nodes):  # parents always precede children
            for c in self.children(node):
                depth[c] = depth[node] + 1
                best = max(best, int(depth[c]))
        return best

    def validate(self) -> None:
        """Raise ValueError when the arrays do not describe a tree."""
        n = self.n_nodes
        for name in ("threshold", "edge_start", "n_edges"):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"tree array {name} must have one entry per node")
        if self.class_weight.ndim != 2 or self.class_weight.shape[0] != n:
            raise ValueError("tree class_weight must be n_nodes x n_classes")
        m = int(self.n_edges.sum()) if n else 0
        for name in ("child", "branch_value", "branch_weight"):
            if getattr(self, name).shape != (m,):
                raise ValueError(f"tree array {name} must have one entry per edge")
        if m and (self.child.min() <= 0 or self.child.max() >= n):
            raise ValueError("tree child ids must point to non-root nodes")
        if np.any((self.feature == LEAF) != (self.n_edges == 0)):
            raise ValueError("a node is a leaf exactly when it has no edges")

    def to_dict(self) -> dict:
        """Plain-JSON form (NaN written as None)."""
        return {
            "feature": self.feature.tolist(),
            "threshold": _nan_to_none(self.threshold),
            "edge_start": self.edge_start.tolist(),
            "n_edges": self.n_edges.tolist(),
            "class_weight": self.class_weight.tolist(),
            "child": self.child.tolist(),
            "branch_value": _nan_to_none(self.branch_value),
            "branch_weight": self.branch_weight.tolist(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "TreeStructure":
        """Inverse of :meth:`to_dict`."""
        n_classes = len(data["class_weight"][0]) if data["class_weight"] else 0
        return cls(
            feature=data["feature"],
            threshold=_none_to_nan(data["threshold"]),
            edge_start=data["edge_start"],
            n_edges=data["n_edges"],
            class_weight=np.asarray(data["class_weight"], dtype=float).reshape(-1, n_classes),
            child=data["child"],
            branch_value=_none_to_nan(data["branch_value"]),
            branch_weight=data["branch_weight"],
        )


_INFINITIES = {"inf": np.inf, "-inf": -np.inf}


def _nan_to_none(values: np.ndarray) -> list:
    # JSON has no NaN or infinity: NaN becomes null, an infinite threshold (a split
    # that only separates missing values) becomes the string "inf" or "-inf".
    return [
        None if v != v else ("inf" if v > 0 else "-inf") if np.isinf(v) else float(v)
        for v in values.tolist()
    ]


def _none_to_nan(values) -> np.ndarray:
    return np.array(
        [np.nan if v is None else _INFINITIES.get(v, v) for v in values], dtype=float
    )
