"""Plausible ranges and whole-number counts: asked before saving, refused, kept with the step."""

from __future__ import annotations

import html
import json

import pytest
import step_helpers
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from login_helpers import login_request

from diagnosis.catalog.models import DiagnosticTest
from diagnosis.catalog.services.datasets import create_dataset
from diagnosis.clinic.models import DiagnosisCase, DiagnosisStep
from diagnosis.clinic.selectors.case_audit import case_events, confirmed_range_text, describe_event
from diagnosis.clinic.services import step as step_service
from diagnosis.integration.services.api_tokens import issue_api_token
from diagnosis.management import demo_data
from diagnosis.shared.validation import clean_plausible_range, clean_request_field

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-123"  # the password tests/diagnosis/conftest.py gives every user


@pytest.fixture
def ranged(toy_dataset):
    """The toy dataset with glucose expected in 40–400 mg/dl and insulin a whole number."""
    DiagnosticTest.objects.filter(dataset=toy_dataset, name="glucose").update(
        plausible_min=40, plausible_max=400
    )
    DiagnosticTest.objects.filter(dataset=toy_dataset, name="insulin").update(integer_only=True)
    return toy_dataset


@pytest.fixture
def case(ranged, clinician, trained_model):
    return DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)


def _test(case, name):
    return DiagnosticTest.objects.get(dataset=case.trained_model.dataset, name=name)


def _session(user) -> Client:
    client = Client()
    assert client.login(request=login_request(), username=user.username, password=PASSWORD)
    return client


def _post(client, url, body):
    return client.post(url, data=json.dumps(body), content_type="application/json")


# ----------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("low", "high", "hard", "whole", "message"),
    [
        (300, 40, (0, 500), False, "The plausible range of Glucose starts above where it ends"),
        (-5, 300, (0, 500), False, "starts at -5 mg/dl, below its minimum 0 mg/dl"),
        (40, 600, (0, 500), False, "ends at 600 mg/dl, above its maximum 500 mg/dl"),
        (0.5, 3, (0, 3), True, "Glucose takes whole numbers only, so its plausible range must"),
        ("abc", None, (0, 500), False, "Plausible from of Glucose: 'abc' is not a number"),
    ],
)
def test_plausible_range_is_checked_against_the_hard_range(low, high, hard, whole, message):
    """A plausible range must be ordered, inside the hard range, and whole for a count."""
    with pytest.raises(ValidationError) as caught:
        clean_plausible_range(
            low,
            high,
            min_value=hard[0],
            max_value=hard[1],
            integer_only=whole,
            name="Glucose",
            unit="mg/dl",
        )
    assert message in " ".join(caught.value.messages)


def test_create_dataset_keeps_plausible_range_and_refuses_one_outside(toy_dataset):
    """An import keeps a plausible range and whole-number flag, refuses one beyond min/max."""
    rows, labels = [[100.0], [200.0]], [0, 1]
    spec = {"name": "chol", "label": "Cholesterol", "unit": "mg/dl", "min_value": 50}
    made = create_dataset(
        name="ranged",
        class_labels=["a", "b"],
        tests=[{**spec, "max_value": 700, "plausible_min": 100, "plausible_max": 600}],
        rows=rows,
        labels=labels,
    )
    test = made.tests.get()
    assert (test.plausible_min, test.plausible_max, test.integer_only) == (100, 600, False)
    assert test.plausible_text() == "100–600 mg/dl"
    with pytest.raises(ValidationError, match="The plausible range of Cholesterol starts at 10"):
        create_dataset(
            name="bad",
            class_labels=["a", "b"],
            tests=[{**spec, "plausible_min": 10}],
            rows=rows,
            labels=labels,
        )


