"""Corrections, confirmations, stale tabs and patient history on the screens and the JSON API."""

from __future__ import annotations

import html
import json

import pytest
from django.test import Client
from django.urls import reverse
from login_helpers import login_request

from diagnosis.clinic.models import DiagnosisStep
from diagnosis.clinic.selectors import case_audit
from diagnosis.clinic.services import cases
from diagnosis.clinic.services import step as step_service

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-123"  # the password tests/diagnosis/conftest.py gives every user


def logged_in(user) -> Client:
    client = Client()
    assert client.login(request=login_request(), username=user.username, password=PASSWORD)
    return client


def text(response) -> str:
    return html.unescape(response.content.decode())


@pytest.fixture
def case(trained_model, clinician):
    return cases.start_case(user=clinician, trained_model=trained_model, patient_reference="P-1")


def detail(case) -> str:
    return reverse("case-detail", args=[case.pk])


def api(case) -> str:
    return reverse("api-case-step", args=[case.pk])


def post_json(client, url, body):
    return client.post(url, data=json.dumps(body), content_type="application/json")


def test_forms_carry_the_version_they_were_made_from(clinician, case):
    """Every step form on the case screen posts the case version it was rendered at."""
    step_service.take_step(user=clinician, case=case, action="result", test="glucose", value=150)
    page = text(logged_in(clinician).get(detail(case)))
    version = case_audit.case_version(case)
    assert page.count(f'name="seen" value="{version}"') >= 4  # entry, unavailable, classify, refer


def test_a_step_from_a_stale_tab_shows_what_changed_and_keeps_the_entry(clinician, case):
    """A stale POST answers 409 with the missed step, its author, and the value typed kept."""
    client = logged_in(clinician)
    seen = case_audit.case_version(case)
    step_service.take_step(user=clinician, case=case, action="result", test="glucose", value=150)
    response = client.post(
        detail(case) + "?test=insulin",
        {"action": "result", "test": "insulin", "value": "42", "seen": seen},
    )
    assert response.status_code == 409
    page = text(response)
    assert "This page was out of date" in page
    assert "step 1 (Glucose = 150 mg/dl) was recorded by you (doc)" in page
    assert 'value="42"' in page  # the entry is still there to submit again
    assert case.steps.count() == 1


def test_closing_asks_for_confirmation_then_closes(clinician, case):
    """Refer without confirm shows a confirmation page (nothing saved); confirm=yes closes."""
    client = logged_in(clinician)
    seen = case_audit.case_version(case)
    response = client.post(detail(case), {"action": "refer", "seen": seen})
    assert response.status_code == 200
    page = text(response)
    assert "Refer the patient to a specialist?" in page
    assert "Yes, refer and close the case" in page
    assert 'name="confirm" value="yes"' in page and f'name="seen" value="{seen}"' in page
    case.refresh_from_db()
    assert case.is_open and case.steps.count() == 0
    response = client.post(
        detail(case),
        {"action": "refer", "seen": seen, "confirm": "yes", "reason": "patient asked"},
    )
    assert response.status_code == 302
    case.refresh_from_db()
    assert case.status == "referred"
    step = case.steps.get()
    if not step.followed_advice:
        assert step.overrule_reason == "patient asked"
    summary = text(client.get(reverse("case-summary", args=[case.pk])))
    assert ("patient asked" in summary) is (not step.followed_advice)


def test_an_overruling_classification_asks_for_a_reason(clinician, case):
    """Classifying against the advice says it overrules and offers an optional reason."""
    client = logged_in(clinician)
    advice = client.get(detail(case)).context["advice"]
    labels = ["healthy", "disease"]
    other = next(i for i in range(2) if not (advice.kind == "classify" and advice.label_index == i))
    page = text(client.post(detail(case), {"action": "classify", "label": other}))
    assert f"Classify as {labels[other]}?" in page
    assert "This overrules the model" in page and 'name="reason"' in page


