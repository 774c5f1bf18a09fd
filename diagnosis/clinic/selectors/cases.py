"""The clinician's case: state recomputed from saved steps, advice, priced test options.

The advice is the model's own action (``estimator.next_action``) with the names of the
classes and tests it mentions (``shared.advice.Advice``, stored as its ``to_json()``);
prices and group discounts come from the ``CostModel`` the model was trained
with (its ``cost_snapshot``), never from today's prices in the database.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from django.db import connection
from django.db.models import QuerySet

from diagnosis.catalog.models import DiagnosticTest
from diagnosis.catalog.selectors.vocabulary import vocabulary_of
from diagnosis.permissions import is_clinician, require_clinician, require_lead
from diagnosis.selectors import raw_rows
from diagnosis.shared.advice import Advice, Conclusion, evidence_from_json
from diagnosis.shared.vocabulary import Vocabulary
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors.model_cache import deciding_model, get_estimator
from learners.tree import TreeStructure

from ..models import DiagnosisCase, DiagnosisStep, Team
from ..permissions import CaseNotFound, require_case_read
from .advice_context import branch_rows, decision_costs
from .case_audit import case_steps, outcome_text
from .explanations import Explanation, explain
from .matrices import estimator_for_case
from .step_context import StepContext

__all__ = [
    "CaseState",
    "TestOption",
    "advice_for",
    "case_for_user",
    "case_state",
    "closed_cases_for_user",
    "compute_case_state",
    "dataset_tests_of",
    "estimator_for",
    "open_cases_for_user",
    "team_cases_for_user",
]


def estimator_for(trained: TrainedModel):
    """The fitted model of a ready ``TrainedModel`` (cached); the app's one way to reach it."""
    return get_estimator(trained)


@dataclass
class TestOption:
    """A test the clinician may order now, priced for this patient by the model's prices."""

    __test__ = False

    test: DiagnosticTest
    price_now: float
    full_price: float  # its price with nothing done
    done: bool
    unavailable: bool
    recommended: bool
    value: float | None = None
    discount_from: str | None = None  # display label of the done test giving the discount
    generated: bool = False  # its price was made by the automatic price generator
    #: the names of the tests it is derived from (FTI: TT4, T4U); ordering it is entering them
    derived_from: tuple[str, ...] = ()


@dataclass
class CaseState:
    """Everything the clinician's screen shows, recomputed from the saved steps."""

    case: DiagnosisCase
    steps: list[DiagnosisStep]
    known: dict[int, float]
    unavailable: set[int]
    accumulated_cost: float
    advice: Advice | None
    #: what the model's codes mean, as when it was trained (class names, choices)
    vocabulary: Vocabulary
    test_options: list[TestOption] = field(default_factory=list)
    class_labels: list[str] = field(default_factory=list)
    is_open: bool = True
    explanation: Explanation | None = None
    #: step position -> display label of the done test whose group discounted it
    step_discounts: dict[int, str] = field(default_factory=dict)
    #: the advised test was done and paid for before, then undone: that step (the screen
    #: says so before asking to pay for it again); None otherwise
    advised_paid_before: DiagnosisStep | None = None
    #: the viewer reads the case (a team lead) but may take no step on it
    read_only: bool = False


def _mentioned_tests(action) -> Iterable[int]:
    if action.kind == "extract":
        yield int(action.test)
    evidence = getattr(action, "evidence", None)
    for risk in evidence.risks if evidence is not None else ():
        if risk.test is not None:
            yield int(risk.test)


