"""What the advice needs beyond the action's own numbers: the costs in force and the branches.

Two reads of a fitted model, stored with the advice (see
:func:`diagnosis.clinic.selectors.cases.advice_for`) so a step reads the same
tomorrow as the day it was taken:

- :func:`decision_costs`: the error costs the model decides with, from the
  fitted model itself (the snapshot it was trained with, never today's edit
  of the dataset's matrix).
- :func:`branch_rows`: when an unavailable test (or one done with no result)
  split the patient over several branches of a tree, where each share of
  the patient went (``Evidence.nodes``), on how many past patients each
  rests and under which conditions.  The walk itself is the library's
  (``TreeStructure.reach`` produced the nodes); this only reads the tree's
  stored counts and split conditions to name them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from diagnosis.shared.advice import BranchRow, DecisionCosts
from diagnosis.training.selectors.model_cache import deciding_model
from learners.conditioned_loss import ConditionedLossClassifier
from learners.tree import TreeStructure, other_edge

__all__ = ["branch_rows", "decision_costs"]


def _number_or_list(value: Any) -> float | tuple[float, ...] | None:
    if value is None:
        return None
    array = np.asarray(value, dtype=float)
    return float(array) if array.ndim == 0 else tuple(float(v) for v in array)


def decision_costs(estimator, class_labels: Sequence[str]) -> DecisionCosts:
    """The costs ``estimator`` weighs its conclusions with, labelled with ``class_labels``.

    ``basis`` is ``"expected_cost"`` for a model that concludes the class of
    least expected cost under ``matrix`` (rows: actual, columns: concluded)
    and refers when ``reject_cost`` is cheaper; ``"risk"`` for the
    conditioned-loss model, whose matrix is its own loss: PENALTY for a
    wrong conclusion, minus REWARD for a right one.  ``reject_cost`` is what
    a referral is charged (None: the model never refers, or for ``"risk"``,
    referrals are not priced).  No ``basis`` (stored as ``{}``) for a model without a cost
    matrix.
    """
    labels = tuple(str(c) for c in class_labels)
    if getattr(estimator, "cost_matrix_", None) is None:
        return DecisionCosts()  # a model without an error matrix: nothing to show
    matrix = np.asarray(estimator.cost_matrix_, dtype=float)
    if isinstance(deciding_model(estimator), ConditionedLossClassifier):
        estimator = deciding_model(estimator)
        penalty, reward = float(estimator.penalty), float(estimator.reward)
        loss = penalty * (1.0 - np.eye(len(labels))) - reward * np.eye(len(labels))
        return DecisionCosts(
            basis="risk",
            class_labels=labels,
            matrix=_rows(loss),
            reject_cost=_number_or_list(estimator.reject_cost),
            penalty=penalty,
            reward=reward,
        )
    return DecisionCosts(
        basis="expected_cost",
        class_labels=labels,
        matrix=_rows(matrix),
        reject_cost=_number_or_list(getattr(estimator, "reject_cost_", None)),
    )


def _rows(matrix: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(v) for v in row) for row in matrix)


def _edge_words(tree: TreeStructure, node: int, edge: int, test) -> str:
    """``TT4 ≤ 80.5 nmol/l``, ``Thal = normal`` or ``Chest pain ≠ asymptomatic``: the
    condition of one edge."""
    label = test.display_label if test is not None else f"test {int(tree.feature[node])}"
    if not math.isnan(float(tree.threshold[node])):
        return f"{label} {edge_label(tree, node, edge, test)}"
    other, words = _categories(tree, node, edge, test)
    return f"{label} {'≠' if other else '='} {words}"


def edge_label(tree: TreeStructure, node: int, edge: int, test) -> str:
    """One edge in words without its test: ``≤ 80.5 nmol/l``, the category an edge of a
    nominal split takes ("asymptomatic"), or for a one-vs-rest split's "other" edge the
    categories it does not take ("not asymptomatic")."""
    threshold = float(tree.threshold[node])
    if not math.isnan(threshold):
        unit = f" {test.unit}" if test is not None and test.unit else ""
        first = edge == int(tree.edge_start[node])
        return f"{'≤' if first else '>'} {threshold:.4g}{unit}"
    other, words = _categories(tree, node, edge, test)
    return f"not {words}" if other else words


def _categories(tree: TreeStructure, node: int, edge: int, test) -> tuple[bool, str]:
    """Whether ``edge`` is the "other" edge, and the category words: its own, or for the
    other edge those of the node's other edges ("typical / atypical")."""

    def words(code: float) -> str:
        return test.choice_label(code) if test is not None else f"{code:g}"

    if edge == other_edge(tree, node):
        named = [float(tree.branch_value[e]) for e in tree.edges(node) if e != edge]
        return True, " / ".join(words(code) for code in named)
    return False, words(float(tree.branch_value[edge]))


def branch_rows(
    tree: TreeStructure,
    nodes: Sequence[Sequence[float]],
    known: Mapping[int, float],
    tests: Mapping[int, Any],
    class_labels: Sequence[str],
) -> list[BranchRow]:
    """Each place a split patient ended, largest share first; [] for a patient in one place.

    ``nodes`` are ``Evidence.nodes`` (node id, share); ``tests`` maps a
    feature index to its ``DiagnosticTest``.  A row holds ``share``,
    ``support`` (past patients at the node), ``mix`` (class, past patients)
    largest first, ``conditions`` (the split edges the share took, in
    words), ``split_tests`` (the tests that split it) and ``waits_on`` (the
    test an internal node still needs, or None at a leaf).
    """
    if len(nodes) < 2:
        return []
    rows: list[BranchRow] = []
    for node, share in nodes:
        node = int(node)
        conditions, split_tests = [], []
        for ancestor, edge in tree.path_to(node):
            feature = int(tree.feature[ancestor])
            value = known.get(feature)
            if value is not None and value == value:
                continue  # a known result: the whole patient took this edge
            test = tests.get(feature)
            conditions.append(_edge_words(tree, ancestor, edge, test))
            split_tests.append(test.display_label if test is not None else f"test {feature}")
        weights = tree.class_weight[node]
        mix = sorted(
            ((str(class_labels[k]), float(w)) for k, w in enumerate(weights) if w > 0),
            key=lambda item: -item[1],
        )
        waits = None
        if not tree.is_leaf(node):
            test = tests.get(int(tree.feature[node]))
            waits = test.display_label if test is not None else f"test {int(tree.feature[node])}"
        rows.append(
            BranchRow(
                node=node,
                share=float(share),
                support=float(weights.sum()),
                mix=tuple(mix),
                conditions=tuple(conditions),
                split_tests=tuple(split_tests),
                waits_on=waits,
            )
        )
    rows.sort(key=lambda row: -row.share)
    return rows
