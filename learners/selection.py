"""A learner that lets the data choose: the cheapest candidate by cross-validated cost.

:class:`CostSelectedClassifier` fits every candidate of :data:`CANDIDATES`
(the registered learners, each at a few declared settings, and the two
baselines of :mod:`learners.baselines`) on repeated stratified folds of the
training data only, prices each held-out case exactly as
:func:`learners.evaluate` does (the same ``run_case``, ``marginal_cost``,
error matrix and referral cost), keeps the candidate of least mean cost per
patient, and refits it on all the training data.  Its ``next_action`` is the
winner's.

The candidates and their settings are declared once, in :data:`CANDIDATES`.
How they were chosen (never from a benchmark's folds):

* the two baselines, so that the choice is never knowingly worse than
  ordering nothing (ALGORITHMS.md §9; ``learners.baselines``);
* every greedy tree (C4.5c, EG2, IDX, CS-ID3, DTMC) at C4.5's own minimum
  of 2 cases per leaf (Quinlan's MINOBJS, the learners' default); EG2 also
  at 10, since paper 001 shows that on small samples the Laplace leaf
  estimates of a coarser tree are better calibrated, and the matrix is
  traded through those estimates;
* the least-cost tree at depth 2 and 3 (depth 3: the depth of the optimal
  cost-sensitive trees the issues compare with; depth 2 is its cheaper,
  less variable neighbour);
* Boosting and Cost-Boosting at paper 004's 10 trials;
* LSID3 at its default ``r=5`` (about 5 s on ann-thyroid's 3772 cases);
* ACT at ``r=1`` (paper 000 reports most of its gain at small r, and its
  own inner CV already chooses among its lookahead and greedy trees): at its
  default ``r=5`` one fit on ann-thyroid takes as long as the whole selection
  may (the issue asks for under 3 minutes on 2 cores);
* Boosting and Cost-Boosting at paper 004's 10 trials;
* the conditioned-loss model at its defaults when the matrix has one error
  cost (its PENALTY; REWARD 0; with another matrix it is not applicable: it
  states errors as REWARD/PENALTY, not as a matrix), and BudgetRF at its
  defaults, last: the dearest to fit, so the time budget cuts them first.

The order of :data:`CANDIDATES` is cheapest first (measured fit times on
ann-thyroid) and breaks ties.

ICET is not a candidate: one fit at its defaults takes about 4 minutes on
ann-thyroid (five folds would not fit the time budget), and paper 000 reports
ACT below ICET's cost on its datasets.  A candidate that refuses the data
(``ValueError`` from ``fit``, e.g. the conditioned-loss model with more priced
tests than its ``max_subsets``) is left out, its report line saying why.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import _fit_context
from sklearn.model_selection import RepeatedStratifiedKFold
from sklearn.utils._param_validation import Interval
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted

from . import _document as document
from ._estimator import TRAIN_ACCURACY_CHECKS, CostSensitiveClassifier, constraints
from ._validation import check_cost_matrix, validate_costed_fit, validate_rows
from .baselines import OrderEverything, OrderNothing
from .evaluation import run_case
from .policy import Action, best_class
from .serialization import SerializableMixin, model_from_json, model_to_json

__all__ = [
    "CANDIDATES",
    "Candidate",
    "CostSelectedClassifier",
    "FoldCosts",
    "SelectionCandidate",
    "fit_candidate",
]


@dataclass(frozen=True)
class Candidate:
    """One learner at one setting the selector may choose.

    ``learner`` is a class name of ``learners.serialization.LEARNERS``, or
    ``"OrderNothing"`` / ``"OrderEverything"`` for the baselines.
    """

    name: str
    label: str
    learner: str
    params: Mapping[str, Any] = field(default_factory=dict)


#: Every candidate, in the order ties are broken (simplest first).  The one declaration
#: of the selector's grid; see the module docstring for why these settings.
CANDIDATES: tuple[Candidate, ...] = (
    Candidate("order-nothing", "Order no test (least expected cost class)", "OrderNothing"),
    Candidate(
        "order-everything", "Order every test, then a C4.5 tree's conclusion", "OrderEverything"
    ),
    Candidate("c45", "C4.5 (least-cost leaves), leaves of at least 2 patients", "C45Classifier"),
    Candidate("eg2", "EG2, leaves of at least 2 patients", "EG2Classifier"),
    Candidate(
        "eg2-leaf10",
        "EG2, leaves of at least 10 patients",
        "EG2Classifier",
        {"min_samples_leaf": 10},
    ),  # fmt: skip
    Candidate("idx", "IDX, leaves of at least 2 patients", "IDXClassifier"),
    Candidate("csid3", "CS-ID3, leaves of at least 2 patients", "CSID3Classifier"),
    Candidate("dtmc", "DTMC (least total cost splits)", "DTMCClassifier"),
    Candidate(
        "optimal-depth2", "Least-cost tree of depth 2", "OptimalTreeClassifier", {"max_depth": 2}
    ),
    Candidate(
        "optimal-depth3", "Least-cost tree of depth 3", "OptimalTreeClassifier", {"max_depth": 3}
    ),
    Candidate("lsid3", "LSID3, lookahead of 5 trees per test", "LSID3Classifier", {"r": 5}),
    Candidate("act", "ACT, lookahead of 1 tree per test", "ACTClassifier", {"r": 1}),
    Candidate(
        "boosting",
        "Boosting, 10 trees voting by least expected cost",
        "BoostingClassifier",
        {"n_trials": 10, "cost_sensitive": False},
    ),  # fmt: skip
    Candidate(
        "cost-boosting",
        "Cost-Boosting, 10 trees",
        "BoostingClassifier",
        {"n_trials": 10, "cost_sensitive": True},
    ),  # fmt: skip
    Candidate(
        "conditioned-loss",
        "Conditioned-loss model (one classifier per set of tests)",
        "ConditionedLossClassifier",
    ),
    Candidate("budget-rf", "BudgetRF (a forest within a test budget)", "BudgetRFClassifier"),
)

#: Held-out patients per candidate (over every repeat) that ``n_repeats=None`` aims at.
HELD_OUT_PATIENTS = 2000

_BY_NAME = {candidate.name: candidate for candidate in CANDIDATES}
_BASELINES = ("OrderNothing", "OrderEverything")


@dataclass(frozen=True)
class SelectionCandidate:
    """One line of the selection report.

    ``mean_cost``: mean total cost per held-out patient over every fold of
    every repeat (tests plus errors plus referrals, as ``evaluate`` charges);
    ``standard_error``: its standard error over the folds, with Nadeau and
    Bengio's correction for overlapping training sets; ``fit_seconds``: the
    mean wall-clock fit time of one fold.  All three are None for a candidate
    that was not measured, and ``note`` says why (not applicable, or skipped or
    stopped by the time budget).
    """

    name: str
    label: str
    mean_cost: float | None
    standard_error: float | None
    fit_seconds: float | None
    note: str = ""

    @property
    def measured(self) -> bool:
        return self.mean_cost is not None


@dataclass(frozen=True)
class FoldCosts:
    """One candidate measured on each of the selector's folds (what a worker sends back).

    ``totals[i]``: the total cost of fold ``i``'s held-out patients, as
    :func:`learners.evaluate` charges them; ``seconds[i]``: that fold's fit time.
    Both None for a fold not run (the deadline had passed).  ``refused``: the
    candidate's message when it refused the data (then no fold counts).
    """

    name: str
    totals: tuple[float | None, ...]
    seconds: tuple[float | None, ...]
    refused: str = ""

    @classmethod
    def from_results(cls, name: str, results: Iterable) -> FoldCosts:
        """From :func:`_fold_cost`'s answers, one per fold."""
        results = list(results)
        refused = next((r for r in results if isinstance(r, str)), "")
        if refused:
            return cls(name, (), (), refused)
        pairs = [(None, None) if r is None else (float(r[0]), float(r[1])) for r in results]
        return cls(name, tuple(t for t, _ in pairs), tuple(s for _, s in pairs))

    def to_dict(self) -> dict:
        """Plain JSON, for a task result or a database row."""
        return {
            "name": self.name,
            "totals": list(self.totals),
            "seconds": list(self.seconds),
            "refused": self.refused,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> FoldCosts:
        """The inverse of :meth:`to_dict`, every field checked.

        Raises
        ------
        ValueError
            On a malformed measurement.
        """
        where = "measurement"
        data = document.mapping(data, where)
        document.no_unknown_fields(data, ("name", "totals", "seconds", "refused"), where)
        name = document.field(data, "name", where)
        if not isinstance(name, str) or name not in _BY_NAME:
            raise ValueError(f"{where}.name: expected a candidate name, got {name!r}")
        refused = document.field(data, "refused", where)
        if not isinstance(refused, str):
            raise ValueError(f"{where}.refused: expected a text")
        columns = []
        for key in ("totals", "seconds"):
            values = document.items(document.field(data, key, where), f"{where}.{key}")
            columns.append(
                tuple(
                    None if v is None else document.number(v, f"{where}.{key}[{i}]", low=0.0)
                    for i, v in enumerate(values)
                )
            )
        totals, seconds = columns
        if len(totals) != len(seconds) or any(
            (t is None) != (s is None) for t, s in zip(totals, seconds, strict=True)
        ):
            raise ValueError(f"{where}: totals and seconds must pair up, fold by fold")
        return cls(name, totals, seconds, refused)


@dataclass(frozen=True)
class _Selection:
    """The validated data, cost parameters and folds of one selection."""

    X: np.ndarray
    y: np.ndarray
    shared: Mapping[str, Any]
    chosen: tuple[Candidate, ...]
    applicable: tuple[str, ...]
    folds: tuple[tuple[np.ndarray, np.ndarray], ...]


def _mean_cost(line: SelectionCandidate) -> float:
    """The line's mean cost, infinite when it was not measured (for ``min``)."""
    return math.inf if line.mean_cost is None else line.mean_cost


def _uniform_error_cost(matrix: np.ndarray) -> float | None:
    """The one error cost of a matrix with a zero diagonal and equal off-diagonal costs."""
    k = matrix.shape[0]
    off = matrix[~np.eye(k, dtype=bool)]
    if k < 2 or np.any(np.diag(matrix) != 0) or np.ptp(off) != 0 or off[0] <= 0:
        return None
    return float(off[0])


def _build(candidate: Candidate, shared: Mapping[str, Any]):
    """An unfitted estimator for ``candidate`` with the selector's cost parameters."""
    from .serialization import LEARNERS

    if candidate.learner == "OrderNothing":
        return OrderNothing(
            test_costs=shared["test_costs"],
            cost_matrix=shared["cost_matrix"],
            reject_cost=shared["reject_cost"],
        )
    if candidate.learner == "OrderEverything":
        return _concluder(shared)
    import importlib

    cls = getattr(importlib.import_module(LEARNERS[candidate.learner]), candidate.learner)
    params = {
        "test_costs": shared["test_costs"],
        "reject_cost": shared["reject_cost"],
        "categorical_features": shared["categorical_features"],
        "random_state": shared["random_state"],
        **candidate.params,
    }
    if candidate.learner == "ConditionedLossClassifier":
        params.update(penalty=shared["error_cost"], reward=0.0)
    else:
        params["cost_matrix"] = shared["cost_matrix"]
    return cls(**params)


def _concluder(shared: Mapping[str, Any]):
    """The C4.5 tree that concludes after every test, as the app's baseline grows it."""
    from .tree import C45Classifier

    return C45Classifier(
        test_costs=shared["test_costs"],
        cost_matrix=shared["cost_matrix"],
        reject_cost=shared["reject_cost"],
        categorical_features=shared["categorical_features"],
        random_state=shared["random_state"],
    )


def _fitted(candidate: Candidate, shared: Mapping[str, Any], X: np.ndarray, y: np.ndarray):
    model = _build(candidate, shared).fit(X, y)
    return OrderEverything(model) if candidate.learner == "OrderEverything" else model


def fit_candidate(
    name: str,
    X,
    y,
    *,
    test_costs=None,
    cost_matrix=None,
    reject_cost=None,
    categorical_features=None,
    random_state=None,
):
    """One candidate of :data:`CANDIDATES` alone, at its declared settings, fitted on ``X``, ``y``
    (what the selector refits when ``name`` wins; benchmarks measure each candidate with it)."""
    if name not in _BY_NAME:
        raise ValueError(f"unknown candidate {name!r}; known: {', '.join(_BY_NAME)}")
    selector = CostSelectedClassifier(
        test_costs=test_costs,
        cost_matrix=cost_matrix,
        reject_cost=reject_cost,
        categorical_features=categorical_features,
        random_state=random_state,
    )
    X, codes = validate_costed_fit(selector, X, y)
    selector._seed_ = selector._random_seed()
    return _fitted(_BY_NAME[name], selector._shared(), X, selector.classes_[codes])


def _fold_cost(
    candidate: Candidate,
    shared: Mapping[str, Any],
    X: np.ndarray,
    y: np.ndarray,
    train: np.ndarray,
    test: np.ndarray,
    deadline: float | None,
) -> tuple[float, float] | str | None:
    """(total held-out cost, fit seconds) of one fold; None when the deadline has passed,
    the message when the candidate refuses the training data (a ``ValueError`` from fit).

    Every held-out case is priced by :func:`learners.evaluation.run_case`, the
    function :func:`learners.evaluate` runs, with the selector's prices, matrix
    and referral cost.
    """
    if deadline is not None and time.time() > deadline:
        return None
    start = time.perf_counter()
    try:
        model = _fitted(candidate, shared, X[train], y[train])
        seconds = time.perf_counter() - start
        classes = list(model.classes_)
        index = {label: i for i, label in enumerate(classes)}
        total = 0.0
        for row in test:
            case = run_case(
                model,
                X[row],
                index[y[row]],
                classes=classes,
                cost_model=shared["cost_model"],
                cost_matrix=shared["matrix"],
                reject_cost=shared["refer"],
            )
            total += case.total_cost
    except ValueError as exc:
        # A candidate that refuses this data (the conditioned-loss model with more priced
        # tests than its subsets, or referring with no referral price) is left out, and the
        # report says why.
        return str(exc)
    return total, seconds


class CostSelectedClassifier(SerializableMixin, CostSensitiveClassifier):
    """Let the data choose: the candidate of least cross-validated cost, refitted.

    Every candidate of :data:`CANDIDATES` (or those named in ``candidates``)
    is fitted on ``n_repeats`` x ``n_splits`` stratified folds of the
    training data and each held-out patient is priced as
    :func:`learners.evaluate` prices it.  The candidate of least mean cost
    per patient wins (ties: the earlier in :data:`CANDIDATES`), is refitted
    on all the training data (:attr:`best_estimator_`) and answers
    :meth:`next_action`, :meth:`predict_proba` and :meth:`predict`.
    Ordering nothing is always a candidate, so the choice is never worse
    than it on the held-out patients of the training data.

    Parameters
    ----------
    test_costs, cost_matrix, reject_cost, categorical_features, random_state
        As every learner takes them; passed to each candidate.
        ``random_state`` also draws the folds.
    candidates : sequence of str, optional
        Names of :data:`CANDIDATES` to choose among; None: all.  Ordering
        nothing is always added.
    n_splits : int, default 5
        Folds per repeat (fewer when the rarest class has fewer cases).
    n_repeats : int, optional
        Repeats of the stratified folds, each shuffled anew.  None: as many
        (1 to 3) as keep the held-out patients at most
        :data:`HELD_OUT_PATIENTS` in all (heart: 3 repeats, Pima: 2,
        ann-thyroid: 1).  Pricing a held-out patient walks the candidate's
        policy step by step, which on thousands of patients costs more than
        the fits; small data gets more repeats, where one split's costs are
        noisiest.
    n_jobs : int, optional
        Candidates' folds fitted in parallel through joblib (-1: every core).
    time_budget : float, optional (seconds), default 600
        Wall-clock time for the selection.  Folds are run candidate by
        candidate in :data:`CANDIDATES`' order (cheapest first); a fold that
        would start after the budget is not run, and a candidate missing a
        fold is left out of the choice, its report line saying so.  A fold
        already running finishes, and the winner's refit comes on top, so the
        whole fit can overrun by about one fit of the dearest candidate.
        Ordering nothing is always measured.  None: no limit.

    Attributes
    ----------
    winner_ : SelectionCandidate
        The report line of the candidate chosen.
    selection_report_ : list of SelectionCandidate
        Every candidate considered, in :data:`CANDIDATES`' order.
    best_estimator_ : fitted policy
        The winner refitted on all the training data.
    classes_, n_features_in_, cost_model_, cost_matrix_, reject_cost_
        As every learner sets them.
    """

    _parameter_constraints: ClassVar[dict] = constraints(
        CostSensitiveClassifier._parameter_constraints,
        candidates=["array-like", None],
        n_splits=[Interval(Integral, 2, None, closed="left")],
        n_repeats=[Interval(Integral, 1, None, closed="left"), None],
        n_jobs=[Integral, None],
        time_budget=[Interval(Real, 0, None, closed="neither"), None],
    )
    _expected_failed_checks: ClassVar[dict[str, str]] = dict.fromkeys(
        TRAIN_ACCURACY_CHECKS,
        "with the default unit test costs and 0/1 loss a test costs as much as the error it "
        "can remove, so ordering nothing is rightly the cheapest candidate on held-out cases",
    )
    _fast_test_params: ClassVar[dict] = {
        "candidates": ("c45", "eg2"),
        "n_splits": 2,
        "n_repeats": 1,
        "random_state": 0,
    }

    def __init__(
        self,
        *,
        test_costs=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=None,
        random_state=None,
        candidates=None,
        n_splits=5,
        n_repeats=None,
        n_jobs=None,
        time_budget=600.0,
    ):
        self.test_costs = test_costs
        self.cost_matrix = cost_matrix
        self.reject_cost = reject_cost
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.candidates = candidates
        self.n_splits = n_splits
        self.n_repeats = n_repeats
        self.n_jobs = n_jobs
        self.time_budget = time_budget

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN means "missing", as for every candidate
        return tags

    # -------------------------------------------------------------- fitting
    def _chosen_candidates(self) -> list[Candidate]:
        if self.candidates is None:
            names = set(_BY_NAME)
        else:
            names = {str(name) for name in np.asarray(self.candidates, dtype=object).ravel()}
            unknown = sorted(names - set(_BY_NAME))
            if unknown:
                raise ValueError(
                    f"candidates: unknown name(s) {', '.join(map(repr, unknown))}; "
                    f"known: {', '.join(_BY_NAME)}"
                )
        names.add("order-nothing")
        return [candidate for candidate in CANDIDATES if candidate.name in names]

    def _shared(self) -> dict[str, Any]:
        return {
            "test_costs": self.cost_model_,
            "cost_matrix": self.cost_matrix_,
            "reject_cost": self.reject_cost_,
            "categorical_features": self.categorical_features,
            "random_state": self._seed_,
            "error_cost": _uniform_error_cost(self.cost_matrix_),
            "cost_model": self.cost_model_,
            "matrix": self.cost_matrix_,
            "refer": self.reject_cost_,
        }

    def _prepare(self, X, y) -> _Selection:
        """Validate ``X``/``y``, set the fitted cost attributes and draw the folds."""
        X, codes = validate_costed_fit(self, X, y)
        chosen = self._chosen_candidates()
        self._seed_ = self._random_seed()
        shared = self._shared()
        applicable = tuple(
            c.name
            for c in chosen
            if c.learner != "ConditionedLossClassifier" or shared["error_cost"] is not None
        )
        return _Selection(
            X=X,
            y=self.classes_[codes],
            shared=shared,
            chosen=tuple(chosen),
            applicable=applicable,
            folds=tuple(self._folds(codes)),
        )

    def candidates_to_measure(self, X, y) -> tuple[str, ...]:
        """Names of the candidates :meth:`fit` would measure on ``X``/``y``, in table order.

        The candidates that apply to this matrix (the conditioned-loss model only with one
        error cost); each can be measured on its own by :meth:`measure_candidate`, on any
        machine, and the measurements handed to :meth:`fit_measured`.
        """
        return self._prepare(X, y).applicable

    def measure_candidate(self, name: str, X, y, *, deadline: float | None = None) -> FoldCosts:
        """One candidate's held-out cost on each of the selector's folds of ``X``/``y``.

        The folds are the ones :meth:`fit` draws (the same ``random_state``, so every machine
        draws the same); ``n_jobs`` runs the folds in parallel.  ``deadline`` (a
        ``time.time()`` value): folds that would start after it are not run.  Ordering
        nothing ignores the deadline: it is always measured.
        """
        selection = self._prepare(X, y)
        if name not in selection.applicable:
            raise ValueError(
                f"candidate {name!r} is not one this selector measures on this data; "
                f"it measures: {', '.join(selection.applicable)}"
            )
        candidate = _BY_NAME[name]
        if name == "order-nothing":
            deadline = None
        results = Parallel(n_jobs=self.n_jobs)(
            delayed(_fold_cost)(
                candidate, selection.shared, selection.X, selection.y, train, test, deadline
            )
            for train, test in selection.folds
        )
        return FoldCosts.from_results(name, results)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Measure every candidate on folds of ``X``/``y`` and refit the cheapest on all of it.

        Raises
        ------
        ValueError
            On malformed input or parameters, or an unknown candidate name.
        """
        selection = self._prepare(X, y)
        deadline = None if self.time_budget is None else time.time() + float(self.time_budget)
        tasks = [(name, fold) for name in selection.applicable for fold in selection.folds]
        results = Parallel(n_jobs=self.n_jobs)(
            delayed(_fold_cost)(
                _BY_NAME[name],
                selection.shared,
                selection.X,
                selection.y,
                train,
                test,
                None if name == "order-nothing" else deadline,
            )
            for name, (train, test) in tasks
        )
        per_candidate: dict[str, list] = {name: [] for name in selection.applicable}
        for (name, _), result in zip(tasks, results, strict=True):
            per_candidate[name].append(result)
        measured = {
            name: FoldCosts.from_results(name, folds) for name, folds in per_candidate.items()
        }
        return self._conclude(selection, measured)

    def fit_measured(self, X, y, measurements: Mapping[str, FoldCosts]):
        """Choose and refit from measurements made elsewhere (:meth:`measure_candidate`).

        ``measurements`` maps candidate names to their fold costs on this same ``X``/``y``
        with this same selector's parameters.  A candidate with no measurement is left out
        of the choice, its report line saying so; ordering nothing must be measured.

        Raises
        ------
        ValueError
            When a measurement is of an unknown candidate, has another number of folds than
            the selector draws, or ordering nothing is missing.
        """
        selection = self._prepare(X, y)
        for name, folds in measurements.items():
            if name not in selection.applicable:
                raise ValueError(f"measurements: {name!r} is not a candidate measured here")
            if folds.name != name:
                raise ValueError(f"measurements: the entry {name!r} holds {folds.name!r}")
            if not folds.refused and len(folds.totals) != len(selection.folds):
                raise ValueError(
                    f"measurements: {name!r} has {len(folds.totals)} folds, "
                    f"the selector draws {len(selection.folds)}"
                )
        if selection.folds and "order-nothing" not in measurements:
            raise ValueError("measurements: ordering nothing must be measured")
        return self._conclude(selection, measurements)

    def _conclude(self, selection: _Selection, measured: Mapping[str, FoldCosts]):
        """Report every candidate, keep the cheapest measured one, refit it on everything."""
        report = [self._line(c, measured.get(c.name), selection) for c in selection.chosen]
        lines = [line for line in report if line.measured]
        if lines:
            winner = min(lines, key=_mean_cost)
        else:  # too few cases for two folds: nothing measured, keep the safe choice
            winner = next(line for line in report if line.name == "order-nothing")
        self.selection_report_ = report
        self.winner_ = winner
        self.best_estimator_ = _fitted(
            _BY_NAME[winner.name], selection.shared, selection.X, selection.y
        )
        return self

    def _folds(self, codes: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Repeated stratified folds; none when the rarest class cannot fill two folds."""
        smallest = int(np.bincount(codes).min())
        splits = min(int(self.n_splits), smallest)
        if splits < 2:
            return []
        repeats = self.n_repeats
        if repeats is None:
            repeats = min(3, max(1, HELD_OUT_PATIENTS // len(codes)))
        splitter = RepeatedStratifiedKFold(
            n_splits=splits, n_repeats=int(repeats), random_state=self._seed_
        )
        return list(splitter.split(np.zeros((len(codes), 1)), codes))

    def _line(
        self, candidate: Candidate, measured: FoldCosts | None, selection: _Selection
    ) -> SelectionCandidate:
        def unmeasured(note: str) -> SelectionCandidate:
            return SelectionCandidate(candidate.name, candidate.label, None, None, None, note)

        folds = selection.folds
        if candidate.name not in selection.applicable:
            return unmeasured("not applicable: the error matrix has more than one error cost")
        if not folds:
            return unmeasured("not measured: a class has fewer than 2 cases")
        if measured is None:
            return unmeasured("not measured: no measurement arrived")
        if measured.refused:
            return unmeasured(f"not applicable: {measured.refused[:300]}")
        done = [
            (total, seconds)
            for total, seconds in zip(measured.totals, measured.seconds, strict=True)
            if total is not None and seconds is not None
        ]
        if not done:
            return unmeasured(f"skipped: the time budget of {self.time_budget:g} s was spent")
        if len(done) < len(folds):
            return unmeasured(
                f"stopped after {len(done)} of {len(folds)} folds: "
                f"the time budget of {self.time_budget:g} s was spent"
            )
        n_cases = len(selection.y)
        sizes = np.array([len(test) for _, test in folds], dtype=float)
        totals = np.array([total for total, _ in done])
        fold_means = totals / sizes
        mean = float(totals.sum() / sizes.sum())
        if len(done) > 1:
            # Nadeau & Bengio's corrected variance: folds share training cases.
            test_share = float(np.mean(sizes)) / (n_cases - float(np.mean(sizes)))
            variance = float(np.var(fold_means, ddof=1)) * (1.0 / len(done) + test_share)
            error: float | None = math.sqrt(max(variance, 0.0))
        else:
            error = None
        seconds = float(np.mean([s for _, s in done]))
        return SelectionCandidate(candidate.name, candidate.label, mean, error, seconds)

    # ------------------------------------------------------------ the policy
    def next_action(self, known: Mapping[int, float], unavailable: Iterable[int] = ()) -> Action:
        """The winner's next step for one patient."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.next_action(known, unavailable)

    def delayed_order(
        self, known: Mapping[int, float], test: int, unavailable: Iterable[int] = ()
    ) -> list[int]:
        """The winner's Turney order for a delayed ``test`` (``[test]`` when it has none)."""
        check_is_fitted(self, "best_estimator_")
        order = getattr(self.best_estimator_, "delayed_order", None)
        return [int(test)] if order is None else order(known, test, unavailable)

    def predict_proba(self, X) -> np.ndarray:
        """The winner's class probabilities (ordering nothing: the training frequencies)."""
        check_is_fitted(self, "best_estimator_")
        X = validate_rows(self, X)
        model = self.best_estimator_
        if isinstance(model, OrderNothing):
            share = model.class_counts_ / model.class_counts_.sum()
            return np.tile(share, (X.shape[0], 1))
        if isinstance(model, OrderEverything):
            model = model.concluder
        return model.predict_proba(X)

    def predict(self, X) -> np.ndarray:
        """The class of least expected cost under ``cost_matrix_`` for each row."""
        proba = self.predict_proba(X)
        return self.classes_[best_class(proba, self.cost_matrix_)]

    # ----------------------------------------------------------------- JSON
    def _fitted_state(self) -> dict:
        check_is_fitted(self, "best_estimator_")
        model = self.best_estimator_
        if isinstance(model, OrderNothing):
            winner: dict = {"class_counts": model.class_counts_.tolist()}
        elif isinstance(model, OrderEverything):
            winner = {"concluder": _document_of(model.concluder)}
        else:
            winner = {"model": _document_of(model)}
        reject = self.reject_cost_
        return {
            "classes": self.classes_.tolist(),
            "n_features_in": int(self.n_features_in_),
            "cost_model": self.cost_model_.to_dict(),
            "cost_matrix": self.cost_matrix_.tolist(),
            "reject_cost": reject.tolist() if isinstance(reject, np.ndarray) else reject,
            "report": [
                {
                    "name": line.name,
                    "mean_cost": line.mean_cost,
                    "standard_error": line.standard_error,
                    "fit_seconds": line.fit_seconds,
                    "note": line.note,
                }
                for line in self.selection_report_
            ],
            "winner": self.winner_.name,
            "fitted_winner": winner,
        }

    def _load_fitted_state(self, state: dict) -> None:
        """Restore a fitted selector, every field checked.

        The report's names are candidates of :data:`CANDIDATES`, each once, in
        its order, their figures finite and non-negative or null; the winner is
        a measured line of lowest cost (or ordering nothing when nothing was
        measured); the fitted winner is a document of the winner's learner at
        the winner's declared settings, with the selector's classes, tests,
        prices, matrix and referral cost.
        """
        where = "fitted"
        document.no_unknown_fields(
            state,
            (
                "classes",
                "n_features_in",
                "cost_model",
                "cost_matrix",
                "reject_cost",
                "report",
                "winner",
                "fitted_winner",
            ),
            where,
        )
        n_features = document.read(
            state, "n_features_in", where, document.integer, low=1, high=document.MAX_FEATURES
        )
        classes = document.read(state, "classes", where, document.labels)
        k = len(classes)
        costs = document.read(
            state, "cost_model", where, document.cost_model, n_features=n_features
        )
        matrix = document.read(
            state, "cost_matrix", where, document.table, rows=k, columns=k, low=0.0
        )
        with document.reading(f"{where}.cost_matrix"):
            matrix = check_cost_matrix(matrix, k)
        reject = document.read(state, "reject_cost", where, document.reject_cost, n_classes=k)
        report = _read_report(document.field(state, "report", where), f"{where}.report")
        winner_name = document.field(state, "winner", where)
        lines = {line.name: line for line in report}
        if not isinstance(winner_name, str) or winner_name not in lines:
            raise document.ModelDocumentError(
                f"{where}.winner: expected a name in the report, got {winner_name!r}"
            )
        winner = lines[winner_name]
        measured = [line for line in report if line.measured]
        if measured:
            cheapest = min(measured, key=_mean_cost)
            if winner is not cheapest:
                raise document.ModelDocumentError(
                    f"{where}.winner: {winner_name!r} is not the report's cheapest measured "
                    f"candidate ({cheapest.name!r})"
                )
        elif winner_name != "order-nothing":
            raise document.ModelDocumentError(
                f"{where}.winner: with nothing measured the winner is 'order-nothing', "
                f"not {winner_name!r}"
            )
        self.classes_ = classes
        self.n_features_in_ = n_features
        self.cost_model_ = costs
        self.cost_matrix_ = matrix
        self.reject_cost_ = reject
        fitted = document.mapping(
            document.field(state, "fitted_winner", where), f"{where}.fitted_winner"
        )
        self.best_estimator_ = self._load_winner(
            _BY_NAME[winner_name], fitted, f"{where}.fitted_winner"
        )
        self.selection_report_ = report
        self.winner_ = winner

    def _load_winner(self, candidate: Candidate, state: Mapping, where: str):
        k = len(self.classes_)
        if candidate.learner == "OrderNothing":
            document.no_unknown_fields(state, ("class_counts",), where)
            counts = document.read(
                state, "class_counts", where, document.numbers, length=k, low=0.0
            )
            if not counts.sum() > 0:
                raise document.ModelDocumentError(f"{where}.class_counts: expected some cases")
            model = OrderNothing(
                test_costs=self.cost_model_,
                cost_matrix=self.cost_matrix_,
                reject_cost=self.reject_cost_,
            )
            model.classes_ = self.classes_
            model.n_features_in_ = self.n_features_in_
            model.cost_model_ = self.cost_model_
            model.cost_matrix_ = self.cost_matrix_
            model.reject_cost_ = self.reject_cost_
            model.class_counts_ = counts
            return model
        key = "concluder" if candidate.learner == "OrderEverything" else "model"
        document.no_unknown_fields(state, (key,), where)
        inner = model_from_json(dict(document.mapping(document.field(state, key, where), where)))
        expected = "C45Classifier" if key == "concluder" else candidate.learner
        if type(inner).__name__ != expected:
            raise document.ModelDocumentError(
                f"{where}.{key}: expected a {expected} document, got a {type(inner).__name__}"
            )
        params = inner.get_params(deep=False)
        for name, value in candidate.params.items():
            if params.get(name) != value:
                raise document.ModelDocumentError(
                    f"{where}.{key}.params.{name}: the candidate {candidate.name!r} has "
                    f"{value!r}, the document {params.get(name)!r}"
                )
        self._check_same_costs(inner, f"{where}.{key}")
        return OrderEverything(inner) if key == "concluder" else inner

    def _check_same_costs(self, model, where: str) -> None:
        """The winner decides with the selector's classes, tests, prices, matrix and referral."""
        same = (
            list(model.classes_) == list(self.classes_)
            and int(model.n_features_in_) == int(self.n_features_in_)
            and model.cost_model_.to_dict() == self.cost_model_.to_dict()
            and np.array_equal(getattr(model, "cost_matrix_", self.cost_matrix_), self.cost_matrix_)
            and _same_reject(model.reject_cost_, self.reject_cost_)
        )
        if not same:
            raise document.ModelDocumentError(
                f"{where}: the winner's classes, tests, prices, error matrix or referral cost "
                "differ from the selector's"
            )


def _same_reject(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return bool(np.array_equal(np.broadcast_to(a, np.shape(b)), b)) and np.shape(a) == np.shape(b)


def _document_of(model) -> dict:
    import json

    return json.loads(model_to_json(model))


def _read_report(value, where: str) -> list[SelectionCandidate]:
    entries = document.items(value, where)
    if not entries:
        raise document.ModelDocumentError(f"{where}: expected at least one candidate")
    report = []
    order = [c.name for c in CANDIDATES]
    previous = -1
    for i, entry in enumerate(entries):
        at = f"{where}[{i}]"
        entry = document.mapping(entry, at)
        document.no_unknown_fields(
            entry, ("name", "mean_cost", "standard_error", "fit_seconds", "note"), at
        )
        name = document.field(entry, "name", at)
        if not isinstance(name, str) or name not in _BY_NAME:
            raise document.ModelDocumentError(f"{at}.name: expected a candidate name, got {name!r}")
        position = order.index(name)
        if position <= previous:
            raise document.ModelDocumentError(
                f"{at}.name: {name!r} is repeated or out of the candidates' order"
            )
        previous = position
        figures = {}
        for key in ("mean_cost", "standard_error", "fit_seconds"):
            raw = document.field(entry, key, at)
            figures[key] = None if raw is None else document.number(raw, f"{at}.{key}", low=0.0)
        note = document.field(entry, "note", at)
        if not isinstance(note, str) or len(note) > 500:
            raise document.ModelDocumentError(f"{at}.note: expected a short text")
        if figures["mean_cost"] is None and (
            figures["standard_error"] is not None or figures["fit_seconds"] is not None
        ):
            raise document.ModelDocumentError(f"{at}: figures without a mean cost")
        report.append(
            SelectionCandidate(
                name,
                _BY_NAME[name].label,
                figures["mean_cost"],
                figures["standard_error"],
                figures["fit_seconds"],
                note,
            )
        )
    return report