def advice_for(
    action,
    *,
    dataset,
    classes: Sequence[int] | None = None,
    estimator=None,
    known: Mapping[int, float] | None = None,
    unavailable: Iterable[int] = (),
    vocabulary: Vocabulary | None = None,
    dataset_tests: Sequence[DiagnosticTest] | None = None,
) -> Advice:
    """The advice to show and store: the action's numbers plus the names it needs.

    ``dataset_tests``: every test of ``dataset``, when the caller has read them (no query here).

    ``vocabulary`` is what the model's codes meant when it was trained (class
    names, choices); by default the dataset's words today.

    ``classes`` are the model's ``classes_`` (the class codes ``proba`` and the
    evidence are aligned with); by default 0..K-1.  Added to the action's
    numbers: ``test_index``/``test_name``/``test_label`` (extract),
    ``label_index`` (class code), ``label`` (class name, replacing the code)
    and ``label_position`` (classify), ``class_labels`` aligned with the
    model's class positions, and ``test_labels`` for every test the action
    mentions.  :func:`diagnosis.clinic.selectors.explanations.explain` words it.

    An ``Extract`` also gets ``conclusion_now``: what the model concludes from
    its evidence if the patient stopped now (``Evidence.refers_now`` and
    ``best_class``, worded as ``kind``, ``label_index``, ``label``).

    With the fitted ``estimator`` (and the patient's ``known`` results) the
    advice also keeps ``costs``, the error costs the model decides with
    (:func:`~diagnosis.clinic.selectors.advice_context.decision_costs`), and
    ``branches``, where a patient split by an unavailable test went
    (:func:`~diagnosis.clinic.selectors.advice_context.branch_rows`); with
    ``unavailable``, ``unavailable_labels`` names the tests marked so.
    """
    labels = list(dataset.class_labels if vocabulary is None else vocabulary.class_labels)
    codes = [int(c) for c in (classes if classes is not None else range(len(labels)))]

    def name_of(code: int) -> str:
        return labels[code] if 0 <= code < len(labels) else str(code)

    mentioned = set(_mentioned_tests(action))
    every = list(dataset.tests.all()) if dataset_tests is None else list(dataset_tests)
    tests = {t.index: t for t in every if t.index in mentioned}
    # the numbers as stored (plain floats), so the advice equals itself read back
    evidence = None if action.evidence is None else evidence_from_json(action.evidence.to_dict())
    class_labels = tuple(name_of(c) for c in codes)
    parts: dict[str, Any] = {
        "kind": action.kind,
        "evidence": evidence,
        "class_labels": class_labels,
        "test_labels": {
            str(i): tests[i].display_label if i in tests else f"test {i}" for i in sorted(mentioned)
        },
        # How many results the advice rests on (0: a fresh case, nothing answered yet).
        "known_count": len(known or {}),
    }
    if action.kind == "extract":
        test = tests.get(int(action.test))
        parts.update(
            test=int(action.test),
            cost=float(action.cost),
            test_index=int(action.test),
            test_name=test.name if test else str(action.test),
            test_label=test.display_label if test else str(action.test),
        )
        if evidence is not None:
            # The model's own conclusion on its own belief, had the patient stopped now.
            code = None if evidence.refers_now else codes[evidence.best_class]
            parts["conclusion_now"] = Conclusion(
                kind="reject" if evidence.refers_now else "classify",
                label_index=code,
                label=None if code is None else name_of(code),
            )
    else:
        proba = action.proba
        parts.update(
            proba=None if proba is None else tuple(float(p) for p in proba),
            expected_cost=float(action.expected_cost),
        )
    blocked = sorted(int(i) for i in unavailable)
    if blocked:
        names = {t.index: t.display_label for t in every if t.index in blocked}
        parts["unavailable_labels"] = tuple(names.get(i, f"test {i}") for i in blocked)
    if estimator is not None:
        parts["costs"] = decision_costs(estimator, class_labels)
        tree = getattr(deciding_model(estimator), "tree_", None)
        if isinstance(tree, TreeStructure) and evidence is not None and len(evidence.nodes) > 1:
            tests_now = [copy.copy(t) for t in every]  # as_trained sets their choices
            split = {
                t.index: t for t in (vocabulary.as_trained(tests_now) if vocabulary else tests_now)
            }
            parts["branches"] = tuple(
                branch_rows(tree, evidence.nodes, known or {}, split, class_labels)
            )
    if action.kind == "classify":
        index = int(action.label)
        parts.update(
            label_index=index,
            label=name_of(index),
            label_position=codes.index(index) if index in codes else None,
        )
    return Advice(**parts)


def _known_and_unavailable(steps) -> tuple[dict[int, float], set[int]]:
    known: dict[int, float] = {}
    unavailable: set[int] = set()
    for step in steps:
        if not step.is_active:  # corrected or undone: kept in the record, no longer counted
            continue
        if step.kind == DiagnosisStep.RESULT:
            known[step.test.index] = step.value
            unavailable.discard(step.test.index)
        elif step.kind == DiagnosisStep.UNAVAILABLE and step.test.index not in known:
            unavailable.add(step.test.index)
    return known, unavailable


