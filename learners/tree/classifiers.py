"""The five greedy cost-aware trees (ALGORITHMS.md §2): one builder, five criteria.

Every learner labels its leaves by least expected cost under ``cost_matrix``
(C4.5c) and shares growth, pruning, prediction, the step-by-step policy and
JSON persistence through :class:`~learners.tree._base.GreedyTreeClassifier`.
"""

from __future__ import annotations

from numbers import Real

from sklearn.utils._param_validation import Interval

from .._estimator import TRAIN_ACCURACY_CHECKS, constraints
from . import _criteria
from ._base import GreedyTreeClassifier

__all__ = [
    "C45Classifier",
    "CSID3Classifier",
    "DTMCClassifier",
    "EG2Classifier",
    "IDXClassifier",
]

_COMMON_PARAMETERS = """
    Parameters
    ----------
    test_costs : CostModel or sequence of float, optional
        Price of each test; None means every test costs 1.
    cost_matrix : array-like of shape (K, K), optional
        ``M[actual, predicted]`` over ``classes_`` (sorted labels); None is
        0/1 loss.  Leaves decide the class of least expected cost.
    reject_cost : float or array of K floats, optional
        Cost of referring the patient; None never refers.
    categorical_features : sequence of int or boolean mask, optional
        Nominal features; their values are whole-number category codes and
        they split one branch per code seen in training.  Others are numeric
        and split in two at a threshold midway between adjacent distinct
        values.
    random_state : int, RandomState or None
        Draws cost-complexity pruning's 20% holdout; otherwise unused (the
        learner is deterministic).
    min_samples_leaf : float, default 2
        C4.5's MINOBJS: a split needs two branches with at least this much
        known training weight.
    cf : float, default 0.25
        Confidence of the error-based pruning (``U_CF``, exact binomial limit).
    pruning : {"none", "error", "laplace", "cost_complexity", "kl"}, default "error"
        How the grown tree is pruned (paper 001, :mod:`learners.tree.pruning`):
        not at all; C4.5's error-based pruning (no subtree raising);
        Laplace-based pruning with the cost matrix; cost-complexity pruning
        with loss (alpha chosen on a 20% holdout); KL pruning (threshold
        0.01).
    probability : {"laplace", "frequency"}, default "laplace"
        Leaf probabilities ``(n_c + 1)/(n + K)`` (Laplace) or ``n_c / n``
        (frequency); paper 001's leaf estimates.
    max_depth : int, optional
        Longest path from the root, in splits; None grows until the
        criterion stops (depth-limited trees are among ACT's inner-CV
        candidates).

    Attributes
    ----------
    tree_ : TreeStructure
    classes_ : ndarray of labels
    n_features_in_ : int
    cost_model_ : CostModel
    cost_matrix_ : ndarray of shape (K, K)
    reject_cost_ : float, ndarray or None
    categories_ : dict int -> ndarray of category codes
    ccp_alpha_ : float or None
        The cost-complexity penalty the tree was pruned with (None for the
        other pruning methods).
"""


class C45Classifier(GreedyTreeClassifier):
    """C4.5 (Quinlan) with cost-sensitive leaf labels (C4.5c).

    Gain ratio among tests with at least average information gain;
    missing values handled as fractional cases.  No MDL correction for
    numeric thresholds.

    Error costs, by design: the tree is grown from the class counts alone, whatever the
    tests and errors cost; only the leaf labels (and referrals) follow the matrix, so when
    errors are cheap next to the tests it buys, it costs more than ordering nothing.
    """

    __doc__ += _COMMON_PARAMETERS

    def _criterion(self):
        return _criteria.GainRatio()


