"""Lost database connections, for real: the request's own PostgreSQL server process is ended
(``pg_terminate_backend``) in the middle of the request.  A read runs once more, a step whose
transaction never committed runs once more, anything else is a JSON 503 with Retry-After (or
a page for people); nothing is saved twice."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from diagnosis.clinic.models import DiagnosisCase, DiagnosisStep
from diagnosis.integration.services.api_tokens import issue_api_token

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _drop_a_dead_connection():
    """After each test the test thread's connection is closed, as Django does after every
    request outside tests (the test client skips that): a connection the test ended must not
    reach the database flush."""
    yield
    connection.close()


class Terminate:
    """A ``connection.execute_wrapper`` that, before each statement ``picks`` chooses (at most
    ``times``), ends this connection's server process from another connection."""

    def __init__(self, picks, times: int = 1) -> None:
        self.picks, self.times, self.done = picks, times, 0

    def __call__(self, execute, sql, params, many, context):
        if self.done < self.times and self.picks(str(sql)):
            pid = context["connection"].connection.info.backend_pid
            db = connection.settings_dict
            with psycopg.connect(
                host=db["HOST"], port=db["PORT"] or 5432, user=db["USER"],
                password=db["PASSWORD"] or None, dbname=db["NAME"], autocommit=True,
            ) as admin:  # fmt: skip
                # waits (up to 5 s) until the process has ended
                admin.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
            self.done += 1
        return execute(sql, params, many, context)


def _case_query(sql: str) -> bool:
    return sql.startswith("SELECT") and "diagnosis_diagnosiscase" in sql


def _step_insert(sql: str) -> bool:
    return sql.startswith("INSERT") and "diagnosis_diagnosisstep" in sql


@pytest.fixture
def api_case(clinician, trained_model):
    """(a token's client, whose token was used a moment ago, the case it started)."""
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {plain}", raise_request_exception=False)
    started = client.post(
        "/api/v1/cases", data={"model": trained_model.pk}, content_type="application/json"
    )
    assert started.status_code == 201, started.content
    return client, started.json()["case"]


def test_a_read_whose_connection_is_ended_is_run_again(api_case):
    """GET /api/v1/cases/<id>: the server process ends as the case is read; the read runs once
    more on a new connection and answers 200."""
    client, case = api_case
    terminate = Terminate(_case_query)
    with connection.execute_wrapper(terminate):
        answer = client.get(f"/api/v1/cases/{case}")
    assert terminate.done == 1
    assert answer.status_code == 200, answer.content
    assert answer.json()["case"] == case


def test_a_step_whose_transaction_never_committed_is_run_again_once(api_case):
    """The server process ends as the step is written (inside its transaction, so nothing
    committed): the step runs once more and is saved exactly once."""
    client, case = api_case
    terminate = Terminate(_step_insert)
    with connection.execute_wrapper(terminate):
        answer = client.post(
            f"/api/v1/cases/{case}/steps",
            data={"action": "unavailable", "test": "insulin"},
            content_type="application/json",
        )
    assert terminate.done == 1
    assert answer.status_code == 200, answer.content
    assert DiagnosisStep.objects.filter(case_id=case).count() == 1


def test_a_step_after_a_committed_write_is_a_503_with_retry_after(clinician, trained_model):
    """A fresh token's first call records its use (a committed write) before the step: a lost
    connection then is not run again but answered JSON 503 with Retry-After; nothing saved."""
    case = DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {plain}", raise_request_exception=False)
    terminate = Terminate(_step_insert)
    with connection.execute_wrapper(terminate):
        answer = client.post(
            f"/api/v1/cases/{case.pk}/steps",
            data={"action": "unavailable", "test": "insulin"},
            content_type="application/json",
        )
    assert terminate.done == 1
    assert answer.status_code == 503, answer.content
    assert int(answer["Retry-After"]) >= 1
    assert "Try again" in answer.json()["error"]
    assert DiagnosisStep.objects.filter(case_id=case.pk).count() == 0


def test_the_session_api_runs_a_read_again_and_answers_json_503_when_both_fail(
    clinician, trained_model
):
    """GET /api/cases/<id>/step: one lost connection is run again (200); lost on the second
    run too, the answer is JSON 503 with Retry-After, never an HTML 500."""
    case = DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)
    client = Client(raise_request_exception=False)
    client.force_login(clinician)
    url = reverse("api-case-step", args=[case.pk])
    once = Terminate(_case_query)
    with connection.execute_wrapper(once):
        assert client.get(url).status_code == 200
    assert once.done == 1
    twice = Terminate(_case_query, times=2)
    with connection.execute_wrapper(twice):
        answer = client.get(url)
    assert twice.done == 2
    assert answer.status_code == 503 and answer["Content-Type"] == "application/json"
    assert int(answer["Retry-After"]) >= 1 and answer.json()["error"]


def test_a_screen_shows_a_clear_503_page(clinician, trained_model):
    """The case page, its connection lost before the session is even read (no retry there):
    a 503 page that says what happened and what to do, with Retry-After."""
    case = DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)
    client = Client(raise_request_exception=False)
    client.force_login(clinician)
    terminate = Terminate(lambda sql: "django_session" in sql)
    with connection.execute_wrapper(terminate):
        answer = client.get(reverse("case-detail", args=[case.pk]))
    assert terminate.done == 1
    assert answer.status_code == 503 and int(answer["Retry-After"]) >= 1
    page = answer.content.decode()
    assert "Briefly unavailable" in page and "open the case again" in page
