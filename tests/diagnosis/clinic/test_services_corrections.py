"""Corrections with the audit kept, stale-tab refusals, overrule reasons and patient history."""

from __future__ import annotations

import pytest
import step_helpers
from django.core.exceptions import ValidationError

from diagnosis.clinic.models import DiagnosisCase, DiagnosisStep
from diagnosis.clinic.permissions import CaseNotFound
from diagnosis.clinic.selectors import case_audit
from diagnosis.clinic.selectors.cases import case_state, estimator_for
from diagnosis.clinic.services import cases
from diagnosis.clinic.services import step as step_service


def _test(trained, name):
    return trained.dataset.tests.get(name=name)


@pytest.fixture
def case(trained_model, clinician):
    return cases.start_case(user=clinician, trained_model=trained_model, patient_reference="P-1")


def _glucose(case, clinician, value=150):
    return step_helpers.post_step(
        user=clinician, case=case, action="result", test="glucose", value=value
    ).step


def test_correction_keeps_the_original_marked_and_recomputes_the_advice(
    case, clinician, trained_model
):
    """The original stays, marked corrected with who/when/why; advice uses the new value."""
    original = _glucose(case, clinician, 15)
    replacement = step_helpers.post_step(
        user=clinician,
        case=case,
        action="correct",
        position=original.position,
        value="150",
        reason="typed 15 for 150",
    ).step
    original.refresh_from_db()
    assert original.value == 15 and original.correction == DiagnosisStep.CORRECTED
    assert original.superseded_by_id == replacement.pk
    assert original.corrected_by == clinician and original.corrected_at is not None
    assert original.correction_reason == "typed 15 for 150"
    assert replacement.value == 150 and replacement.price == 0.0
    state = case_state(user=clinician, case=case)
    assert state.known == {_test(trained_model, "glucose").index: 150.0}
    assert state.accumulated_cost == pytest.approx(original.price)
    # The advice is the model's own for the corrected state.
    expected = estimator_for(trained_model).next_action(state.known, state.unavailable).to_dict()
    assert {k: state.advice.to_json()[k] for k in expected} == expected
    assert [s.position for s in state.steps] == [0, 1]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"value": 150, "reason": "again"}, "already recorded as that value"),
        ({"value": 160, "reason": "  "}, "Say why the value is corrected"),
        ({"value": 900, "reason": "typo"}, "at most 500 mg/dl"),
        ({"value": 100, "reason": "x" * 1001}, "under 1000 characters"),
    ],
)
def test_bad_corrections_are_refused_and_nothing_is_saved(case, clinician, fields, message):
    """Same value, no reason, an out-of-range value or a long reason: a message, no change."""
    step = _glucose(case, clinician)
    with pytest.raises(ValidationError, match=message):
        step_helpers.post_step(
            user=clinician, case=case, action="correct", position=step.position, **fields
        )
    step.refresh_from_db()
    assert step.correction == "" and case.steps.count() == 1


def test_only_an_active_result_can_be_corrected(case, clinician):
    """An unavailable step, a missing step and an already corrected step are refused."""
    step = _glucose(case, clinician)
    gone = step_helpers.post_step(user=clinician, case=case, action="unavailable", test="sex").step
    with pytest.raises(ValidationError, match="not a test result"):
        step_helpers.post_correction(
            user=clinician, case=case, position=gone.position, value=1, reason="r"
        )
    with pytest.raises(ValidationError, match="no step 10"):
        step_helpers.post_correction(user=clinician, case=case, position=9, value=1, reason="r")
    step_helpers.post_correction(
        user=clinician, case=case, position=step.position, value=160, reason="r"
    )
    with pytest.raises(ValidationError, match="already value corrected; correct the step"):
        step_helpers.post_correction(
            user=clinician, case=case, position=step.position, value=170, reason="r"
        )


