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
                           edge.  NaN for numeric splits.  NaN on the *last*
                           edge of a nominal split makes it the node's
                           "other" edge: every known category without an
                           edge of its own takes it (a one-vs-rest split is
                           the edges ``[v, other]``).
    ``branch_weight[e]``   share of the parent's training weight with a known
                           value that went down this edge.  A case whose value
                           is missing or unavailable goes down every edge with
                           these weights (C4.5), so they sum to 1 per node.

Labels are not stored: a node's decision is recomputed from ``class_weight``
and the model's cost matrix, so a model can be relabelled for a new matrix
without refitting.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import InitVar, dataclass

import numpy as np

from .. import _document as document
from .._document import MAX_CLASSES, MAX_NODES

__all__ = ["LEAF", "Reach", "TreeStructure", "other_edge", "smoothed_proba"]

LEAF = -1
#: Most (node, row) shares :meth:`TreeStructure.leaf_mix` holds at once (8 bytes each: 128 MB).
#: A whole ``node_mass`` of a 4,800-node tree over 100,000 rows is 3.6 GiB (issue 29).
MASS_BLOCK_ELEMENTS = 16_000_000


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

    @property
    def ends(self) -> dict[int, float]:
        """Every node the walk ended at (frontier nodes and leaves), with shares."""
        return {**self.frontier, **self.leaves}


def other_edge(tree: TreeStructure, node: int) -> int | None:
    """The "other" edge of a nominal split (every category without an edge of its own takes
    it): its last edge when that edge's code is NaN; None for a numeric split, a leaf, or
    a nominal split with one edge per category."""
    if tree.n_edges[node] == 0 or tree.threshold[node] == tree.threshold[node]:
        return None
    last = int(tree.edge_start[node] + tree.n_edges[node] - 1)
    return last if tree.branch_value[last] != tree.branch_value[last] else None


