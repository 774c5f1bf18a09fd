"""The one policy interface every trained model shares (ALGORITHMS.md §9).

A policy answers, for one patient: given the results known so far and the
tests that cannot be done, what next?  The answer is one of three immutable
actions.  The learners, the evaluator and the clinician's screen all speak
this language.

Every action carries :class:`Evidence`: numbers, never prose.  The app turns
them into words with the test names and class labels it knows; the library
knows only feature indices and class positions.

This module is also the one home of the decision rule: :func:`expected_costs`,
:func:`best_class` and :func:`decide` are what every learner, the tree
diagram and the evaluator use to turn a belief into a conclusion.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "Action",
    "Classify",
    "Evidence",
    "Extract",
    "Policy",
    "Reject",
    "Risk",
    "best_class",
    "conclusion_cost",
    "decide",
    "evidence_for",
    "expected_costs",
    "reject_expected_cost",
]


@dataclass(frozen=True)
class Risk:
    """One candidate action's conditional risk (the conditioned-loss model weighs every one).

    ``kind`` is ``"classify"``, ``"reject"`` or ``"extract"``; ``test`` is the
    feature index for ``"extract"`` and None otherwise.
    """

    kind: str
    risk: float
    test: int | None = None

    @property
    def key(self) -> str:
        """A stable machine key: ``"classify"``, ``"reject"`` or ``"extract:<test>"``."""
        return f"extract:{self.test}" if self.kind == "extract" else self.kind

    def to_dict(self) -> dict:
        return {"kind": self.kind, "test": self.test, "risk": float(self.risk)}


@dataclass(frozen=True)
class Evidence:
    """What an action rests on, in numbers (no prose, no names).

    Attributes
    ----------
    proba : tuple of float
        The class posterior at the current point, aligned with ``classes_``.
    support : float
        How many training cases stand behind ``proba`` (fractional under
        C4.5's missing-value handling; for a patient split over several
        branches, the share-weighted sum).
    class_costs : tuple of float
        ``EC_j = sum_i proba[i] * M[i, j]`` for each class position ``j``.
    refer_cost : float or None
        Expected cost of referring now, ``sum_i proba[i] * R_i``; None when
        the model has no reject option.
    cost_after : float or None
        ``Extract`` only: the expected cost of the best conclusion once the
        ordered test's result is known, from the model's own estimates, in
        the same currency as :attr:`conclude_cost`.  The test pays for itself
        in expectation when ``conclude_cost - cost_after`` exceeds its price.
    nodes : tuple of (int, float)
        Tree models: the nodes the patient's walk ended at (leaves, or
        internal nodes waiting on a test), with the share of the patient
        there.  Several entries mean an unavailable or missing result split
        the patient over branches.
    risks : tuple of Risk
        The conditioned-loss model: the risk of every action it weighed.
    waiting : float or None
        Ensembles: how many member trees wait on the test an ``Extract``
        orders (weighted by the members' weights where they have them), or
        on any test for a conclusion (0); None for a single model.
    members : float or None
        Ensembles: how many member trees (or their total weight) there are,
        so ``waiting`` reads "``waiting`` of ``members``"; None otherwise.
    """

    proba: tuple[float, ...]
    support: float
    class_costs: tuple[float, ...]
    refer_cost: float | None = None
    cost_after: float | None = None
    nodes: tuple[tuple[int, float], ...] = ()
    risks: tuple[Risk, ...] = ()
    waiting: float | None = None
    members: float | None = None

    @property
    def best_class(self) -> int:
        """Position (in ``classes_``) of the class of least expected cost; ties: lowest."""
        return int(np.argmin(self.class_costs))

    @property
    def refers_now(self) -> bool:
        """Whether the best conclusion now is referral (it costs less than the best class)."""
        return self.refer_cost is not None and min(self.class_costs) > self.refer_cost

    @property
    def conclude_cost(self) -> float:
        """Expected cost of the best conclusion now: the cheapest class, or referral if cheaper."""
        if self.refers_now:
            return float(self.refer_cost)  # type: ignore[arg-type]
        return float(min(self.class_costs))

    def to_dict(self) -> dict:
        """Plain JSON (indices and numbers only)."""
        return {
            "proba": [float(p) for p in self.proba],
            "support": float(self.support),
            "class_costs": [float(c) for c in self.class_costs],
            "refer_cost": None if self.refer_cost is None else float(self.refer_cost),
            "conclude_cost": self.conclude_cost,
            "best_class": self.best_class,
            "refers_now": self.refers_now,
            "cost_after": None if self.cost_after is None else float(self.cost_after),
            "nodes": [[int(n), float(w)] for n, w in self.nodes],
            "risks": [r.to_dict() for r in self.risks],
            "waiting": None if self.waiting is None else float(self.waiting),
            "members": None if self.members is None else float(self.members),
        }


@dataclass(frozen=True)
class Extract:
    """Order ``test`` next; it costs ``cost`` for this patient now.

    ``cost`` is ``CostModel.marginal_cost(test, done)`` with every test
    already done for the patient (a test that came back with no result is
    done: it was paid for).
    """

    test: int
    cost: float
    evidence: Evidence | None = field(default=None, compare=False)
    kind: ClassVar[Literal["extract"]] = "extract"

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "test": int(self.test),
            "cost": float(self.cost),
            "evidence": None if self.evidence is None else self.evidence.to_dict(),
        }


@dataclass(frozen=True)
class Classify:
    """Conclude ``label`` (an element of the model's ``classes_``).

    ``proba`` is aligned with ``classes_``; ``expected_cost`` is
    ``sum_i proba[i] * M[i, label]``.
    """

    label: Any
    proba: tuple[float, ...]
    expected_cost: float
    evidence: Evidence | None = field(default=None, compare=False)
    kind: ClassVar[Literal["classify"]] = "classify"

    def to_dict(self) -> dict:
        label = self.label.item() if isinstance(self.label, np.generic) else self.label
        return {
            "kind": self.kind,
            "label": label,
            "proba": [float(p) for p in self.proba],
            "expected_cost": float(self.expected_cost),
            "evidence": None if self.evidence is None else self.evidence.to_dict(),
        }


@dataclass(frozen=True)
class Reject:
    """Refer the patient: no class is worth its expected cost.

    ``expected_cost`` is the expected reject cost; ``proba`` the belief at the
    moment of referral (aligned with ``classes_``) when the model has one.
    """

    expected_cost: float
    proba: tuple[float, ...] | None = None
    evidence: Evidence | None = field(default=None, compare=False)
    kind: ClassVar[Literal["reject"]] = "reject"

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "proba": None if self.proba is None else [float(p) for p in self.proba],
            "expected_cost": float(self.expected_cost),
            "evidence": None if self.evidence is None else self.evidence.to_dict(),
        }


Action = Extract | Classify | Reject


@runtime_checkable
class Policy(Protocol):
    """What every fitted model offers the evaluator and the screens."""

    classes_: np.ndarray

    def next_action(
        self, known: Mapping[int, float], unavailable: Iterable[int] = ()
    ) -> Action:  # pragma: no cover - protocol
        """Next action for one patient whose results ``known`` maps index to value.

        A value of NaN (or None) in ``known`` is a test that was done but gave
        no result: it is paid for, so it is never quoted again and it makes
        its group partners cheaper; the model treats its value as missing.
        ``unavailable`` lists tests that cannot be done (nothing was paid).
        """
        ...


# --------------------------------------------------------------- the decision
def expected_costs(proba, cost_matrix) -> np.ndarray:
    """Expected cost of each decision: ``EC_j = sum_i p_i M[i, j]`` (last axis of ``proba``)."""
    return np.asarray(proba, dtype=float) @ np.asarray(cost_matrix, dtype=float)


def best_class(proba, cost_matrix) -> np.ndarray | int:
    """Position of the class of least expected cost (C4.5c); ties go to the lowest position.

    ``proba`` may be one belief (returns an int) or a stack of beliefs
    (returns an int array, one per row).
    """
    costs = expected_costs(proba, cost_matrix)
    best = np.argmin(costs, axis=-1)
    return int(best) if costs.ndim == 1 else best


def reject_expected_cost(proba, reject_cost) -> float:
    """Expected cost of referring: ``sum_i p_i R_i`` (R scalar or one per class)."""
    p = np.asarray(proba, dtype=float)
    return float(np.sum(p * np.broadcast_to(np.asarray(reject_cost, dtype=float), p.shape)))


def conclusion_cost(proba, cost_matrix, reject_cost=None) -> float:
    """Expected cost of the conclusion :func:`decide` would take for ``proba``."""
    best = float(np.min(expected_costs(proba, cost_matrix)))
    if reject_cost is not None:
        best = min(best, reject_expected_cost(proba, reject_cost))
    return best


def evidence_for(
    proba,
    *,
    cost_matrix,
    reject_cost=None,
    support: float = 0.0,
    cost_after: float | None = None,
    nodes: Iterable[tuple[int, float]] = (),
    risks: Iterable[Risk] = (),
    waiting: float | None = None,
    members: float | None = None,
) -> Evidence:
    """The :class:`Evidence` of a belief ``proba`` under ``cost_matrix`` (and a reject cost)."""
    p = np.asarray(proba, dtype=float)
    return Evidence(
        proba=tuple(float(v) for v in p),
        support=float(support),
        class_costs=tuple(float(c) for c in expected_costs(p, cost_matrix)),
        refer_cost=None if reject_cost is None else reject_expected_cost(p, reject_cost),
        cost_after=None if cost_after is None else float(cost_after),
        nodes=tuple((int(n), float(w)) for n, w in nodes),
        risks=tuple(risks),
        waiting=None if waiting is None else float(waiting),
        members=None if members is None else float(members),
    )


def decide(
    proba,
    *,
    classes,
    cost_matrix,
    reject_cost=None,
    support: float = 0.0,
    nodes: Iterable[tuple[int, float]] = (),
    risks: Iterable[Risk] = (),
    waiting: float | None = None,
    members: float | None = None,
) -> Classify | Reject:
    """Minimum-expected-cost conclusion for a belief ``proba`` (C4.5c, paper 004).

    Rejects when a reject cost is set and even the best class's expected cost
    is above the expected reject cost.  Ties go to the lowest class position,
    so results are reproducible.  ``support``, ``nodes``, ``risks``,
    ``waiting`` and ``members`` are passed through to the action's
    :class:`Evidence`.
    """
    evidence = evidence_for(
        proba,
        cost_matrix=cost_matrix,
        reject_cost=reject_cost,
        support=support,
        nodes=nodes,
        risks=risks,
        waiting=waiting,
        members=members,
    )
    if evidence.refers_now:
        return Reject(expected_cost=evidence.conclude_cost, proba=evidence.proba, evidence=evidence)
    best = evidence.best_class
    best_cost = evidence.class_costs[best]
    label = classes[best]
    if isinstance(label, np.generic):
        label = label.item()
    return Classify(label=label, proba=evidence.proba, expected_cost=best_cost, evidence=evidence)
