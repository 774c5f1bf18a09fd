"""Compiled copy of :meth:`TreeStructure.node_mass` for trees of numeric splits only.

Same arithmetic, row by row, as the numpy walk (``_node_mass_python``): a row
at a node with a known value goes wholly down the edge its value takes
(``here * (1 + 0)``), a missing value (NaN) sends ``here * (0 + branch_weight)``
down every edge, and each child, having one parent, receives exactly one
addition to its zero.  Nodes are visited in id order, which puts every parent
before its children (``TreeStructure.validate`` guarantees it).  The result is
equal to the bit (``tests/learners/test_node_mass.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def numeric_node_mass(X, feature, threshold, edge_start, child, branch_weight):
    """Share of each row of ``X`` at each node, shape ``(n_nodes, n_rows)``."""
    n_nodes = feature.shape[0]
    n_rows = X.shape[0]
    mass = np.zeros((n_nodes, n_rows))
    for r in range(n_rows):
        mass[0, r] = 1.0
    for node in range(n_nodes):
        f = feature[node]
        if f < 0:
            continue
        cut = threshold[node]
        first = edge_start[node]
        left = child[first]
        right = child[first + 1]
        left_share = branch_weight[first]
        right_share = branch_weight[first + 1]
        for r in range(n_rows):
            here = mass[node, r]
            if here == 0.0:
                continue
            value = X[r, f]
            if value != value:
                mass[left, r] += here * (0.0 + left_share)
                mass[right, r] += here * (0.0 + right_share)
            elif value <= cut:
                mass[left, r] += here * 1.0
            else:
                mass[right, r] += here * 1.0
    return mass
