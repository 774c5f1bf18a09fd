"""The compiled node_mass of numeric trees equals the numpy walk to the bit; leaf_mix in
blocks of rows equals the whole product."""

import numpy as np

from learners.forest import BudgetRFClassifier
from learners.tree import C45Classifier
from learners.tree._structure import TreeStructure


def _rows(seed, n=300, m=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    y = (X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=n) > 0).astype(int)
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def test_compiled_node_mass_equals_the_numpy_walk_bit_for_bit():
    """On fitted numeric trees with missing values, both walks give identical arrays."""
    X, y = _rows(0)
    trees = [C45Classifier().fit(X, y).tree_]
    trees += BudgetRFClassifier(alpha=0.0, max_trees=3, random_state=0).fit(X, y).trees_
    for tree in trees:
        assert tree._numeric_only()
        compiled = tree.node_mass(X)
        plain = tree._node_mass_python(X)
        assert compiled.dtype == plain.dtype and compiled.shape == plain.shape
        assert np.array_equal(compiled, plain)
        leaves = tree.feature == -1
        np.testing.assert_allclose(compiled[leaves].sum(axis=0), 1.0)


def test_a_tree_with_a_nominal_split_keeps_the_numpy_walk():
    """A nominal split (no threshold) is not numeric-only: the numpy walk serves it."""
    tree = TreeStructure(
        feature=[0, -1, -1],
        threshold=[np.nan, np.nan, np.nan],
        edge_start=[0, 2, 2],
        n_edges=[2, 0, 0],
        class_weight=[[2, 2], [2, 0], [0, 2]],
        child=[1, 2],
        branch_value=[0.0, 1.0],
        branch_weight=[0.5, 0.5],
    )
    assert not tree._numeric_only()
    np.testing.assert_array_equal(tree.node_mass([[1.0], [np.nan]]), [[1, 1], [0, 0.5], [1, 0.5]])


def test_leaf_mix_in_blocks_of_rows_equals_the_whole_node_mass_product():
    """``leaf_mix`` over blocks of 7 rows (a block of 7 x nodes shares at a time) equals
    ``node_mass(X)[leaves].T @ values[leaves]`` computed on every row at once."""
    X, y = _rows(1)
    tree = C45Classifier().fit(X, y).tree_
    leaves = tree.feature == -1
    whole = tree.node_mass(X)[leaves].T @ tree.class_weight[leaves]
    blocked = tree.leaf_mix(X, tree.class_weight, block_elements=7 * tree.n_nodes)
    assert blocked.shape == (X.shape[0], tree.class_weight.shape[1])
    np.testing.assert_allclose(blocked, whole, rtol=1e-12, atol=0.0)
    np.testing.assert_array_equal(tree.leaf_mix(X, tree.class_weight), whole)
