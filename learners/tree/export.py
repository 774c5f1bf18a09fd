"""Plain-text rendering of a fitted tree: splits, class weights, leaf decisions."""

from __future__ import annotations

from ._structure import other_edge

__all__ = ["export_text"]


def export_text(model, feature_names=None, class_names=None) -> str:
    """Indented text of ``model.tree_``.

    Each split line shows the test and branch; each leaf line the class
    weights that reached it and its decision (least expected cost, or refer).

    Parameters
    ----------
    model : fitted tree learner (has ``tree_``, ``classes_``, ``cost_matrix_``)
    feature_names : sequence of str, optional
    class_names : sequence of str, optional
        Names aligned with ``model.classes_``.
    """
    tree = model.tree_
    n_features = int(model.n_features_in_)
    if feature_names is None:
        feature_names = [f"x{f}" for f in range(n_features)]
    if len(feature_names) != n_features:
        raise ValueError(f"feature_names has {len(feature_names)} names, expected {n_features}")
    if class_names is None:
        class_names = [str(c) for c in model.classes_]
    if len(class_names) != len(model.classes_):
        raise ValueError(
            f"class_names has {len(class_names)} names, expected {len(model.classes_)}"
        )
    lines: list[str] = []

    def counts(node: int) -> str:
        return ", ".join(
            f"{name}: {w:.4g}" for name, w in zip(class_names, tree.class_weight[node], strict=True)
        )

    stack = [(0, 0, "")]
    while stack:
        node, depth, label = stack.pop()
        indent = "|   " * depth
        prefix = f"{indent}{label}" if label else indent
        if tree.is_leaf(node):
            action = model.node_decision(node)
            verdict = (
                f"class {class_names[action.evidence.best_class]}"
                if action.kind == "classify"
                else "refer"
            )
            lines.append(f"{prefix}-> {verdict}  [{counts(node)}]")
            continue
        f = int(tree.feature[node])
        name = feature_names[f]
        if label:
            lines.append(f"{prefix}[{counts(node)}]")
        children = []
        other = other_edge(tree, node)
        for e in tree.edges(node):
            if tree.threshold[node] == tree.threshold[node]:
                op = "<=" if e == tree.edge_start[node] else ">"
                text = f"{name} {op} {tree.threshold[node]:.6g}: "
            elif e == other:
                text = f"{name} = other: "
            else:
                text = f"{name} = {tree.branch_value[e]:g}: "
            children.append((int(tree.child[e]), depth + (1 if label else 0), text))
        if not label:
            lines.append(f"[{counts(node)}]")
        stack.extend(reversed(children))
    return "\n".join(lines)