def dataset_tests_of(case: DiagnosisCase) -> list[DiagnosticTest]:
    """The tests of ``case``'s dataset in index order (on PostgreSQL a raw query written once
    per process: ``raw_rows``)."""
    dataset_id = case.trained_model.dataset_id
    if connection.vendor != "postgresql":
        return list(DiagnosticTest.objects.filter(dataset_id=dataset_id).order_by("index"))
    part = raw_rows.columns(DiagnosticTest, DiagnosticTest._meta.db_table)
    sql = (
        f"SELECT {part.sql} FROM {part.table} WHERE {part.column('dataset')} = %s"
        f" ORDER BY {part.column('index')} ASC"
    )
    return [row[0] for row in raw_rows.fetch_instances((part,), sql, [dataset_id])]


def compute_case_state(
    case: DiagnosisCase, *, context: StepContext | None = None, for_screen: bool = True
) -> CaseState:
    """The state of ``case`` from its saved steps (no permission check; services use it).

    ``for_screen=False``: only what a step service decides with (the steps, known and
    unavailable results, the advice, the vocabulary, the cost so far); the priced test
    options, the steps' discounts and the worded explanation, which only an answer shows,
    are left empty (pricing every test twice is most of a state's work).

    ``context``: the steps and tests a step service read under the case's row lock, with the
    steps it wrote since (:class:`~diagnosis.clinic.selectors.step_context.StepContext`), used
    instead of reading them again: within the step, and for the answer to it.
    """
    trained = case.trained_model
    dataset = trained.dataset
    if context is not None:
        context = context.for_case(case)
        steps, dataset_tests = context.steps, context.tests
    else:
        dataset_tests = dataset_tests_of(case)
        steps = case_steps(case, tests=dataset_tests)
    known, unavailable = _known_and_unavailable(steps)
    snapshot = trained.snapshot
    cost_model = snapshot.prices
    vocabulary = vocabulary_of(trained)
    advice = None
    if case.is_open:
        estimator = estimator_for_case(case)  # with the case's own error matrix
        action = estimator.next_action(known, unavailable)
        advice = advice_for(
            action,
            dataset=dataset,
            classes=estimator.classes_.tolist(),
            estimator=estimator,
            known=known,
            unavailable=unavailable,
            vocabulary=vocabulary,
            dataset_tests=dataset_tests,
        )
    decided = CaseState(
        case=case,
        steps=steps,
        known=known,
        unavailable=unavailable,
        accumulated_cost=float(sum(s.price for s in steps)),
        advice=advice,
        class_labels=list(vocabulary.class_labels),
        vocabulary=vocabulary,
        is_open=case.is_open,
    )
    if not for_screen:
        return decided
    recommended = advice.test_index if advice and advice.kind == "extract" else None
    names = snapshot.names
    tests = {
        t.index: t
        for t in dataset_tests
        # a test added after training is one this model cannot use
        if t.index < len(names) and names[t.index] == t.name
    }

    @overload
    def label_of(index: int) -> str: ...
    @overload
    def label_of(index: None) -> None: ...
    def label_of(index: int | None) -> str | None:
        if index is None:
            return None
        return tests[index].display_label if index in tests else names[index]

    done_order = list(known)  # insertion order = the order the results were saved
    options = []
    done = frozenset(done_order)
    for index, test in tests.items():
        options.append(
            TestOption(
                test=test,
                price_now=cost_model.marginal_cost(index, done),
                full_price=cost_model.marginal_cost(index, ()),
                done=index in known,
                unavailable=index in unavailable,
                recommended=index == recommended,
                value=known.get(index),
                discount_from=label_of(cost_model.discount_source(index, done_order)),
                generated=snapshot.is_generated(index),
                derived_from=tuple(snapshot.derived_from(index)),
            )
        )
    step_discounts = {}
    done_before: list[int] = []
    replacements = {s.superseded_by_id for s in steps if s.superseded_by_id}
    for step in steps:
        if step.kind == DiagnosisStep.RESULT and step.test is not None:
            if step.pk not in replacements:  # a corrected value is charged nothing: already paid
                source = cost_model.discount_source(step.test.index, done_before)
                if source is not None:
                    step_discounts[step.position] = label_of(source)
                done_before.append(step.test.index)
            undone = step.correction == DiagnosisStep.UNDONE and step.pk not in replacements
            if undone and step.test.index in done_before:
                # only the last step can be undone: every later step was taken without it
                done_before.remove(step.test.index)
    paid_before = [
        step
        for step in steps
        if step.kind == DiagnosisStep.RESULT
        and step.correction == DiagnosisStep.UNDONE
        and step.price > 0
        and step.test is not None
        and step.test.index == recommended
    ]
    return dataclasses.replace(
        decided,
        test_options=options,
        explanation=explain(advice),
        step_discounts=step_discounts,
        advised_paid_before=paid_before[-1] if paid_before else None,
    )


