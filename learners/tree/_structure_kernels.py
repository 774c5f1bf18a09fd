"""Compiled copy of :meth:`TreeStructure.node_mass` for trees of numeric splits only.

Same arithmetic, row by row, as the numpy walk (``_node_mass_python``): a row
at a node with a known value goes wholly down the edge its value takes
(``here * (1 + 0)``), a missing value (NaN) sends ``here * (0 + branch_weight)``
down every edge, and each child, having one parent, receives exactly one
addition to its zero (``TreeStructure.validate`` guarantees one parent each),
so the order nodes are visited in does not matter.  The result is equal to
the bit (``tests/learners/test_node_mass.py``).
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import numpy as np
from numba import njit


class TreeArrays(NamedTuple):
    """The arrays of a :class:`TreeStructure` the compiled walks read: one tree, or a
    forest's trees concatenated (global node and edge ids)."""

    feature: np.ndarray
    threshold: np.ndarray
    edge_start: np.ndarray
    n_edges: np.ndarray
    child: np.ndarray
    branch_weight: np.ndarray


class _Tree(Protocol):
    """What :func:`tree_arrays` reads of a ``TreeStructure`` (named here, so this module,
    which ``_structure`` imports, needs nothing from it)."""

    feature: np.ndarray
    threshold: np.ndarray
    edge_start: np.ndarray
    n_edges: np.ndarray
    child: np.ndarray
    branch_weight: np.ndarray


def tree_arrays(tree: _Tree) -> TreeArrays:
    """A ``TreeStructure``'s :class:`TreeArrays` (its own arrays, not copies)."""
    return TreeArrays(
        tree.feature, tree.threshold, tree.edge_start, tree.n_edges, tree.child, tree.branch_weight
    )


@njit(cache=True, nogil=True)
def numeric_node_mass(X, tree):
    """Share of each row of ``X`` at each node of ``tree`` (its :class:`TreeArrays`),
    shape ``(n_nodes, n_rows)``.

    Row by row, only the nodes the row reaches are visited (a depth-first
    walk: a known value follows one edge, a missing one every edge), so the
    work is the path lengths, not ``n_nodes x n_rows``; each reached child
    gets its parent's share times ``1`` or ``(0 + branch_weight)``, as in
    the numpy walk.
    """
    feature, threshold, edge_start, _, child, branch_weight = tree
    n_nodes = feature.shape[0]
    n_rows = X.shape[0]
    mass = np.zeros((n_nodes, n_rows))
    stack = np.empty(n_nodes + 1, dtype=np.int64)
    for r in range(n_rows):
        mass[0, r] = 1.0
        top = 0
        stack[top] = 0
        top += 1
        while top > 0:
            top -= 1
            node = stack[top]
            f = feature[node]
            if f < 0:
                continue
            here = mass[node, r]
            if here == 0.0:
                continue
            first = edge_start[node]
            left = child[first]
            right = child[first + 1]
            value = X[r, f]
            if value != value:
                mass[left, r] += here * (0.0 + branch_weight[first])
                mass[right, r] += here * (0.0 + branch_weight[first + 1])
                stack[top] = right
                stack[top + 1] = left
                top += 2
            elif value <= threshold[node]:
                mass[left, r] += here * 1.0
                stack[top] = left
                top += 1
            else:
                mass[right, r] += here * 1.0
                stack[top] = right
                top += 1
    return mass