def test_demo_catalogs_ship_plausible_ranges_inside_their_hard_ranges():
    """Each demo dataset's numeric tests carry a plausible range (UCI docs) that fits min/max."""
    for name in demo_data.BUILDERS:
        tests = demo_data.catalog(name)["tests"]
        numeric = [t for t in tests if t.get("kind", "numeric") == "numeric"]
        assert numeric and all("plausible_min" in t or "plausible_max" in t for t in numeric), name
        for t in numeric:
            clean_plausible_range(
                t.get("plausible_min"),
                t.get("plausible_max"),
                min_value=t.get("min_value"),
                max_value=t.get("max_value"),
                integer_only=t.get("integer_only", False),
                name=t["label"],
            )
    heart = {t["name"]: t for t in demo_data.catalog(demo_data.HEART)["tests"]}
    assert heart["ca"]["integer_only"] and not heart["chol"].get("integer_only", False)
    pima = {t["name"]: t for t in demo_data.catalog(demo_data.PIMA)["tests"]}
    assert pima["glucose"]["plausible_min"] > 1  # the issue's 2-hour glucose of 1 mg/dl
    assert pima["age"]["plausible_min"] == 21  # .names: "at least 21 years old"


def test_request_reader_takes_true_only_for_the_confirm_flag():
    """confirm_implausible is a JSON true/false; true/false is still never a number elsewhere."""
    assert clean_request_field("confirm_implausible", True) is True
    with pytest.raises(ValidationError, match='"confirm_implausible" must be true'):
        clean_request_field("confirm_implausible", "yes")
    with pytest.raises(ValidationError, match='"value" must be'):
        clean_request_field("value", True)


# ------------------------------------------------------------------- services
def test_fraction_of_a_whole_number_test_is_refused(case, clinician):
    """1.5 for a whole-number test is refused with the test's name; nothing is saved."""
    with pytest.raises(ValidationError, match="Insulin takes whole numbers only; 1.5 is not one"):
        step_service.take_step(
            user=clinician, case=case, action="result", test="insulin", value="1.5"
        )
    assert not case.steps.exists()
    step = step_service.take_step(
        user=clinician, case=case, action="result", test="insulin", value="120"
    )
    assert step.value == 120 and not step.implausible_confirmed


def test_implausible_value_is_asked_then_saved_with_its_range(case, clinician):
    """Outside the plausible range: nothing saved until confirmed; then the range is kept."""
    with pytest.raises(step_service.ImplausibleValue) as caught:
        step_service.take_step(user=clinician, case=case, action="result", test="glucose", value=1)
    assert caught.value.messages == [
        "Glucose of 1 mg/dl is outside the plausible range 40–400 mg/dl. Confirm it is right?"
    ]
    assert not case.steps.exists()
    step = step_service.take_step(
        user=clinician,
        case=case,
        action="result",
        test="glucose",
        value=1,
        confirm_implausible=True,
    )
    assert step.implausible_confirmed
    assert step.plausible_range == {"min": 40, "max": 400, "unit": "mg/dl"}
    plain = step_service.take_step(
        user=clinician, case=case, action="result", test="insulin", value=90
    )
    assert not plain.implausible_confirmed and plain.plausible_range is None


def test_several_results_ask_about_each_implausible_one_by_name(case, clinician):
    """A form of results: an implausible one is named, nothing saved; confirmed by name, saved."""
    results = {"glucose": 450, "insulin": 90}
    with pytest.raises(step_service.ImplausibleValue) as caught:
        step_helpers.post_results(user=clinician, case=case, results=results)
    assert list(caught.value.message_dict) == ["glucose"]
    assert not case.steps.exists()
    with pytest.raises(step_service.ImplausibleValue):  # confirming another test is no answer
        step_helpers.post_results(
            user=clinician, case=case, results=results, confirm_implausible={"insulin"}
        )
    steps = step_helpers.post_results(
        user=clinician, case=case, results=results, confirm_implausible={"glucose"}
    )
    assert [(s.test.name, s.implausible_confirmed) for s in steps] == [
        ("glucose", True),
        ("insulin", False),
    ]