def test_a_second_closing_press_says_who_closed_it(clinician, case):
    """A double submit of a confirmed referral: the second press is told the case was closed."""
    client = logged_in(clinician)
    body = {"action": "refer", "seen": 0, "confirm": "yes"}
    assert client.post(detail(case), body).status_code == 302
    response = client.post(detail(case), body, follow=True)
    page = text(response)
    assert "This case was already closed (referred) by you (doc)" in page
    assert case.steps.count() == 1


def test_correct_a_value_on_the_screen(clinician, case):
    """The correction form replaces the value; the audit shows the original struck and why."""
    client = logged_in(clinician)
    step = step_service.take_step(
        user=clinician, case=case, action="result", test="glucose", value=15
    )
    form = text(client.get(detail(case) + f"?correct={step.position}"))
    assert "Correct step 1: Glucose (recorded as 15 mg/dl)" in form
    seen = case_audit.case_version(case)
    bad = client.post(
        detail(case),
        {"action": "correct", "position": step.position, "correct-value": "150", "seen": seen},
    )
    assert bad.status_code == 400 and "Say why the value is corrected" in text(bad)
    response = client.post(
        detail(case),
        {
            "action": "correct",
            "position": step.position,
            "correct-value": "150",
            "reason": "missed a zero",
            "seen": seen,
        },
        follow=True,
    )
    page = text(response)
    assert "Value corrected" in page
    # the replaced value is struck out (a number keeps its unit on its line: span.nowrap)
    assert '<s><span class="nowrap">15 mg/dl</span></s>' in page and "missed a zero" in page
    assert "corrects step 1; no extra charge" in page
    assert response.context["state"].known == {step.test.index: 150.0}


def test_undo_on_the_screen_keeps_the_price(clinician, case):
    """Undo marks the last step undone, with the reason; the running cost keeps its price."""
    client = logged_in(clinician)
    step = step_service.take_step(
        user=clinician, case=case, action="result", test="glucose", value=15
    )
    response = client.post(
        detail(case),
        {"action": "undo", "reason": "wrong tube", "seen": case_audit.case_version(case)},
        follow=True,
    )
    page = text(response)
    assert "Step undone" in page and "wrong tube" in page and "its price stays paid" in page
    assert response.context["state"].accumulated_cost == pytest.approx(step.price)
    step.refresh_from_db()
    assert step.correction == DiagnosisStep.UNDONE


def test_earlier_cases_of_the_patient_on_a_new_case(clinician, other_clinician, trained_model):
    """A new case lists the clinician's earlier cases of that reference with their outcome."""
    old = cases.start_case(user=clinician, trained_model=trained_model, patient_reference="R-5")
    step_service.take_step(user=clinician, case=old, action="classify", label="healthy")
    cases.start_case(user=other_clinician, trained_model=trained_model, patient_reference="R-5")
    new = cases.start_case(user=clinician, trained_model=trained_model, patient_reference="R-5")
    page = text(logged_in(clinician).get(detail(new)))
    assert "Earlier cases of R-5" in page
    assert f"Case #{old.pk}" in page and "Classified as healthy" in page
    assert page.count("/summary/") == 1  # the other clinician's case is not listed


def test_home_patient_search_lists_own_cases_only(clinician, other_clinician, trained_model):
    """Searching a reference on home finds the clinician's cases, never another's."""
    mine = cases.start_case(user=clinician, trained_model=trained_model, patient_reference="Z-1")
    theirs = cases.start_case(
        user=other_clinician, trained_model=trained_model, patient_reference="Z-1"
    )
    page = text(logged_in(clinician).get(reverse("home") + "?patient=z-1"))
    assert f"Case #{mine.pk}" in page and f"Case #{theirs.pk}" not in page
    none = text(logged_in(clinician).get(reverse("home") + "?patient=nobody"))
    assert "None of your cases has a patient reference containing “nobody”" in none


