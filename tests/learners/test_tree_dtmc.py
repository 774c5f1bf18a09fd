"""DTMC: split only when the test's cost is repaid by fewer misclassification costs."""

import numpy as np
import pytest

from learners.tree import DTMCClassifier


def _fit(X, y, costs, **kwargs):
    return DTMCClassifier(test_costs=costs, min_samples_leaf=1, **kwargs).fit(X, y)


def test_stops_when_no_split_pays(cheap_vs_informative):
    """Root mc = 16 errors; the perfect test costs 32 * 1 = 32 > 16: the root stays a leaf."""
    X, y = cheap_vs_informative
    model = _fit(X, y, [1.0, 1.0])
    assert model.tree_.n_nodes == 1


def test_splits_when_it_pays(cheap_vs_informative):
    """At 0.1 per case the perfect test costs 3.2 < 16: DTMC splits on it."""
    X, y = cheap_vs_informative
    model = _fit(X, y, [0.1, 0.1])
    assert model.tree_.feature[0] == 0
    assert (model.predict(X) == y).all()


def test_misclassification_costs_scale_the_decision(cheap_vs_informative):
    """The same unit test price pays off once an error costs 100 instead of 1."""
    X, y = cheap_vs_informative
    model = _fit(X, y, [1.0, 1.0], cost_matrix=[[0, 100], [100, 0]])
    assert model.tree_.feature[0] == 0


def test_chooses_largest_reduction(cheap_vs_informative):
    """x0: 16 - 32*0.45 = 1.6; x1: 16 - (8 + 32*0.1) = 4.8 -> the cheaper, weaker x1 wins."""
    X, y = cheap_vs_informative
    model = _fit(X, y, [0.45, 0.1])
    assert model.tree_.feature[0] == 1


def test_numeric_threshold_chosen_by_cost_reduction():
    """On one numeric feature the threshold at the class boundary (midpoint 4.5) is chosen."""
    X = np.arange(10, dtype=float)[:, None]
    y = (X[:, 0] > 4).astype(int)
    model = _fit(X, y, [0.01])
    assert model.tree_.threshold[0] == pytest.approx(4.5)


def test_pruning_defaults_to_none():
    """DTMC pre-prunes only; error-based pruning is off unless asked for."""
    assert DTMCClassifier().pruning == "none"


def _cut(tree, node=0, depth=None):
    """``tree`` below ``node`` as nested (feature, threshold, children), cut at ``depth``."""
    if tree.is_leaf(node) or depth == 0:
        return ("leaf", tuple(tree.class_weight[node]))
    below = None if depth is None else depth - 1
    threshold = float(tree.threshold[node])
    return (
        int(tree.feature[node]),
        None if np.isnan(threshold) else threshold,  # a nominal split's (NaN != NaN)
        tuple(_cut(tree, int(c), below) for c in tree.children(node)),
    )


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_max_depth_grows_the_unlimited_tree_cut_at_that_depth(noisy_table, depth):
    """A greedy tree with max_depth d is the unlimited tree with every node at depth d made a
    leaf: the splits above d do not depend on the limit."""
    X, y = noisy_table
    kwargs = dict(test_costs=[0.5] * X.shape[1], cost_matrix=[[0, 50], [50, 0]], min_samples_leaf=1)
    kwargs["categorical_features"] = [4]
    full = DTMCClassifier(**kwargs).fit(X, y)
    assert full.tree_.depth() > depth
    limited = DTMCClassifier(max_depth=depth, **kwargs).fit(X, y)
    assert limited.tree_.depth() == depth
    assert _cut(limited.tree_) == _cut(full.tree_, depth=depth)


def test_max_depth_below_one_is_refused(cheap_vs_informative):
    """max_depth 0 is no tree: refused naming the parameter."""
    X, y = cheap_vs_informative
    with pytest.raises(ValueError, match="max_depth"):
        DTMCClassifier(max_depth=0).fit(X, y)
