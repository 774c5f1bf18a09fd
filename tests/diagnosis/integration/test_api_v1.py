"""/api/v1 for other systems: bearer tokens, the whole step flow, roles, errors and rate limits."""

from __future__ import annotations

import secrets
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from diagnosis.clinic.models import DiagnosisCase
from diagnosis.integration.models import ApiToken
from diagnosis.integration.services.api_tokens import issue_api_token, revoke_api_token


def bearer(user) -> Client:
    """A client presenting a fresh token of ``user`` on every request."""
    _, plain = issue_api_token(issuer=user, owner=user, name="test EHR")
    return Client(HTTP_AUTHORIZATION=f"Bearer {plain}")


def post(client: Client, url: str, body) -> object:
    return client.post(url, data=body, content_type="application/json")


def test_an_ehr_lists_models_starts_a_case_and_steps_it_to_a_conclusion(clinician, trained_model):
    """With a token: GET /models, POST /cases, then follow the advice until the case closes."""
    client = bearer(clinician)
    models = client.get("/api/v1/models").json()
    assert [m["id"] for m in models] == [trained_model.pk] and models[0]["ready"]
    started = post(client, "/api/v1/cases", {"model": trained_model.pk, "patient_reference": "p7"})
    assert started.status_code == 201
    state = started.json()
    assert state["is_open"] and state["patient_reference"] == "p7"
    row = DiagnosisCase.objects.get(pk=state["case"])
    assert row.clinician == clinician
    for _ in range(20):
        advice = state["advice"]
        if advice["kind"] != "extract":
            break
        test = advice["test_name"]
        option = next(t for t in state["tests"] if t["name"] == test)
        value = option["choices"][0]["code"] if option["choices"] else option["min_value"] or 1.0
        answer = post(
            client,
            f"/api/v1/cases/{state['case']}/steps",
            {"action": "result", "test": test, "value": value, "seen": state["version"]},
        )
        assert answer.status_code == 200, answer.json()
        state = answer.json()
    assert state["advice"]["kind"] in ("classify", "reject")
    action = "classify" if state["advice"]["kind"] == "classify" else "refer"
    closing = {"action": action}
    if action == "classify":
        closing["label"] = state["advice"]["label"]
    final = post(client, f"/api/v1/cases/{state['case']}/steps", closing).json()
    assert not final["is_open"]
    assert [c["case"] for c in client.get("/api/v1/cases").json()] == []


def test_a_case_says_which_error_costs_decide_it_and_keeps_them_after_an_edit(
    clinician, trained_model
):
    """A case's state carries the matrix and referral cost it started with, also after the
    dataset's matrix is edited (a case started after the edit is flagged, not this one)."""
    client = bearer(clinician)
    state = post(client, "/api/v1/cases", {"model": trained_model.pk}).json()
    assert state["error_matrix"] == trained_model.matrix_snapshot
    assert state["referral_cost"] == trained_model.reject_cost_snapshot
    assert len(state["error_matrix"]) == len(state["class_labels"])
    matrix = trained_model.error_matrix
    matrix.matrix = [[0, 7], [3, 0]]
    matrix.save()
    again = client.get(f"/api/v1/cases/{state['case']}").json()
    assert again["error_matrix"] == trained_model.matrix_snapshot != [[0, 7], [3, 0]]


def test_no_token_a_wrong_one_or_a_revoked_one_gets_401_json(clinician, trained_model):
    """Missing, unknown and revoked tokens all get 401 with a JSON error, never a login page."""
    token, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    for client in (Client(), Client(HTTP_AUTHORIZATION="Bearer cad_not-a-token")):
        answer = post(client, "/api/v1/cases", {"model": trained_model.pk})
        assert answer.status_code == 401 and "Bearer" in answer.json()["error"]
    good = Client(HTTP_AUTHORIZATION=f"Bearer {plain}")
    assert good.get("/api/v1/models").status_code == 200
    revoke_api_token(user=clinician, token=token)
    assert good.get("/api/v1/models").status_code == 401


