"""Several results in one form (free questions, a derived test with its inputs), and derived FTI."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from thyroid_like import CLASSES, THYROID_TESTS, thyroid_like_rows
from training_helpers import approve

from diagnosis.catalog.admin_forms import DiagnosticTestForm
from diagnosis.catalog.models import DiagnosticTest
from diagnosis.catalog.services.datasets import create_dataset
from diagnosis.clinic.models import DiagnosisStep
from diagnosis.clinic.selectors.cases import case_state
from diagnosis.clinic.services import cases
from diagnosis.clinic.services import step as step_service
from diagnosis.training.models import TrainedModel
from diagnosis.training.services import training
from learners.derived import DerivedFormula

FORMULA = {"formula": "TT4 / T4U", "formula_tolerance": 0.05}
_FITTED: dict[str, dict] = {}


def _thyroid(model_admin, name: str, *, formula: bool) -> TrainedModel:
    """Thyroid-like data (two free answers, four labs, FTI) and a conditioned-loss model on it."""
    tests = [{**t, **FORMULA} if formula and t["name"] == "FTI" else dict(t) for t in THYROID_TESTS]
    rows, labels = thyroid_like_rows()
    dataset = create_dataset(
        name=name,
        class_labels=CLASSES,
        tests=tests,
        rows=rows,
        labels=labels,
        error_matrices=[
            {
                "name": "Uniform",
                "matrix": [[0 if i == j else 1000 for j in range(3)] for i in range(3)],
            }
        ],
    )
    requested = training.create_training(
        user=model_admin,
        dataset=dataset,
        learner="conditioned_loss",
        params={"reward": 100, "penalty": 10000},
        error_matrix=dataset.error_matrices.get(),
    )
    if name in _FITTED:  # same data and prices: reuse the fit of the first test
        TrainedModel.objects.filter(pk=requested.pk).update(
            status=TrainedModel.SUCCEEDED, progress=1.0, **_FITTED[name]
        )
        requested.refresh_from_db()
        return approve(requested, model_admin)
    trained = training.run_training(trained_model_id=requested.pk)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    _FITTED[name] = {f: getattr(trained, f) for f in ("model_json", "metrics", "fit_seconds")}
    return approve(trained, model_admin)


@pytest.fixture
def with_formula(db, model_admin):
    return _thyroid(model_admin, "Thyroid-like with formula", formula=True)


@pytest.fixture
def without_formula(db, model_admin):
    return _thyroid(model_admin, "Thyroid-like, FTI typed", formula=False)


def _steps(case):
    return list(case.steps.select_related("test").order_by("position"))


def test_free_answers_are_recorded_as_separate_free_steps_in_one_call(with_formula, clinician):
    """Each answer is its own step, priced 0 by the snapshot, following the advice of its moment."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    advice = case_state(user=clinician, case=case).advice
    assert advice.kind == "extract" and advice.test_name == "age"
    steps = step_service.record_results(
        user=clinician, case=case, results={"age": 54, "on_thyroxine": "yes"}
    )
    assert [(s.test.name, s.kind, s.value, s.price) for s in steps] == [
        ("age", DiagnosisStep.RESULT, 54.0, 0.0),
        ("on_thyroxine", DiagnosisStep.RESULT, 1.0, 0.0),
    ]
    assert all(s.followed_advice for s in steps)
    assert steps[1].advice["test_name"] == "on_thyroxine"  # the advice before that step
    state = case_state(user=clinician, case=case)
    assert state.known == {0: 54.0, 1: 1.0} and state.accumulated_cost == 0.0


def test_unknown_answers_are_marked_unavailable(with_formula, clinician):
    """None means "unknown / not available": an unavailable step, free."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    steps = step_service.record_results(
        user=clinician, case=case, results={"age": 61, "on_thyroxine": None}
    )
    assert [s.kind for s in steps] == [DiagnosisStep.RESULT, DiagnosisStep.UNAVAILABLE]
    assert case_state(user=clinician, case=case).unavailable == {1}


def test_one_bad_value_saves_nothing_and_names_each_field(with_formula, clinician):
    """All or nothing: per-field messages keyed by test name, and no step saved."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    with pytest.raises(ValidationError) as caught:
        step_service.record_results(
            user=clinician, case=case, results={"age": "old", "on_thyroxine": "maybe"}
        )
    errors = caught.value.message_dict
    assert set(errors) == {"age", "on_thyroxine"}
    assert "not a number" in errors["age"][0] and "maybe" in errors["on_thyroxine"][0]
    assert not case.steps.exists()
    with pytest.raises(ValidationError) as caught:
        step_service.record_results(user=clinician, case=case, results={"age": 40, "nonsense": 1})
    assert set(caught.value.message_dict) == {"nonsense"}
    assert not case.steps.exists()


