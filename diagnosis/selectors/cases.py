"""The clinician's case: state recomputed from saved steps, advice, priced test options."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db.models import QuerySet

from ..model_cache import get_estimator
from ..models import DiagnosisCase, DiagnosisStep, DiagnosticTest
from ..permissions import require_case_access, require_clinician
from ..services.costs import cost_model_from_snapshot

__all__ = [
    "CaseState",
    "TestOption",
    "action_to_dict",
    "case_state",
    "compute_case_state",
    "open_cases_for_user",
    "risk_rows",
]


@dataclass
class TestOption:
    """A test the clinician may order now, priced for this patient."""

    __test__ = False

    test: DiagnosticTest
    price_now: float
    done: bool
    unavailable: bool
    recommended: bool
    value: float | None = None


@dataclass
class CaseState:
    """Everything the clinician's screen shows, recomputed from the saved steps."""

    case: DiagnosisCase
    steps: list[DiagnosisStep]
    known: dict[int, float]
    unavailable: set[int]
    accumulated_cost: float
    advice: dict | None
    test_options: list[TestOption] = field(default_factory=list)
    class_labels: list[str] = field(default_factory=list)
    is_open: bool = True


def action_to_dict(action, *, dataset, classes: Sequence[int] | None = None) -> dict:
    """Plain-JSON description of a model action, with readable test and class names.

    ``classes`` are the model's ``classes_`` (class codes ``proba`` is aligned
    with); by default 0..K-1.
    """
    labels = list(dataset.class_labels)
    codes = [int(c) for c in (classes if classes is not None else range(len(labels)))]
    result = {
        "kind": action.kind,
        "test_index": None,
        "test_name": None,
        "test_label": None,
        "cost": None,
        "reason": getattr(action, "reason", "") or "",
        "label_index": None,
        "label": None,
        "proba": None,
        "expected_cost": None,
        "risks": None,
    }
    if action.kind == "extract":
        test = dataset.tests.filter(index=int(action.test)).first()
        result.update(
            test_index=int(action.test),
            test_name=test.name if test else str(action.test),
            test_label=test.display_label if test else str(action.test),
            cost=float(action.cost),
        )
    else:
        result["expected_cost"] = float(action.expected_cost)
        if action.proba is not None:
            result["proba"] = [
                {"label": labels[c] if 0 <= c < len(labels) else str(c), "p": float(p)}
                for c, p in zip(codes, action.proba, strict=True)
            ]
    if action.kind == "classify":
        index = int(action.label)
        result.update(
            label_index=index, label=labels[index] if 0 <= index < len(labels) else str(index)
        )
    if action.risks:
        result["risks"] = risk_rows(action.risks, dataset=dataset)
    return result


def risk_rows(risks, *, dataset) -> list[dict]:
    """``(action name, risk)`` pairs as rows ``{"action", "risk", "key", "lowest"}``.

    ``action`` is what a clinician reads ("Classify", "Refer", "Order TSH");
    ``key`` keeps the model's own name ("classify", "reject", "extract:<index>");
    ``lowest`` marks the first row of least risk, the one the model advises.
    """
    labels = {t.index: t.display_label for t in dataset.tests.all()}
    rows = []
    for name, risk in risks:
        name = str(name)
        kind, _, index = name.partition(":")
        if kind == "extract" and index.lstrip("-").isdigit():
            label = f"Order {labels.get(int(index), f'test {index}')}"
        elif kind == "reject":
            label = "Refer"
        elif kind == "classify":
            label = "Classify"
        else:
            label = name
        rows.append({"action": label, "risk": float(risk), "key": name, "lowest": False})
    if rows:
        min(rows, key=lambda row: row["risk"])["lowest"] = True
    return rows


def _known_and_unavailable(steps) -> tuple[dict[int, float], set[int]]:
    known: dict[int, float] = {}
    unavailable: set[int] = set()
    for step in steps:
        if step.kind == DiagnosisStep.RESULT:
            known[step.test.index] = step.value
            unavailable.discard(step.test.index)
        elif step.kind == DiagnosisStep.UNAVAILABLE and step.test.index not in known:
            unavailable.add(step.test.index)
    return known, unavailable


def compute_case_state(case: DiagnosisCase) -> CaseState:
    """The state of ``case`` from its saved steps (no permission check; services use it)."""
    trained = case.trained_model
    dataset = trained.dataset
    steps = list(case.steps.select_related("test").order_by("position"))
    known, unavailable = _known_and_unavailable(steps)
    cost_model = cost_model_from_snapshot(trained.cost_snapshot)
    done = frozenset(known)
    advice = None
    if case.is_open:
        estimator = get_estimator(trained)
        action = estimator.next_action(known, unavailable)
        advice = action_to_dict(action, dataset=dataset, classes=estimator.classes_.tolist())
    recommended = advice["test_index"] if advice and advice["kind"] == "extract" else None
    names = trained.cost_snapshot.get("names", [])
    options = []
    for test in dataset.tests.select_related("group").order_by("index"):
        if test.index >= len(names) or names[test.index] != test.name:
            continue  # a test added after training: this model cannot use it
        options.append(
            TestOption(
                test=test,
                price_now=cost_model.marginal_cost(test.index, done),
                done=test.index in known,
                unavailable=test.index in unavailable,
                recommended=test.index == recommended,
                value=known.get(test.index),
            )
        )
    return CaseState(
        case=case,
        steps=steps,
        known=known,
        unavailable=unavailable,
        accumulated_cost=float(sum(s.price for s in steps)),
        advice=advice,
        test_options=options,
        class_labels=list(dataset.class_labels),
        is_open=case.is_open,
    )


def case_state(*, user, case: DiagnosisCase) -> CaseState:
    """The clinician's view of ``case``: steps, cost so far, advice now, priced test options."""
    require_case_access(user, case)
    return compute_case_state(case)


def open_cases_for_user(*, user) -> QuerySet[DiagnosisCase]:
    """The user's own open cases, most recently touched first (to resume)."""
    require_clinician(user)
    return DiagnosisCase.objects.filter(clinician=user, status=DiagnosisCase.OPEN).select_related(
        "trained_model", "trained_model__dataset"
    )
