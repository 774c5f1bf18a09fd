"""The tree diagram of a model, with a case's path highlighted."""

from __future__ import annotations

import math

import numpy as np

from learners.tree import LEAF, TreeStructure

from ..model_cache import get_estimator
from ..models import DiagnosisCase, TrainedModel
from ..permissions import require_case_access
from ..services.costs import cost_model_from_snapshot
from .cases import compute_case_state
from .models import require_model_access

__all__ = ["tree_layout"]


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


def layout(trained: TrainedModel, *, case: DiagnosisCase | None = None) -> dict | None:
    """Tidy layout: leaves side by side, a parent centred over its children, depth downwards."""
    estimator = get_estimator(trained)
    tree = getattr(estimator, "tree_", None)
    if not isinstance(tree, TreeStructure):
        return None
    dataset = trained.dataset
    labels = list(dataset.class_labels)
    classes = [int(c) for c in estimator.classes_]
    names = trained.cost_snapshot.get("names", [])
    tests = {t.name: t for t in dataset.tests.all()}
    cost_model = cost_model_from_snapshot(trained.cost_snapshot)
    matrix = np.asarray(estimator.cost_matrix_, dtype=float)
    known, unavailable, highlight = {}, set(), []
    if case is not None:
        state = compute_case_state(case)
        known, unavailable = state.known, state.unavailable
        highlight = [int(n) for n in estimator.decision_path_nodes(known, unavailable)]
    done = frozenset(known)

    def test_of(feature: int):
        name = names[feature] if feature < len(names) else str(feature)
        return name, tests.get(name)

    children = {
        n: [int(c) for c in tree.child[tree.edge_start[n] : tree.edge_start[n] + tree.n_edges[n]]]
        for n in range(tree.n_nodes)
    }
    x_of: dict[int, float] = {}
    depth_of = {0: 0}
    parent_of: dict[int, int | None] = {0: None}
    next_leaf = [0.0]

    def place(node: int) -> float:
        kids = children[node]
        for kid in kids:
            depth_of[kid] = depth_of[node] + 1
            parent_of[kid] = node
        if not kids:
            x_of[node] = next_leaf[0]
            next_leaf[0] += 1.0
        else:
            x_of[node] = sum(place(kid) for kid in kids) / len(kids)
        return x_of[node]

    place(0)
    nodes, edges = [], []
    for n in range(tree.n_nodes):
        weights = tree.class_weight[n]
        total = float(weights.sum())
        proba = weights / total if total > 0 else np.full(len(classes), 1.0 / len(classes))
        expected = proba @ matrix
        best = int(np.argmin(expected))
        decision = labels[classes[best]] if classes[best] < len(labels) else str(classes[best])
        feature = int(tree.feature[n])
        is_leaf = feature == LEAF
        if is_leaf:
            text = decision
            price = None
        else:
            name, test = test_of(feature)
            price = cost_model.marginal_cost(feature, done)
            text = f"{test.display_label if test else name} (${price:.2f})"
        nodes.append(
            {
                "id": n,
                "x": x_of[n],
                "y": -depth_of[n],
                "parent": parent_of[n],
                "edge_label": "",
                "text": text,
                "test_name": None if is_leaf else test_of(feature)[0],
                "price": price,
                "class_counts": {
                    (labels[c] if c < len(labels) else str(c)): float(w)
                    for c, w in zip(classes, weights, strict=True)
                },
                "expected_cost": float(expected[best]),
                "is_leaf": is_leaf,
                "decision": decision,
            }
        )
    for n in range(tree.n_nodes):
        feature = int(tree.feature[n])
        if feature == LEAF:
            continue
        _, test = test_of(feature)
        for e in range(int(tree.edge_start[n]), int(tree.edge_start[n] + tree.n_edges[n])):
            child = int(tree.child[e])
            label = _edge_label(tree, n, e, test)
            nodes[child]["edge_label"] = label
            edges.append({"source": n, "target": child, "label": label})
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
