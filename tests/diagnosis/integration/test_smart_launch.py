"""SMART App Launch 2, EHR launch: a small EHR of the test's own (``smart_ehr.TestEhr``, a
real HTTP server: its SMART configuration, authlib's authorization server with PKCE S256, a
FHIR Observation search) opens the case screen for the right patient, with the results the
EHR holds."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from cds_helpers import GLUCOSE, code_toy_dataset, observation
from django.test import Client
from smart_ehr import CLIENT_ID, TestEhr

from diagnosis.clinic.models import DiagnosisCase
from diagnosis.integration.models import SmartClient


@pytest.fixture
def ehr(db, trained_model):
    server = TestEhr()
    SmartClient.objects.create(
        name="Test EHR", iss=server.iss, client_id=CLIENT_ID, trained_model=trained_model
    )
    yield server
    server.close()


@pytest.fixture
def browser(clinician) -> Client:
    client = Client()
    client.force_login(clinician)
    return client


def launch(browser: Client, ehr: TestEhr, *, tamper=None):
    """The EHR opens /smart/launch; the clinician goes through its authorization endpoint and
    back to the callback; the callback's answer."""
    started = browser.get("/smart/launch", {"iss": ehr.iss, "launch": "xyz123"})
    assert started.status_code == 302, started.content
    at_ehr = requests.get(started["Location"], allow_redirects=False, timeout=10)
    assert at_ehr.status_code == 302
    back = urlsplit(at_ehr.headers["Location"])
    assert back.path == "/smart/callback"
    query = {k: v[0] for k, v in parse_qs(back.query).items()}
    if tamper is not None:
        tamper(query)
    return browser.get(back.path, query)


def test_an_ehr_launch_opens_the_case_of_the_tokens_patient(ehr, browser, clinician, trained_model):
    """launch + iss → the EHR's authorization endpoint (PKCE S256, the launch, aud = iss) →
    the token's patient: the case screen of a new case for that patient, and the same case on
    a second launch."""
    answer = launch(browser, ehr)
    assert answer.status_code == 302
    case = DiagnosisCase.objects.get()
    assert answer["Location"] == f"/cases/{case.pk}/"
    assert (case.clinician, case.trained_model, case.patient_reference) == (
        clinician, trained_model, "FHIR Patient/p7",
    )  # fmt: skip
    [asked] = ehr.authorize_queries
    assert asked["client_id"] == CLIENT_ID and asked["launch"] == "xyz123"
    assert asked["aud"] == ehr.iss and asked["code_challenge_method"] == "S256"
    assert asked["response_type"] == "code" and "launch" in asked["scope"].split()
    assert browser.get(answer["Location"]).status_code == 200  # the case screen opens
    again = launch(browser, ehr)
    assert again["Location"] == f"/cases/{case.pk}/" and DiagnosisCase.objects.count() == 1


def test_a_tampered_state_or_code_is_refused_and_opens_nothing(ehr, browser):
    """A state other than the one sent, or a code the EHR did not issue (so the token call
    fails its PKCE and code checks), opens no case."""

    def other_state(query):
        query["state"] = "forged"

    def other_code(query):
        query["code"] = "forged"

    refused = launch(browser, ehr, tamper=other_state)
    assert refused.status_code == 400 and b"state" in refused.content
    failed = launch(browser, ehr, tamper=other_code)
    assert failed.status_code == 502 and b"refused the authorization code" in failed.content
    assert DiagnosisCase.objects.count() == 0


def test_an_unregistered_ehr_or_a_non_clinician_cannot_launch(ehr, browser, model_admin):
    """An iss nobody registered is a 400; a model admin (no clinician) is refused (403)."""
    unknown = browser.get("/smart/launch", {"iss": "https://other.example/fhir", "launch": "x"})
    assert unknown.status_code == 400 and b"not a registered SMART EHR" in unknown.content
    admin = Client()
    admin.force_login(model_admin)
    assert admin.get("/smart/launch", {"iss": ehr.iss, "launch": "x"}).status_code == 403