def test_a_known_test_cannot_be_answered_again_in_a_batch(with_formula, clinician):
    """A test with a result is refused, naming it; the rest of the batch is not saved."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    step_service.record_results(user=clinician, case=case, results={"age": 40})
    with pytest.raises(ValidationError) as caught:
        step_service.record_results(
            user=clinician, case=case, results={"age": 41, "on_thyroxine": 0}
        )
    assert "already has a result" in caught.value.message_dict["age"][0]
    assert case.steps.count() == 1


def test_empty_or_malformed_batch_is_refused(with_formula, clinician):
    """No results, or not an object of names, is a clear error."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    for bad in ({}, [], None, "age=4"):
        with pytest.raises(ValidationError, match="object of test names"):
            step_service.record_results(user=clinician, case=case, results=bad)


def _record_inputs(case, clinician, tt4=120.0, t4u=0.8):
    tests = {t.name: t for t in case.trained_model.dataset.tests.all()}
    step_service.record_result(user=clinician, case=case, test=tests["TT4"], value=tt4)
    step_service.record_result(user=clinician, case=case, test=tests["T4U"], value=t4u)
    return tests


def test_fti_is_computed_when_its_inputs_are_recorded(with_formula, clinician):
    """After TT4 and T4U, an FTI step holds TT4 / T4U at no price; no one types it."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    _record_inputs(case, clinician, tt4=120.0, t4u=0.8)
    steps = _steps(case)
    assert [s.test.name for s in steps] == ["TT4", "T4U", "FTI"]
    assert steps[-1].value == pytest.approx(150.0) and steps[-1].price == 0.0
    state = case_state(user=clinician, case=case)
    assert state.accumulated_cost == pytest.approx(14.51 + 11.41)
    assert not (state.advice.kind == "extract" and state.advice.test_name == "FTI")


def test_typed_fti_contradicting_its_inputs_is_refused(with_formula, clinician):
    """A typed FTI more than the tolerance away from TT4 / T4U is refused, saying why."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    with pytest.raises(ValidationError) as caught:
        step_service.record_results(
            user=clinician, case=case, results={"TT4": 120, "T4U": 0.8, "FTI": 170}
        )
    message = caught.value.message_dict["FTI"][0]
    assert "contradicts" in message and "TT4 / T4U = 150" in message and "5%" in message
    assert not case.steps.exists()


def test_typed_fti_within_tolerance_is_accepted_with_its_inputs(with_formula, clinician):
    """FTI typed with its inputs and agreeing within 5% is accepted; the computed value is kept."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    steps = step_service.record_results(
        user=clinician, case=case, results={"FTI": 153, "TT4": 120, "T4U": 0.8}
    )
    assert [(s.test.name, s.price) for s in steps] == [
        ("TT4", 14.51),
        ("T4U", 11.41),
        ("FTI", 0.0),
    ]
    assert steps[-1].value == pytest.approx(150.0)


def test_fti_alone_is_never_a_separate_paid_step(with_formula, without_formula, clinician):
    """Typing FTI before its inputs is refused with or without a formula, nothing charged."""
    for trained, hint in ((with_formula, "computed for you"), (without_formula, "together with")):
        case = cases.start_case(user=clinician, trained_model=trained)
        fti = trained.dataset.tests.get(name="FTI")
        with pytest.raises(ValidationError, match=hint):
            step_service.take_step(user=clinician, case=case, action="result", test=fti, value=150)
        assert not case.steps.exists()


def test_without_a_formula_fti_is_typed_with_its_inputs(without_formula, clinician):
    """No formula: FTI comes with TT4 and T4U in one form, free, any value accepted."""
    case = cases.start_case(user=clinician, trained_model=without_formula)
    steps = step_service.record_results(
        user=clinician, case=case, results={"TT4": 120, "T4U": 0.8, "FTI": 171}
    )
    assert [(s.test.name, s.value, s.price) for s in steps] == [
        ("TT4", 120.0, 14.51),
        ("T4U", 0.8, 11.41),
        ("FTI", 171.0, 0.0),
    ]


def test_fti_needs_every_input_known(with_formula, clinician):
    """An input marked unknown in the same form makes a typed FTI impossible, said per field."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    with pytest.raises(ValidationError) as caught:
        step_service.record_results(
            user=clinician, case=case, results={"TT4": 120, "T4U": None, "FTI": 150}
        )
    assert "unavailable" in caught.value.message_dict["FTI"][0]
    assert not case.steps.exists()


