"""Paper 001's pruning rules (learners/tree/pruning.py) worked by hand; the trees' ``pruning``."""

import json
import math

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.utils._param_validation import InvalidParameterError

from learners import ModelDocumentError, model_from_json
from learners.policy import best_class
from learners.tree import C45Classifier, DTMCClassifier, EG2Classifier
from learners.tree import pruning as P
from learners.tree._builder import GrowingTree
from learners.tree._structure import smoothed_proba

#: Paper 001's Figure 1-2 loss: classes (healthy, sick); calling a sick patient
#: healthy costs 10, a healthy one sick costs 1 (M[actual, predicted]).
TEN_TO_ONE = np.array([[0.0, 1.0], [10.0, 0.0]])
ZERO_ONE = 1.0 - np.eye(2)


def _one_split(parent, leaves):
    """A root with ``parent`` class counts split (nominal feature 0) into ``leaves``."""
    tree = GrowingTree(2)
    root = tree.add(np.array(parent, dtype=float))
    tree.feature[root] = 0
    for value, counts in enumerate(leaves):
        child = tree.add(np.array(counts, dtype=float))
        tree.edges[root].append((child, float(value), sum(counts) / sum(parent)))
    return tree


def _two_level():
    """root (8, 8) splits x0 <= 0.5: L (8, 2), which splits x1 <= 0.5 into (8, 0) and (0, 2);
    and R (0, 6).  Node ids: root 0, L 1, R 2, LL 3, LR 4."""
    tree = GrowingTree(2)
    root = tree.add(np.array([8.0, 8.0]))
    left = tree.add(np.array([8.0, 2.0]))
    right = tree.add(np.array([0.0, 6.0]))
    tree.feature[root], tree.threshold[root] = 0, 0.5
    tree.edges[root] = [(left, np.nan, 10 / 16), (right, np.nan, 6 / 16)]
    ll = tree.add(np.array([8.0, 0.0]))
    lr = tree.add(np.array([0.0, 2.0]))
    tree.feature[left], tree.threshold[left] = 1, 0.5
    tree.edges[left] = [(ll, np.nan, 0.8), (lr, np.nan, 0.2)]
    return tree


def _frequency_label(matrix):
    return lambda counts: int(best_class(smoothed_proba(counts, 0.0)[0], matrix))


# ---------------------------------------------------------------- Laplace
def test_laplace_loss_of_figure_2_left():
    """Figure 2 (left): parent (20 healthy, 20 sick) loses 20.0, children 0.83 + 19.69 = 20.52."""
    parent = P.laplace_loss([20, 20], TEN_TO_ONE)
    # 40 cases, Laplace 21/42 each; deciding sick costs 40 * 21/42 * 1
    assert parent == pytest.approx(40 * 21 / 42)
    assert parent == pytest.approx(20.0)
    # (0, 10) decides sick: 10 * 1/12; (20, 10) decides sick: 30 * 21/32 (the paper's 0.6562 * 30)
    children = P.laplace_loss([0, 10], TEN_TO_ONE) + P.laplace_loss([20, 10], TEN_TO_ONE)
    assert children == pytest.approx(10 / 12 + 30 * 21 / 32)
    assert round(children, 2) == 20.52


def test_laplace_pruning_prunes_figure_2_left():
    """The parent's 20.0 is below its children's 20.52, so the subtree becomes a leaf."""
    tree = P.prune_laplace(_one_split((20, 20), [(0, 10), (20, 10)]), TEN_TO_ONE)
    assert tree.feature[0] == -1 and tree.edges[0] == []


def test_laplace_pruning_figure_2_right_parent_decides_another_class():
    """Figure 2 (right): children (17, 1) decide sick at 16.2 each; the parent (34, 2) decides
    healthy at 36 * 3/38 * 10 = 28.42 (the paper prints 28.44, p rounded to 0.079) and is pruned."""
    child = P.laplace_loss([17, 1], TEN_TO_ONE)
    assert child == pytest.approx(18 * (18 / 20) * 1)  # sick: 18 cases x P(healthy) 0.9 x 1
    assert child == pytest.approx(16.2)
    parent = P.laplace_loss([34, 2], TEN_TO_ONE)
    assert parent == pytest.approx(36 * (3 / 38) * 10)
    assert round(36 * round(3 / 38, 3) * 10, 2) == 28.44
    assert best_class(smoothed_proba([17, 1], 1.0)[0], TEN_TO_ONE) == 1  # children: sick
    assert best_class(smoothed_proba([34, 2], 1.0)[0], TEN_TO_ONE) == 0  # parent: healthy
    tree = P.prune_laplace(_one_split((34, 2), [(17, 1), (17, 1)]), TEN_TO_ONE)
    assert tree.feature[0] == -1


def test_laplace_pruning_keeps_a_split_that_lowers_the_loss():
    """(50, 50) split into (50, 0) and (0, 50): leaves lose 50/52 each, the parent 50; kept."""
    assert P.laplace_loss([50, 0], TEN_TO_ONE) + P.laplace_loss([0, 50], TEN_TO_ONE) < 50
    tree = P.prune_laplace(_one_split((50, 50), [(50, 0), (0, 50)]), TEN_TO_ONE)
    assert tree.feature[0] == 0


