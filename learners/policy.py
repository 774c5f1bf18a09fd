"""The one policy interface every trained model shares (ALGORITHMS.md §9).

A policy answers, for one patient: given the results known so far and the
tests that cannot be done, what next?  The answer is one of three immutable
actions.  The learners, the evaluator and the clinician's screen all speak
this language.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, Union, runtime_checkable

import numpy as np

__all__ = [
    "Action",
    "Classify",
    "Extract",
    "Policy",
    "Reject",
    "decide",
    "expected_costs",
    "reject_expected_cost",
]


@dataclass(frozen=True)
class Extract:
    """Order ``test`` next; it costs ``cost`` for this patient, for ``reason``.

    ``risks`` optionally lists ``(action name, risk)`` for every candidate the
    model weighed (the conditioned-loss model fills it), so a clinician can
    see why.
    """

    test: int
    cost: float
    reason: str
    risks: tuple[tuple[str, float], ...] | None = field(default=None, compare=False)
    kind: ClassVar[str] = "extract"


@dataclass(frozen=True)
class Classify:
    """Conclude ``label`` (an element of the model's ``classes_``).

    ``proba`` is aligned with ``classes_``; ``expected_cost`` is
    ``sum_i proba[i] * M[i, label]``.
    """

    label: Any
    proba: tuple[float, ...]
    expected_cost: float
    reason: str = ""
    risks: tuple[tuple[str, float], ...] | None = field(default=None, compare=False)
    kind: ClassVar[str] = "classify"


@dataclass(frozen=True)
class Reject:
    """Refer the patient: no class is worth its expected cost.

    ``expected_cost`` is the expected reject cost; ``proba`` the belief at the
    moment of referral (aligned with ``classes_``) when the model has one.
    """

    reason: str
    expected_cost: float
    proba: tuple[float, ...] | None = None
    risks: tuple[tuple[str, float], ...] | None = field(default=None, compare=False)
    kind: ClassVar[str] = "reject"


Action = Union[Extract, Classify, Reject]


@runtime_checkable
class Policy(Protocol):
    """What every fitted model offers the evaluator and the screens."""

    classes_: np.ndarray

    def next_action(
        self, known: Mapping[int, float], unavailable: Iterable[int] = ()
    ) -> Action:  # pragma: no cover - protocol
        """Next action for one patient whose results ``known`` maps index to value."""
        ...


def expected_costs(proba, cost_matrix) -> np.ndarray:
    """Expected cost of each decision: ``EC_j = sum_i p_i M[i, j]``."""
    return np.asarray(proba, dtype=float) @ np.asarray(cost_matrix, dtype=float)


def reject_expected_cost(proba, reject_cost) -> float:
    """Expected cost of referring: ``sum_i p_i R_i`` (R scalar or one per class)."""
    p = np.asarray(proba, dtype=float)
    return float(np.sum(p * np.broadcast_to(np.asarray(reject_cost, dtype=float), p.shape)))


def decide(proba, *, classes, cost_matrix, reject_cost=None, reason: str = "") -> Classify | Reject:
    """Minimum-expected-cost decision for a belief ``proba`` (C4.5c, paper 004).

    Rejects when a reject cost is set and even the best class's expected cost
    is above the expected reject cost.  Ties go to the lowest class index, so
    results are reproducible.
    """
    p = np.asarray(proba, dtype=float)
    costs = expected_costs(p, cost_matrix)
    best = int(np.argmin(costs))
    best_cost = float(costs[best])
    proba_tuple = tuple(float(v) for v in p)
    if reject_cost is not None:
        refer = reject_expected_cost(p, reject_cost)
        if best_cost > refer:
            return Reject(
                reason=(
                    f"best class {classes[best]!r} has expected cost {best_cost:.4g}, "
                    f"above the reject cost {refer:.4g}"
                ),
                expected_cost=refer,
                proba=proba_tuple,
            )
    label = classes[best]
    if isinstance(label, np.generic):
        label = label.item()
    return Classify(
        label=label,
        proba=proba_tuple,
        expected_cost=best_cost,
        reason=reason or f"lowest expected cost ({best_cost:.4g})",
    )
