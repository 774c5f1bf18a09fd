"""Honest evaluation: run each model's own policy over held-out cases.

Values are revealed only when the policy asks for them and every test is
charged through :meth:`CostModel.marginal_cost`, so every learner is measured
in the currency a clinician pays (ALGORITHMS.md §1, §9).  The aggregate
figures live in :mod:`learners._evaluation_report`.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ._evaluation_report import CaseResult, EvaluationReport, build_report
from ._validation import check_cost_matrix, check_reject_cost, check_test_costs
from .costs import CostModel
from .policy import Classify, Extract, Reject

__all__ = [
    "CaseResult",
    "CrossValidationReport",
    "EvaluationReport",
    "cross_validate",
    "decides_any_matrix",
    "evaluate",
    "run_case",
]

_DELAYED_MODES = ("path", "turney")


def evaluate(
    model,
    X,
    y,
    *,
    test_costs=None,
    cost_matrix=None,
    reject_cost=None,
    delayed: str = "path",
    class_frequencies=None,
) -> EvaluationReport:
    """Run ``model``'s policy on every case of ``X`` and price what it did.

    Parameters
    ----------
    model : fitted model
        Offers ``next_action(known, unavailable)`` and ``classes_``; optionally
        ``delayed_order(known, test) -> list[int]`` for ``delayed="turney"``.
    X : array-like of shape (n_cases, n_features)
        Held-out cases; NaN is a test that was paid for but gave no result.
    y : array-like of shape (n_cases,)
        True labels, elements of ``model.classes_``.
    test_costs : CostModel or sequence of float, optional
        Prices to charge; defaults to ``model.cost_model_``.
    cost_matrix : array-like of shape (K, K), optional
        ``M[actual, predicted]`` in ``classes_`` order; defaults to
        ``model.cost_matrix_``.  A model whose ``next_action`` takes a
        ``cost_matrix`` keyword (plain Boosting: one model for any matrix)
        also decides with it; any other model decides with its own matrix
        and is only priced with this one.
    reject_cost : float or array-like of shape (K,), optional
        Price of a referral (per true class if a vector); defaults to
        ``model.reject_cost_``.
    delayed : {"path", "turney"}
        ``"path"`` charges only the tests the case actually meets.
        ``"turney"``: when the policy asks for a delayed test and the model
        offers ``delayed_order``, every test in that list (the subtree below)
        is ordered and charged at once, as in Turney (1995).
    class_frequencies : array-like of shape (K,), optional
        Class frequencies for the standard cost; defaults to those of ``y``.

    Returns
    -------
    EvaluationReport
        With paper 001's probability figures of the final beliefs (normalized
        MSE, log-loss in bits, and for two classes the ROC curve and its AUC).

    Raises
    ------
    RuntimeError
        If the policy asks again for a test already bought or unavailable, or
        takes more than ``n_features + 1`` steps on one case.
    """
    classes = _model_classes(model)
    X = _check_X(X, model)
    true_index = _label_indices(y, classes, X.shape[0])
    cost_model = check_test_costs(
        getattr(model, "cost_model_", None) if test_costs is None else test_costs, X.shape[1]
    )
    matrix = check_cost_matrix(
        getattr(model, "cost_matrix_", None) if cost_matrix is None else cost_matrix, len(classes)
    )
    refer = check_reject_cost(
        getattr(model, "reject_cost_", None) if reject_cost is None else reject_cost, len(classes)
    )
    if delayed not in _DELAYED_MODES:
        raise ValueError(f"delayed must be one of {_DELAYED_MODES}, got {delayed!r}")
    decide_with = matrix if cost_matrix is not None and decides_any_matrix(model) else None
    cases = tuple(
        run_case(
            model,
            X[i],
            int(true_index[i]),
            classes=classes,
            cost_model=cost_model,
            cost_matrix=matrix,
            reject_cost=refer,
            delayed=delayed,
            decide_with=decide_with,
        )
        for i in range(X.shape[0])
    )
    if class_frequencies is None:
        class_frequencies = np.bincount(true_index, minlength=len(classes))
    return build_report(
        cases,
        classes=classes,
        cost_model=cost_model,
        cost_matrix=matrix,
        class_frequencies=class_frequencies,
    )


def run_case(
    model,
    x: np.ndarray,
    true_class: int,
    *,
    classes: Sequence,
    cost_model: CostModel,
    cost_matrix: np.ndarray,
    reject_cost=None,
    delayed: str = "path",
    decide_with: np.ndarray | None = None,
) -> CaseResult:
    """Follow ``model``'s policy on one case ``x`` whose true class index is ``true_class``.

    ``decide_with``: a cost matrix passed to ``next_action(..., cost_matrix=)``
    (only for a model that takes one, see :func:`decides_any_matrix`).
    """
    known: dict[int, float] = {}  # NaN: done, paid, no result
    unavailable: frozenset[int] = frozenset()  # nothing is unavailable in a held-out row
    bought: list[int] = []
    orders: list[tuple[int, float, float]] = []
    done: set[int] = set()
    test_cost = 0.0
    n_features = x.shape[0]
    use_subtree = delayed == "turney" and hasattr(model, "delayed_order")

    def buy(test: int) -> float:
        nonlocal test_cost
        if test in done:
            return 0.0
        price = cost_model.marginal_cost(test, frozenset(done))
        test_cost += price
        # A derived test (thyroid FTI) brings its inputs: they were paid for.
        for t in [test, *sorted(cost_model.done_closure([test]) - {test})]:
            if t in done:
                continue
            done.add(t)
            bought.append(t)
            # A NaN result is still a test done: it stays known (as missing), so the
            # policy never asks for it again and prices its group partners as done.
            known[t] = float(x[t])
        return price

    extra = {} if decide_with is None else {"cost_matrix": decide_with}
    for _ in range(n_features + 1):
        action = model.next_action(dict(known), unavailable, **extra)
        if isinstance(action, Extract):
            test = _check_test(action.test, n_features)
            if test in done:
                raise RuntimeError(
                    f"{type(model).__name__} asked again for test {test}, which this case "
                    f"already has (tests so far: {bought})"
                )
            if use_subtree and cost_model.delayed[test]:
                order = [
                    _check_test(t, n_features)
                    for t in _delayed_order(model, known, test, unavailable)
                ]
                if test not in order:
                    order.insert(0, test)
                charged = [buy(t) for t in order][order.index(test)]
            else:
                charged = buy(test)
            orders.append((test, float(action.cost), charged))
            continue
        if isinstance(action, Classify):
            predicted = _class_index(action.label, classes)
            error_cost = float(cost_matrix[true_class, predicted])
            return CaseResult(
                tests=tuple(bought),
                test_cost=test_cost,
                decision=action,
                true_label=_plain(classes[true_class]),
                total_cost=test_cost + error_cost,
                misclassification_cost=error_cost,
                orders=tuple(orders),
            )
        if isinstance(action, Reject):
            if reject_cost is None:
                raise ValueError(
                    f"{type(model).__name__} referred a case but no reject cost is set; "
                    "pass reject_cost= to evaluate"
                )
            refer = float(np.broadcast_to(reject_cost, (len(classes),))[true_class])
            return CaseResult(
                tests=tuple(bought),
                test_cost=test_cost,
                decision=action,
                true_label=_plain(classes[true_class]),
                total_cost=test_cost + refer,
                misclassification_cost=0.0,
                orders=tuple(orders),
            )
        raise TypeError(
            f"{type(model).__name__}.next_action returned {action!r}; "
            "expected Extract, Classify or Reject"
        )
    raise RuntimeError(
        f"{type(model).__name__} took more than {n_features + 1} steps on one case "
        f"without deciding (tests so far: {bought})"
    )


@dataclass(frozen=True)
class CrossValidationReport:
    """Cross-validated evaluation: all held-out cases pooled, plus each fold.

    Attributes
    ----------
    overall : EvaluationReport
        Every case of every fold, evaluated by the model not trained on it.
    folds : tuple of EvaluationReport
        One report per fold.
    fit_seconds : tuple of float
        Wall-clock fit time per fold.
    models : tuple
        Each fold's fitted model, with ``keep_models=True``; else empty.  Not in
        :meth:`to_dict`.
    """

    overall: EvaluationReport
    folds: tuple[EvaluationReport, ...]
    fit_seconds: tuple[float, ...]
    models: tuple = field(default=(), repr=False, compare=False)

    @property
    def mean_fit_seconds(self) -> float:
        """Mean wall-clock fit time per fold."""
        return float(np.mean(self.fit_seconds))

    def to_dict(self) -> dict:
        """Plain-JSON form."""
        return {
            "overall": self.overall.to_dict(),
            "folds": [fold.to_dict(include_cases=False) for fold in self.folds],
            "fit_seconds": list(self.fit_seconds),
            "mean_fit_seconds": self.mean_fit_seconds,
        }


def cross_validate(
    estimator,
    X,
    y,
    *,
    n_splits: int = 10,
    random_state=0,
    test_costs=None,
    cost_matrix=None,
    reject_cost=None,
    delayed: str = "path",
    folds=None,
    keep_models: bool = False,
) -> CrossValidationReport:
    """Stratified k-fold evaluation: clone, fit on k-1 folds, :func:`evaluate` on the rest.

    Parameters
    ----------
    estimator : unfitted estimator
        Cloned for every fold; its own ``test_costs``/``cost_matrix`` are
        what it learns with.
    X, y : array-like
        All cases and their labels.
    n_splits, random_state :
        ``StratifiedKFold(n_splits, shuffle=True, random_state=random_state)``.
    test_costs, cost_matrix, reject_cost, delayed :
        Passed to :func:`evaluate` (None: each fitted model's own).
    folds : sequence of (train_indices, test_indices), optional
        Precomputed folds, so that several learners see the same ones; see
        :func:`make_folds`.
    keep_models : bool, default False
        Keep each fold's fitted model in the report's ``models`` (scikit-learn's
        ``return_estimator``).

    Returns
    -------
    CrossValidationReport
        Pooled report; its standard cost uses the class frequencies of all ``y``.
    """
    from sklearn.base import clone

    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be 2-D with one row per label; got X {X.shape}, y {y.shape}")
    if folds is None:
        folds = make_folds(y, n_splits=n_splits, random_state=random_state)
    reports: list[EvaluationReport] = []
    fit_seconds: list[float] = []
    models: list = []
    first = None
    for train, test in folds:
        train, test = np.asarray(train), np.asarray(test)
        model = clone(estimator)
        start = time.perf_counter()
        model.fit(X[train], y[train])
        fit_seconds.append(time.perf_counter() - start)
        models.append(model)
        if first is None:
            first = model
        elif list(model.classes_) != list(first.classes_):
            raise ValueError(
                "a fold's training set lacks a class; use fewer folds or stratified folds"
            )
        reports.append(
            evaluate(
                model,
                X[test],
                y[test],
                test_costs=test_costs,
                cost_matrix=cost_matrix,
                reject_cost=reject_cost,
                delayed=delayed,
            )
        )
    if first is None:
        raise ValueError("no folds to evaluate")
    classes = _model_classes(first)
    cost_model = check_test_costs(
        first.cost_model_ if test_costs is None else test_costs, X.shape[1]
    )
    matrix = check_cost_matrix(
        first.cost_matrix_ if cost_matrix is None else cost_matrix, len(classes)
    )
    overall = build_report(
        tuple(case for report in reports for case in report.cases),
        classes=classes,
        cost_model=cost_model,
        cost_matrix=matrix,
        class_frequencies=np.bincount(_label_indices(y, classes, len(y)), minlength=len(classes)),
    )
    return CrossValidationReport(
        overall=overall,
        folds=tuple(reports),
        fit_seconds=tuple(fit_seconds),
        models=tuple(models) if keep_models else (),
    )


def make_folds(y, *, n_splits: int = 10, random_state=0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified shuffled (train_indices, test_indices) pairs, to share across learners."""
    from sklearn.model_selection import StratifiedKFold

    y = np.asarray(y)
    splitter = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    return [(train, test) for train, test in splitter.split(np.zeros((len(y), 1)), y)]


# ----------------------------------------------------------------- helpers
def decides_any_matrix(model) -> bool:
    """Whether ``model.next_action`` takes a ``cost_matrix`` keyword (it can decide
    under a matrix chosen after training, as plain Boosting can)."""
    try:
        parameters = inspect.signature(model.next_action).parameters
    except (TypeError, ValueError, AttributeError):
        return False
    return "cost_matrix" in parameters


def _delayed_order(model, known, test: int, unavailable) -> list[int]:
    """The model's Turney order; passes ``unavailable`` when the model takes it.

    A tree that knows which tests are unavailable walks past them exactly as
    ``next_action`` did, so it orders the subtree below the node that asked.
    """
    try:
        takes_unavailable = "unavailable" in inspect.signature(model.delayed_order).parameters
    except (TypeError, ValueError):
        takes_unavailable = False
    if takes_unavailable:
        return list(model.delayed_order(dict(known), test, unavailable=frozenset(unavailable)))
    return list(model.delayed_order(dict(known), test))


def _model_classes(model) -> list:
    classes = getattr(model, "classes_", None)
    if classes is None:
        raise ValueError(f"{type(model).__name__} is not fitted (it has no classes_)")
    return [_plain(c) for c in classes]


def _check_X(X, model) -> np.ndarray:
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("X must be a table of numbers (NaN for missing)") from None
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    expected = getattr(model, "n_features_in_", X.shape[1])
    if X.shape[1] != expected:
        raise ValueError(f"X has {X.shape[1]} features but the model was fitted on {expected}")
    return X


def _label_indices(y, classes: Sequence, n_cases: int) -> np.ndarray:
    labels = np.asarray(y)
    if labels.shape != (n_cases,):
        raise ValueError(
            f"y must have one label per row of X ({n_cases}), got shape {labels.shape}"
        )
    lookup = {c: k for k, c in enumerate(classes)}
    indices = np.empty(n_cases, dtype=np.int64)
    for i, label in enumerate(labels.tolist()):
        k = lookup.get(label)
        if k is None:
            raise ValueError(
                f"label {label!r} of case {i} is not one of the model's classes {classes}"
            )
        indices[i] = k
    return indices


def _class_index(label, classes: Sequence) -> int:
    label = _plain(label)
    for k, c in enumerate(classes):
        if c == label:
            return k
    raise ValueError(f"policy classified as {label!r}, which is not one of {classes}")


def _check_test(test, n_features: int) -> int:
    index = int(test)
    if not 0 <= index < n_features:
        raise ValueError(f"policy asked for test {index}, out of range for {n_features} features")
    return index


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value