# --------------------------------------------------------------------- KL
def test_kl_distance_by_hand():
    """Parent (20, 20), children (0, 10) and (20, 10): sum_i n_i/n sum_c p_ic log2(p_ic / q_c)."""
    q = (0.5, 0.5)
    first = (1 / 12, 11 / 12)
    second = (21 / 32, 11 / 32)

    def kl(p):
        return sum(pc * math.log2(pc / qc) for pc, qc in zip(p, q, strict=True))

    expected = 10 / 40 * kl(first) + 30 / 40 * kl(second)
    assert P.kl_distance([20, 20], [[0, 10], [20, 10]]) == pytest.approx(expected)


def test_kl_distance_of_children_like_their_parent_is_zero():
    """Balanced children of a balanced parent (Laplace 1/2 everywhere) are at distance 0."""
    assert P.kl_distance([20, 20], [[10, 10], [10, 10]]) == 0.0
    # the same frequency mix on fewer cases is Laplace-smoothed more: not quite 0
    assert P.kl_distance([20, 10], [[10, 5], [10, 5]]) > 0.0


def test_kl_pruning_uses_the_threshold():
    """A split whose children are within 0.01 bit of the parent is pruned; a real one is kept."""
    similar = _one_split((40, 40), [(21, 20), (19, 20)])
    assert P.kl_distance([40, 40], [[21, 20], [19, 20]]) < P.KL_THRESHOLD
    assert P.prune_kl(similar).feature[0] == -1
    different = _one_split((20, 20), [(0, 10), (20, 10)])
    assert P.kl_distance([20, 20], [[0, 10], [20, 10]]) > P.KL_THRESHOLD
    assert P.prune_kl(different).feature[0] == 0


def test_kl_pruning_keeps_a_node_above_a_surviving_subtree():
    """Only a node whose children are all leaves is compared with them."""
    tree = _two_level()
    P.prune_kl(tree, threshold=10.0)  # every all-leaf node goes: L, then the root
    assert tree.feature[0] == -1
    tree = _two_level()
    P.prune_kl(tree, threshold=1e-6)
    assert tree.feature[0] == 0 and tree.feature[1] == 1


# -------------------------------------------------------- cost-complexity
def test_cost_complexity_path_under_zero_one_loss():
    """0/1 loss: g(L) = (2 - 0)/(2 - 1) = 2 goes first; then the root, (8 - 2)/(2 - 1) = 6."""
    path = P.cost_complexity_path(
        _two_level(), leaf_label=_frequency_label(ZERO_ONE), cost_matrix=ZERO_ONE
    )
    assert [a for a, _ in path] == pytest.approx([0.0, 2.0, 6.0])
    assert [set(nodes) for _, nodes in path] == [set(), {1}, {0, 1}]


def test_cost_complexity_path_with_loss_cuts_the_root_first():
    """10-to-1 loss: L (8, 2) and the root (8, 8) both decide sick, losing 8 each; g(root) =
    (8 - 0)/(3 - 1) = 4 is below g(L) = 8/1, so the whole tree goes at alpha 4."""
    path = P.cost_complexity_path(
        _two_level(), leaf_label=_frequency_label(TEN_TO_ONE), cost_matrix=TEN_TO_ONE
    )
    assert [a for a, _ in path] == pytest.approx([0.0, 4.0])
    assert 0 in path[-1][1]


def test_cost_complexity_subtree_that_does_not_lower_the_loss_goes_at_alpha_0():
    """Figure 2 (left) under resubstitution loss: children lose 0 + 20 = the parent's 20."""
    tree = _one_split((20, 20), [(0, 10), (20, 10)])
    path = P.cost_complexity_path(
        tree, leaf_label=_frequency_label(TEN_TO_ONE), cost_matrix=TEN_TO_ONE
    )
    assert path == [(0.0, frozenset({0}))]


@pytest.mark.parametrize(("alpha", "leaves"), [(1.0, 3), (3.0, 2), (10.0, 1)])
def test_prune_cost_complexity_keeps_the_subtree_of_its_alpha(alpha, leaves):
    """0/1 loss path (0, 2, 6): alpha 1 keeps 3 leaves, 3 keeps 2, 10 keeps the root alone."""
    tree = P.prune_cost_complexity(
        _two_level(), alpha, leaf_label=_frequency_label(ZERO_ONE), cost_matrix=ZERO_ONE
    )
    assert tree.to_structure().n_leaves == leaves


def _holdout_alpha(X, y):
    return P.holdout_alpha(
        _two_level(),
        np.array(X, dtype=float),
        np.array(y),
        leaf_label=_frequency_label(ZERO_ONE),
        cost_matrix=ZERO_ONE,
        node_proba=lambda weights: smoothed_proba(weights, 0.0),
    )


