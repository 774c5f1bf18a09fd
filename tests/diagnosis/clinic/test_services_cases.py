"""The clinician's case flow: prices, validation, permissions, closing, resuming."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError

from diagnosis.clinic.models import DiagnosisCase, DiagnosisStep
from diagnosis.clinic.permissions import CaseNotFound
from diagnosis.clinic.selectors.cases import case_state
from diagnosis.clinic.services import cases
from diagnosis.clinic.services import step as step_service
from diagnosis.training.selectors import model_cache


def _test(trained, name):
    return trained.dataset.tests.get(name=name)


@pytest.fixture
def case(trained_model, clinician):
    return cases.start_case(user=clinician, trained_model=trained_model, patient_reference="P-1")


def test_group_discount_is_charged_in_the_case_flow(case, clinician, trained_model):
    """The second blood test costs its discounted price once the first is done."""
    first = step_service.record_result(
        user=clinician, case=case, test=_test(trained_model, "glucose"), value=150
    )
    before = {o.test.name: o.price_now for o in case_state(user=clinician, case=case).test_options}
    second = step_service.record_result(
        user=clinician, case=case, test=_test(trained_model, "insulin"), value=120
    )
    state = case_state(user=clinician, case=case)
    assert first.price == 10.0
    assert before["insulin"] == 3.0 and before["glucose"] == 0.0
    assert second.price == 3.0
    assert state.accumulated_cost == pytest.approx(13.0)
    assert [s.position for s in state.steps] == [0, 1]


def test_ungrouped_test_costs_full_price_after_a_blood_test(case, clinician, trained_model):
    """A test outside the group gets no discount from a grouped test."""
    step_service.record_result(
        user=clinician, case=case, test=_test(trained_model, "glucose"), value=150
    )
    step = step_service.record_result(
        user=clinician, case=case, test=_test(trained_model, "sex"), value=1
    )
    assert step.price == 1.0


def test_step_stores_the_advice_shown_and_whether_it_was_followed(case, clinician, trained_model):
    """Following the recommended test is recorded as followed; another test is not."""
    advice = case_state(user=clinician, case=case).advice
    assert advice.kind == "extract"
    recommended = trained_model.dataset.tests.get(index=advice.test_index)
    other = trained_model.dataset.tests.exclude(pk=recommended.pk).filter(kind="numeric").first()
    step = step_service.record_result(user=clinician, case=case, test=other, value=100)
    assert step.advice == advice.to_json() and step.shown_advice == advice
    assert step.followed_advice is False
    state = case_state(user=clinician, case=case)
    if state.advice.kind == "extract":
        test = trained_model.dataset.tests.get(index=state.advice.test_index)
        followed = step_service.record_result(
            user=clinician, case=case, test=test, value=1 if test.is_nominal else 100
        )
        assert followed.followed_advice is True


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("glucose", 600, "at most 500 mg/dl"),
        ("glucose", -1, "at least 0 mg/dl"),
        ("glucose", "abc", "is not a number"),
        ("glucose", float("nan"), "finite"),
        ("sex", 7, r"is not one of the Sex results: 0 \(female\), 1 \(male\)"),
        ("sex", 0.5, "is not one of"),
    ],
)
def test_bad_values_are_rejected_with_a_clear_message(
    case, clinician, trained_model, name, value, message
):
    """Out-of-range numbers, non-numbers, unknown codes raise ValidationError; nothing is saved."""
    with pytest.raises(ValidationError, match=message):
        step_service.record_result(
            user=clinician, case=case, test=_test(trained_model, name), value=value
        )
    assert case.steps.count() == 0


def test_nominal_value_may_be_given_by_its_label(case, clinician, trained_model):
    """A nominal result given as its choice label is stored as the code."""
    step = step_service.record_result(
        user=clinician, case=case, test=_test(trained_model, "sex"), value="male"
    )
    assert step.value == 1.0


def test_a_result_cannot_be_recorded_twice(case, clinician, trained_model):
    """A second result for the same test is refused."""
    test = _test(trained_model, "glucose")
    step_service.record_result(user=clinician, case=case, test=test, value=100)
    with pytest.raises(ValidationError, match="already has a result"):
        step_service.record_result(user=clinician, case=case, test=test, value=110)


def test_another_clinician_cannot_see_or_act_on_the_case(case, other_clinician, trained_model):
    """Only the case's clinician may read or change it; others are told it does not exist."""
    with pytest.raises(CaseNotFound, match=f"There is no case {case.pk}"):
        case_state(user=other_clinician, case=case)
    with pytest.raises(CaseNotFound):
        step_service.record_result(
            user=other_clinician, case=case, test=_test(trained_model, "glucose"), value=100
        )
    with pytest.raises(CaseNotFound):
        step_service.classify(user=other_clinician, case=case, label=0)
    assert case.steps.count() == 0


