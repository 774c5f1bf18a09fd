"""C4.5 pieces: gain ratio, fractional missing cases, U_CF / EE, pruning, leaf labels."""

import numpy as np
import pytest

from learners.costs import CostModel
from learners.tree import C45Classifier, expected_error, upper_confidence_limit
from learners.tree._builder import GrowingTree, _nominal_candidates, prune_tree
from learners.tree._criteria import GainRatio

SUNNY, OVERCAST, RAIN = 0, 1, 2
# Quinlan's golf table (C4.5 book, fig. 2-1): outlook, temperature, humidity, windy, play?
GOLF = np.array(
    [
        [SUNNY, 75, 70, 1, 1],
        [SUNNY, 80, 90, 1, 0],
        [SUNNY, 85, 85, 0, 0],
        [SUNNY, 72, 95, 0, 0],
        [SUNNY, 69, 70, 0, 1],
        [OVERCAST, 72, 90, 1, 1],
        [OVERCAST, 83, 78, 0, 1],
        [OVERCAST, 64, 65, 1, 1],
        [OVERCAST, 81, 75, 0, 1],
        [RAIN, 71, 80, 1, 0],
        [RAIN, 65, 70, 1, 0],
        [RAIN, 75, 80, 0, 1],
        [RAIN, 68, 80, 0, 1],
        [RAIN, 70, 96, 0, 1],
    ],
    dtype=float,
)


def _golf(missing_outlook=False):
    X, y = GOLF[:, :4].copy(), GOLF[:, 4].astype(int)
    if missing_outlook:
        X[5, 0] = np.nan  # the book's example: one overcast case loses its outlook
    return X, y


def _outlook_candidate(X, y):
    codes = np.where(np.isnan(X[:, 0]), -1, X[:, 0]).astype(np.int64)[None, :]
    (cand,) = _nominal_candidates(
        codes,
        np.array([0]),
        np.array([3]),
        np.arange(len(y)),
        np.ones(len(y)),
        y,
        2,
        GainRatio(),
        CostModel.uniform(4),
        1 - np.eye(2),
        2.0,
        frozenset(),
    )
    return cand


def test_gain_and_split_info_of_outlook():
    """Quinlan: gain(outlook) = 0.246 bit, split info 1.577, gain ratio 0.156."""
    cand = _outlook_candidate(*_golf())
    assert cand.gain == pytest.approx(0.2467, abs=5e-4)
    assert cand.split_info == pytest.approx(1.5774, abs=5e-4)
    assert cand.gain / cand.split_info == pytest.approx(0.156, abs=1e-3)


def test_gain_with_a_missing_value():
    """Quinlan: with one outlook unknown, gain = 13/14 (0.961 - 0.747) = 0.199, split info 1.809."""
    cand = _outlook_candidate(*_golf(missing_outlook=True))
    assert cand.gain == pytest.approx(0.199, abs=1e-3)
    assert cand.split_info == pytest.approx(1.809, abs=1e-3)


def test_fractional_cases_follow_known_shares():
    """The case with unknown outlook goes down every branch: sunny gets 5 + 5/13 cases."""
    X, y = _golf(missing_outlook=True)
    model = C45Classifier(categorical_features=[0], pruning="none").fit(X, y)
    tree = model.tree_
    assert tree.feature[0] == 0
    np.testing.assert_allclose(tree.branch_weight[list(tree.edges(0))], [5 / 13, 3 / 13, 5 / 13])
    sunny, overcast, _ = tree.children(0)
    assert tree.class_weight[sunny].sum() == pytest.approx(5 + 5 / 13)
    np.testing.assert_allclose(tree.class_weight[overcast], [0, 3 + 3 / 13])


def test_predict_proba_averages_over_branches_for_missing():
    """A NaN at the root test gives the branch-weighted average of the children's answers."""
    X, y = _golf()
    model = C45Classifier(categorical_features=[0], pruning="none").fit(X, y)
    row = X[:1].copy()
    shares = model.tree_.branch_weight[list(model.tree_.edges(0))]
    per_branch = []
    for code in (SUNNY, OVERCAST, RAIN):
        row[0, 0] = code
        per_branch.append(model.predict_proba(row)[0])
    row[0, 0] = np.nan
    np.testing.assert_allclose(model.predict_proba(row)[0], shares @ np.array(per_branch))


