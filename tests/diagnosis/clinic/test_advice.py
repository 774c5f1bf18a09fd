"""The typed advice: it is stored and answered as the same JSON as before, reads back equal,
reads the rows written before newer keys existed, and refuses a malformed row naming its field."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from diagnosis.clinic.models import DiagnosisStep
from diagnosis.clinic.selectors.cases import advice_for, case_state
from diagnosis.clinic.selectors.explanations import advice_headline, explain
from diagnosis.clinic.services import cases
from diagnosis.clinic.services import step as step_service
from diagnosis.integration.api import state_to_dict
from diagnosis.shared.advice import Advice
from learners import ModelDocumentError
from learners.policy import decide

pytestmark = pytest.mark.django_db

MATRIX = [[0.0, 100.0], [400.0, 0.0]]

#: The keys of each kind of advice, in the order they have been stored and answered since
#: the evidence, the costs, the branches and the conclusion now came in.
EXTRACT_KEYS = [
    "kind",
    "test",
    "cost",
    "evidence",
    "test_index",
    "test_name",
    "test_label",
    "label_index",
    "label",
    "label_position",
    "class_labels",
    "test_labels",
    "conclusion_now",
    "known_count",
]
CLASSIFY_KEYS = [
    "kind",
    "label",
    "proba",
    "expected_cost",
    "evidence",
    "test_index",
    "test_name",
    "test_label",
    "label_index",
    "label_position",
    "class_labels",
    "test_labels",
    "known_count",
]
EVIDENCE_KEYS = [
    "proba",
    "support",
    "class_costs",
    "refer_cost",
    "conclude_cost",
    "best_class",
    "refers_now",
    "cost_after",
    "nodes",
    "risks",
    "waiting",
    "members",
]


def _text(document) -> str:
    return json.dumps(document)


def _walk(trained, clinician, *, unavailable_first: bool = False) -> list[Advice]:
    """Every advice one patient of ``trained``'s dataset is given, followed to the end (the
    first test advised marked unavailable when asked: a split patient's branches)."""
    tests = {t.index: t for t in trained.dataset.tests.all()}
    row = trained.dataset.cases.order_by("id").first().values
    case = cases.start_case(user=clinician, trained_model=trained)
    seen = []
    for _ in range(2 * len(tests) + 2):
        advice = case_state(user=clinician, case=case).advice
        if advice is None:
            break
        seen.append(advice)
        position = case.steps.count()
        if advice.kind == "classify":
            step_service.classify(user=clinician, case=case, label=advice.label_index)
        elif advice.kind == "reject":
            step_service.refer(user=clinician, case=case)
        elif unavailable_first or row[advice.test_index] is None:
            unavailable_first = False
            step_service.mark_unavailable(user=clinician, case=case, test=tests[advice.test_index])
        else:
            step_service.record_result(
                user=clinician,
                case=case,
                test=tests[advice.test_index],
                value=row[advice.test_index],
                confirm_implausible=True,
            )
        # the step taken on this advice stores it, as the JSON the database gives back
        stored = case.steps.get(position=position).advice
        assert stored == json.loads(_text(advice.to_json()))
    return seen


@pytest.fixture
def walked(trained_model, thyroid_model, clinician) -> list[Advice]:
    """The advice of a tree (with a split patient) and of the conditioned-loss model (risks)."""
    return (
        _walk(trained_model, clinician, unavailable_first=True)
        + _walk(trained_model, clinician)
        + _walk(thyroid_model, clinician)
    )


def test_the_walks_cover_every_part_of_the_advice(walked):
    """The advice below includes orders, conclusions, branches, risks and the costs."""
    assert {a.kind for a in walked} >= {"extract", "classify"}
    assert any(a.branches for a in walked) and any(a.unavailable_labels for a in walked)
    assert any(a.evidence and a.evidence.risks for a in walked)
    assert all(a.costs is not None and a.costs.basis for a in walked)


def test_advice_reads_back_equal_and_writes_the_same_json(walked):
    """Advice.from_json(advice.to_json()) is the same advice, and writes the same JSON text."""
    for advice in walked:
        document = advice.to_json()
        again = Advice.from_json(json.loads(_text(document)))
        assert again == advice
        assert _text(again.to_json()) == _text(document)


def test_the_stored_shape_is_the_one_every_row_has(walked):
    """Each kind stores the action's to_dict() keys, then the names, then the context."""
    for advice in walked:
        document = advice.to_json()
        context = [k for k in ("unavailable_labels", "costs", "branches") if k in document]
        expected = EXTRACT_KEYS if advice.kind == "extract" else CLASSIFY_KEYS
        assert list(document) == expected + context
        if document["evidence"] is not None:
            assert list(document["evidence"]) == EVIDENCE_KEYS


def test_a_reject_keeps_its_shape(toy_dataset):
    """A referral stores kind, proba, expected_cost, evidence, then the names (label null)."""
    action = decide((0.5, 0.5), classes=[0, 1], cost_matrix=MATRIX, reject_cost=30.0)
    document = advice_for(action, dataset=toy_dataset, classes=[0, 1]).to_json()
    assert list(document) == [
        "kind",
        "proba",
        "expected_cost",
        "evidence",
        "test_index",
        "test_name",
        "test_label",
        "label_index",
        "label",
        "label_position",
        "class_labels",
        "test_labels",
        "known_count",
    ]
    assert _text(Advice.from_json(document).to_json()) == _text(document)