def test_a_correction_to_an_implausible_value_is_asked_too(case, clinician):
    """Correcting a value to one outside the plausible range needs the same confirmation."""
    step_service.take_step(user=clinician, case=case, action="result", test="glucose", value=150)
    with pytest.raises(step_service.ImplausibleValue):
        step_helpers.post_step(
            user=clinician, case=case, action="correct", position=0, value=15, reason="typo"
        )
    assert case.steps.count() == 1
    taken = step_helpers.post_step(
        user=clinician,
        case=case,
        action="correct",
        position=0,
        value=15,
        reason="typo",
        confirm_implausible=True,
    )
    assert taken.step.implausible_confirmed and taken.step.price == 0


def test_admin_edit_later_never_rewrites_a_confirmed_step(case, clinician):
    """A step keeps the range it was confirmed against after the test's range is edited."""
    step = step_service.take_step(
        user=clinician, case=case, action="result", test="glucose", value=20,
        confirm_implausible=True,
    )  # fmt: skip
    step_service.take_step(user=clinician, case=case, action="classify", label=0)
    before = [describe_event(e) for e in case_events(case)]
    test = _test(case, "glucose")
    test.plausible_min, test.plausible_max = 10, 300
    test.save()  # as the admin's save does
    step.refresh_from_db()
    assert step.plausible_range == {"min": 40, "max": 400, "unit": "mg/dl"}
    assert confirmed_range_text(step) == "40–400 mg/dl"
    assert [describe_event(e) for e in case_events(case)] == before
    assert "confirmed outside the plausible 40–400 mg/dl" in before[0]
    page = html.unescape(
        _session(clinician).get(reverse("case-summary", args=[case.pk])).content.decode()
    )
    assert "20 mg/dl is outside the plausible range 40–400 mg/dl" in page


# ----------------------------------------------------------------------- APIs
def test_session_api_answers_422_then_saves_when_confirmed(case, clinician):
    """The session API names the field and range (422, nothing saved), then takes the confirm."""
    client = _session(clinician)
    url = reverse("api-case-step", args=[case.pk])
    body = {"action": "result", "test": "glucose", "value": 1}
    refused = _post(client, url, body)
    assert refused.status_code == 422
    data = refused.json()
    assert "Glucose of 1 mg/dl is outside the plausible range 40–400 mg/dl" in data["error"]
    assert '"confirm_implausible": true' in data["error"]
    assert data["implausible"][0] | {"message": ""} == {
        "test": "glucose",
        "label": "Glucose",
        "value": 1,
        "plausible_min": 40,
        "plausible_max": 400,
        "unit": "mg/dl",
        "message": "",
    }
    batch = _post(client, url, {"action": "results", "results": {"glucose": 450}})
    assert batch.status_code == 422
    assert batch.json()["errors"] == {
        "glucose": [
            "Glucose of 450 mg/dl is outside the plausible range 40–400 mg/dl. Confirm it is right?"
        ]
    }
    assert not case.steps.exists()
    fraction = _post(client, url, {"action": "result", "test": "insulin", "value": 2.5})
    assert fraction.status_code == 400 and "whole numbers only" in fraction.json()["error"]
    saved = _post(client, url, {**body, "confirm_implausible": True})
    assert saved.status_code == 200
    step = saved.json()["steps"][0]
    assert step["implausible_confirmed"] is True
    assert step["plausible_range"] == {"min": 40, "max": 400, "unit": "mg/dl"}
    tests = {t["name"]: t for t in saved.json()["tests"]}
    assert (tests["glucose"]["plausible_min"], tests["insulin"]["integer_only"]) == (40, True)
    assert _post(client, url, {**body, "confirm_implausible": "yes"}).status_code == 400


def test_api_v1_answers_422_then_saves_when_confirmed(case, clinician):
    """/api/v1 refuses the implausible value with 422 and saves it with confirm_implausible."""
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="test EHR")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {plain}")
    url = f"/api/v1/cases/{case.pk}/steps"
    body = {"action": "result", "test": "glucose", "value": 1}
    refused = _post(client, url, body)
    assert refused.status_code == 422
    assert refused.json()["implausible"][0]["test"] == "glucose"
    assert "40–400 mg/dl" in refused.json()["error"]
    assert not case.steps.exists()
    fraction = _post(client, url, {"action": "result", "test": "insulin", "value": 1.5})
    assert fraction.status_code == 400
    assert "Insulin takes whole numbers only" in fraction.json()["error"]
    saved = _post(client, url, {**body, "confirm_implausible": True})
    assert saved.status_code == 200
    assert saved.json()["steps"][0]["implausible_confirmed"] is True
    assert case.steps.get().plausible_range == {"min": 40, "max": 400, "unit": "mg/dl"}


