"""evaluate's probability figures (paper 001): normalized MSE, log-loss, ROC and AUC, by hand."""

import json
import math

import numpy as np
import pytest

from learners import C45Classifier
from learners.evaluation import decides_any_matrix, evaluate


def _single_leaf_model():
    """One leaf of class weights (3, 1): Laplace beliefs (4/6, 2/6) for every case."""
    X = np.zeros((4, 1))
    return C45Classifier().fit(X, [0, 0, 0, 1])


def _two_leaf_model():
    """Leaves x <= 0.5: (3, 1) and x > 0.5: (1, 3); Laplace beliefs in class 1: 1/3 and 2/3."""
    X = np.array([[0.0]] * 4 + [[1.0]] * 4)
    y = [0, 0, 0, 1, 0, 1, 1, 1]
    return C45Classifier(pruning="none", min_samples_leaf=1).fit(X, y)


def test_normalized_mse_by_hand():
    """Beliefs (2/3, 1/3): a class-0 case scores 1/2 (1/9 + 1/9), a class-1 case 1/2 (4/9 + 4/9)."""
    report = evaluate(_single_leaf_model(), np.zeros((2, 1)), [0, 1])
    by_hand = (0.5 * (1 / 9 + 1 / 9) + 0.5 * (4 / 9 + 4 / 9)) / 2
    assert report.mse == pytest.approx(by_hand)


def test_log_loss_in_bits_by_hand():
    """Beliefs (2/3, 1/3): -log2(2/3) for the class-0 case, -log2(1/3) for the class-1 case."""
    report = evaluate(_single_leaf_model(), np.zeros((2, 1)), [0, 1])
    assert report.log_loss == pytest.approx((-math.log2(2 / 3) - math.log2(1 / 3)) / 2)


def test_zero_probability_costs_52_bits_not_infinity():
    """Frequency leaves can give the true class 0: clipped at float eps as scikit-learn does."""
    X = np.array([[0.0], [0.0], [1.0], [1.0]])
    model = C45Classifier(pruning="none", min_samples_leaf=1, probability="frequency").fit(
        X, [0, 0, 1, 1]
    )
    report = evaluate(model, np.array([[0.0]]), [1])
    assert report.log_loss == pytest.approx(-math.log2(np.finfo(float).eps))
    assert report.mse == pytest.approx(1.0)


def test_roc_points_and_auc_by_hand():
    """Scores 1/3 (class 0), 1/3 and 2/3 (class 1): ROC (0,0), (0,1/2), (1,1); AUC (1 + 1/2)/2."""
    report = evaluate(_two_leaf_model(), np.array([[0.0], [0.0], [1.0]]), [0, 1, 1])
    assert report.roc_fpr == pytest.approx((0.0, 0.0, 1.0))
    assert report.roc_tpr == pytest.approx((0.0, 0.5, 1.0))
    assert report.auc == pytest.approx(0.75)
    data = json.loads(json.dumps(report.to_dict(include_cases=False)))
    assert data["auc"] == pytest.approx(0.75)
    assert data["roc"]["tpr"] == pytest.approx([0.0, 0.5, 1.0])


def test_roc_is_absent_when_one_class_is_held_out():
    """With only one class among the cases there is no ROC curve: empty points, AUC null."""
    report = evaluate(_two_leaf_model(), np.array([[0.0], [1.0]]), [1, 1])
    assert report.roc_fpr == () and math.isnan(report.auc)
    assert report.to_dict()["auc"] is None
    assert report.mse == pytest.approx(0.5 * ((2 / 3) ** 2 * 2 + (1 / 3) ** 2 * 2) / 2)


def test_roc_is_absent_for_three_classes():
    """ROC points are reported for binary problems only; MSE and log-loss still are."""
    X = np.array([[0.0], [1.0], [2.0]] * 3)
    model = C45Classifier(pruning="none", min_samples_leaf=1).fit(X, [0, 1, 2] * 3)
    report = evaluate(model, X[:3], [0, 1, 2])
    assert report.roc_fpr == () and math.isnan(report.auc)
    assert np.isfinite(report.mse) and np.isfinite(report.log_loss)


def test_a_tree_is_priced_not_redecided_under_another_matrix():
    """A tree's next_action takes no cost_matrix: evaluate prices it with the given one only."""
    model = _two_leaf_model()
    assert not decides_any_matrix(model)
    X = np.array([[0.0], [1.0]])
    own = evaluate(model, X, [1, 1])
    dear = evaluate(model, X, [1, 1], cost_matrix=[[0, 1], [100, 0]])
    assert [c.decision.label for c in own.cases] == [c.decision.label for c in dear.cases]
    assert dear.mean_misclassification_cost == pytest.approx(100 / 2)