def test_undo_keeps_the_step_and_its_price_and_the_test_is_charged_again(
    case, clinician, trained_model
):
    """An undone purchase stays paid; the group discount it gave is gone; re-ordering pays again."""
    first = _glucose(case, clinician)
    insulin = _test(trained_model, "insulin")
    before = {o.test.name: o.price_now for o in case_state(user=clinician, case=case).test_options}
    assert before["insulin"] == insulin.discounted_price
    undone = step_helpers.post_step(
        user=clinician, case=case, action="undo", reason="wrong patient's sample"
    ).step
    assert undone.pk == first.pk and undone.correction == DiagnosisStep.UNDONE
    assert undone.corrected_by == clinician and undone.correction_reason == "wrong patient's sample"
    state = case_state(user=clinician, case=case)
    assert state.known == {} and state.accumulated_cost == pytest.approx(first.price)
    after = {o.test.name: o for o in state.test_options}
    assert after["insulin"].price_now == insulin.price and after["insulin"].discount_from is None
    assert not after["glucose"].done
    again = _glucose(case, clinician)
    assert again.price == first.price
    assert case_state(user=clinician, case=case).accumulated_cost == pytest.approx(2 * first.price)


def test_undo_of_a_correction_restores_the_value_it_replaced(case, clinician, trained_model):
    """Undoing a correction's replacement makes the value it replaced count again (issue 28:
    undo means undo); earlier discounts stay shown, nothing is charged."""
    glucose = _glucose(case, clinician)
    insulin = step_helpers.post_step(
        user=clinician, case=case, action="result", test="insulin", value=100
    ).step
    step_helpers.post_correction(
        user=clinician, case=case, position=glucose.position, value=160, reason="typo"
    )
    step_helpers.post_undo(user=clinician, case=case, reason="not this patient's")
    state = case_state(user=clinician, case=case)
    assert state.known == {
        _test(trained_model, "glucose").index: glucose.value,
        _test(trained_model, "insulin").index: 100.0,
    }
    assert state.step_discounts == {insulin.position: "Glucose"}  # it was charged with it
    assert state.accumulated_cost == pytest.approx(glucose.price + insulin.price)


def test_undo_needs_a_reason_and_a_step(case, clinician):
    """Nothing to undo, or no reason: a message and nothing changed."""
    with pytest.raises(ValidationError, match="no step to undo"):
        step_helpers.post_undo(user=clinician, case=case, reason="r")
    step = _glucose(case, clinician)
    with pytest.raises(ValidationError, match="Say why the step is undone"):
        step_helpers.post_undo(user=clinician, case=case, reason="")
    step.refresh_from_db()
    assert step.is_active


def test_corrections_need_the_case_open_and_yours(case, clinician, other_clinician):
    """Another clinician gets CaseNotFound; a closed case refuses corrections and undo."""
    step = _glucose(case, clinician)
    with pytest.raises(CaseNotFound):
        step_helpers.post_step(user=other_clinician, case=case, action="undo", reason="r")
    step_service.take_step(user=clinician, case=case, action="refer")
    with pytest.raises(step_service.CaseClosed):
        step_helpers.post_step(user=clinician, case=case, action="undo", reason="r")
    with pytest.raises(step_service.CaseClosed):
        step_helpers.post_step(
            user=clinician, case=case, action="correct", position=step.position, value=1, reason="r"
        )


def test_a_stale_form_is_refused_with_what_changed_by_whom(case, clinician, trained_model):
    """A step posted from an older version names the missed step and its author; nothing saved."""
    seen = case_audit.case_version(case)
    _glucose(case, clinician)  # the other tab
    with pytest.raises(step_helpers.StaleCase) as caught:
        step_helpers.post_step(
            user=clinician, case=case, action="result", test="sex", value=1, seen=seen
        )
    message = " ".join(caught.value.messages)
    assert "step 1 (Glucose = 150 mg/dl) was recorded by you (doc)" in message
    assert "Nothing from your form was saved" in message
    assert case.steps.count() == 1
    # The same form made from the current version goes through.
    step = step_helpers.post_step(
        user=clinician,
        case=case,
        action="result",
        test="sex",
        value=1,
        seen=case_audit.case_version(case),
    ).step
    assert step.position == 1


