"""Split criteria of the greedy tree learners (ALGORITHMS.md §2).

A criterion sees every valid candidate split at a node (one per feature, with
its information gain, split information and marginal cost in the node's
context) and picks one, or none to make the node a leaf.  Ties always go to
the lowest feature index, so trees are reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _formulas
from ._kernels import MODE_COST, MODE_INFORMATION

__all__ = [
    "Candidate",
    "Criterion",
    "GainRatio",
    "EG2",
    "IDX",
    "CSID3",
    "DTMC",
]

_EPS = 1e-12


@dataclass
class Candidate:
    """One feature's best split at a node.

    ``gain`` is the information gain with C4.5's known-fraction factor;
    ``child_cost`` the children's summed misclassification cost (DTMC only);
    ``cost`` the test's marginal cost given the tests already on the path;
    ``threshold`` the numeric split point (NaN for a nominal split);
    ``on_path`` whether the test is already done on the path (a re-read) and
    ``own_price`` its price with nothing done, shared among the thresholds the
    path takes from it (see :func:`learners.tree._formulas.ranking_cost`).
    """

    feature: int
    gain: float
    split_info: float
    cost: float
    child_cost: float = 0.0
    threshold: float = float("nan")
    on_path: bool = False
    own_price: float = 0.0


class Criterion:
    """Base class: rank candidates by :meth:`key`, split on the best if it pays."""

    #: which objective the numeric threshold scan optimizes.
    scan_mode = MODE_INFORMATION

    def choose(self, candidates: list[Candidate], node_cost: float, node_weight: float):
        """Return the chosen :class:`Candidate` or None (make a leaf)."""
        best, best_key = None, None
        for cand in sorted(candidates, key=lambda c: c.feature):
            if cand.gain <= _EPS:
                continue
            key = self.key(cand)
            if best_key is None or key > best_key:
                best, best_key = cand, key
        return best

    def key(self, cand: Candidate) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError


class _CostAware(Criterion):
    """Rank by one of the formulas of :mod:`._formulas` (ALGORITHMS.md §2).

    :func:`._formulas.split_key` is the one ranking key, zero-cost rule
    included; the compiled builder of :mod:`learners.act._engine` compiles the
    same function.
    """

    code = _formulas.EG2
    w = 1.0

    def key(self, cand: Candidate) -> tuple:
        cost = _formulas.ranking_cost(self.code, cand.cost, cand.on_path, cand.own_price)
        return _formulas.split_key(self.code, cand.gain, cost, self.w)


class GainRatio(Criterion):
    """C4.5: best gain ratio among tests with at least average gain (cost-blind)."""

    def choose(self, candidates, node_cost, node_weight):
        if not candidates:
            return None
        # As in C4.5, the average runs over every valid test, zero gain included.
        average = sum(c.gain for c in candidates) / len(candidates)
        best, best_ratio = None, None
        for cand in sorted(candidates, key=lambda c: c.feature):
            if cand.gain <= _EPS or cand.split_info <= _EPS or cand.gain < average - 1e-3:
                continue
            ratio = cand.gain / cand.split_info
            if best_ratio is None or ratio > best_ratio:
                best, best_ratio = cand, ratio
        return best


class EG2(_CostAware):
    """EG2 (Núñez): ``ICF = (2^DeltaI - 1) / (c + 1)^w``, also at ``c = 0``.

    No zero-cost tier: the formula is defined at ``c = 0`` and already
    favours free tests by the factor ``(c + 1)^w``; ranking every free test
    first would make any numeric test already on the path (free to re-read)
    win at every node for the slightest gain.
    """

    code = _formulas.EG2

    def __init__(self, w: float = 1.0) -> None:
        self.w = float(w)


class IDX(_CostAware):
    """IDX (Norton): ``DeltaI / c``; zero-cost tests first, re-reads at their shared price."""

    code = _formulas.IDX


class CSID3(_CostAware):
    """CS-ID3 (Tan): ``DeltaI^2 / c``; zero-cost tests first, re-reads at their shared price."""

    code = _formulas.CSID3


class DTMC(Criterion):
    """DTMC (Ling et al. 2004): largest reduction ``mc(S) - (sum_k mc(S_k) + n c)``.

    Splits only when the reduction is positive (pre-pruning).
    """

    scan_mode = MODE_COST

    def choose(self, candidates, node_cost, node_weight):
        best, best_gain = None, 0.0
        for cand in sorted(candidates, key=lambda c: c.feature):
            reduction = node_cost - (cand.child_cost + node_weight * cand.cost)
            if reduction > best_gain + 1e-9 * (1.0 + abs(node_cost)):
                best, best_gain = cand, reduction
        return best