@pytest.mark.parametrize("flags", [{"is_staff": True}, {"is_staff": True, "is_superuser": True}])
def test_staff_and_superusers_outside_the_clinicians_get_no_case(case, flags):
    """Neither is_staff nor is_superuser opens a patient's case: only the clinicians group does."""
    boss = User.objects.create_user("boss-no-clinician", password="x-123456789", **flags)
    with pytest.raises(CaseNotFound):
        case_state(user=boss, case=case)
    with pytest.raises(CaseNotFound):
        step_service.take_step(user=boss, case=case, action="refer")
    assert case.steps.count() == 0 and case.is_open


def test_user_without_role_cannot_start_a_case(trained_model):
    """A user outside the clinicians group gets PermissionDenied."""
    nobody = User.objects.create_user("nobody", password="x-123456789")
    with pytest.raises(PermissionDenied):
        cases.start_case(user=nobody, trained_model=trained_model)


def test_closed_case_accepts_no_more_steps(case, clinician, trained_model):
    """After classifying, results, unavailability, classify and refer are all refused."""
    step_service.classify(user=clinician, case=case, label=1)
    assert case.status == DiagnosisCase.CLASSIFIED and case.final_label == 1
    test = _test(trained_model, "glucose")
    for action in (
        lambda: step_service.record_result(user=clinician, case=case, test=test, value=100),
        lambda: step_service.mark_unavailable(user=clinician, case=case, test=test),
        lambda: step_service.classify(user=clinician, case=case, label=0),
        lambda: step_service.refer(user=clinician, case=case),
    ):
        with pytest.raises(ValidationError, match="closed"):
            action()
    assert case.steps.count() == 1


def test_classify_overruling_the_advice_is_recorded(case, clinician, trained_model):
    """A label different from the advised one is stored with followed_advice False."""
    step_service.record_result(
        user=clinician, case=case, test=_test(trained_model, "glucose"), value=70
    )
    advice = case_state(user=clinician, case=case).advice
    assert advice.kind == "classify"
    other = 1 - advice.label_index
    step = step_service.classify(user=clinician, case=case, label=other)
    assert step.kind == DiagnosisStep.CLASSIFY and step.label == other
    assert step.followed_advice is False and step.advice == advice.to_json()
    assert step.shown_advice == advice


def test_classify_rejects_an_unknown_class(case, clinician):
    """A class number outside the dataset's classes is refused."""
    with pytest.raises(ValidationError, match=r"not one of 0 \(healthy\), 1 \(disease\)"):
        step_service.classify(user=clinician, case=case, label=5)


def test_refer_closes_the_case(case, clinician):
    """Referring closes the case as referred, price 0."""
    step = step_service.refer(user=clinician, case=case)
    assert step.price == 0.0 and case.status == DiagnosisCase.REFERRED and case.closed_at


def test_unavailable_test_is_free_and_changes_the_advice(case, clinician, trained_model):
    """Marking the advised test unavailable costs nothing and the model stops asking for it."""
    advice = case_state(user=clinician, case=case).advice
    test = trained_model.dataset.tests.get(index=advice.test_index)
    step = step_service.mark_unavailable(user=clinician, case=case, test=test)
    state = case_state(user=clinician, case=case)
    assert step.price == 0.0
    assert state.unavailable == {test.index}
    assert state.advice.test_index != test.index
    with pytest.raises(ValidationError, match="already marked unavailable"):
        step_service.mark_unavailable(user=clinician, case=case, test=test)


def test_state_is_recomputed_from_the_database_when_resumed(case, clinician, trained_model):
    """A case reloaded from the DB with an empty model cache shows the same state and advice."""
    step_service.record_result(
        user=clinician, case=case, test=_test(trained_model, "glucose"), value=180
    )
    step_service.mark_unavailable(user=clinician, case=case, test=_test(trained_model, "sex"))
    before = case_state(user=clinician, case=case)
    model_cache.clear()
    reloaded = DiagnosisCase.objects.get(pk=case.pk)
    after = case_state(user=clinician, case=reloaded)
    assert after.known == before.known == {0: 180.0}
    assert after.unavailable == before.unavailable == {2}
    assert after.accumulated_cost == before.accumulated_cost == 10.0
    assert after.advice == before.advice
    assert [o.price_now for o in after.test_options] == [o.price_now for o in before.test_options]


def test_prices_come_from_the_training_snapshot(case, clinician, trained_model):
    """Changing a dataset price after training does not change what the model's cases cost."""
    trained_model.dataset.tests.filter(name="glucose").update(price=99.0, discounted_price=99.0)
    step = step_service.record_result(
        user=clinician, case=case, test=_test(trained_model, "glucose"), value=100
    )
    assert step.price == 10.0


def test_cannot_start_a_case_with_an_unready_model(trained_model, clinician):
    """A model that has not succeeded cannot be used for patients."""
    trained_model.status = "failed"
    trained_model.save()
    with pytest.raises(ValidationError, match="not ready"):
        cases.start_case(user=clinician, trained_model=trained_model)