def test_owner_sees_who_else_acted(clinician, model_admin, case):
    """A step by someone else is named on the case screen and marked on the home list."""
    glucose = case.trained_model.dataset.tests.get(name="glucose")
    DiagnosisStep.objects.create(
        case=case, position=0, kind="result", test=glucose, value=150, created_by=model_admin
    )
    client = logged_in(clinician)
    page = text(client.get(detail(case)))
    assert "Someone else acted on this case" in page and "recorded by boss at" in page
    assert "changed by someone else" in text(client.get(reverse("home")))


def test_api_corrects_undoes_and_reports_the_audit(clinician, case):
    """correct and undo through the API; steps carry correction, who, when and why."""
    client = logged_in(clinician)
    data = post_json(client, api(case), {"action": "result", "test": "glucose", "value": 15})
    assert data.status_code == 200
    data = post_json(
        client,
        api(case),
        {"action": "correct", "position": 0, "value": 150, "reason": "typo", "seen": 1},
    ).json()
    first, second = data["steps"]
    assert first["correction"] == "corrected" and first["replaced_by"] == 1
    assert first["corrected_by"] == "doc" and first["correction_reason"] == "typo"
    assert second["value"] == 150 and second["price"] == 0
    assert data["version"] == 2
    assert data["accumulated_cost"] == pytest.approx(first["price"])
    data = post_json(client, api(case), {"action": "undo", "reason": "not this patient"}).json()
    assert data["steps"][1]["correction"] == "undone" and data["version"] == 3
    # undoing the correction restores the value it replaced (issue 28): only that test is done
    assert data["steps"][0]["correction"] == "restored"
    assert [t["done"] for t in data["tests"]].count(True) == 1


def test_api_refuses_a_stale_version_with_409(clinician, case):
    """A step with an old seen answers 409 naming the missed step; nothing saved."""
    client = logged_in(clinician)
    post_json(client, api(case), {"action": "result", "test": "glucose", "value": 15})
    response = post_json(client, api(case), {"action": "refer", "seen": 0})
    assert response.status_code == 409
    assert "step 1 (Glucose = 15 mg/dl) was recorded by you (doc)" in response.json()["error"]
    assert case.steps.count() == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"action": "correct", "value": 1, "reason": "r"}, "position is required"),
        ({"action": "undo", "reason": "r"}, "There is no step to undo"),
        ({"action": "refer", "seen": "soon"}, "must be the case version"),
    ],
)
def test_api_bad_correction_requests_are_400(clinician, case, body, message):
    """Missing position, nothing to undo or a bad seen: 400 with a message."""
    response = post_json(logged_in(clinician), api(case), body)
    assert response.status_code == 400 and message in response.json()["error"]


def test_a_stale_closing_press_is_refused_before_the_confirmation(clinician, case):
    """Refer pressed on a stale page: 409 with what changed, no confirmation page, still open."""
    client = logged_in(clinician)
    step_service.take_step(user=clinician, case=case, action="result", test="glucose", value=150)
    response = client.post(detail(case), {"action": "refer", "seen": 0})
    assert response.status_code == 409
    page = text(response)
    assert "This page was out of date" in page and "Refer the patient to a specialist?" not in page
    case.refresh_from_db()
    assert case.is_open and case.steps.count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {"action": "undo", "reason": "r"},
        {"action": "correct", "position": 0, "correct-value": "160", "reason": "r"},
        {"action": "refer"},
    ],
)
def test_another_clinician_cannot_correct_or_close(clinician, other_clinician, case, body):
    """Corrections and the confirmation page answer 404 to anyone but the case's clinician."""
    step_service.take_step(user=clinician, case=case, action="result", test="glucose", value=150)
    response = logged_in(other_clinician).post(detail(case), body)
    assert response.status_code == 404
    api_body = {k.replace("correct-", ""): v for k, v in body.items()}
    assert post_json(logged_in(other_clinician), api(case), api_body).status_code == 404
    assert case.steps.get().is_active