def test_the_api_answers_the_advices_json(trained_model, clinician):
    """Both step APIs answer state.advice.to_json(): the stored shape."""
    case = cases.start_case(user=clinician, trained_model=trained_model)
    state = case_state(user=clinician, case=case)
    assert state_to_dict(state)["advice"] == state.advice.to_json()
    client = Client()
    client.force_login(clinician)
    answered = client.get(reverse("api-case-step", args=[case.pk])).json()["advice"]
    assert answered == json.loads(_text(state.advice.to_json()))


# ------------------------------------------------------------- rows from before
LATER_KEYS = ("known_count", "conclusion_now", "costs", "branches", "unavailable_labels")
LATER_EVIDENCE_KEYS = ("refers_now", "waiting", "members")


def _as_written_before(document: dict) -> dict:
    """A row as stored before the newer keys existed (the evidence too)."""
    older = {k: v for k, v in document.items() if k not in LATER_KEYS}
    if older.get("evidence"):
        older["evidence"] = {
            k: v for k, v in older["evidence"].items() if k not in LATER_EVIDENCE_KEYS
        }
    return older


def test_rows_written_before_the_newer_keys_still_load(walked):
    """A step stored without known_count, conclusion_now, costs, branches, unavailable_labels
    (and evidence without refers_now, waiting, members) loads; its headline and the parts
    it has read as before, and it writes back without inventing the missing keys."""
    for advice in walked:
        older = _as_written_before(advice.to_json())
        loaded = Advice.from_json(older)
        assert loaded.known_count is None and loaded.conclusion_now is None
        assert loaded.costs is None and loaded.branches is None and not loaded.unavailable_labels
        assert advice_headline(loaded) == advice_headline(advice) == advice.headline
        assert loaded.evidence == advice.evidence  # what it derives is derived again
        written = loaded.to_json()
        assert [k for k in written if k != "evidence"] == [k for k in older if k != "evidence"]
        assert explain(loaded).why  # worded from what it kept (no costs: by expected cost)


def test_the_first_advice_shape_still_reads(toy_dataset):
    """Rows from before the evidence (prose ``reason``, ``risks``, ``proba`` as label/p rows)
    load for the case record: kind, names and numbers read as they did."""
    order = {
        "kind": "extract",
        "test_index": 1,
        "test_name": "insulin",
        "test_label": "Insulin",
        "cost": 12.0,
        "reason": "largest expected saving",
        "label_index": None,
        "label": None,
        "proba": None,
        "expected_cost": None,
        "risks": None,
    }
    loaded = Advice.from_json(order)
    assert (loaded.kind, loaded.test, loaded.test_index, loaded.cost) == ("extract", 1, 1, 12.0)
    assert advice_headline(loaded) == "order Insulin" and loaded.evidence is None
    conclusion = {
        **order,
        "kind": "classify",
        "test_index": None,
        "test_name": None,
        "test_label": None,
        "cost": None,
        "label_index": 1,
        "label": "disease",
        "proba": [{"label": "healthy", "p": 0.25}, {"label": "disease", "p": 0.75}],
        "expected_cost": 25.0,
    }
    loaded = Advice.from_json(conclusion)
    assert (loaded.label_index, loaded.label, loaded.proba) == (1, "disease", (0.25, 0.75))
    assert advice_headline(loaded) == "conclude disease"
    assert explain(loaded).proba[1]["p"] == 0.75


def test_the_case_record_reads_steps_stored_in_older_shapes(trained_model, clinician):
    """The summary names the advice of steps whose stored rows predate the newer keys."""
    case = cases.start_case(user=clinician, trained_model=trained_model)
    advice = case_state(user=clinician, case=case).advice
    tests = {t.index: t for t in trained_model.dataset.tests.all()}
    step_service.mark_unavailable(user=clinician, case=case, test=tests[advice.test_index])
    DiagnosisStep.objects.filter(case=case).update(advice=_as_written_before(advice.to_json()))
    step = case.steps.get()
    assert step.shown_advice.headline == advice.headline
    client = Client()
    client.force_login(clinician)
    page = client.get(reverse("case-summary", args=[case.pk])).content.decode()
    assert advice.headline in page


# ---------------------------------------------------------------- malformed
def _fresh(toy_dataset) -> dict:
    action = decide((0.9, 0.1), classes=[0, 1], cost_matrix=MATRIX, support=20.0)
    document = advice_for(action, dataset=toy_dataset, classes=[0, 1]).to_json()
    assert document["kind"] == "classify" and document["evidence"] is not None
    return document


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "wait"}, "advice.kind: expected extract, classify or reject"),
        ({"advice": "order"}, "advice: unknown field(s) 'advice'"),
        ({"label_index": "1"}, "advice.label_index: expected a whole number"),
        ({"proba": "high"}, "advice.proba: expected a list"),
        ({"class_labels": [0, 1]}, "advice.class_labels[0]: expected text"),
        ({"evidence": {"proba": [1.0]}}, "advice.evidence.class_costs: expected a list"),
        ({"costs": {"basis": "cheap"}}, "advice.costs.basis: expected expected_cost or risk"),
        ({"branches": {}}, "advice.branches: expected a list"),
        ({"known_count": True}, "advice.known_count: expected a whole number"),
        ({"conclusion_now": {"kind": "extract"}}, "advice.conclusion_now.kind: expected"),
    ],
)
def test_a_malformed_row_is_refused_naming_its_field(toy_dataset, change, message):
    """Like the cost snapshot, a stored advice is checked field by field."""
    with pytest.raises(ModelDocumentError) as caught:
        Advice.from_json({**_fresh(toy_dataset), **change})
    assert str(caught.value).startswith(message), str(caught.value)