def test_take_step_is_the_one_entry_for_every_action(case, clinician, trained_model):
    """take_step records a result by test name, refuses unknown actions/tests and closed cases."""
    step = step_service.take_step(
        user=clinician, case=case, action="result", test="glucose", value="150"
    )
    assert step.kind == DiagnosisStep.RESULT and step.value == 150.0 and step.price == 10.0
    with pytest.raises(ValidationError, match="action must be one of"):
        step_service.take_step(user=clinician, case=case, action="dance")
    with pytest.raises(ValidationError, match="Choose one of this model's tests"):
        step_service.take_step(user=clinician, case=case, action="unavailable", test="nope")
    step = step_service.take_step(user=clinician, case=case, action="classify", label="disease")
    assert step.label == trained_model.dataset.class_labels.index("disease")
    case.refresh_from_db()
    with pytest.raises(step_service.CaseClosed):
        step_service.take_step(user=clinician, case=case, action="refer")
    assert case.steps.count() == 2


def test_take_step_checks_the_clinician(case, other_clinician):
    """Another clinician's step is refused before anything is checked or saved."""
    with pytest.raises(CaseNotFound):
        step_service.take_step(user=other_clinician, case=case, action="refer")
    assert case.steps.count() == 0


def test_a_step_context_serves_only_its_own_case_inside_its_transaction(
    case, clinician, trained_model
):
    """A StepContext is refused for another case, and outside the transaction that locked it."""
    from django.db import transaction

    other = cases.start_case(user=clinician, trained_model=trained_model)
    with transaction.atomic():
        locked = step_service._lock_open_case(clinician, case)
        context = step_service.hold_steps(locked)
        with pytest.raises(ValueError, match="given for case"):
            step_service.take_step(user=clinician, case=other, action="refer", context=context)
    with pytest.raises(RuntimeError, match="outside the transaction"):
        step_service.take_step(user=clinician, case=locked, action="refer", context=context)
    assert not DiagnosisStep.objects.filter(case__in=[case, other]).exists()


def test_apply_step_answers_with_the_case_as_the_step_left_it(case, clinician):
    """apply_step's answer, made from what the step held, has every step (the new one
    included), the advice and the cost a fresh read of the case has."""
    import step_helpers

    taken = step_helpers.post_step(
        user=clinician, case=case, action="result", test="glucose", value=150
    )
    held = taken.state
    assert held.steps[-1] is taken.step
    fresh = case_state(user=clinician, case=cases.DiagnosisCase.objects.get(pk=case.pk))
    assert [(s.pk, s.position, s.price) for s in held.steps] == [
        (s.pk, s.position, s.price) for s in fresh.steps
    ]
    assert held.advice == fresh.advice and held.accumulated_cost == fresh.accumulated_cost
    assert [(o.test.name, o.price_now) for o in held.test_options] == [
        (o.test.name, o.price_now) for o in fresh.test_options
    ]


def test_a_step_services_state_decides_like_the_screens(case, clinician):
    """compute_case_state(for_screen=False) has the screen state's steps, results, advice and
    cost, without the priced options or explanation it skips."""
    from diagnosis.clinic.selectors.cases import compute_case_state

    step_service.take_step(user=clinician, case=case, action="result", test="glucose", value=150)
    full = compute_case_state(case)
    lean = compute_case_state(case, for_screen=False)
    assert [s.pk for s in lean.steps] == [s.pk for s in full.steps]
    assert (lean.known, lean.unavailable, lean.advice) == (
        full.known,
        full.unavailable,
        full.advice,
    )
    assert lean.accumulated_cost == full.accumulated_cost and lean.is_open == full.is_open
    assert full.test_options and not lean.test_options and lean.explanation is None


def test_entering_an_input_of_the_advised_derived_test_follows_the_advice():
    """Advice to order a derived test (FTI from TT4 and T4U) is followed by a result for it or
    for any of its inputs, nested ones too; another test, or advice to conclude, is not."""
    from diagnosis.clinic.services.step import _follows_extract
    from diagnosis.shared.advice import Advice
    from learners.costs import CostModel

    # 0 TT4, 1 T4U, 2 FTI = f(TT4, T4U), 3 TSH, 4 a ratio derived from FTI and TSH
    prices = CostModel([14.51, 11.41, 0.0, 22.78, 0.0], derived={2: (0, 1), 4: (2, 3)})
    fti = Advice(kind="extract", test_index=2)
    assert [_follows_extract(fti, i, prices) for i in range(5)] == [True, True, True, False, False]
    ratio = Advice(kind="extract", test_index=4)
    assert all(_follows_extract(ratio, i, prices) for i in range(5))
    assert not _follows_extract(Advice(kind="classify", label_index=0), 0, prices)
    assert not _follows_extract(Advice(kind="extract", test_index=3), 0, prices)
