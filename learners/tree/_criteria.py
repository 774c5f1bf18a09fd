"""Split criteria of the greedy tree learners (ALGORITHMS.md §2).

A criterion sees every valid candidate split at a node (one per feature, with
its information gain, split information and marginal cost in the node's
context) and picks one, or none to make the node a leaf.  Ties always go to
the lowest feature index, so trees are reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    ``threshold`` the numeric split point (NaN for a nominal split).
    """

    feature: int
    gain: float
    split_info: float
    cost: float
    child_cost: float = 0.0
    threshold: float = float("nan")


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
    """Zero marginal cost ranks before any positive cost, then by gain (§2).

    The rule exists because ``DeltaI / c`` is undefined at ``c = 0``; EG2's
    ``(c + 1)^w`` is defined there, so EG2 overrides it and keeps its formula.
    """

    def key(self, cand: Candidate) -> tuple:
        if cand.cost <= 0.0:
            return (1, cand.gain)
        return (0, self.ratio(cand.gain, cand.cost))

    def ratio(self, gain: float, cost: float) -> float:  # pragma: no cover
        raise NotImplementedError


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

    Applying the zero-cost-first rule here would make any numeric test
    already on the path (free to re-read) win at every node for the slightest
    gain, splitting one feature into slivers; the formula itself already
    favours free tests by the factor ``(c + 1)^w``.
    """

    def __init__(self, w: float = 1.0) -> None:
        self.w = float(w)

    def key(self, cand: Candidate) -> tuple:
        return (0, self.ratio(cand.gain, cand.cost))

    def ratio(self, gain, cost):
        return (2.0**gain - 1.0) / (cost + 1.0) ** self.w


class IDX(_CostAware):
    """IDX (Norton): ``DeltaI / c``."""

    def ratio(self, gain, cost):
        return gain / cost


class CSID3(_CostAware):
    """CS-ID3 (Tan): ``DeltaI^2 / c``."""

    def ratio(self, gain, cost):
        return gain * gain / cost


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