def test_formula_is_snapshotted_with_the_model(with_formula, clinician):
    """Editing the formula after training changes nothing for the model's cases."""
    assert with_formula.cost_snapshot["formulas"] == {
        "FTI": {"formula": "TT4 / T4U", "tolerance": 0.05}
    }
    DiagnosticTest.objects.filter(dataset=with_formula.dataset, name="FTI").update(
        formula="TT4 / T4U * 2", formula_tolerance=0.5
    )
    case = cases.start_case(user=clinician, trained_model=with_formula)
    _record_inputs(case, clinician, tt4=100.0, t4u=1.25)
    assert _steps(case)[-1].value == pytest.approx(80.0)
    snapshot = with_formula.snapshot  # the prices still load, one per test
    assert snapshot.prices.n_features == len(snapshot.names)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"formula": "TT4 / TSH"}, "not one of its inputs"),
        ({"formula": "TT4 * 2"}, "does not use T4U"),
        ({"formula": "__import__('os')"}, "only test names"),
        ({"formula": "TT4 / T4U", "formula_tolerance": 2}, "tolerance"),
        ({"formula": "TT4 / T4U", "derived_from": []}, "no inputs"),
    ],
)
def test_create_dataset_refuses_a_bad_formula(db, changes, message):
    """A formula using other tests, ignoring an input, or not arithmetic is refused."""
    tests = [{**t, **changes} if t["name"] == "FTI" else t for t in THYROID_TESTS]
    rows, labels = thyroid_like_rows(20)
    with pytest.raises(ValidationError, match=message):
        create_dataset(name="Bad", class_labels=CLASSES, tests=tests, rows=rows, labels=labels)


def test_admin_form_checks_the_formula_against_derived_from(with_formula):
    """The admin's test form shows the formula error on the formula field."""
    fti = with_formula.dataset.tests.get(name="FTI")
    data = {
        "index": fti.index,
        "name": "FTI",
        "label": "FTI",
        "unit": "",
        "kind": "numeric",
        "choices": "",
        "price": 0,
        "discounted_price": 0,
        "derived_from": "TT4, T4U",  # the admin's comma-separated names
        "formula": "TT4 ** T4U",
        "formula_tolerance": 0.05,
    }
    form = DiagnosticTestForm(data=data, instance=fti)
    assert not form.is_valid()
    assert "**" in form.errors["formula"][0]
    form = DiagnosticTestForm(data={**data, "formula": " TT4/T4U "}, instance=fti)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["formula"] == "TT4/T4U"
    assert DerivedFormula.parse(form.cleaned_data["formula"]).inputs == ("TT4", "T4U")


# ---------------------------------------------------------------------- the JSON API
def _post_json(user, case, body):
    """POST ``body`` to the case's step API as ``user`` (session login, like test_api)."""
    from django.test import Client
    from django.urls import reverse
    from login_helpers import login_request

    client = Client()
    assert client.login(
        request=login_request(), username=user.username, password="pw-for-tests-123"
    )
    return client.post(
        reverse("api-case-step", args=[case.pk]),
        data=json.dumps(body),
        content_type="application/json",
    )


def test_api_records_free_answers_in_one_post(with_formula, clinician):
    """{"action": "results"} saves each answer as its own step; null is unknown."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    response = _post_json(
        clinician, case, {"action": "results", "results": {"age": 70, "on_thyroxine": None}}
    )
    assert response.status_code == 200, response.content
    steps = response.json()["steps"]
    assert [(s["test"], s["kind"], s["price"]) for s in steps] == [
        ("age", "result", 0.0),
        ("on_thyroxine", "unavailable", 0.0),
    ]


def test_api_batch_errors_are_per_test_and_save_nothing(with_formula, clinician):
    """A bad batch answers 400 with each test's messages under its name; nothing saved."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    results = {"TT4": 120, "T4U": 0.8, "FTI": 300, "on_thyroxine": "maybe"}
    response = _post_json(clinician, case, {"action": "results", "results": results})
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert set(errors) == {"FTI", "on_thyroxine"}
    assert "contradicts" in errors["FTI"][0] and "maybe" in errors["on_thyroxine"][0]
    assert not case.steps.exists()
    response = _post_json(clinician, case, {"action": "results", "results": [1, 2]})
    assert response.status_code == 400 and "object" in response.json()["error"]


def test_take_results_refuses_a_stale_form_and_keeps_an_overrule_reason(with_formula, clinician):
    """A form from an older case version saves nothing; a reason goes on the overruling steps."""
    import step_helpers

    case = cases.start_case(user=clinician, trained_model=with_formula)
    step_service.record_results(user=clinician, case=case, results={"age": 40})
    with pytest.raises(step_helpers.StaleCase):
        step_helpers.post_results(user=clinician, case=case, results={"on_thyroxine": 0}, seen=0)
    assert case.steps.count() == 1
    steps = step_helpers.post_results(
        user=clinician,
        case=case,
        results={"TT4": 120, "T4U": 0.8},
        seen=1,
        reason="labs already drawn",
    )
    assert [(s.test.name, s.followed_advice) for s in steps][:2] == [
        ("TT4", False),
        ("T4U", False),
    ]
    stored = {s.test.name: s.overrule_reason for s in _steps(case)}
    assert stored["TT4"] == stored["T4U"] == "labs already drawn"
    assert stored["age"] == ""


def test_computed_value_keeps_four_significant_digits(with_formula, clinician):
    """FTI from TT4 90 and T4U 1.06 is stored as 84.91, not 84.9057."""
    case = cases.start_case(user=clinician, trained_model=with_formula)
    _record_inputs(case, clinician, tt4=90.0, t4u=1.06)
    assert _steps(case)[-1].value == 84.91