def test_holdout_alpha_keeps_the_full_tree_when_it_is_right():
    """Holdout the full tree gets right: losses (0, 1, 2); alpha = sqrt(0 * 2) = 0."""
    alpha, losses = _holdout_alpha([[0, 0], [0, 1], [1, 0]], [0, 1, 1])
    assert losses == [0.0, 1.0, 2.0]
    assert alpha == 0.0


def test_holdout_alpha_ties_go_to_the_smaller_tree():
    """Holdout of class 0 at (0, 1): losses (2, 0, 0); the root alone wins the tie, alpha 6."""
    alpha, losses = _holdout_alpha([[0, 1], [0, 1]], [0, 0])
    assert losses == [2.0, 0.0, 0.0]
    assert alpha == pytest.approx(6.0)


def test_holdout_alpha_between_two_subtrees_is_their_geometric_mean():
    """Holdout where T_1 (L collapsed) is best: alpha = sqrt(2 * 6)."""
    alpha, losses = _holdout_alpha([[0, 1], [1, 0], [1, 0]], [0, 1, 1])
    assert losses == [1.0, 0.0, 2.0]
    assert alpha == pytest.approx(math.sqrt(12.0))


# ------------------------------------------------------------- dispatcher
def test_error_pruning_is_c45s():
    """pruning="error" is C4.5's rule: Quinlan's (6,0),(9,0),(0,1) subtree becomes a leaf."""
    tree = _one_split((15, 1), [(6, 0), (9, 0), (0, 1)])
    P.prune(tree, "error", leaf_label=_frequency_label(ZERO_ONE), cost_matrix=ZERO_ONE)
    assert tree.feature[0] == -1


def test_unknown_pruning_name_is_refused_by_the_rule():
    """The pruning function names the methods it knows."""
    with pytest.raises(ValueError, match="unknown pruning method 'pessimistic'.*none, error"):
        P.prune(_two_level(), "pessimistic", leaf_label=int, cost_matrix=ZERO_ONE)


@pytest.mark.parametrize("cls", [C45Classifier, EG2Classifier, DTMCClassifier])
def test_unknown_pruning_name_is_refused_by_the_tree(cls):
    """fit refuses an unknown pruning name, naming the parameter and the allowed ones."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    with pytest.raises(InvalidParameterError, match="'pruning' parameter.*'cost_complexity'"):
        cls(pruning="pessimistic").fit(X, [0, 0, 1, 1])


# ------------------------------------------------------------- the trees
@pytest.fixture(scope="module")
def cancer():
    return load_breast_cancer(return_X_y=True)


@pytest.mark.parametrize("method", ["error", "laplace", "cost_complexity", "kl"])
def test_every_pruning_method_shrinks_or_keeps_the_tree(cancer, method):
    """A pruned C4.5 tree has no more leaves than the unpruned one grown on the same data."""
    X, y = cancer
    grown = C45Classifier(pruning="none").fit(X, y)
    pruned = C45Classifier(pruning=method, cost_matrix=[[0, 1], [5, 0]], random_state=0).fit(X, y)
    assert pruned.tree_.n_leaves <= grown.tree_.n_leaves
    assert pruned.pruning == method


def test_cost_complexity_prunes_the_full_tree_with_the_holdout_alpha(cancer):
    """The fitted tree is the one grown on all cases pruned at ccp_alpha_, chosen on the holdout."""
    X, y = cancer
    matrix = np.array([[0.0, 1.0], [5.0, 0.0]])
    model = C45Classifier(pruning="cost_complexity", cost_matrix=matrix, random_state=3).fit(X, y)
    assert model.ccp_alpha_ is not None and model.ccp_alpha_ >= 0
    grown = model._grow(np.asarray(X, dtype=float), np.searchsorted(model.classes_, y))
    P.prune_cost_complexity(
        grown, model.ccp_alpha_, leaf_label=model._leaf_label, cost_matrix=matrix
    )
    expected = grown.to_structure()
    np.testing.assert_array_equal(model.tree_.feature, expected.feature)
    np.testing.assert_array_equal(model.tree_.class_weight, expected.class_weight)
    again = model_from_json(model.to_json())
    assert again.ccp_alpha_ == model.ccp_alpha_
    assert again.pruning == "cost_complexity"


def test_cost_complexity_holdout_depends_on_random_state(cancer):
    """The 20% holdout is drawn with random_state: the same seed gives the same alpha."""
    X, y = cancer
    first = C45Classifier(pruning="cost_complexity", random_state=5).fit(X, y)
    second = C45Classifier(pruning="cost_complexity", random_state=5).fit(X, y)
    assert first.ccp_alpha_ == second.ccp_alpha_


def test_documents_with_the_old_prune_flag_still_load():
    """A document saved with prune=true/false loads as pruning="error"/"none"."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    document = json.loads(C45Classifier(pruning="none").fit(X, [0, 0, 1, 1]).to_json())
    for flag, method in [(True, "error"), (False, "none")]:
        old = dict(document, params={**document["params"], "prune": flag})
        del old["params"]["pruning"]
        assert model_from_json(json.dumps(old)).pruning == method
    old["params"]["prune"] = "yes"
    with pytest.raises(ModelDocumentError, match="params.prune: expected true or false"):
        model_from_json(json.dumps(old))
