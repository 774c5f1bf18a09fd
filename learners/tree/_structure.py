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

from .. import _document as document
from .._document import MAX_CLASSES, MAX_NODES

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

    def validate(self, n_features: int | None = None) -> None:
        """Raise ValueError unless the arrays describe one tree that every walk can use.

        Checked in O(n_nodes + n_edges), so a corrupted or tampered model can
        neither make a walk loop forever nor index outside an array:

        - sizes: 1 to :data:`MAX_NODES` nodes, 1 to :data:`MAX_CLASSES` classes,
          node arrays one entry per node, edge arrays one per edge;
        - features: -1 (leaf) or a feature index below ``n_features`` (when
          given); a node is a leaf exactly when it has no edges;
        - edges: each node's edges follow those of the nodes before it
          (``edge_start[n]`` = number of edges of nodes ``0..n-1``), so they
          are contiguous, in range and never shared;
        - shape: every child id is greater than its parent's (nodes are
          numbered parents first, as every learner writes them and as
          :meth:`depth` relies on) and every node but the root has exactly
          one parent: the tree is acyclic and every node is reachable from
          the root;
        - numbers: a numeric split (non-NaN threshold; infinities allowed)
          has exactly two edges; class weights and branch weights are finite
          and non-negative, and each node's branch weights sum to 1.
        """
        n = self.n_nodes
        if self.feature.ndim != 1 or not 1 <= n <= MAX_NODES:
            raise ValueError(f"a tree has 1 to {MAX_NODES} nodes, got {n}")
        for name in ("threshold", "edge_start", "n_edges"):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"tree array {name} must have one entry per node ({n})")
        if self.class_weight.ndim != 2 or self.class_weight.shape[0] != n:
            raise ValueError(f"tree class_weight must be {n} (nodes) x n_classes")
        if not 1 <= self.class_weight.shape[1] <= MAX_CLASSES:
            raise ValueError(
                f"tree class_weight has {self.class_weight.shape[1]} classes, "
                f"expected 1 to {MAX_CLASSES}"
            )
        _first_bad(
            ~np.isfinite(self.class_weight).all(axis=1) | (self.class_weight < 0).any(axis=1),
            lambda node: f"class_weight of node {node} is {self.class_weight[node].tolist()}: "
            "class weights must be finite and non-negative",
        )
        _first_bad(
            self.n_edges < 0,
            lambda node: f"node {node} has {self.n_edges[node]} edges",
        )
        _first_bad(
            self.feature < LEAF,
            lambda node: f"node {node} tests feature {self.feature[node]}: "
            "expected a feature index, or -1 for a leaf",
        )
        if n_features is not None:
            _first_bad(
                self.feature >= n_features,
                lambda node: f"node {node} tests feature {self.feature[node]}, out of range "
                f"for {n_features} features",
            )
        _first_bad(
            (self.feature == LEAF) != (self.n_edges == 0),
            lambda node: f"node {node} has feature {self.feature[node]} and "
            f"{self.n_edges[node]} edges: a node is a leaf (-1) exactly when it has no edges",
        )
        offsets = np.concatenate([[0], np.cumsum(self.n_edges)])
        m = int(offsets[-1])
        for name in ("child", "branch_value", "branch_weight"):
            if getattr(self, name).shape != (m,):
                raise ValueError(f"tree array {name} must have one entry per edge ({m})")
        inner = self.n_edges > 0
        _first_bad(
            inner & (self.edge_start != offsets[:-1]),
            lambda node: f"node {node} has edge_start {self.edge_start[node]}, expected "
            f"{offsets[node]}: each node's edges follow the edges of the nodes before it",
        )
        _first_bad(
            (self.edge_start < 0) | (self.edge_start > m),
            lambda node: f"leaf {node} has edge_start {self.edge_start[node]}, out of range "
            f"for {m} edges",
        )
        _first_bad(
            inner & ~np.isnan(self.threshold) & (self.n_edges != 2),
            lambda node: f"node {node} splits at threshold {self.threshold[node]:g} but has "
            f"{self.n_edges[node]} edges (a numeric split has 2)",
        )
        if m == 0:
            if n != 1:
                raise ValueError(f"tree has {n} nodes but no edges: nodes 1 to {n - 1} are unreachable")
            return
        parent = np.repeat(np.arange(n), self.n_edges)  # owner of each edge
        _first_bad(
            (self.child < 0) | (self.child >= n),
            lambda edge: f"edge {edge} of node {parent[edge]} leads to node "
            f"{self.child[edge]}, out of range for {n} nodes",
        )
        _first_bad(
            self.child == parent,
            lambda edge: f"node {parent[edge]} is its own child (a cycle)",
        )
        _first_bad(
            self.child < parent,
            lambda edge: f"node {parent[edge]} has child {self.child[edge]}, numbered before "
            "it: nodes are numbered parents first, so a child's id exceeds its parent's "
            "(otherwise the tree could have a cycle)",
        )
        parents = np.bincount(self.child, minlength=n)
        _first_bad(
            parents[1:] == 0,
            lambda i: f"node {i + 1} is unreachable: no edge leads to it",
        )
        _first_bad(
            parents[1:] > 1,
            lambda i: f"node {i + 1} has {parents[i + 1]} parents; every node but the root "
            "has exactly one",
        )
        _first_bad(
            ~np.isfinite(self.branch_weight) | (self.branch_weight < 0),
            lambda edge: f"branch_weight of edge {edge} is {self.branch_weight[edge]!r}: "
            "branch weights must be finite and non-negative",
        )
        sums = np.bincount(parent, weights=self.branch_weight, minlength=n)
        _first_bad(
            inner & (np.abs(sums - 1.0) > _WEIGHT_TOLERANCE),
            lambda node: f"branch weights of node {node} sum to {sums[node]:g}, not 1",
        )

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
    def from_dict(
        cls, data, *, n_features: int | None = None, where: str = "tree"
    ) -> "TreeStructure":
        """Inverse of :meth:`to_dict`, for untrusted input.

        Every field is type-checked and the whole structure validated
        (:meth:`validate`) before the tree is returned.

        Parameters
        ----------
        n_features : int, optional
            Number of features of the model: node features must be below it.
        where : str
            Path of ``data`` in its document, for messages.

        Raises
        ------
        ModelDocumentError
            Naming the field and what is wrong with it.
        """
        data = document.mapping(data, where)
        document.no_unknown_fields(data, _FIELDS, where)

        def read(name, reader, **options):
            return reader(document.field(data, name, where), f"{where}.{name}", **options)

        feature = read("feature", document.integers, low=LEAF, high=document.MAX_FEATURES - 1)
        n = feature.shape[0]
        if not 1 <= n <= MAX_NODES:
            raise document.ModelDocumentError(
                f"{where}.feature: a tree has 1 to {MAX_NODES} nodes, got {n}"
            )
        n_edges = read("n_edges", document.integers, low=0, high=n - 1, length=n)
        m = int(n_edges.sum())
        with document.reading(where):
            tree = cls(
                feature=feature,
                threshold=read("threshold", document.numbers, length=n, allow_none=True,
                               infinities=True),
                edge_start=read("edge_start", document.integers, low=0, high=m, length=n),
                n_edges=n_edges,
                class_weight=read("class_weight", document.table, rows=n, low=0.0),
                child=read("child", document.integers, low=0, high=n - 1, length=m),
                branch_value=read("branch_value", document.numbers, length=m, allow_none=True),
                branch_weight=read("branch_weight", document.numbers, length=m, low=0.0),
            )
            if n_features is not None:
                tree.validate(n_features)
        return tree


_FIELDS = (
    "feature", "threshold", "edge_start", "n_edges",
    "class_weight", "child", "branch_value", "branch_weight",
)
#: How far a node's branch weights may sum from 1 (they are shares of its weight).
_WEIGHT_TOLERANCE = 1e-6


def _first_bad(bad: np.ndarray, message) -> None:
    """Raise ValueError(message(i)) for the first i where ``bad`` holds."""
    hits = np.flatnonzero(bad)
    if hits.size:
        raise ValueError(message(int(hits[0])))


def _nan_to_none(values: np.ndarray) -> list:
    # JSON has no NaN or infinity: NaN becomes null, an infinite threshold (a split
    # that only separates missing values) becomes the string "inf" or "-inf".
    return [
        None if v != v else ("inf" if v > 0 else "-inf") if np.isinf(v) else float(v)
        for v in values.tolist()
    ]