def test_an_expired_token_or_an_inactive_user_is_refused(clinician):
    """A token past its expiry, or whose user was deactivated, authenticates no one."""
    token, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {plain}")
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.get("/api/v1/models").status_code == 401
    ApiToken.objects.filter(pk=token.pk).update(expires_at=None)
    assert client.get("/api/v1/models").status_code == 200
    User.objects.filter(pk=clinician.pk).update(is_active=False)
    assert client.get("/api/v1/models").status_code == 401


def test_only_the_hash_of_a_token_is_stored_and_its_use_is_recorded(clinician):
    """The database holds the SHA-256, not the token; last_used_at is set by a call."""
    token, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    assert plain.startswith("cad_") and plain not in token.key_hash and len(token.key_hash) == 64
    assert token.last_used_at is None
    Client(HTTP_AUTHORIZATION=f"Bearer {plain}").get("/api/v1/models")
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_a_user_issues_tokens_for_themself_and_only_a_superuser_for_others(
    clinician, other_clinician, model_admin
):
    """A clinician cannot mint a token acting as a colleague; a superuser can."""
    with pytest.raises(PermissionDenied):
        issue_api_token(issuer=clinician, owner=other_clinician, name="EHR")
    token, _ = issue_api_token(issuer=model_admin, owner=other_clinician, name="EHR")
    assert token.user == other_clinician and token.created_by == model_admin


def test_the_management_command_prints_a_working_token_once(clinician, capsys):
    """`manage.py api_token doc --name EHR` prints the token; it then authenticates."""
    call_command("api_token", clinician.username, "--name", "ward EHR")
    plain = capsys.readouterr().out.strip()
    assert Client(HTTP_AUTHORIZATION=f"Bearer {plain}").get("/api/v1/models").status_code == 200


def test_each_role_sees_through_the_api_only_what_it_may(
    clinician, other_clinician, model_admin, trained_model
):
    """Owner 200; another clinician and a model admin 404 on the case; admin cannot start one."""
    case = DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)
    url = f"/api/v1/cases/{case.pk}"
    assert bearer(clinician).get(url).status_code == 200
    for intruder in (other_clinician, model_admin):
        answer = bearer(intruder).get(url)
        assert answer.status_code == 404
        assert answer.json()["error"] == f"There is no case {case.pk}."
    assert bearer(other_clinician).get("/api/v1/cases/999999").json()["error"] == (
        "There is no case 999999."
    )
    refused = post(bearer(model_admin), "/api/v1/cases", {"model": trained_model.pk})
    assert refused.status_code == 403 and refused.json()["error"]
    staff_only = User.objects.create_user("staff-only", is_staff=True)
    assert bearer(staff_only).get("/api/v1/models").status_code == 403


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"action": "result", "test": ["chol"]}, 400, "test"),
        ({"action": "fly"}, 400, "action"),
        ({"action": "refer", "extra": 1}, 400, "extra"),
        ('{"action": "refer", "seen": 1e999}', 400, "too large"),
        ({"action": "result", "test": "no-such-test", "value": 1}, 400, "this model's tests"),
        ({"action": "refer", "seen": 0}, 409, "out of date"),
    ],
)
def test_bad_steps_get_a_4xx_json_error_naming_the_problem(
    clinician, trained_model, body, status, words
):
    """Schema errors, unknown tests and stale versions get 400/409 JSON errors; nothing saved."""
    client = bearer(clinician)
    case = post(client, "/api/v1/cases", {"model": trained_model.pk}).json()["case"]
    steps = f"/api/v1/cases/{case}/steps"
    first = post(client, steps, {"action": "unavailable", "test": "insulin"})
    assert first.status_code == 200, first.json()
    steps_before = DiagnosisCase.objects.get(pk=case).steps.count()
    answer = post(client, steps, body)
    assert answer.status_code == status, answer.content
    assert words in answer.json()["error"]
    assert DiagnosisCase.objects.get(pk=case).steps.count() == steps_before