# ---------------------------------------------------------------------- screen
def test_screen_asks_then_saves_only_the_confirmed_value(case, clinician):
    """The case screen re-renders with the question; a changed value is asked again."""
    client = _session(clinician)
    url = reverse("case-detail", args=[case.pk])
    post = {"action": "result", "test": "glucose", "value": "1"}
    asked = client.post(url, post)
    text = html.unescape(asked.content.decode())
    assert "Glucose of 1 mg/dl is outside the plausible range 40–400 mg/dl." in text
    assert 'name="confirmed-glucose" value="1"' in text
    assert not case.steps.exists()
    changed = client.post(
        url, {**post, "value": "2", "confirm_implausible": "yes", "confirmed-glucose": "1"}
    )
    assert "Glucose of 2 mg/dl is outside" in html.unescape(changed.content.decode())
    assert not case.steps.exists()
    saved = client.post(url, {**post, "confirm_implausible": "yes", "confirmed-glucose": "1"})
    assert saved.status_code == 302
    step = case.steps.get()
    assert step.value == 1 and step.implausible_confirmed
    page = html.unescape(client.get(url).content.decode())
    assert "is outside the plausible range 40–400 mg/dl" in page
    assert step.kind == DiagnosisStep.RESULT


def test_migration_gives_loaded_demo_datasets_their_ranges(db):
    """A demo dataset loaded before plausible ranges existed gets them; an admin's are kept."""
    import importlib

    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    migration = importlib.import_module("diagnosis.migrations.0015_plausible_ranges")
    # the models as that migration saw them (the tests were still the diagnosis app's)
    apps = MigrationLoader(connection).project_state(("diagnosis", "0015_plausible_ranges")).apps
    create_dataset(
        name=demo_data.PIMA,
        class_labels=["negative", "positive"],
        tests=[
            {"name": "glucose", "unit": "mg/dl", "min_value": 0},
            {"name": "age", "unit": "years", "min_value": 0, "max_value": 120},
            {"name": "bmi", "min_value": 0, "max_value": 100, "plausible_max": 60},
        ],
        rows=[[100.0, 30.0, 25.0], [150.0, 40.0, 30.0]],
        labels=[0, 1],
    )
    migration.demo_ranges(apps, None)
    tests = {t.name: t for t in DiagnosticTest.objects.filter(dataset__name=demo_data.PIMA)}
    assert (tests["glucose"].plausible_min, tests["glucose"].plausible_max) == (40, 400)
    assert tests["age"].integer_only and tests["age"].plausible_min == 21
    assert (tests["bmi"].plausible_min, tests["bmi"].plausible_max) == (None, 60)  # an admin's


def test_screen_results_form_saves_only_confirmed_values(case, clinician):
    """The several-results form: an implausible value saves nothing until confirmed by value."""
    client = _session(clinician)
    url = reverse("case-detail", args=[case.pk])
    glucose, insulin = _test(case, "glucose"), _test(case, "insulin")
    post = {
        "action": "results",
        "tests": ["glucose", "insulin"],
        f"t{glucose.index}": "1",
        f"t{insulin.index}": "90",
    }
    assert client.post(url, post).status_code == 400
    assert not case.steps.exists()
    confirm = {"confirm_implausible": "yes", "confirmed-glucose": "1"}
    assert client.post(url, {**post, **confirm}).status_code == 302
    assert [(s.test.name, s.implausible_confirmed) for s in case.steps.order_by("position")] == [
        ("glucose", True),
        ("insulin", False),
    ]
