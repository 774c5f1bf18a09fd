"""The bad-input table of issue 29, on both JSON doors (the session step API and /api/v1):
one reader of values, so one refuses exactly where the other does, each refusal a 4xx whose
JSON says what is wrong and names the field, and nothing saved."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from diagnosis.clinic.models import DiagnosisCase, DiagnosisStep
from diagnosis.integration.services.api_tokens import issue_api_token


@pytest.fixture
def doors(clinician, trained_model):
    """name -> (client, step URL) of each API, on one open case of ``clinician``."""
    case = DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)
    session = Client()
    session.force_login(clinician)
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    token = Client(HTTP_AUTHORIZATION=f"Bearer {plain}")
    return case, {
        "session": (session, reverse("api-case-step", args=[case.pk])),
        "v1": (token, f"/api/v1/cases/{case.pk}/steps"),
    }


def _post(client: Client, url: str, body) -> object:
    text = body if isinstance(body, str) else json.dumps(body)
    return client.post(url, data=text, content_type="application/json")


STEP_TABLE = [
    # (body, words the error must hold: the field, and what is wrong)
    ({"action": "result", "test": "glucose", "value": True}, ['"value"', "true/false"]),
    ({"action": "result", "test": "glucose", "value": False}, ['"value"', "true/false"]),
    ({"action": "classify", "label": True}, ['"label"', "true/false"]),
    ({"action": "classify", "label": 1.0}, ['"label"', "float"]),
    ({"action": "classify", "label": " 1"}, ["Class ' 1'"]),
    ({"action": "classify", "label": "1 "}, ["Class '1 '"]),
    ({"action": "classify", "label": " disease"}, ["Class ' disease'"]),
    ({"action": "result", "test": "sex", "value": " male"}, ["Sex result ' male'", "spaces"]),
    ({"action": "result", "test": "sex", "value": "female "}, ["Sex result 'female '", "spaces"]),
    ({"action": "result", "test": "sex", "value": " 1"}, ["Sex result ' 1'", "spaces"]),
    ({"action": "result", "test": "sex", "value": "1\n"}, ["Sex result '1\\n'", "spaces"]),
    ({"action": "result", "test": "sex", "value": "1e0"}, ["'1e0' is not one of the Sex results"]),
    ({"action": "refer", "seen": "0"}, ['"seen"', "str"]),
    ({"action": "refer", "seen": True}, ['"seen"', "true/false"]),
    ({"action": "correct", "position": "0", "value": 1, "reason": "x"}, ['"position"', "str"]),
    ({"action": "refer", "reason": "typed\x00here"}, ['"reason"', "NUL"]),
    ({"action": "result", "test": "gluc\x00ose", "value": 1}, ['"test"', "NUL"]),
    ({"action": "result", "test": "glucose", "value": "1\x00"}, ['"value"', "NUL"]),
    ({"action": "refer", "reason": "r" * 10_000}, ['"reason"', "10,000 characters", "1,000"]),
    ({"action": "result", "test": "t" * 10_000, "value": 1}, ['"test"', "10,000", "100"]),
]


@pytest.mark.parametrize(("body", "words"), STEP_TABLE, ids=[repr(b)[:60] for b, _ in STEP_TABLE])
def test_each_bad_step_is_refused_alike_by_both_apis(doors, body, words):
    """The same bad step is a 400 on both doors, each message naming the field and the
    problem in words; no step saved."""
    case, apis = doors
    for name, (client, url) in apis.items():
        answer = _post(client, url, body)
        assert answer.status_code == 400, (name, answer.content[:300])
        message = answer.json()["error"]
        for word in words:
            assert word in message, (name, message)
    assert DiagnosisStep.objects.filter(case=case).count() == 0


def test_the_session_api_reads_results_with_the_same_nul_check(doors):
    """A NUL inside a batch of results is named by its path; nothing saved."""
    case, apis = doors
    client, url = apis["session"]
    answer = _post(client, url, {"action": "results", "results": {"sex": "ma\x00le"}})
    assert answer.status_code == 400
    assert '"results.sex"' in answer.json()["error"]
    assert DiagnosisStep.objects.filter(case=case).count() == 0


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"model": "{pk}"}, ['"model"', "not str"]),
        ({"model": True}, ['"model"', "true/false"]),
        ({"model": 1.0}, ['"model"', "float"]),
        ({"model": None, "patient_reference": "p\x00"}, ['"patient_reference"', "NUL"]),
        ({"model": None, "patient_reference": "p" * 10_000}, ["patient_reference", "200"]),
        ({"model": None, "patient_reference": 7}, ['"patient_reference"', "int"]),
    ],
    ids=["string id", "boolean id", "float id", "NUL", "10,000 chars", "number as text"],
)
def test_a_bad_new_case_names_the_field(clinician, trained_model, body, words):
    """POST /api/v1/cases: ids are exact whole numbers and text holds no NUL and fits its
    column; each refusal is a 400 naming the field; no case opened."""
    body = {
        k: (str(trained_model.pk) if v == "{pk}" else trained_model.pk if v is None else v)
        for k, v in body.items()
    }
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {plain}")
    answer = _post(client, "/api/v1/cases", body)
    assert answer.status_code == 400, answer.content[:300]
    payload = answer.json()
    for word in words:
        assert word in payload["error"], payload
    if "details" in payload:  # refused by the schema (a NUL is refused as the body is read)
        assert payload["details"][0]["field"] == words[0].strip('"')
    assert not DiagnosisCase.objects.exists()


def test_a_double_submitted_result_gets_a_readable_refusal_on_both_apis(doors):
    """The same result posted again: 400 saying the test already has a result, or with the
    ``seen`` of the first post a 409 saying the first press was saved; one step kept."""
    case, apis = doors
    client, url = apis["session"]
    seen = client.get(url).json()["version"]
    body = {"action": "result", "test": "glucose", "value": 90}
    assert _post(client, url, {**body, "seen": seen}).status_code == 200
    for name, door in apis.items():
        again = _post(*door, body)
        assert again.status_code == 400, (name, again.content[:200])
        assert "Glucose already has a result" in again.json()["error"]
        stale = _post(*door, {**body, "seen": seen})
        assert stale.status_code == 409, (name, stale.content[:200])
        assert "the first press was saved" in stale.json()["error"]
    assert DiagnosisStep.objects.filter(case=case).count() == 1