def test_too_many_calls_get_429_with_retry_after(clinician, settings):
    """Past API_RATE_LIMIT calls in the window a token gets 429 and a Retry-After header."""
    settings.API_RATE_LIMIT = "3/m"
    client = bearer(clinician)
    answers = [client.get("/api/v1/models") for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert int(answers[-1]["Retry-After"]) >= 1 and answers[-1].json()["error"]
    assert bearer(clinician).get("/api/v1/models").status_code == 200  # another token's count


def test_the_openapi_document_describes_every_endpoint(clinician):
    """The schema lists every operation and declares the bearer scheme."""
    schema = bearer(clinician).get("/api/v1/openapi.json").json()
    operations = {(m.upper(), p) for p, ops in schema["paths"].items() for m in ops}
    assert operations == {
        ("GET", "/api/v1/models"),
        ("GET", "/api/v1/cases"),
        ("POST", "/api/v1/cases"),
        ("GET", "/api/v1/cases/{case_id}"),
        ("POST", "/api/v1/cases/{case_id}/steps"),
        ("POST", "/api/v1/cases/{case_id}/confirmed-diagnosis"),
        ("GET", "/api/v1/cases/{case_id}/fhir"),
        ("POST", "/api/v1/cases/{case_id}/fhir"),
    }
    assert schema["components"]["securitySchemes"]["BearerToken"]["scheme"] == "bearer"


def test_an_address_that_presents_too_many_bad_tokens_is_answered_429(clinician, settings):
    """Past API_BAD_TOKEN_LIMIT refused tokens from one address the next refusal is a 429 with
    Retry-After, and then even a good token from it (the schema's reader too) gets 429 without a
    lookup; another address is not affected."""
    settings.API_BAD_TOKEN_LIMIT = "3/m"
    # addresses of this run only: the counts live in Redis for the window, across test runs
    a, b = secrets.randbelow(250), secrets.randbelow(250)
    here, there = {"REMOTE_ADDR": f"10.{a}.{b}.7"}, {"REMOTE_ADDR": f"10.{a}.{b}.6"}
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    guesses = [
        Client(HTTP_AUTHORIZATION=f"Bearer cad_guess-{n}", **here).get("/api/v1/models")
        for n in range(4)
    ]
    assert [g.status_code for g in guesses] == [401, 401, 401, 429]
    assert int(guesses[-1]["Retry-After"]) >= 1 and guesses[-1].json()["error"]
    good_here = Client(HTTP_AUTHORIZATION=f"Bearer {plain}", **here)
    with CaptureQueriesContext(connection) as queries:
        assert good_here.get("/api/v1/models").status_code == 429
    assert len(queries) == 0  # the token was not looked up
    assert good_here.get("/api/v1/openapi.json").status_code == 429  # the schema too
    good_there = Client(HTTP_AUTHORIZATION=f"Bearer {plain}", **there)
    assert good_there.get("/api/v1/models").status_code == 200


def test_a_derived_test_names_its_inputs_so_a_program_can_order_it(clinician, thyroid_model):
    """Each test in a case state names the tests it is derived from (FTI: TT4 and T4U; the
    others none), from the model's snapshot: what a program enters for advice to order FTI."""
    state = post(bearer(clinician), "/api/v1/cases", {"model": thyroid_model.pk}).json()
    inputs = {t["name"]: t["derived_from"] for t in state["tests"]}
    assert inputs.pop("FTI") == ["TT4", "T4U"]
    assert inputs and all(v == [] for v in inputs.values())


@pytest.mark.django_db
def test_a_browser_is_sent_to_sign_in_for_the_docs_and_a_signed_in_user_reads_them(clinician):
    """/api/v1/docs: a browser without a session goes to the sign-in page and back; a program
    without a token still gets the 401 JSON; a signed-in clinician gets the reader."""
    browser = Client(HTTP_ACCEPT="text/html,application/xhtml+xml")
    sent = browser.get("/api/v1/docs")
    assert sent.status_code == 302 and sent["Location"] == "/accounts/login/?next=/api/v1/docs"
    program = Client().get("/api/v1/docs")
    assert program.status_code == 401 and "Bearer" in program.json()["error"]
    browser.force_login(clinician)
    assert browser.get("/api/v1/docs").status_code == 200