def smoothed_proba(class_weight: np.ndarray, smoothing: float) -> np.ndarray:
    """Class probabilities of nodes from their class weights: ``(n_c + s) / (n + K s)``.

    ``s = 1`` is Laplace's correction (paper 001), ``s = 0`` the frequency; a
    node with no weight (and ``s = 0``) gets the uniform distribution.
    """
    counts = np.atleast_2d(np.asarray(class_weight, dtype=float)) + float(smoothing)
    k = counts.shape[1]
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        proba = counts / total
    proba[total[:, 0] <= 0] = 1.0 / k
    return proba


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
    #: False: not :meth:`validate`\ d yet; whoever keeps the tree must call it (BudgetRF
    #: grows ten forests and walks every tree, but keeps one forest).
    checked: InitVar[bool] = True

    def __post_init__(self, checked: bool = True) -> None:
        self.feature = np.asarray(self.feature, dtype=np.int64)
        self.threshold = np.asarray(self.threshold, dtype=float)
        self.edge_start = np.asarray(self.edge_start, dtype=np.int64)
        self.n_edges = np.asarray(self.n_edges, dtype=np.int64)
        self.class_weight = np.asarray(self.class_weight, dtype=float)
        self.child = np.asarray(self.child, dtype=np.int64)
        self.branch_value = np.asarray(self.branch_value, dtype=float)
        self.branch_weight = np.asarray(self.branch_weight, dtype=float)
        if checked:
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

    # ------------------------------------------------------------- routing
    # The one tree walk.  Every caller (the policy, prediction, the
    # conditioned-loss model, the app's diagram and path highlighting) routes
    # cases through these methods; nothing else follows ``child`` pointers.

    def reach(self, known: Mapping[int, float], unavailable: Iterable[int] = ()) -> Reach:
        """Walk one patient from the root with the results ``known`` (NaN = missing).

        A node whose test is known takes the edge its value routes to; a test
        that is unavailable, or known as NaN (done, no result), sends the
        patient down every edge weighted by ``branch_weight`` (C4.5's
        fractional cases); a test neither known nor unavailable stops the walk
        there (the node joins the frontier).

        Raises
        ------
        ValueError
            If a known value of a nominal test matches no branch and the split
            has no "other" edge (a category not seen in training).
        """
        lists = self._lists()
        feature, edge_start, n_edges, child, branch_weight = (
            lists["feature"],
            lists["edge_start"],
            lists["n_edges"],
            lists["child"],
            lists["branch_weight"],
        )
        blocked = unavailable if isinstance(unavailable, (set, frozenset)) else set(unavailable)
        result = Reach()
        stack = [(0, 1.0)]
        while stack:
            node, weight = stack.pop()
            result.visited.append(node)
            f = feature[node]
            if f < 0:
                result.leaves[node] = result.leaves.get(node, 0.0) + weight
                continue
            if f not in blocked and f not in known:
                result.frontier[node] = result.frontier.get(node, 0.0) + weight
                continue
            value = None if f in blocked else known[f]
            if value is None or value != value:  # unavailable or no result: every branch
                start = edge_start[node]
                for edge in range(start + n_edges[node] - 1, start - 1, -1):
                    share = branch_weight[edge]
                    if share > 0.0:
                        stack.append((child[edge], weight * share))
                continue
            edge = self._route_known(node, float(value), lists)
            stack.append((child[edge], weight))
        return result

    def path_to(self, node: int) -> list[tuple[int, int]]:
        """``(ancestor, edge)`` pairs leading from the root to ``node``, root first."""
        parent_edge = self._lists()["parent_edge"]
        parents = self._lists()["edge_parent"]
        steps = []
        while node != 0:
            edge = parent_edge[node]
            steps.append((parents[edge], edge))
            node = parents[edge]
        return steps[::-1]

    def path_tests(self, node: int) -> list[int]:
        """Tests asked on the way from the root to ``node`` (its ancestors' tests), root
        first: a walk that reaches ``node`` has their results, so ``node``'s own test
        is priced as ``CostModel.marginal_cost(test, done)`` with these among ``done``."""
        return [int(self.feature[ancestor]) for ancestor, _ in self.path_to(node)]

    def subtree_tests(self, node: int) -> list[int]:
        """Tests of the subtree under ``node`` (itself included), in preorder, once each."""
        lists = self._lists()
        seen: dict[int, None] = {}
        stack = [node]
        while stack:
            current = stack.pop()
            f = lists["feature"][current]
            if f < 0:
                continue
            seen.setdefault(f, None)
            start = lists["edge_start"][current]
            for edge in range(start + lists["n_edges"][current] - 1, start - 1, -1):
                stack.append(lists["child"][edge])
        return list(seen)

    def node_mass(self, X: np.ndarray) -> np.ndarray:
        """Share of each row of ``X`` reaching each node, shape ``(n_nodes, n_rows)``.

        The vectorised form of :meth:`reach` for whole rows (NaN = missing:
        every branch by ``branch_weight``).  A row's leaf shares sum to 1.
        A tree of numeric splits only is walked by a compiled copy of the same
        arithmetic (:func:`._structure_kernels.numeric_node_mass`, tested
        equal to the bit to :meth:`_node_mass_python`).

        Raises
        ------
        ValueError
            If a nominal test meets a category that has no branch.
        """
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if self._numeric_only():
            from ._structure_kernels import numeric_node_mass, tree_arrays

            return numeric_node_mass(np.ascontiguousarray(X), tree_arrays(self))
        return self._node_mass_python(X)

    def _numeric_only(self) -> bool:
        """Whether every split is numeric (a threshold), so the compiled walk applies."""
        cached = self.__dict__.get("_numeric_splits")
        if cached is None:
            inner = self.n_edges > 0
            cached = bool(np.all(~np.isnan(self.threshold[inner])))
            self.__dict__["_numeric_splits"] = cached
        return cached

    def _node_mass_python(self, X: np.ndarray) -> np.ndarray:
        """:meth:`node_mass` in numpy, node by node (nominal splits; the reference)."""
        mass = np.zeros((self.n_nodes, X.shape[0]))
        mass[0] = 1.0
        for node in self._preorder():
            here = mass[node]
            f = int(self.feature[node])
            if f < 0 or not here.any():
                continue
            values = X[:, f]
            missing = np.isnan(values)
            edges = self.edges(node)
            threshold = self.threshold[node]
            if threshold == threshold:
                chosen = [~missing & (values <= threshold), ~missing & (values > threshold)]
            else:
                chosen = [values == self.branch_value[e] for e in edges]
                other = other_edge(self, node)
                if other is not None:  # NaN matched nothing above: the unmatched known values
                    chosen[-1] = ~missing & ~np.logical_or.reduce(chosen[:-1])
                matched = np.logical_or.reduce(chosen) | missing | (here == 0)
                if not matched.all():
                    bad = values[~matched][0]
                    raise ValueError(
                        f"feature {f} has value {bad:g}, a category not seen in training"
                    )
            for e, take in zip(edges, chosen, strict=True):
                mass[self.child[e]] += here * (take + missing * self.branch_weight[e])
        return mass

    def proba(self, X: np.ndarray, node_proba: np.ndarray) -> np.ndarray:
        """Class probabilities of each row: its leaves' ``node_proba`` mixed by share."""
        return self.leaf_mix(X, node_proba)

    def leaf_mix(
        self, X: np.ndarray, values: np.ndarray, *, block_elements: int = MASS_BLOCK_ELEMENTS
    ) -> np.ndarray:
        """Each row's leaves' ``values`` (one row per node) mixed by the row's shares.

        ``node_mass(X)[leaves].T @ values[leaves]``, shape ``(n_rows, values.shape[1])``,
        computed over blocks of rows so that at most ``block_elements`` (node, row) shares
        are held at once: memory grows with the rows times the columns of ``values``, not
        with the nodes times the rows.
        """
        X = np.atleast_2d(np.asarray(X, dtype=float))
        values = np.asarray(values, dtype=float)
        leaves = np.flatnonzero(self.feature == LEAF)
        leaf_values = values[leaves]
        out = np.empty((X.shape[0], values.shape[1]))
        block = max(1, int(block_elements) // max(self.n_nodes, 1))
        for start in range(0, X.shape[0], block):
            mass = self.node_mass(X[start : start + block])
            out[start : start + block] = mass[leaves].T @ leaf_values
        return out

    def _route_known(self, node: int, value: float, lists: dict) -> int:
        start = lists["edge_start"][node]
        threshold = lists["threshold"][node]
        if threshold == threshold:
            return start if value <= threshold else start + 1
        branch_value = lists["branch_value"]
        last = start + lists["n_edges"][node] - 1
        for edge in range(start, last + 1):
            if branch_value[edge] == value:
                return edge
        if branch_value[last] != branch_value[last]:  # the "other" edge
            return last
        raise ValueError(
            f"feature {lists['feature'][node]} has value {value:g}, a category not seen in training"
        )

    def _lists(self) -> dict:
        """Plain-Python copies of the arrays: a walk touches a handful of nodes, and list
        indexing beats numpy scalar indexing by far (``next_action`` answers in well under
        a millisecond)."""
        cached = self.__dict__.get("_walk_lists")
        if cached is None:
            edge_parent = np.repeat(np.arange(self.n_nodes), self.n_edges).tolist()
            parent_edge = [0] * self.n_nodes
            for edge, c in enumerate(self.child.tolist()):
                parent_edge[c] = edge
            cached = {
                "feature": self.feature.tolist(),
                "threshold": self.threshold.tolist(),
                "edge_start": self.edge_start.tolist(),
                "n_edges": self.n_edges.tolist(),
                "child": self.child.tolist(),
                "branch_value": self.branch_value.tolist(),
                "branch_weight": self.branch_weight.tolist(),
                "edge_parent": edge_parent,
                "parent_edge": parent_edge,
            }
            self.__dict__["_walk_lists"] = cached
        return cached

    def _preorder(self) -> list[int]:
        order, stack = [], [0]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(int(c) for c in self.children(node)[::-1])
        return order

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
          and non-negative, and each node's branch weights sum to 1;
        - nominal splits: at least two edges, distinct codes, and NaN (the
          "other" edge) only on the last edge.
        """
        n = self.n_nodes
        if self.feature.ndim != 1 or not 1 <= n <= MAX_NODES:
            raise ValueError(f"a tree has 1 to {MAX_NODES} nodes, got {n}")
        for name in ("threshold", "edge_start", "n_edges"):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"tree array {name} must have one entry per node ({n})")
        weights = self.class_weight
        if weights.ndim != 2 or weights.shape[0] != n:
            raise ValueError(f"tree class_weight must be {n} (nodes) x n_classes")
        if not 1 <= weights.shape[1] <= MAX_CLASSES:
            raise ValueError(
                f"tree class_weight has {weights.shape[1]} classes, expected 1 to {MAX_CLASSES}"
            )
        node = _first(~np.isfinite(weights).all(axis=1) | (weights < 0).any(axis=1))
        if node is not None:
            raise ValueError(
                f"class_weight of node {node} is {weights[node].tolist()}: "
                "class weights must be finite and non-negative"
            )
        feature, n_edges, edge_start = self.feature, self.n_edges, self.edge_start
        node = _first(n_edges < 0)
        if node is not None:
            raise ValueError(f"node {node} has {n_edges[node]} edges")
        node = _first(feature < LEAF)
        if node is not None:
            raise ValueError(
                f"node {node} tests feature {feature[node]}: "
                "expected a feature index, or -1 for a leaf"
            )
        node = None if n_features is None else _first(feature >= n_features)
        if node is not None:
            raise ValueError(
                f"node {node} tests feature {feature[node]}, out of range for {n_features} features"
            )
        node = _first((feature == LEAF) != (n_edges == 0))
        if node is not None:
            raise ValueError(
                f"node {node} has feature {feature[node]} and {n_edges[node]} edges: "
                "a node is a leaf (-1) exactly when it has no edges"
            )
        offsets = np.concatenate([[0], np.cumsum(n_edges)])
        m = int(offsets[-1])
        for name in ("child", "branch_value", "branch_weight"):
            if getattr(self, name).shape != (m,):
                raise ValueError(f"tree array {name} must have one entry per edge ({m})")
        inner = n_edges > 0
        node = _first(inner & (edge_start != offsets[:-1]))
        if node is not None:
            raise ValueError(
                f"node {node} has edge_start {edge_start[node]}, expected {offsets[node]}: "
                "each node's edges follow the edges of the nodes before it"
            )
        node = _first((edge_start < 0) | (edge_start > m))
        if node is not None:
            raise ValueError(
                f"leaf {node} has edge_start {edge_start[node]}, out of range for {m} edges"
            )
        node = _first(inner & ~np.isnan(self.threshold) & (n_edges != 2))
        if node is not None:
            raise ValueError(
                f"node {node} splits at threshold {self.threshold[node]:g} but has "
                f"{n_edges[node]} edges (a numeric split has 2)"
            )
        if m == 0:
            if n != 1:
                raise ValueError(f"tree has {n} nodes but no edges: node 1 is unreachable")
            return
        self._validate_links(n)
        self._validate_nominal_codes()

    def _validate_nominal_codes(self) -> None:
        """Nominal splits: two edges or more, distinct codes, NaN only on the last edge."""
        nominal = (self.n_edges > 0) & np.isnan(self.threshold)
        node = _first(nominal & (self.n_edges < 2))
        if node is not None:
            raise ValueError(f"node {node} splits a nominal test into {self.n_edges[node]} edge")
        parent = np.repeat(np.arange(self.n_nodes), self.n_edges)  # the node each edge leaves
        on_nominal = nominal[parent]
        last = np.zeros(parent.shape[0], dtype=bool)
        last[(self.edge_start + self.n_edges - 1)[self.n_edges > 0]] = True
        edge = _first(on_nominal & np.isnan(self.branch_value) & ~last)
        if edge is not None:
            raise ValueError(
                f"node {parent[edge]}: edge {edge} has no category code; only a nominal "
                "split's last edge may be its 'other' edge"
            )
        named = np.flatnonzero(on_nominal & ~np.isnan(self.branch_value))
        order = named[np.lexsort((self.branch_value[named], parent[named]))]
        same = (parent[order[1:]] == parent[order[:-1]]) & (
            self.branch_value[order[1:]] == self.branch_value[order[:-1]]
        )
        if same.any():
            node = int(parent[order[1:]][same][0])
            codes = self.branch_value[self.edges(node)].tolist()
            raise ValueError(f"node {node} has two edges for one category: {codes}")

    def _validate_links(self, n: int) -> None:
        """Children in range, numbered after their parent, one parent each; branch weights."""
        child = self.child
        parent = np.repeat(np.arange(n), self.n_edges)  # the node each edge leaves
        edge = _first((child < 0) | (child >= n))
        if edge is not None:
            raise ValueError(
                f"edge {edge} of node {parent[edge]} leads to node {child[edge]}, "
                f"out of range for {n} nodes"
            )
        edge = _first(child == parent)
        if edge is not None:
            raise ValueError(f"node {parent[edge]} is its own child (a cycle)")
        edge = _first(child < parent)
        if edge is not None:
            raise ValueError(
                f"node {parent[edge]} has child {child[edge]}, numbered before it: nodes are "
                "numbered parents first, so a child's id exceeds its parent's (otherwise the "
                "tree could have a cycle)"
            )
        parents = np.bincount(child, minlength=n)
        node = _first(parents == 0, start=1)
        if node is not None:
            raise ValueError(f"node {node} is unreachable: no edge leads to it")
        node = _first(parents > 1, start=1)
        if node is not None:
            raise ValueError(
                f"node {node} has {parents[node]} parents; every node but the root has exactly one"
            )
        share = self.branch_weight
        edge = _first(~np.isfinite(share) | (share < 0))
        if edge is not None:
            raise ValueError(
                f"branch_weight of edge {edge} is {float(share[edge])!r}: "
                "branch weights must be finite and non-negative"
            )
        sums = np.bincount(parent, weights=share, minlength=n)
        node = _first((self.n_edges > 0) & (np.abs(sums - 1.0) > _WEIGHT_TOLERANCE))
        if node is not None:
            raise ValueError(f"branch weights of node {node} sum to {sums[node]:g}, not 1")

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
    ) -> TreeStructure:
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
                threshold=read(
                    "threshold", document.numbers, length=n, allow_none=True, infinities=True
                ),
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
    "feature",
    "threshold",
    "edge_start",
    "n_edges",
    "class_weight",
    "child",
    "branch_value",
    "branch_weight",
)
#: How far a node's branch weights may sum from 1 (they are shares of its weight).
_WEIGHT_TOLERANCE = 1e-6


def _first(bad: np.ndarray, start: int = 0) -> int | None:
    """The first index from ``start`` on where ``bad`` holds, or None."""
    hits = np.flatnonzero(bad[start:])
    return int(hits[0]) + start if hits.size else None


def _nan_to_none(values: np.ndarray) -> list:
    # JSON has no NaN or infinity: NaN becomes null, an infinite threshold (a split
    # that only separates missing values) becomes the string "inf" or "-inf".
    return [
        None if v != v else ("inf" if v > 0 else "-inf") if np.isinf(v) else float(v)
        for v in values.tolist()
    ]