def test_a_double_submit_saves_once_and_tells_why_the_second_failed(case, clinician):
    """The same closing request twice: one step; the second is refused as closed."""
    seen = case_audit.case_version(case)
    _glucose(case, clinician, 150)
    seen = case_audit.case_version(case)
    step_helpers.post_step(user=clinician, case=case, action="refer", seen=seen)
    with pytest.raises(step_service.CaseClosed):
        step_helpers.post_step(user=clinician, case=case, action="refer", seen=seen)
    assert case.steps.filter(kind="refer").count() == 1


def test_stale_after_a_correction_or_undo_says_so(case, clinician):
    """Corrections and undos change the version too and are worded with their reason."""
    step = _glucose(case, clinician, 15)
    seen = case_audit.case_version(case)
    step_helpers.post_correction(
        user=clinician, case=case, position=step.position, value=150, reason="decimal slip"
    )
    step_helpers.post_undo(user=clinician, case=case, reason="sample haemolysed")
    with pytest.raises(step_helpers.StaleCase) as caught:
        step_helpers.post_step(user=clinician, case=case, action="refer", seen=seen)
    message = " ".join(caught.value.messages)
    assert "corrected from 15 mg/dl to 150 mg/dl by you (doc)" in message
    assert "(reason: decimal slip)" in message
    assert "was undone by you (doc)" in message and "(reason: sample haemolysed)" in message
    assert case.is_open and not case.steps.filter(kind="refer").exists()


def test_version_counts_every_write(case, clinician):
    """case_version equals the number of events: steps, corrections and undos, one each."""
    assert case_audit.case_version(case) == 0
    step = _glucose(case, clinician, 15)
    step_helpers.post_correction(
        user=clinician, case=case, position=step.position, value=150, reason="r"
    )
    step_helpers.post_step(user=clinician, case=case, action="unavailable", test="sex")
    step_helpers.post_undo(user=clinician, case=case, reason="r")
    events = case_audit.case_events(case)
    assert [e.kind for e in events] == ["recorded", "corrected", "recorded", "undone"]
    assert case_audit.case_version(case) == len(events) == 4


@pytest.mark.parametrize("seen", ["x", -1, "1.5"])
def test_a_malformed_version_is_a_clear_error(case, clinician, seen):
    """seen must be a whole number >= 0."""
    with pytest.raises(ValidationError, match="seen must"):
        step_helpers.post_step(user=clinician, case=case, action="refer", seen=seen)
    assert case.steps.count() == 0


def test_an_overrule_reason_is_stored_and_a_followed_step_refuses_one(
    case, clinician, trained_model
):
    """A reason is kept on a step against the advice; on a followed step it is refused."""
    advice = case_state(user=clinician, case=case).advice
    assert advice.kind == "extract"
    other = next(n for n in ("glucose", "insulin", "sex") if n != advice.test_name)
    value = 1 if other == "sex" else 100
    step = step_helpers.post_step(
        user=clinician, case=case, action="result", test=other, value=value, reason="cheaper first"
    ).step
    assert not step.followed_advice and step.overrule_reason == "cheaper first"
    advice = case_state(user=clinician, case=case).advice
    if advice.kind == "extract":
        test = _test(trained_model, advice.test_name)
        with pytest.raises(ValidationError, match="follows the advice"):
            step_helpers.post_step(
                user=clinician,
                case=case,
                action="result",
                test=test.name,
                value=1 if test.is_nominal else 100,
                reason="why not",
            )
        assert case.steps.count() == 1


