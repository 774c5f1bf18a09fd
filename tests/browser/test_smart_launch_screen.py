"""SMART App Launch in headless Chromium: the test EHR (a real HTTP server: its SMART
configuration, authorization and token endpoints, PKCE S256 checked) opens the case screen
for its patient, for the signed-in clinician."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import urlencode

import pytest
from browser_helpers import CLINICIAN, log_in, new_page

# the test EHR of tests/diagnosis/integration/smart_ehr.py (authlib's authorization server)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "diagnosis" / "integration"))
from smart_ehr import CLIENT_ID, TestEhr  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def ehr(heart_model):
    from diagnosis.integration.models import SmartClient

    server = TestEhr(patient="heart-42")
    SmartClient.objects.create(
        name="Test EHR", iss=server.iss, client_id=CLIENT_ID, trained_model=heart_model
    )
    yield server
    server.close()


def test_an_ehr_launch_opens_the_patients_case_screen_for_the_signed_in_clinician(
    chromium, live_server, heart_model, ehr
):
    """A signed-in clinician's browser is sent to /smart/launch by the EHR: through the EHR's
    authorization endpoint (PKCE S256, the launch) back to the case screen of a new case for
    the token's patient on the registered model, the clinician's; a second launch opens the
    same case."""
    from django.contrib.auth.models import User

    from diagnosis.clinic.models import DiagnosisCase

    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *CLINICIAN)
        launch = "/smart/launch?" + urlencode({"iss": ehr.iss, "launch": "abc-1"})
        page.goto(launch)
        page.wait_for_url(re.compile(r".*/cases/\d+/$"))
        case = DiagnosisCase.objects.get()
        assert page.url == f"{live_server.url}/cases/{case.pk}/"
        assert (case.patient_reference, case.trained_model_id) == (
            "FHIR Patient/heart-42",
            heart_model.pk,
        )
        assert case.clinician == User.objects.get(username=CLINICIAN[0])
        heading = page.get_by_role("heading", level=1)
        assert heading.inner_text() == f"Case #{case.pk} · FHIR Patient/heart-42"
        [asked] = ehr.authorize_queries
        assert (asked["launch"], asked["code_challenge_method"]) == ("abc-1", "S256")
        page.goto(launch)  # again: through the EHR to the same case
        page.wait_for_url(re.compile(r".*/cases/\d+/$"))
        assert page.url == f"{live_server.url}/cases/{case.pk}/"
        assert DiagnosisCase.objects.count() == 1
    finally:
        context.close()


def test_a_launch_before_signing_in_signs_in_then_goes_on_to_the_ehr_and_the_case(
    chromium, live_server, heart_model, ehr
):
    """A clinician not yet signed in, sent to /smart/launch by the EHR: the sign-in page, then
    (the sign-in form's answer may not lead off-site) a page of ours that goes on to the EHR's
    authorization endpoint, and back to the case screen for the token's patient."""
    from diagnosis.clinic.models import DiagnosisCase

    context, page = new_page(chromium, live_server)
    try:
        launch = "/smart/launch?" + urlencode({"iss": ehr.iss, "launch": "abc-2"})
        page.goto(launch)
        page.wait_for_url(re.compile(r".*/accounts/login/\?next=.*"))
        page.get_by_label("Username").fill(CLINICIAN[0])
        page.get_by_label("Password").fill(CLINICIAN[1])
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(re.compile(r".*/cases/\d+/$"))
        case = DiagnosisCase.objects.get()
        assert page.url == f"{live_server.url}/cases/{case.pk}/"
        assert case.patient_reference == "FHIR Patient/heart-42"
        [asked] = ehr.authorize_queries
        assert (asked["launch"], asked["code_challenge_method"]) == ("abc-2", "S256")
    finally:
        context.close()


@pytest.mark.parametrize("size", ["laptop", "tablet"])
def test_the_page_back_to_the_ehr_reads_at_both_sizes(
    chromium, live_server, heart_model, ehr, size
):
    """The page that sends a just-signed-in clinician on to the EHR (held there: the EHR is
    not reached) says where it goes and offers the link, at both sizes; saved for review."""
    from test_screenshots import OUT, SIZES, shot

    OUT.mkdir(parents=True, exist_ok=True)
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    try:
        log_in(page, *CLINICIAN)
        # the EHR answers the way on with 204 No Content: the browser stays on the page
        page.route(f"{ehr.url}/**", lambda route: route.fulfill(status=204))
        launch = "/smart/launch?" + urlencode({"iss": ehr.iss, "launch": "abc-3", "signed_in": "1"})
        page.goto(launch)
        heading = page.get_by_role("heading", level=1)
        assert heading.inner_text() == "Signed in: back to your EHR"
        assert "Test EHR now confirms the launch" in page.locator("main").inner_text()
        link = page.get_by_role("link", name="Continue to your EHR")
        assert link.get_attribute("href").startswith(f"{ehr.url}/authorize?")
        assert shot(page, "24-smart-back-to-ehr", size).stat().st_size > 10_000
    finally:
        context.close()


@pytest.mark.parametrize("size", ["laptop", "tablet"])
def test_the_ehrs_results_arrive_on_the_case_screen_with_a_word_of_what_came(
    chromium, live_server, heart_model, size
):
    """A launch whose EHR holds the patient's age and cholesterol (LOINC, mg/dL; the demo
    codes): the case screen opens with both recorded as results, says how many came from
    the EHR, and reads at both sizes; saved for review."""
    from test_screenshots import OUT, SIZES, shot

    from diagnosis.clinic.models import DiagnosisCase
    from diagnosis.integration.models import SmartClient
    from diagnosis.integration.services.codes import load_demo_codes

    load_demo_codes()
    ehr = TestEhr(patient="heart-7", observations=[
        {"resourceType": "Observation", "id": "chol-1", "status": "final",
         "code": {"coding": [{"system": "http://loinc.org", "code": "2093-3"}]},
         "subject": {"reference": "Patient/heart-7"},
         "valueQuantity": {"value": 233, "system": "http://unitsofmeasure.org", "code": "mg/dL"}},
        {"resourceType": "Observation", "id": "age-1", "status": "final",
         "code": {"coding": [{"system": "http://loinc.org", "code": "30525-0"}]},
         "subject": {"reference": "Patient/heart-7"},
         "valueQuantity": {"value": 63, "system": "http://unitsofmeasure.org", "code": "a"}},
    ])  # fmt: skip
    SmartClient.objects.create(
        name="Test EHR", iss=ehr.iss, client_id=CLIENT_ID, trained_model=heart_model
    )
    OUT.mkdir(parents=True, exist_ok=True)
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    try:
        log_in(page, *CLINICIAN)
        page.goto("/smart/launch?" + urlencode({"iss": ehr.iss, "launch": "abc-4"}))
        page.wait_for_url(re.compile(r".*/cases/\d+/$"))
        case = DiagnosisCase.objects.get()
        assert sorted(s.test.name for s in case.steps.all()) == ["age", "chol"]
        status = page.get_by_role("status").first.inner_text()
        assert "2 results from the EHR recorded, each at its price." in status
        assert shot(page, "25-smart-case-with-ehr-results", size).stat().st_size > 10_000
    finally:
        context.close()
        ehr.close()


@pytest.mark.parametrize("size", ["laptop", "tablet"])
def test_a_refused_launch_says_why_on_a_page_of_the_app(chromium, live_server, heart_model, size):
    """A launch from an EHR nobody registered opens nothing: a 400 page of the app (its
    header, a way home) saying why and what to do, at both sizes; saved for review."""
    from test_screenshots import OUT, SIZES, shot

    from diagnosis.clinic.models import DiagnosisCase

    OUT.mkdir(parents=True, exist_ok=True)
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    try:
        log_in(page, *CLINICIAN)
        unknown = {"iss": "https://unknown-ehr.example/fhir", "launch": "abc-5"}
        response = page.goto("/smart/launch?" + urlencode(unknown))
        assert response is not None and response.status == 400
        heading = page.get_by_role("heading", level=1)
        assert heading.inner_text() == "The EHR launch did not open a case"
        alert = page.get_by_role("alert").inner_text()
        assert "https://unknown-ehr.example/fhir is not a registered SMART EHR." in alert
        assert page.get_by_role("link", name="Models and cases").count() == 1
        assert DiagnosisCase.objects.count() == 0
        assert shot(page, "26-smart-launch-refused", size).stat().st_size > 10_000
    finally:
        context.close()
