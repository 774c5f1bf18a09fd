"""The diagram of a forest or an ensemble: its member trees, and where a patient is in each.

A BudgetRF forest (``trees_``) or a Boosting ensemble (``members_`` with votes
``alphas_``) is drawn as small multiples, one card per member tree.  With a
case, every member walks the patient with the library's own walk
(``estimator.member_reach``, i.e. ``TreeStructure.reach`` on each tree, as
``next_action`` does): a tree whose walk has no frontier has *finished* (the
patient reached its leaves); any other tree *waits* on the tests at its
frontier.  The counts the page shows are those the advice gives
(``Evidence.waiting`` of ``members``): the recommended test is the model's
own ``next_action`` (through the case state), never recomputed here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from diagnosis.shared import learner_registry
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors.model_cache import deciding_model
from diagnosis.training.selectors.models import require_model_access
from learners.policy import decide
from learners.tree import TreeStructure

from ..models import DiagnosisCase
from ..permissions import require_case_read
from .cases import compute_case_state, estimator_for
from .matrices import estimator_for_case
from .tree import tree_catalog, tree_nodes

__all__ = [
    "EnsembleView",
    "MemberView",
    "ensemble_view",
    "learner_is_ensemble",
    "model_is_ensemble",
]

#: The most member trees drawn as small multiples on one page (a forest may hold 1000).
MAX_DRAWN = 60


@dataclass
class MemberView:
    """One member tree: its vote, its size, and where the patient is in it."""

    index: int  # 0-based position in the model
    vote: float  # BudgetRF: 1 per tree; Boosting: alpha_k
    vote_share: float  # vote / total vote
    n_nodes: int
    n_leaves: int
    depth: int
    root_test: str | None
    status: str = ""  # "finished", "waiting" ("" without a patient)
    waiting_on: list[str] = field(default_factory=list)  # test labels at its frontier
    waits_on_advised: bool = False  # waiting on the test the advice recommends
    ends: list[str] = field(default_factory=list)  # leaf conclusions reached (finished part)
    layout: dict | None = None  # selectors.tree.tree_nodes() of this member


@dataclass
class EnsembleView:
    """What the ensemble page shows."""

    kind: str  # "forest" or "boosting"
    kind_label: str
    members: list[MemberView]
    n_members: int
    total_vote: float
    has_patient: bool = False
    n_finished: int = 0
    n_waiting: int = 0
    #: (test label, number of trees, vote share) waiting on each test, most first
    waiting_by_test: list[tuple[str, int, float]] = field(default_factory=list)
    advice_kind: str | None = None  # the case's advice now: extract / classify / reject
    advised_test: str | None = None
    advised_waiting: float | None = None  # Evidence.waiting of the advice
    advised_members: float | None = None  # Evidence.members of the advice
    counted: bool = True  # whole trees (BudgetRF) rather than vote weights (Boosting)
    truncated: int = 0  # members not drawn (beyond MAX_DRAWN)


def _members(estimator) -> tuple[str, list[TreeStructure], list[float]] | None:
    """The member trees and their votes, or None for a model that is not an ensemble.

    Only a model whose members vote (it walks them with ``member_reach``) is one: the
    conditioned-loss model also keeps a list of trees, one per set of bought tests, but
    decides by risks (``selectors.decision``).
    """
    estimator = deciding_model(estimator)
    if not hasattr(estimator, "member_reach"):
        return None
    trees = getattr(estimator, "trees_", None)
    if isinstance(trees, list) and trees and all(isinstance(t, TreeStructure) for t in trees):
        return "forest", trees, [1.0] * len(trees)
    members = getattr(estimator, "members_", None)
    if isinstance(members, list) and members:
        alphas = [float(a) for a in np.asarray(getattr(estimator, "alphas_", [1.0] * len(members)))]
        return "boosting", members, alphas
    return None


def learner_is_ensemble(trained: TrainedModel) -> bool:
    """Whether the model's learner makes forests or ensembles (its estimator walks members:
    ``member_reach``), without loading the fitted model; for lists of models."""
    try:
        estimator_class = learner_registry.get_spec(trained.learner).estimator_class()
    except Exception:  # noqa: BLE001  an unknown learner has no members page
        return False
    return hasattr(estimator_class, "member_reach")


def model_is_ensemble(trained: TrainedModel) -> bool:
    """Whether the model is a forest or an ensemble of trees (it has a members page)."""
    if not trained.is_ready:
        return False
    try:
        return _members(estimator_for(trained)) is not None
    except ValueError:  # no fitted model stored
        return False


def _member_decision(estimator, tree: TreeStructure, classes: list):
    """What ``tree`` alone concludes at a node: :func:`learners.policy.decide` on its mix.

    Only for drawing a member's leaves; the model concludes on the summed
    (Boosting: vote-weighted) leaves of every member, in ``next_action``.
    """

    def of(node: int):
        weights = np.asarray(tree.class_weight[node], dtype=float)
        total = float(weights.sum())
        proba = weights / total if total > 0 else np.full(weights.shape, 1.0 / weights.size)
        return decide(
            proba,
            classes=classes,
            cost_matrix=estimator.cost_matrix_,
            reject_cost=estimator.reject_cost_,
            support=total,
        )

    return of


def ensemble_view(
    *,
    user,
    trained_model: TrainedModel,
    case: DiagnosisCase | None = None,
    draw: bool = True,
) -> EnsembleView | None:
    """The member trees of a forest or ensemble, and a case's progress through each.

    None for a model that is not an ensemble.  ``draw=False`` leaves out the
    members' node layouts (counts only).
    """
    require_model_access(user, trained_model)
    if case is not None:
        require_case_read(user, case)  # its clinician, or their team lead
        if case.trained_model_id != trained_model.pk:
            case = None
    if not trained_model.is_ready:
        return None
    # a case's own error matrix for the leaves' conclusions (plain Boosting may differ)
    estimator = deciding_model(
        estimator_for_case(case) if case is not None else estimator_for(trained_model)
    )
    found = _members(estimator)
    if found is None:
        return None
    kind, trees, votes = found
    classes = [int(c) for c in estimator.classes_]
    total = float(sum(votes))
    catalog = tree_catalog(trained_model)  # read once for every member
    class_labels, names, tests, _ = catalog
    labels = {name: test.display_label for name, test in tests.items()}

    def test_label(feature: int) -> str:
        name = names[feature] if 0 <= feature < len(names) else str(feature)
        return labels.get(name, name)

    known: dict = {}
    unavailable: set = set()
    reaches = None
    state = None
    if case is not None:
        state = compute_case_state(case)
        known, unavailable = state.known, state.unavailable
        reaches = estimator.member_reach(known, unavailable)
    view = EnsembleView(
        kind=kind,
        kind_label="forest" if kind == "forest" else "boosted ensemble",
        members=[],
        n_members=len(trees),
        total_vote=total,
        has_patient=case is not None,
        counted=kind == "forest",
        truncated=max(0, len(trees) - MAX_DRAWN),
    )
    advice = state.advice if state is not None else None
    if advice:
        view.advice_kind = advice.kind
        if advice.kind == "extract":
            view.advised_test = advice.test_label
        if advice.evidence is not None:
            view.advised_waiting = advice.evidence.waiting
            view.advised_members = advice.evidence.members
    advised_index = advice.test_index if advice else None
    waiting_count: dict[int, int] = {}
    waiting_vote: dict[int, float] = {}
    for i, (tree, vote) in enumerate(zip(trees, votes, strict=True)):
        root = None if tree.is_leaf(0) else test_label(int(tree.feature[0]))
        member = MemberView(
            index=i,
            vote=vote,
            vote_share=vote / total if total > 0 else 0.0,
            n_nodes=tree.n_nodes,
            n_leaves=tree.n_leaves,
            depth=tree.depth(),
            root_test=root,
        )
        reach = reaches[i] if reaches is not None else None
        if reach is not None:
            frontier = sorted({int(tree.feature[n]) for n in reach.frontier})
            member.status = "waiting" if frontier else "finished"
            member.waiting_on = [test_label(f) for f in frontier]
            member.waits_on_advised = advised_index is not None and advised_index in frontier
            for f in frontier:
                share = sum(w for n, w in reach.frontier.items() if int(tree.feature[n]) == f)
                waiting_count[f] = waiting_count.get(f, 0) + 1
                waiting_vote[f] = waiting_vote.get(f, 0.0) + vote * share
            if not frontier:
                decision_of = _member_decision(estimator, tree, classes)
                label_of = class_labels
                ends = []
                for node in sorted(reach.leaves):
                    action = decision_of(node)
                    ends.append(
                        "Refer"
                        if action.kind == "reject"
                        else label_of[int(action.label)]
                        if 0 <= int(action.label) < len(label_of)
                        else str(action.label)
                    )
                member.ends = sorted(set(ends))
            if member.status == "finished":
                view.n_finished += 1
            else:
                view.n_waiting += 1
        if draw and i < MAX_DRAWN:
            member.layout = member_layout(
                trained_model, estimator, tree, classes, known, unavailable, reach, catalog
            )
        view.members.append(member)
    view.waiting_by_test = sorted(
        (
            (test_label(f), waiting_count[f], waiting_vote[f] / total if total > 0 else 0.0)
            for f in waiting_count
        ),
        key=lambda row: (-row[2], -row[1], row[0]),
    )
    return view


def member_layout(
    trained, estimator, tree, classes, known, unavailable, reach, catalog=None
) -> dict:
    """One member tree's nodes for drawing (``selectors.tree.tree_nodes``), the patient's
    walk (``reach.visited``) highlighted."""
    highlight = [int(n) for n in reach.visited] if reach is not None else []
    drawn = tree_nodes(
        trained,
        tree,
        classes=classes,
        decision_of=_member_decision(estimator, tree, classes),
        known=known,
        unavailable=unavailable,
        highlight=highlight,
        model_proba=False,
        catalog=catalog,
    )
    for node in drawn["nodes"]:
        if not node["is_leaf"]:
            node["decision"] = None  # a member does not conclude part-way; the model does
    return drawn