class EG2Classifier(GreedyTreeClassifier):
    """EG2 (Núñez 1991): ``ICF = (2^DeltaI - 1) / (c + 1)^w``.

    ``c`` is the test's marginal cost in the node's context (tests on the path
    are done: they cost nothing, group discounts apply).  The formula is
    defined at ``c = 0``, so EG2 uses it there too rather than ranking every
    free test first (which made it re-split numeric tests on the path into
    slivers).

    w : float, default 1.0
        Cost emphasis; ``w = 0`` ignores costs.

    Error costs, by design: tests are chosen by information gain per price, never by
    the error costs, and only C4.5's pruning stops growth, so when an error costs less
    than the tests such a tree buys, it costs more than ordering nothing (the leaves'
    Laplace probabilities still let ``decide`` refer or trade errors under the matrix).
    """

    __doc__ += _COMMON_PARAMETERS

    _parameter_constraints = constraints(
        GreedyTreeClassifier._parameter_constraints, w=[Interval(Real, 0, None, closed="left")]
    )

    def __init__(
        self,
        *,
        test_costs=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=None,
        random_state=None,
        min_samples_leaf=2,
        cf=0.25,
        pruning="error",
        probability="laplace",
        w=1.0,
        max_depth=None,
    ):
        super().__init__(
            test_costs=test_costs,
            cost_matrix=cost_matrix,
            reject_cost=reject_cost,
            categorical_features=categorical_features,
            random_state=random_state,
            min_samples_leaf=min_samples_leaf,
            cf=cf,
            pruning=pruning,
            probability=probability,
            max_depth=max_depth,
        )
        self.w = w

    def _criterion(self):
        return _criteria.EG2(self.w)


class IDXClassifier(GreedyTreeClassifier):
    """IDX (Norton 1989): ``DeltaI / c`` in the node's cost context.

    Error costs, by design: tests are chosen by information gain per price, never by
    the error costs, and only C4.5's pruning stops growth, so when an error costs less
    than the tests such a tree buys, it costs more than ordering nothing (the leaves'
    Laplace probabilities still let ``decide`` refer or trade errors under the matrix).
    """

    __doc__ += _COMMON_PARAMETERS

    def _criterion(self):
        return _criteria.IDX()


class CSID3Classifier(GreedyTreeClassifier):
    """CS-ID3 (Tan 1993): ``DeltaI^2 / c`` in the node's cost context.

    Error costs, by design: tests are chosen by information gain per price, never by
    the error costs, and only C4.5's pruning stops growth, so when an error costs less
    than the tests such a tree buys, it costs more than ordering nothing (the leaves'
    Laplace probabilities still let ``decide`` refer or trade errors under the matrix).
    """

    __doc__ += _COMMON_PARAMETERS

    def _criterion(self):
        return _criteria.CSID3()


class DTMCClassifier(GreedyTreeClassifier):
    """DTMC (Ling et al. 2004): split where total cost (tests + errors) drops most.

    Node cost ``mc(S) = min_j sum_i n_i M[i, j]``; a split costs
    ``sum_k mc(S_k) + n c``; growth stops when no split reduces the cost
    (pre-pruning), so ``pruning`` defaults to ``"none"``.  Numeric thresholds are
    chosen by the same reduction.
    """

    __doc__ += _COMMON_PARAMETERS

    _expected_failed_checks = dict.fromkeys(
        TRAIN_ACCURACY_CHECKS,
        "with the default unit test costs and 0/1 loss no split ever pays "
        "(n * 1 per test > the errors it removes), so DTMC rightly stays a single leaf",
    )

    def __init__(
        self,
        *,
        test_costs=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=None,
        random_state=None,
        min_samples_leaf=2,
        cf=0.25,
        pruning="none",
        probability="laplace",
        max_depth=None,
    ):
        super().__init__(
            test_costs=test_costs,
            cost_matrix=cost_matrix,
            reject_cost=reject_cost,
            categorical_features=categorical_features,
            random_state=random_state,
            min_samples_leaf=min_samples_leaf,
            cf=cf,
            pruning=pruning,
            probability=probability,
            max_depth=max_depth,
        )

    def _criterion(self):
        return _criteria.DTMC()
