"""What an evaluation found: one record per case and the figures built from them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .costs import CostModel
from .policy import Classify, Reject

__all__ = ["CaseResult", "EvaluationReport", "build_report"]


@dataclass(frozen=True)
class CaseResult:
    """What the policy did for one held-out case and what it cost.

    Attributes
    ----------
    tests : tuple of int
        Tests bought, in the order they were bought (a derived test's inputs
        follow it).
    test_cost : float
        Sum of the marginal prices charged.
    decision : Classify or Reject
        The final action.
    true_label :
        The case's true class (an element of ``classes_``).
    total_cost : float
        Test cost plus the misclassification or reject cost.
    misclassification_cost : float
        ``M[true, predicted]`` (0 for a referral).
    orders : tuple of (int, float, float)
        One ``(test, quoted, charged)`` per test the policy asked for: the
        price its ``Extract`` quoted and the price charged for it then.  The
        two are equal for every honest policy (a test that came back with no
        result is done and paid, and the policy knows it).
    """

    tests: tuple[int, ...]
    test_cost: float
    decision: Classify | Reject
    true_label: object
    total_cost: float
    misclassification_cost: float
    orders: tuple[tuple[int, float, float], ...] = ()

    @property
    def rejected(self) -> bool:
        """True when the case was referred."""
        return self.decision.kind == "reject"

    @property
    def correct(self) -> bool:
        """True when the case was classified as its true class."""
        return self.decision.kind == "classify" and self.decision.label == self.true_label

    def to_dict(self) -> dict:
        """Plain-JSON form."""
        return {
            "tests": list(self.tests),
            "test_cost": self.test_cost,
            "decision": self.decision.kind,
            "label": getattr(self.decision, "label", None),
            "true_label": self.true_label,
            "total_cost": self.total_cost,
            "misclassification_cost": self.misclassification_cost,
        }


@dataclass(frozen=True)
class EvaluationReport:
    """Figures over a set of held-out cases.

    Attributes
    ----------
    classes : tuple
        The model's classes, the order of ``confusion``'s rows and columns.
    accuracy : float
        Correct classifications / all cases (a referral is not correct).
    accuracy_classified : float
        Correct / classified cases (NaN when every case was referred).
    mean_test_cost, mean_misclassification_cost, mean_reject_cost : float
        Per-case means; the misclassification mean counts errors only.
    mean_total_cost : float
        Sum of the three means.
    standard_cost : float
        Turney's standard cost ``TC + min_i (1 - f_i) * max M``.
    normalized_cost : float
        ``100 * mean_total_cost / standard_cost`` (percent).
    high_cost_errors : int
        Misclassifications whose cost is above the smallest positive
        off-diagonal entry of ``M``: paper 004's "cost > 1" errors when the
        cheapest error costs 1.  Always 0 under a uniform matrix.
    reject_rate : float
        Referred cases / all cases.
    n_cases : int
    test_frequency : ndarray of shape (n_features,)
        Fraction of cases that bought each test.
    confusion : ndarray of shape (K, K + 1)
        Counts; rows true class, columns predicted class then "rejected".
    cases : tuple of CaseResult
    mse : float
        Paper 001's normalized mean squared error of the final beliefs:
        the mean over cases of ``1/2 sum_c (f(c) - p(c))^2``, ``f`` the true
        class's indicator (scikit-learn's ``brier_score_loss`` with
        ``scale_by_half=True``); in [0, 1].  NaN when some final action
        carries no belief.
    log_loss : float
        Mean ``-sum_c f(c) log2 p(c)`` in bits (scikit-learn's ``log_loss``,
        which clips a zero probability to the float epsilon, so a case whose
        true class got probability 0 counts 52 bits, not infinity).  NaN when
        some final action carries no belief.
    roc_fpr, roc_tpr : tuple of float
        Binary problems: the ROC curve of the belief in the second class
        (``classes[1]``) as the score, scikit-learn's ``roc_curve``; empty
        otherwise, or when the cases hold only one class.
    auc : float
        Area under that ROC curve (``roc_auc_score``); NaN when there is no curve.
    """

    classes: tuple
    accuracy: float
    accuracy_classified: float
    mean_test_cost: float
    mean_misclassification_cost: float
    mean_reject_cost: float
    mean_total_cost: float
    standard_cost: float
    normalized_cost: float
    high_cost_errors: int
    reject_rate: float
    n_cases: int
    test_frequency: np.ndarray
    confusion: np.ndarray
    cases: tuple[CaseResult, ...]
    mse: float = float("nan")
    log_loss: float = float("nan")
    roc_fpr: tuple[float, ...] = ()
    roc_tpr: tuple[float, ...] = ()
    auc: float = float("nan")

    def to_dict(self, *, include_cases: bool = True) -> dict:
        """Plain JSON (lists, numbers, strings; NaN written as None)."""
        result = {
            "classes": list(self.classes),
            "accuracy": _number(self.accuracy),
            "accuracy_classified": _number(self.accuracy_classified),
            "mean_test_cost": _number(self.mean_test_cost),
            "mean_misclassification_cost": _number(self.mean_misclassification_cost),
            "mean_reject_cost": _number(self.mean_reject_cost),
            "mean_total_cost": _number(self.mean_total_cost),
            "standard_cost": _number(self.standard_cost),
            "normalized_cost": _number(self.normalized_cost),
            "high_cost_errors": int(self.high_cost_errors),
            "reject_rate": _number(self.reject_rate),
            "n_cases": int(self.n_cases),
            "test_frequency": [_number(v) for v in self.test_frequency.tolist()],
            "confusion": self.confusion.astype(int).tolist(),
            "mse": _number(self.mse),
            "log_loss": _number(self.log_loss),
            "roc": {"fpr": list(self.roc_fpr), "tpr": list(self.roc_tpr)},
            "auc": _number(self.auc),
        }
        if include_cases:
            result["cases"] = [case.to_dict() for case in self.cases]
        return result


def build_report(
    cases: Sequence[CaseResult],
    *,
    classes: Sequence,
    cost_model: CostModel,
    cost_matrix: np.ndarray,
    class_frequencies,
) -> EvaluationReport:
    """Aggregate per-case results into an :class:`EvaluationReport`."""
    classes = tuple(classes)
    n_classes = len(classes)
    index = {c: k for k, c in enumerate(classes)}
    n = len(cases)
    matrix = np.asarray(cost_matrix, dtype=float)
    confusion = np.zeros((n_classes, n_classes + 1), dtype=np.int64)
    frequency = np.zeros(cost_model.n_features)
    test_cost = error_cost = refer_cost = 0.0
    correct = rejected = high = 0
    threshold = _cheapest_error(matrix)
    for case in cases:
        row = index[case.true_label]
        test_cost += case.test_cost
        decision = case.decision
        if decision.kind == "reject":  # case.rejected, spelled so the type checker narrows
            rejected += 1
            confusion[row, n_classes] += 1
            refer_cost += case.total_cost - case.test_cost
        else:
            column = index[decision.label]
            confusion[row, column] += 1
            correct += int(column == row)
            error_cost += case.misclassification_cost
            if column != row and case.misclassification_cost > threshold:
                high += 1
        for t in set(case.tests):
            frequency[t] += 1
    classified = n - rejected
    mean = (lambda total: total / n) if n else (lambda total: float("nan"))
    total = mean(test_cost) + mean(error_cost) + mean(refer_cost)
    standard = cost_model.standard_cost(class_frequencies, matrix)
    beliefs = probability_scores(cases, index, n_classes)
    return EvaluationReport(
        classes=classes,
        accuracy=mean(float(correct)),
        accuracy_classified=correct / classified if classified else float("nan"),
        mean_test_cost=mean(test_cost),
        mean_misclassification_cost=mean(error_cost),
        mean_reject_cost=mean(refer_cost),
        mean_total_cost=total,
        standard_cost=standard,
        normalized_cost=100.0 * total / standard if standard > 0 else float("nan"),
        high_cost_errors=high,
        reject_rate=mean(float(rejected)),
        n_cases=n,
        test_frequency=frequency / n if n else frequency,
        confusion=confusion,
        cases=tuple(cases),
        **beliefs,
    )


def probability_scores(cases: Sequence[CaseResult], index: dict, n_classes: int) -> dict:
    """Paper 001's probability figures of the cases' final beliefs (see
    :class:`EvaluationReport`): ``mse``, ``log_loss``, ``roc_fpr``/``roc_tpr``, ``auc``."""
    from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score, roc_curve

    nan = float("nan")
    scores: dict = {"mse": nan, "log_loss": nan, "roc_fpr": (), "roc_tpr": (), "auc": nan}
    if not cases or any(case.decision.proba is None for case in cases):
        return scores
    proba = np.array([case.decision.proba for case in cases], dtype=float)
    if proba.shape[1] != n_classes:
        return scores
    truth = np.array([index[case.true_label] for case in cases], dtype=np.int64)
    if n_classes == 1:
        scores["mse"] = 0.0
        scores["log_loss"] = 0.0
        return scores
    labels = np.arange(n_classes)
    scores["mse"] = float(brier_score_loss(truth, proba, labels=labels, scale_by_half=True))
    scores["log_loss"] = float(log_loss(truth, proba, labels=labels)) / np.log(2.0)
    if n_classes == 2 and np.unique(truth).size == 2:
        fpr, tpr, _ = roc_curve(truth, proba[:, 1], pos_label=1)
        scores["roc_fpr"] = tuple(float(v) for v in fpr)
        scores["roc_tpr"] = tuple(float(v) for v in tpr)
        scores["auc"] = float(roc_auc_score(truth, proba[:, 1]))
    return scores


def _cheapest_error(matrix: np.ndarray) -> float:
    off = matrix[~np.eye(matrix.shape[0], dtype=bool)]
    positive = off[off > 0]
    return float(positive.min()) if positive.size else 0.0


def _number(value) -> float | None:
    value = float(value)
    return None if value != value else value
