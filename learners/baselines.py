"""Two simple strategies every trained model must beat, as policies.

* :class:`OrderNothing` orders no test and concludes, for every patient, the
  class of least expected cost under the training class frequencies (or
  refers, when that is cheaper): ``decide(prior)``.
* :class:`OrderEverything` orders every test that can be done (in index
  order, each quoted at ``CostModel.marginal_cost`` as it is ordered), then
  concludes as a fitted *concluder* does with every result known.  The app
  uses a C4.5 tree (:class:`~learners.tree.C45Classifier`, prices ignored,
  minimum-expected-cost leaves) grown on the same training rows, so this is
  "buy all the information, then decide as well as an accuracy-driven tree can".

Both follow the shared policy interface, so :func:`learners.evaluate` prices
them exactly as it prices a model (same held-out cases, same
``marginal_cost``, same error matrix and referral cost).  :func:`class_rates`
turns an evaluation's confusion matrix into per-class sensitivity and
specificity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
from sklearn.base import BaseEstimator

from ._validation import check_cost_matrix, check_reject_cost, check_test_costs
from .costs import CostModel
from .policy import Action, Classify, Extract, Reject, decide

__all__ = ["OrderEverything", "OrderNothing", "class_rates"]


class OrderNothing(BaseEstimator):
    """Conclude at once, from the training class frequencies alone.

    Parameters
    ----------
    test_costs : CostModel or sequence of float
        The prices (only used to know the number of tests and for
        :func:`learners.evaluate`'s default).
    cost_matrix : array-like of shape (K, K)
        ``M[actual, predicted]`` in the order of the sorted classes.
    reject_cost : float or array-like of shape (K,), optional
        Price of a referral; None: never refer.
    """

    def __init__(self, *, test_costs, cost_matrix, reject_cost=None):
        self.test_costs = test_costs
        self.cost_matrix = cost_matrix
        self.reject_cost = reject_cost

    def fit(self, X, y) -> OrderNothing:
        """Learn the class frequencies of ``y`` (``X`` only gives the number of tests)."""
        X = np.asarray(X, dtype=float)
        labels = np.asarray(y)
        if X.ndim != 2 or labels.shape != (X.shape[0],) or X.shape[0] == 0:
            raise ValueError(
                f"X must be 2-D with one label per row; got X {X.shape}, y {labels.shape}"
            )
        self.classes_, codes = np.unique(labels, return_inverse=True)
        self.n_features_in_ = X.shape[1]
        self.cost_model_ = check_test_costs(self.test_costs, X.shape[1])
        self.cost_matrix_ = check_cost_matrix(self.cost_matrix, len(self.classes_))
        self.reject_cost_ = check_reject_cost(self.reject_cost, len(self.classes_))
        self.class_counts_ = np.bincount(codes, minlength=len(self.classes_)).astype(float)
        return self

    def next_action(
        self, known: Mapping[int, float], unavailable: Iterable[int] = ()
    ) -> Classify | Reject:
        """The same conclusion for every patient: ``decide`` on the training frequencies."""
        counts = self.class_counts_
        return decide(
            counts / counts.sum(),
            classes=self.classes_,
            cost_matrix=self.cost_matrix_,
            reject_cost=self.reject_cost_,
            support=float(counts.sum()),
        )


class OrderEverything:
    """Order every test that can be done, then conclude as ``concluder`` does.

    Parameters
    ----------
    concluder : fitted policy
        Consulted with every result known (it can ask for nothing more, so it
        concludes); its ``classes_``, matrix and referral cost are used.
    test_costs : CostModel, optional
        Prices to quote; defaults to ``concluder.cost_model_``.
    """

    def __init__(self, concluder, *, test_costs: CostModel | None = None):
        self.concluder = concluder
        self.classes_ = concluder.classes_
        self.n_features_in_ = int(concluder.n_features_in_)
        self.cost_model_ = check_test_costs(
            concluder.cost_model_ if test_costs is None else test_costs, self.n_features_in_
        )
        self.cost_matrix_ = getattr(concluder, "cost_matrix_", None)
        self.reject_cost_ = getattr(concluder, "reject_cost_", None)

    def next_action(self, known: Mapping[int, float], unavailable: Iterable[int] = ()) -> Action:
        """The first test (by index) neither done nor unavailable; with none left, conclude."""
        blocked = set(unavailable)
        done = frozenset(int(t) for t in known)
        for test in range(self.n_features_in_):
            if test in done or test in blocked:
                continue
            belief = self.concluder.next_action(dict(known), frozenset(blocked))
            return Extract(
                test=test,
                cost=self.cost_model_.marginal_cost(test, done),
                evidence=belief.evidence,
            )
        action = self.concluder.next_action(dict(known), frozenset(blocked))
        if isinstance(action, Extract):  # every test is done or blocked: nothing left to ask
            raise RuntimeError(
                f"{type(self.concluder).__name__} asked for test {action.test} "
                "although every test is done or unavailable"
            )
        return action


def class_rates(confusion) -> dict[str, list[float | None]]:
    """Per-class sensitivity and specificity from a confusion matrix.

    ``confusion`` has one row per true class and one column per concluded
    class, plus optionally a last "referred" column.  For class ``k``:
    sensitivity = cases of ``k`` concluded ``k`` / cases of ``k`` (a referral
    is not a detection); specificity = cases not of ``k`` not concluded ``k``
    / cases not of ``k`` (a referral does not call ``k``).  None where the
    denominator is 0.
    """
    table = np.asarray(confusion, dtype=float)
    k = table.shape[0]
    if table.ndim != 2 or table.shape[1] not in (k, k + 1):
        raise ValueError(f"confusion must be K x K or K x (K + 1), got shape {table.shape}")
    total = table.sum()
    sensitivity: list[float | None] = []
    specificity: list[float | None] = []
    for c in range(k):
        positives = table[c].sum()
        negatives = total - positives
        false_positives = table[:, c].sum() - table[c, c]
        sensitivity.append(float(table[c, c] / positives) if positives else None)
        specificity.append(float((negatives - false_positives) / negatives) if negatives else None)
    return {"sensitivity": sensitivity, "specificity": specificity}
