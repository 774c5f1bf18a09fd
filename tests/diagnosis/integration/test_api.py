"""The integrators' JSON step API: same services as the screen, JSON errors with clear messages."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse
from login_helpers import login_request

from diagnosis.clinic.models import DiagnosisCase

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-123"  # the password tests/diagnosis/conftest.py gives every user


@pytest.fixture
def case(clinician, trained_model):
    return DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)


def api(case) -> str:
    return reverse("api-case-step", args=[case.pk])


def post(client, url, body):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.post(url, data=data, content_type="application/json")


def logged_in(user) -> Client:
    client = Client()
    assert client.login(request=login_request(), username=user.username, password=PASSWORD)
    return client


def test_get_returns_state_with_advice_and_priced_tests(clinician, case):
    """GET gives the advice, the steps and every test with its price for this patient now."""
    data = logged_in(clinician).get(api(case)).json()
    assert data["case"] == case.pk and data["status"] == "open"
    assert data["advice"]["kind"] in {"extract", "classify", "reject"}
    assert data["accumulated_cost"] == 0
    prices = {t["name"]: t["price_now"] for t in data["tests"]}
    assert prices == {"glucose": 10.0, "insulin": 12.0, "sex": 1.0}
    assert data["class_labels"] == ["healthy", "disease"]


def test_post_steps_through_a_case(clinician, case):
    """Results are charged with the group discount and a classification closes the case."""
    client = logged_in(clinician)
    data = post(client, api(case), {"action": "result", "test": "glucose", "value": 150}).json()
    assert data["accumulated_cost"] == pytest.approx(10.0)
    data = post(client, api(case), {"action": "result", "test": "insulin", "value": "120.5"}).json()
    assert [s["price"] for s in data["steps"]] == [pytest.approx(10.0), pytest.approx(3.0)]
    assert data["accumulated_cost"] == pytest.approx(13.0)
    data = post(client, api(case), {"action": "unavailable", "test": "sex"}).json()
    assert data["steps"][-1]["kind"] == "unavailable" and data["steps"][-1]["price"] == 0
    data = post(client, api(case), {"action": "classify", "label": "disease"}).json()
    assert data["status"] == "classified" and data["final_label"] == "disease"
    assert data["advice"] is None
    response = post(client, api(case), {"action": "refer"})
    assert response.status_code == 409
    assert "closed" in response.json()["error"]


@pytest.mark.parametrize(
    "body, message",
    [
        ("not json", "not valid JSON"),
        ([1, 2], "JSON object"),
        ({"action": "dance"}, "action must be one of"),
        (
            {"action": "result", "test": "nope", "value": 1},
            "Choose one of this model's tests: glucose",
        ),
        ({"action": "result", "test": "glucose"}, "Enter the Glucose result"),
        ({"action": "result", "test": "glucose", "value": 900}, "at most 500 mg/dl"),
        ({"action": "result", "test": "glucose", "value": "abc"}, "not a number"),
        ({"action": "result", "test": "sex", "value": 5}, "not one of"),
        ({"action": "classify"}, "label is required"),
        ({"action": "classify", "label": "purple"}, "0 (healthy), 1 (disease)"),
        ({"action": "classify", "label": 7}, "not one of"),
    ],
)
def test_bad_input_is_400_with_message_and_saves_nothing(clinician, case, body, message):
    """Every kind of bad input answers 400 with an error naming the problem; nothing is saved."""
    response = post(logged_in(clinician), api(case), body)
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert case.steps.count() == 0


def test_other_clinician_gets_the_same_404_as_a_missing_case(other_clinician, case):
    """Another clinician can neither read nor change the case, and cannot tell it exists."""
    client = logged_in(other_clinician)
    missing = case.pk + 999
    answer = client.get(api(case))
    nothing = client.get(reverse("api-case-step", args=[missing]))
    assert answer.status_code == nothing.status_code == 404
    # The same words apart from the number asked for: nothing tells the two apart.
    mine, unknown = answer.json()["error"], nothing.json()["error"]
    assert mine.replace(str(case.pk), "N") == unknown.replace(str(missing), "N")
    response = post(client, api(case), {"action": "refer"})
    assert response.status_code == 404
    assert "error" in response.json()
    assert case.steps.count() == 0


def test_anonymous_gets_401_and_unknown_case_404(clinician, case):
    """Without a session the API answers 401 JSON (no login redirect); unknown cases are 404."""
    response = Client().get(api(case))
    assert response.status_code == 401 and "Log in" in response.json()["error"]
    response = logged_in(clinician).get(reverse("api-case-step", args=[case.pk + 999]))
    assert response.status_code == 404


def test_post_needs_csrf_token_from_the_session(clinician, case):
    """With CSRF checks on, a POST needs the X-CSRFToken header taken from the csrftoken cookie."""
    client = Client(enforce_csrf_checks=True)
    assert client.login(request=login_request(), username=clinician.username, password=PASSWORD)
    assert post(client, api(case), {"action": "refer"}).status_code == 403
    client.get(reverse("case-detail", args=[case.pk]))  # any page with a form sets the cookie
    token = client.cookies["csrftoken"].value
    response = client.post(
        api(case),
        data=json.dumps({"action": "refer"}),
        content_type="application/json",
        headers={"X-CSRFToken": token},
    )
    assert response.status_code == 200
    assert response.json()["status"] == "referred"


def test_a_post_without_a_csrf_token_gets_a_json_403_not_an_html_page(clinician, case):
    """The session API's CSRF refusal is JSON naming the fix, as every other API answer."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(clinician)
    answer = client.post(api(case), data='{"action": "refer"}', content_type="application/json")
    assert answer.status_code == 403 and answer["Content-Type"] == "application/json"
    assert "bearer token" in answer.json()["error"]
    page = client.post(reverse("case-new"), {"model": case.trained_model_id})
    assert page.status_code == 403 and page["Content-Type"].startswith("text/html")