def case_state(
    *,
    user,
    case: DiagnosisCase,
    context: StepContext | None = None,
) -> CaseState:
    """The viewer's view of ``case``: steps, cost so far, advice now, priced test options.

    ``read_only`` is set for a lead reading a team member's case (no step forms).
    ``context``: what a case just opened left (``services.cases.open_case``), the answer to
    it without reading the case again.
    """
    may_act = require_case_read(user, case)
    state = compute_case_state(case, context=context)
    state.read_only = not may_act
    return state


def case_for_user(*, user, pk) -> DiagnosisCase:
    """Case ``pk`` if ``user`` may read it; :class:`CaseNotFound` if missing *or* forbidden.

    Both answers are the same, so no one learns which case ids exist.  A read only: the
    caller logs what the request does with the case (``services.access_log``: one
    :class:`~diagnosis.clinic.models.CaseAccess` row per request, by the view for a read, by the
    step service for a change).
    """
    case = (
        DiagnosisCase.objects.select_related("trained_model", "trained_model__dataset")
        # the fitted model comes from the estimator cache; its JSON is read only on a miss
        .defer("trained_model__model_json")
        .filter(pk=pk)
        .first()
    )
    if case is None:
        raise CaseNotFound(pk)
    if case.clinician_id == getattr(user, "pk", None):
        case.clinician = user  # the usual reader; anyone else's clinician is read when shown
    require_case_read(user, case)
    return case


def team_cases_for_user(*, user, query: str = "", limit: int = 100) -> list[DiagnosisCase]:
    """The cases of the members of the teams ``user`` leads (not their own), latest first.

    Each has ``outcome`` (``case_audit.outcome_text``).
    ``query`` narrows them by patient reference.  PermissionDenied for anyone who is not a
    lead clinician; an empty list for a lead of no team.
    """
    require_lead(user)
    members = Team.objects.filter(leads=user.pk).values("members")
    cases = (
        DiagnosisCase.objects.filter(clinician__in=members)
        .exclude(clinician=user.pk)
        .select_related("trained_model", "trained_model__dataset", "clinician")
        .order_by("-updated_at", "-id")
    )
    query = query.strip()[:200]
    if query:
        cases = cases.filter(patient_reference__icontains=query)
    found = list(cases[:limit])
    for case in found:
        # the template's words for how it ended; the model declares no such attribute
        case.outcome = outcome_text(case)  # type: ignore[attr-defined]
    return found


def open_cases_for_user(*, user) -> QuerySet[DiagnosisCase]:
    """The user's own open cases, most recently touched first (to resume)."""
    require_clinician(user)
    return (
        DiagnosisCase.objects.filter(clinician=user, status=DiagnosisCase.OPEN)
        .select_related("trained_model", "trained_model__dataset")
        .order_by("-updated_at")
    )


def closed_cases_for_user(*, user) -> QuerySet[DiagnosisCase]:
    """The user's own closed cases, latest first; none for a user who is not a clinician."""
    if not is_clinician(user):
        return DiagnosisCase.objects.none()
    return (
        DiagnosisCase.objects.exclude(status=DiagnosisCase.OPEN)
        .filter(clinician=user)
        .select_related("trained_model", "trained_model__dataset")
        .order_by("-closed_at")
    )
