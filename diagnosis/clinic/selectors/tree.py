"""The tree diagram of a model, with a case's path highlighted."""

from __future__ import annotations

from diagnosis.catalog.selectors.vocabulary import vocabulary_of
from diagnosis.shared.money import format_money
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors.model_cache import deciding_model
from diagnosis.training.selectors.models import require_model_access
from learners.tree import TreeStructure

from ..models import DiagnosisCase
from ..permissions import require_case_read
from .advice_context import edge_label
from .cases import compute_case_state, estimator_for

__all__ = ["model_has_tree", "tree_layout", "tree_nodes"]


def _tree_of(estimator) -> TreeStructure | None:
    tree = getattr(deciding_model(estimator), "tree_", None)
    return tree if isinstance(tree, TreeStructure) else None


def model_has_tree(trained: TrainedModel) -> bool:
    """Whether the model is a tree that can be drawn (some learners have none)."""
    # The status first: ``is_ready`` would read the model's JSON, which the cache makes needless
    # (a succeeded model without JSON raises ValueError below).
    if trained.status != TrainedModel.SUCCEEDED:
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
        require_case_read(user, case)  # its clinician, or their team lead
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
    would conclude for a patient who stopped there.  Both carry the model's
    probabilities (its own ``probability`` setting), the expected cost and the
    reject option, so the diagram never disagrees with the advice.

    With a case, the patient is walked once with ``TreeStructure.reach`` (the
    walk the advice uses): ``highlight`` lists the nodes it touched, each of
    them gets ``patient`` (the patient's value of the node's test, or whether
    the test is unavailable, gave no result or is awaited) and ``share`` (the
    part of the patient that reached it: below 1 after an unavailable test,
    which splits the patient by the training shares).  ``path`` lists the test
    nodes the walk touched in order, for the text under the diagram.
    Positions are left to :func:`diagnosis.figures.tree_drawing`.
    """
    estimator = deciding_model(estimator_for(trained))
    tree = _tree_of(estimator)
    if tree is None:
        return None
    known: dict = {}
    unavailable: set = set()
    if case is not None:
        state = compute_case_state(case)
        known, unavailable = state.known, state.unavailable
    highlight = (
        [int(n) for n in estimator.decision_path_nodes(known, unavailable)]
        if case is not None
        else []
    )
    return tree_nodes(
        trained,
        tree,
        classes=estimator.classes_,
        decision_of=estimator.node_decision,
        known=known,
        unavailable=unavailable,
        highlight=highlight,
    )


def tree_nodes(
    trained: TrainedModel,
    tree: TreeStructure,
    *,
    classes,
    decision_of,
    known: dict,
    unavailable: set,
    highlight: list[int],
    model_proba: bool = True,
    catalog: tuple | None = None,
) -> dict:
    """The drawable nodes and edges of one ``tree`` of ``trained`` (see :func:`layout`).

    ``decision_of(node)`` is the library's decision there (``Classify`` or
    ``Reject``); ``highlight`` the nodes the patient's walk touched (empty: no
    patient).  A forest's member trees are drawn through this too
    (``selectors.ensemble``), with ``model_proba=False``: a member's class mix
    is its vote, not the model's probabilities.  ``catalog`` is :func:`tree_catalog`'s answer,
    read once for many trees of one model.
    """
    labels, names, tests, cost_model = catalog or tree_catalog(trained)
    codes = [int(c) for c in classes]
    label_of = {c: labels[c] if 0 <= c < len(labels) else str(c) for c in codes}
    share: dict[int, float] = _shares(tree, known, unavailable) if highlight else {}
    done = frozenset(known)
    cannot_have = frozenset(unavailable)

    def test_of(feature: int):
        name = names[feature] if feature < len(names) else str(feature)
        return name, tests.get(name)

    parent_of: dict[int, int | None] = {0: None}
    edge_to: dict[int, int] = {}
    for n in range(tree.n_nodes):
        for e in tree.edges(n):
            parent_of[int(tree.child[e])] = n
            edge_to[int(tree.child[e])] = e
    on_path = set(highlight)
    nodes, edges = [], []
    for n in range(tree.n_nodes):
        decision = decision_of(n)
        evidence = decision.evidence
        is_leaf = tree.is_leaf(n)
        feature = int(tree.feature[n])
        name, test = (None, None) if is_leaf else test_of(feature)
        # what the walk charges here: the tests above this node are done by the time it
        # is reached (but those the patient cannot have), so a test asked again is free
        # and a group-mate of one above gets the group's price
        above = frozenset() if is_leaf else frozenset(tree.path_tests(n)) - cannot_have
        price = None if is_leaf else cost_model.marginal_cost(feature, done | above)
        # a test this patient has done (or cannot have), or asked higher on this path, is not
        # for sale: "$0.00" there read as "free" on the drawing
        status = None if is_leaf else _test_status(feature, known, unavailable, above)
        test_label = None if is_leaf else (test.display_label if test else name)
        weights = [float(w) for w in tree.class_weight[n]]
        nodes.append(
            {
                "id": n,
                "parent": parent_of.get(n),
                "edge_label": "",
                "text": _decision_label(decision, label_of)
                if is_leaf
                else f"{test_label} ({status or format_money(price)})",
                "test_name": name,
                "test_label": test_label,
                "price": price,
                "test_status": status,
                "cases": float(sum(weights)),
                "class_counts": {label_of[c]: w for c, w in zip(codes, weights, strict=True)},
                "proba": {label_of[c]: float(p) for c, p in zip(codes, evidence.proba, strict=True)}
                if model_proba
                else {},
                "support": float(evidence.support),
                "expected_cost": float(decision.expected_cost) if model_proba else None,
                "refer_cost": evidence.refer_cost if model_proba else None,
                "is_leaf": is_leaf,
                "decision": _decision_label(decision, label_of),
                "decision_kind": decision.kind,
                "share": share.get(n) if n in on_path else None,
                "patient": _patient_at(n, tree, known, unavailable, test) if n in on_path else None,
            }
        )
    for n in range(1, tree.n_nodes):
        parent = parent_of[n]
        assert parent is not None  # only the root (node 0) has none
        _, test = test_of(int(tree.feature[parent]))
        label = edge_label(tree, parent, edge_to[n], test)
        nodes[n]["edge_label"] = label
        nodes[n]["branch"] = _branch_text(nodes[parent]["test_label"], label)
        edges.append(
            {
                "source": parent,
                "target": n,
                "label": label,
                "share": share.get(n) if n in on_path and parent in on_path else None,
            }
        )
    path = []
    for n in highlight:
        if nodes[n]["is_leaf"]:
            continue
        taken = [
            {"label": nodes[int(c)]["edge_label"], "share": nodes[int(c)]["share"]}
            for c in tree.children(n)
            if int(c) in on_path
        ]
        path.append(
            {
                "node": n,
                "test_label": nodes[n]["test_label"],
                "patient": nodes[n]["patient"],
                "share": nodes[n]["share"],
                "branches": taken,
            }
        )
    return {
        "nodes": nodes,
        "edges": edges,
        "highlight": highlight,
        "path": path,
        "class_labels": labels,
        "classes": [label_of[c] for c in codes],
    }


def tree_catalog(trained: TrainedModel) -> tuple:
    """What drawing any tree of ``trained`` needs from the database: its class labels, test
    names, tests (by name, in the model's words) and prices, as trained."""
    vocabulary = vocabulary_of(trained)
    tests = {t.name: t for t in vocabulary.as_trained(list(trained.dataset.tests.all()))}
    snapshot = trained.snapshot
    return vocabulary.class_labels, list(snapshot.names), tests, snapshot.prices


def _test_status(feature: int, known, unavailable, above: frozenset[int]) -> str | None:
    """ "done" or "unavailable" for this patient, "asked above" for a test a node above
    this one on its path asks (its result is known by then), None while it is for sale."""
    if feature in known:
        return "done"
    if feature in unavailable:
        return "unavailable"
    if feature in above:
        return "asked above"
    return None


def _shares(tree: TreeStructure, known, unavailable) -> dict[int, float]:
    """The part of the patient that reached each node on the walk, from ``TreeStructure.reach``.

    ``reach`` says where the patient ended (leaves and awaited tests, with
    shares that sum to 1); a node's share is the sum of the ends below it.
    """
    reach = tree.reach(known, unavailable)
    shares: dict[int, float] = {0: 0.0}
    for end, weight in reach.ends.items():
        shares[0] += weight
        for _, edge in tree.path_to(end):
            node = int(tree.child[edge])
            shares[node] = shares.get(node, 0.0) + weight
    return shares


def _value_text(value: float, test) -> str:
    if test is None:
        return f"{value:g}"
    if test.is_nominal:
        return test.choice_label(value)
    unit = f" {test.unit}" if test.unit else ""
    return f"{value:g}{unit}"


def _patient_at(node: int, tree: TreeStructure, known, unavailable, test) -> dict:
    """What the walk did at ``node``: the patient's value, a split, a wait, or an end."""
    if tree.is_leaf(node):
        return {"status": "end", "text": "Ends here"}
    feature = int(tree.feature[node])
    if feature in unavailable:
        return {"status": "unavailable", "text": "Not available (split by training shares)"}
    if feature not in known:
        return {"status": "waiting", "text": "Waiting for this test"}
    value = known[feature]
    if value is None or value != value:
        return {"status": "no_result", "text": "No result (split by training shares)"}
    return {"status": "known", "text": _value_text(float(value), test), "value": float(value)}


def _branch_text(test_label: str | None, edge_label: str) -> str:
    """The branch into a node in words: "Age ≤ 53.5 years", "Chest pain: asymptomatic"."""
    if edge_label[:1] in "≤>":
        return f"{test_label} {edge_label}"
    return f"{test_label}: {edge_label}"