def test_a_signed_out_launch_signs_in_first_then_goes_on_from_a_page_not_a_redirect(ehr, clinician):
    """Signed out: the sign-in page, with the launch (marked signed_in) to come back to; back
    there, the EHR's authorization URL is on a page (refresh and link), since the redirects
    after the sign-in form may only lead to this site."""
    anonymous = Client()
    started = anonymous.get("/smart/launch", {"iss": ehr.iss, "launch": "xyz123"})
    assert started.status_code == 302
    login = urlsplit(started["Location"])
    assert login.path == "/accounts/login/"
    back = parse_qs(login.query)["next"][0]
    assert urlsplit(back).path == "/smart/launch"
    assert parse_qs(urlsplit(back).query) == {
        "iss": [ehr.iss],
        "launch": ["xyz123"],
        "signed_in": ["1"],
    }
    anonymous.force_login(clinician)
    page = anonymous.get(back)
    assert page.status_code == 200
    html = page.content.decode()
    [url] = set(re.findall(r'href="([^"]+)"', html)) & set(
        re.findall(r'content="0;url=([^"]+)"', html)
    )
    authorize = urlsplit(url.replace("&amp;", "&"))
    assert f"{authorize.scheme}://{authorize.netloc}{authorize.path}" == ehr.url + "/authorize"
    asked = {k: v[0] for k, v in parse_qs(authorize.query).items()}
    assert (asked["launch"], asked["code_challenge_method"]) == ("xyz123", "S256")
    assert ehr.authorize_queries == []  # nothing sent to the EHR until the browser goes on


def test_a_launch_records_the_patients_results_the_ehr_holds(db, trained_model, browser):
    """The EHR's FHIR server, searched with the token's access token for the patient's
    Observations of the model's tests: glucose is recorded as the case's result (priced, as
    on the screen) and the case screen says so; a second launch records nothing twice."""
    code_toy_dataset(trained_model.dataset)
    server = TestEhr(observations=[observation("g1", GLUCOSE, 180, unit="mg/dL", patient="p7")])
    SmartClient.objects.create(
        name="Test EHR", iss=server.iss, client_id=CLIENT_ID, trained_model=trained_model
    )
    try:
        answer = launch(browser, server)
        assert answer.status_code == 302
        case = DiagnosisCase.objects.get()
        [result] = case.steps.all()
        assert (result.test.name, result.value, result.price > 0) == ("glucose", 180.0, True)
        [searched] = server.searches
        assert searched["patient"] == "p7" and "http://loinc.org|2345-7" in searched["code"]
        page = browser.get(answer["Location"]).content.decode()
        assert "1 result from the EHR recorded, each at its price." in page
        again = launch(browser, server)
        assert again["Location"] == answer["Location"] and case.steps.count() == 1
    finally:
        server.close()


def test_results_the_ehr_holds_in_a_wrong_unit_open_the_case_and_say_why(
    db, trained_model, browser
):
    """An Observation in another unit than the test's: nothing is recorded, the case still
    opens, and its screen says which resource and field were refused."""
    code_toy_dataset(trained_model.dataset)
    wrong = observation("g1", GLUCOSE, 10, unit="mmol/L", patient="p7")
    server = TestEhr(observations=[wrong])
    SmartClient.objects.create(
        name="Test EHR", iss=server.iss, client_id=CLIENT_ID, trained_model=trained_model
    )
    try:
        answer = launch(browser, server)
        assert answer.status_code == 302
        case = DiagnosisCase.objects.get()
        assert case.steps.count() == 0
        page = browser.get(answer["Location"]).content.decode()
        assert "The EHR&#x27;s results were not recorded" in page
        assert "Observation/g1.valueQuantity.code" in page
    finally:
        server.close()
