"""Undo means undo: an undone correction restores the value it replaced; adherence by kind."""

from __future__ import annotations

import step_helpers
from django.urls import reverse

from diagnosis.clinic.models import DiagnosisStep
from diagnosis.clinic.selectors import case_audit
from diagnosis.clinic.selectors.cases import case_state
from diagnosis.clinic.services import cases


def _act(case, clinician, **kwargs):
    return step_helpers.post_step(user=clinician, case=case, **kwargs).step


def test_undoing_a_correction_restores_the_value_it_replaced(trained_model, clinician, client):
    """The original value counts again, marked restored; the record and the screen say so."""
    case = cases.start_case(user=clinician, trained_model=trained_model)
    original = _act(case, clinician, action="result", test="glucose", value=150)
    paid = case_state(user=clinician, case=case).accumulated_cost
    replacement = _act(
        case, clinician, action="correct", position=0, value="15", reason="wrong patient's value"
    )
    undone = _act(case, clinician, action="undo", reason="the first value was right")
    assert undone.pk == replacement.pk
    original.refresh_from_db()
    replacement.refresh_from_db()
    assert original.correction == DiagnosisStep.RESTORED and original.is_active
    assert replacement.correction == DiagnosisStep.UNDONE and not replacement.is_active
    state = case_state(user=clinician, case=case)
    glucose = original.test.index
    assert state.known == {glucose: 150.0}
    assert state.accumulated_cost == paid  # nothing charged twice, nothing refunded
    assert not (state.advice.kind == "extract" and state.advice.test_index == glucose)
    notes = case_audit.step_audit(state.steps)
    assert notes[0]["mark"].startswith("Restored: 150 mg/dl counts again")
    assert "Corrected to" not in notes[0]["mark"]
    assert "step 1's 150 mg/dl counts again" in notes[1]["mark"]
    events = [case_audit.describe_event(e) for e in case_audit.case_events(case)]
    assert any("undoing the correction of step 1: 150 mg/dl counts again" in e for e in events)
    client.force_login(clinician)
    page = client.get(reverse("case-detail", args=[case.pk])).content.decode()
    step_1 = page.split('id="step-1"', 1)[1].split("</tr>", 1)[0]
    assert "<s>" not in step_1 and "correction undone" in step_1
    # undoing again undoes the restored value itself: it no longer counts
    _act(case, clinician, action="undo", reason="no glucose after all")
    original.refresh_from_db()
    assert original.correction == DiagnosisStep.UNDONE
    assert case_state(user=clinician, case=case).known == {}


def test_undoing_a_paid_test_says_it_was_paid_before_asking_again(trained_model, clinician, client):
    """When the advice asks again for a test whose paid step was undone, the card says so."""
    case = cases.start_case(user=clinician, trained_model=trained_model)
    advice = case_state(user=clinician, case=case).advice
    assert advice.kind == "extract" and advice.cost > 0
    test = trained_model.dataset.tests.get(index=advice.test_index)
    value = test.choices[0]["code"] if test.is_nominal else 150
    step = _act(case, clinician, action="result", test=test.name, value=value)
    assert step.price > 0
    _act(case, clinician, action="undo", reason="entered on the wrong case")
    state = case_state(user=clinician, case=case)
    assert state.advice.test_index == test.index  # the same first advice
    assert state.advised_paid_before.pk == step.pk
    client.force_login(clinician)
    page = client.get(reverse("case-detail", args=[case.pk])).content.decode()
    assert 'id="paid-before"' in page and f"paid for in step {step.position + 1}" in page


def test_corrections_and_unavailable_tests_are_not_counted_against_the_advice(
    trained_model, clinician, client
):
    """Adherence counts choices only; a correction and a "not available" are counted apart."""
    case = cases.start_case(user=clinician, trained_model=trained_model)
    glucose = _act(case, clinician, action="result", test="glucose", value=150)
    _act(case, clinician, action="correct", position=0, value="160", reason="typo")
    _act(case, clinician, action="unavailable", test="insulin")
    advice = case_state(user=clinician, case=case).advice
    if advice.kind == "extract":
        _act(case, clinician, action="unavailable", test=advice.test_name)
        advice = case_state(user=clinician, case=case).advice
    closing = _act(
        case,
        clinician,
        action="refer" if advice.kind == "reject" else "classify",
        **({} if advice.kind == "reject" else {"label": advice.label_index}),
    )
    steps = case_state(user=clinician, case=case).steps
    counts = case_audit.adherence(steps)
    n_unavailable = sum(s.kind == DiagnosisStep.UNAVAILABLE for s in steps)
    assert counts["corrections"] == 1 and counts["unavailable"] == n_unavailable >= 1
    assert counts["advised"] == 2  # the glucose result and the conclusion
    assert counts["followed"] == glucose.followed_advice + closing.followed_advice
    client.force_login(clinician)
    page = client.get(reverse("case-summary", args=[case.pk])).content.decode()
    assert f"{counts['followed']} of 2 choices" in page
    assert "1 correction of a typed value" in page