@pytest.mark.parametrize(
    "e, n, expected, tol",
    [(0, 6, 0.206, 5e-4), (0, 1, 0.75, 1e-9), (0, 9, 0.143, 5e-4), (1, 16, 0.157, 3e-3)],
)
def test_upper_confidence_limit_matches_c45_figures(e, n, expected, tol):
    """U_0.25(0,6)=0.206, U(0,1)=0.75, U(0,9)=0.143; U(1,16) is 0.157 in C4.5's approximation."""
    assert upper_confidence_limit(e, n, 0.25) == pytest.approx(expected, abs=tol)


def test_upper_limit_is_monotone_and_bounded():
    """More errors or lower confidence raise the limit; e >= n gives 1."""
    assert upper_confidence_limit(1, 10) > upper_confidence_limit(0, 10)
    assert upper_confidence_limit(1, 10, 0.1) > upper_confidence_limit(1, 10, 0.25)
    assert upper_confidence_limit(5, 5) == 1.0
    assert 0 < upper_confidence_limit(0.5, 2.7) < 1  # fractional cases


def test_expected_error_is_a_count():
    """EE(n, e) = n * U_CF(e, n); zero cases expect zero errors."""
    assert expected_error(6, 0) == pytest.approx(6 * upper_confidence_limit(0, 6))
    assert expected_error(0, 0) == 0.0
    with pytest.raises(ValueError):
        upper_confidence_limit(0, 5, 1.5)


def _one_split_tree(parent, leaves):
    tree = GrowingTree(2)
    root = tree.add(np.array(parent, dtype=float))
    tree.feature[root] = 0
    for value, counts in enumerate(leaves):
        child = tree.add(np.array(counts, dtype=float))
        tree.edges[root].append((child, float(value), sum(counts) / sum(parent)))
    return tree


def test_quinlan_pruning_example():
    """Leaves (6,0),(9,0),(0,1): EE 1.24+1.29+0.75 = 3.27 > a (15,1) leaf's 2.5, so pruned."""
    leaves = [(6, 0), (9, 0), (0, 1)]
    subtree = sum(expected_error(sum(c), 0) for c in leaves)
    assert subtree == pytest.approx(3.273, abs=2e-3)
    assert expected_error(16, 1) < subtree
    tree = prune_tree(_one_split_tree((15, 1), leaves), lambda cw: int(np.argmax(cw)))
    assert tree.feature[0] == -1 and tree.edges[0] == []


def test_useful_split_survives_pruning():
    """A split separating 50/50 cases perfectly is kept."""
    tree = prune_tree(_one_split_tree((50, 50), [(50, 0), (0, 50)]), lambda cw: int(np.argmax(cw)))
    assert tree.feature[0] == 0


def _single_leaf_model(**kwargs):
    X = np.zeros((4, 1))
    y = np.array([0, 0, 0, 1])
    return C45Classifier(**kwargs).fit(X, y), X


def test_laplace_and_frequency_probabilities():
    """Leaf (3, 1): Laplace gives (4/6, 2/6), frequency (3/4, 1/4)."""
    model, X = _single_leaf_model()
    np.testing.assert_allclose(model.predict_proba(X[:1])[0], [4 / 6, 2 / 6])
    model, X = _single_leaf_model(probability="frequency")
    np.testing.assert_allclose(model.predict_proba(X[:1])[0], [0.75, 0.25])


def test_c45c_leaf_label_is_least_expected_cost():
    """A 3:1 leaf predicts the minority class when missing it costs 10 times more."""
    model, X = _single_leaf_model(cost_matrix=[[0, 1], [10, 0]])
    assert model.predict(X[:1])[0] == 1
    model, X = _single_leaf_model()
    assert model.predict(X[:1])[0] == 0


def test_golf_tree_classifies_training_data():
    """Unpruned C4.5 on golf splits on outlook first and fits the table."""
    X, y = _golf()
    model = C45Classifier(categorical_features=[0], pruning="none", min_samples_leaf=1).fit(X, y)
    assert model.tree_.feature[0] == 0
    assert (model.predict(X) == y).all()
