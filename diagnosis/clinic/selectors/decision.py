"""Which diagram a model has, and the conditioned-loss model's view of its own decision.

``diagram_kind`` is the one answer every screen asks (the home card, the
model page, the case page): ``"ensemble"`` for a forest or a boosted
ensemble (its members vote: ``member_reach``), ``"decision"`` for the
conditioned-loss model (it keeps one tree per set of bought tests and weighs
risks; it is not a voting forest), ``"tree"`` for a single tree, None for a
model that is not ready.

``decision_view`` shows how the conditioned-loss model decides: for m priced
tests it keeps 2^m trees, ``trees_[S]`` the classifier once the tests of S
are bought.  For a patient in state S it reads ``trees_[S]`` (the current
posterior) and, for each test k still for sale, ``trees_[S | k]`` (through the
Parzen estimate q_k of what that test would say), and advises the action of
least risk.  The risks are the case's own (``CaseState.explanation``, the
model's ``next_action``), never recomputed here.  The page lists the trees as
rows and draws only the one asked for (``?tree=``), so it stays light.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from diagnosis.shared import learner_registry
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors.model_cache import deciding_model
from diagnosis.training.selectors.models import require_model_access
from learners.conditioned_loss import ConditionedLossClassifier
from learners.policy import decide
from learners.selection import CostSelectedClassifier

from ..models import DiagnosisCase
from ..permissions import require_case_read
from .cases import compute_case_state, estimator_for
from .tree import tree_catalog, tree_nodes

__all__ = ["DecisionTree", "DecisionView", "decision_view", "diagram_kind"]


def _estimator_class(trained: TrainedModel):
    try:
        return learner_registry.get_spec(trained.learner).estimator_class()
    except Exception:  # noqa: BLE001  an unknown learner has no diagram
        return None


def diagram_kind(trained: TrainedModel | None) -> str | None:
    """``"ensemble"``, ``"decision"``, ``"tree"`` or None (not ready), from the learner alone
    (the fitted model is not loaded, so lists of models stay cheap)."""
    if trained is None or trained.status != TrainedModel.SUCCEEDED:
        return None
    estimator_class = _estimator_class(trained)
    if estimator_class is not None and issubclass(estimator_class, CostSelectedClassifier):
        # Its kind is its winner's: the one model it loads (cached) to say which.
        try:
            estimator_class = type(deciding_model(estimator_for(trained)))
        except ValueError:  # no fitted model stored
            return None
    if estimator_class is not None and issubclass(estimator_class, ConditionedLossClassifier):
        return "decision"
    if estimator_class is not None and hasattr(estimator_class, "member_reach"):
        return "ensemble"
    return "tree"


@dataclass
class DecisionTree:
    """One of the model's trees: the classifier once the tests of its state are bought."""

    number: int  # 1-based, as the page names it
    bought: list[str]  # labels of the priced tests of its state
    n_leaves: int
    depth: int
    role: str = ""  # "current", "consulted" (one test away) or "" for this patient
    consulted_for: str | None = None  # the test whose result this tree stands for
    layout: dict | None = None


@dataclass
class DecisionView:
    """What the conditioned-loss decision page shows."""

    reward: float
    penalty: float
    free_tests: list[str]
    priced_tests: list[str]
    trees: list[DecisionTree]
    risks: list[dict] = field(default_factory=list)  # the case's explanation.risks rows
    why: list[str] = field(default_factory=list)
    headline: str = ""
    has_patient: bool = False
    case_open: bool = False
    chosen: DecisionTree | None = None


def _leaf_decision(estimator, tree, classes):
    """What a tree alone concludes at a node: the class the model's classify step names
    (:func:`learners.policy.decide` under its PENALTY matrix, no referral: the model refers
    by comparing risks, not at a leaf)."""

    def of(node: int):
        weights = np.asarray(tree.class_weight[node], dtype=float)
        total = float(weights.sum())
        proba = weights / total if total > 0 else np.full(weights.shape, 1.0 / weights.size)
        return decide(proba, classes=classes, cost_matrix=estimator.cost_matrix_, support=total)

    return of


def decision_view(
    *,
    user,
    trained_model: TrainedModel,
    case: DiagnosisCase | None = None,
    tree_number: int | None = None,
) -> DecisionView | None:
    """The conditioned-loss model's trees and, with a case, its risks for that patient.

    None for any other model.  ``tree_number`` (1-based) draws that tree, with the
    patient's walk when the case is given.  Raises ``ValueError`` for a tree number the
    model does not have.
    """
    require_model_access(user, trained_model)
    if case is not None:
        require_case_read(user, case)  # its clinician, or their team lead
        if case.trained_model_id != trained_model.pk:
            case = None
    if diagram_kind(trained_model) != "decision":
        return None
    estimator = deciding_model(estimator_for(trained_model))
    catalog = tree_catalog(trained_model)
    _, names, tests, _ = catalog

    def label(feature: int) -> str:
        name = names[feature] if 0 <= feature < len(names) else str(feature)
        test = tests.get(name)
        return test.display_label if test is not None else name

    priced = [int(f) for f in estimator.priced_tests_]

    def bought(state: int) -> list[int]:  # bit i of a state: priced test i bought
        return [f for i, f in enumerate(priced) if state >> i & 1]

    view = DecisionView(
        reward=float(estimator.reward),
        penalty=float(estimator.penalty),
        free_tests=[label(int(f)) for f in estimator.free_features_],
        priced_tests=[label(f) for f in priced],
        trees=[
            DecisionTree(
                number=state + 1,
                bought=[label(f) for f in bought(state)],
                n_leaves=tree.n_leaves,
                depth=tree.depth(),
            )
            for state, tree in enumerate(estimator.trees_)
        ],
    )
    known: dict = {}
    unavailable: set = set()
    if case is not None:
        state = compute_case_state(case)
        known, unavailable = state.known, state.unavailable
        view.has_patient, view.case_open = True, state.is_open
        if state.explanation is not None:
            view.risks = list(state.explanation.risks)
            view.why = list(state.explanation.why)
            view.headline = state.explanation.headline
        current = sum(1 << i for i, f in enumerate(priced) if f in known)
        view.trees[current].role = "current"
        for i, test in enumerate(priced):
            if test not in known and test not in unavailable:
                row = view.trees[current | 1 << i]
                row.role, row.consulted_for = "consulted", label(test)
    if tree_number is not None:
        if not 1 <= tree_number <= len(view.trees):
            raise ValueError(f"tree must be a tree number from 1 to {len(view.trees)}.")
        tree = estimator.trees_[tree_number - 1]
        classes = [int(c) for c in estimator.classes_]
        highlight = []
        if case is not None:
            highlight = [int(n) for n in tree.reach(known, unavailable).visited]
        chosen = view.trees[tree_number - 1]
        chosen.layout = tree_nodes(
            trained_model,
            tree,
            classes=classes,
            decision_of=_leaf_decision(estimator, tree, classes),
            known=known,
            unavailable=unavailable,
            highlight=highlight,
            model_proba=False,
            catalog=catalog,
        )
        view.chosen = chosen
    return view
