"""The tree diagram of a model, with a case's path highlighted."""

from __future__ import annotations

import math

from learners.tree import TreeStructure

from ..models import DiagnosisCase, TrainedModel
from ..permissions import require_case_access
from ..services.costs import cost_model_from_snapshot
from .cases import compute_case_state, estimator_for
from .models import require_model_access

__all__ = ["model_has_tree", "tree_layout"]


def _tree_of(estimator) -> TreeStructure | None:
    tree = getattr(estimator, "tree_", None)
    return tree if isinstance(tree, TreeStructure) else None


def model_has_tree(trained: TrainedModel) -> bool:
    """Whether the model is a tree that can be drawn (some learners have none)."""
    if not trained.is_ready:
        return False
    try:
        return _tree_of(estimator_for(trained)) is not None
    except ValueError:  # no fitted model stored
        return False


def tree_layout(
    *, user, trained_model: TrainedModel, case: DiagnosisCase | None = None
) -> dict | None:
    """Node positions and texts for drawing the tree; None for a model without a tree."""
    require_model_access(user, trained_model)
    if case is not None:
        require_case_access(user, case)
        if case.trained_model_id != trained_model.pk:
            case = None
    return layout(trained_model, case=case)


def _decision_label(decision, class_labels: dict[int, str]) -> str:
    if decision.kind == "reject":
        return "Refer"
    code = int(decision.label)
    return class_labels.get(code, str(code))


def layout(trained: TrainedModel, *, case: DiagnosisCase | None = None) -> dict | None:
    """Every node of the tree with the model's own decision there, and the case's path.

    A node's ``decision`` is ``estimator.node_decision(node)``: at a leaf, what
    the model concludes for a patient who ends there; at a test node, what it
    would conclude for a patient who stopped there (shown on hover).  Both
    carry the model's probabilities (its own ``probability`` setting), the
    expected cost and the reject option, so the diagram never disagrees with
    the advice.  Positions are left to :func:`diagnosis.figures.tidy_positions`.
    """
    estimator = estimator_for(trained)
    tree = _tree_of(estimator)
    if tree is None:
        return None
    dataset = trained.dataset
    labels = list(dataset.class_labels)
    codes = [int(c) for c in estimator.classes_]
    label_of = {c: labels[c] if 0 <= c < len(labels) else str(c) for c in codes}
    names = trained.cost_snapshot.get("names", [])
    tests = {t.name: t for t in dataset.tests.all()}
    cost_model = cost_model_from_snapshot(trained.cost_snapshot)
    known, unavailable, highlight = {}, set(), []
    if case is not None:
        state = compute_case_state(case)
        known, unavailable = state.known, state.unavailable
        highlight = [int(n) for n in estimator.decision_path_nodes(known, unavailable)]
    done = frozenset(known)

    def test_of(feature: int):
        name = names[feature] if feature < len(names) else str(feature)
        return name, tests.get(name)

    parent_of: dict[int, int | None] = {0: None}
    edge_to: dict[int, int] = {}
    for n in range(tree.n_nodes):
        for e in tree.edges(n):
            parent_of[int(tree.child[e])] = n
            edge_to[int(tree.child[e])] = e
    nodes, edges = [], []
    for n in range(tree.n_nodes):
        decision = estimator.node_decision(n)
        evidence = decision.evidence
        is_leaf = tree.is_leaf(n)
        feature = int(tree.feature[n])
        name, test = (None, None) if is_leaf else test_of(feature)
        price = None if is_leaf else cost_model.marginal_cost(feature, done)
        test_label = None if is_leaf else (test.display_label if test else name)
        nodes.append(
            {
                "id": n,
                "parent": parent_of.get(n),
                "edge_label": "",
                "text": _decision_label(decision, label_of)
                if is_leaf
                else f"{test_label} (${price:.2f})",
                "test_name": name,
                "test_label": test_label,
                "price": price,
                "class_counts": {
                    label_of[c]: float(w) for c, w in zip(codes, tree.class_weight[n], strict=True)
                },
                "proba": {
                    label_of[c]: float(p) for c, p in zip(codes, evidence.proba, strict=True)
                },
                "support": float(evidence.support),
                "expected_cost": float(decision.expected_cost),
                "refer_cost": evidence.refer_cost,
                "is_leaf": is_leaf,
                "decision": _decision_label(decision, label_of),
                "decision_kind": decision.kind,
            }
        )
    for n in range(1, tree.n_nodes):
        parent = parent_of[n]
        _, test = test_of(int(tree.feature[parent]))
        label = _edge_label(tree, parent, edge_to[n], test)
        nodes[n]["edge_label"] = label
        edges.append({"source": parent, "target": n, "label": label})
    return {"nodes": nodes, "edges": edges, "highlight": highlight, "class_labels": labels}


def _edge_label(tree: TreeStructure, node: int, edge: int, test) -> str:
    unit = f" {test.unit}" if test is not None and test.unit else ""
    threshold = float(tree.threshold[node])
    if not math.isnan(threshold):
        first = edge == int(tree.edge_start[node])
        return f"{'≤' if first else '>'} {threshold:.4g}{unit}"
    code = float(tree.branch_value[edge])
    if test is not None:
        return test.choice_label(code)
    return f"{code:g}"