def test_what_someone_else_did_is_listed_for_the_owner(case, clinician, model_admin):
    """A step recorded by another user shows who and when, and marks the case in the lists."""
    _glucose(case, clinician)
    DiagnosisStep.objects.create(
        case=case, position=1, kind="refer", created_by=model_admin, advice=None
    )
    lines = [
        case_audit.describe_event(e, viewer=clinician) for e in case_audit.events_by_others(case)
    ]
    assert len(lines) == 1 and "step 2 (referred) was recorded by boss at" in lines[0]
    marked = case_audit.with_others_acted(DiagnosisCase.objects.filter(clinician=clinician))
    assert [c.others_acted for c in marked] == [True]
    notes = case_audit.step_audit(list(case.steps.all()))
    assert notes[1]["by_other"] == "boss" and notes[0]["by_other"] == ""


def test_patient_search_finds_only_your_own_cases(trained_model, clinician, other_clinician):
    """Search by reference: own cases only, outcome worded; others' cases with it never shown."""
    mine = cases.start_case(user=clinician, trained_model=trained_model, patient_reference="MRN-7")
    step_service.take_step(user=clinician, case=mine, action="classify", label="disease")
    cases.start_case(user=other_clinician, trained_model=trained_model, patient_reference="MRN-7")
    cases.start_case(user=clinician, trained_model=trained_model, patient_reference="MRN-8")
    found = case_audit.cases_for_patient(user=clinician, reference="mrn-7")
    assert [c.pk for c in found] == [mine.pk]
    assert found[0].outcome == "Classified as disease"
    assert case_audit.cases_for_patient(user=clinician, reference="  ") == []


def test_a_new_case_lists_the_patients_earlier_cases(trained_model, clinician, other_clinician):
    """Earlier cases: same reference, the user's own, before this one, latest first."""
    first = cases.start_case(user=clinician, trained_model=trained_model, patient_reference="P-9")
    step_service.take_step(user=clinician, case=first, action="refer")
    second = cases.start_case(user=clinician, trained_model=trained_model, patient_reference="p-9")
    cases.start_case(user=other_clinician, trained_model=trained_model, patient_reference="P-9")
    new = cases.start_case(user=clinician, trained_model=trained_model, patient_reference="P-9")
    earlier = case_audit.earlier_cases_of_patient(user=clinician, case=new)
    assert [c.pk for c in earlier] == [second.pk, first.pk]
    assert [c.outcome for c in earlier] == ["Open", "Referred"]
    assert case_audit.earlier_cases_of_patient(user=clinician, case=first) == []
    with pytest.raises(CaseNotFound):
        case_audit.earlier_cases_of_patient(user=other_clinician, case=new)


@pytest.fixture
def fti_model(db, model_admin):
    from test_services_batch import _thyroid  # the thyroid-like model whose FTI = TT4 / T4U

    return _thyroid(model_admin, "Thyroid-like with formula", formula=True)


def test_correcting_an_input_computes_the_derived_test_again(fti_model, clinician):
    """TT4 corrected: FTI's old step is marked undone and FTI is recomputed, at no price."""
    case = cases.start_case(user=clinician, trained_model=fti_model)
    tests = {t.name: t for t in fti_model.dataset.tests.all()}
    tt4 = step_service.record_result(user=clinician, case=case, test=tests["TT4"], value=120)
    step_service.record_result(user=clinician, case=case, test=tests["T4U"], value=0.8)
    fti = case.steps.get(test=tests["FTI"])
    assert fti.value == pytest.approx(150.0)
    cost = case_state(user=clinician, case=case).accumulated_cost
    with pytest.raises(ValidationError, match="FTI is computed from its inputs"):
        step_helpers.post_correction(
            user=clinician, case=case, position=fti.position, value=160, reason="r"
        )
    step_helpers.post_correction(
        user=clinician, case=case, position=tt4.position, value=96, reason="typo"
    )
    fti.refresh_from_db()
    assert fti.correction == DiagnosisStep.UNDONE and "corrected TT4" in fti.correction_reason
    state = case_state(user=clinician, case=case)
    assert state.known[tests["FTI"].index] == pytest.approx(96 / 0.8)
    assert state.known[tests["TT4"].index] == 96
    assert state.accumulated_cost == pytest.approx(cost)
