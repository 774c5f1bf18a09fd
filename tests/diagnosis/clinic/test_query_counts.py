"""How many SQL queries a step and a case read cost, pinned so that a regression shows.

The limits are today's counts, query by query (the EG2 toy model, a clinician with a token or
a session).  A step through ``/api/v1`` (8):

* the token with its user and the user's groups (1);
* under a savepoint (2, SAVEPOINT and RELEASE): the case row locked, alone, and its
  ``updated_at`` set, returning it with its model and dataset (the model's JSON left out), in
  one ``UPDATE ... RETURNING`` (1), its steps and the dataset's tests, read once for the
  ``seen`` check, the test named, the advice and the price (2); the step INSERT (1), in the
  same transaction (no savepoint of its own under the lock); the access-log row (1);
* the answer: nothing more (the steps and tests read under the lock, with the step added, and
  the locked row as the step left it).

A case start through ``/api/v1`` (7): the token (1), the model with "has it a fitted model" (1),
under a savepoint (2) the case INSERT (1) and the dataset's tests (1), the access-log row (1);
the answer is the new row with no steps, not read back (nor the error matrix of a model that
does not follow the dataset's matrix edits).

The session API step (13) is the same step: it reads the session, the user and the user's
groups (3) instead of the token, and saves the session under its own savepoint (3).  Reads
cost the token (with the groups) or the session, the user and the groups, then the case, the
access-log row, the tests and the steps.  In a test the outer transaction is a savepoint;
under gunicorn it is BEGIN and COMMIT, the same count.
"""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from diagnosis.clinic.services import cases
from diagnosis.clinic.services import step as step_service
from diagnosis.integration.services.api_tokens import issue_api_token

pytestmark = pytest.mark.django_db

V1_STEP = 8
V1_START = 7
V1_READ = 5
SESSION_STEP = 13
SESSION_READ = 10
CASE_PAGE = 15


def _queries(call):
    with CaptureQueriesContext(connection) as captured:
        response = call()
    assert response.status_code == 200, response.content[:300]
    return response, [q["sql"] for q in captured.captured_queries]


def _step_body(state: dict, value: float) -> dict:
    advice = state["advice"]
    assert advice["kind"] == "extract", advice
    return {
        "action": "result",
        "test": advice["test_name"],
        "value": value,
        "seen": state["version"],
    }


def _walk(client: Client, read_url: str, step_url: str) -> list[tuple[int, list[str], dict]]:
    """Two result steps (glucose, then the advice after it); each one's queries and answer."""
    state = json.loads(client.get(read_url).content)
    taken = []
    for value in (180, 150):
        body = _step_body(state, value)
        response, sql = _queries(
            lambda body=body: client.post(step_url, body, content_type="application/json")
        )
        state = json.loads(response.content)
        taken.append((len(sql), sql, state))
    return taken


def _no_model_json(sql: list[str]) -> bool:
    """No query selects the model's JSON (a WHERE on it, or a selected "is it empty", which
    read no text, are fine)."""
    emptiness = re.compile(r'NOT \("\w+"\."model_json" = \'\'\)')
    return not any('"model_json"' in emptiness.sub("", q.split(" FROM ", 1)[0]) for q in sql)


def test_a_v1_step_and_read_cost_a_fixed_number_of_queries(clinician, trained_model):
    """/api/v1: a step costs at most V1_STEP queries, a read V1_READ, whatever the step count."""
    token = issue_api_token(issuer=None, owner=clinician, name="EHR")[1]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    case = cases.start_case(user=clinician, trained_model=trained_model)
    taken = _walk(client, f"/api/v1/cases/{case.pk}", f"/api/v1/cases/{case.pk}/steps")
    (first, first_sql, _), (second, second_sql, state) = taken
    assert len(state["steps"]) == 2
    assert first == second, "a later step must not cost more queries (one per step is N+1)"
    assert second <= V1_STEP, "\n".join(second_sql)
    _, read_sql = _queries(lambda: client.get(f"/api/v1/cases/{case.pk}"))
    assert len(read_sql) <= V1_READ, "\n".join(read_sql)
    assert _no_model_json(first_sql + second_sql + read_sql), "the model's JSON was read"


def test_a_session_step_and_read_cost_a_fixed_number_of_queries(clinician, trained_model):
    """Session API: a step costs at most SESSION_STEP queries, a read SESSION_READ."""
    client = Client()
    client.force_login(clinician)
    case = cases.start_case(user=clinician, trained_model=trained_model)
    url = f"/api/cases/{case.pk}/step"
    (first, first_sql, _), (second, second_sql, state) = _walk(client, url, url)
    assert len(state["steps"]) == 2
    assert first == second, "a later step must not cost more queries (one per step is N+1)"
    assert second <= SESSION_STEP, "\n".join(second_sql)
    _, read_sql = _queries(lambda: client.get(url))
    assert len(read_sql) <= SESSION_READ, "\n".join(read_sql)
    assert _no_model_json(first_sql + second_sql + read_sql), "the model's JSON was read"


def test_the_case_page_costs_a_fixed_number_of_queries(clinician, trained_model):
    """The clinician's case page costs at most CASE_PAGE queries and never reads the JSON."""
    client = Client()
    client.force_login(clinician)
    case = cases.start_case(user=clinician, trained_model=trained_model)
    step_service.take_step(user=clinician, case=case, action="result", test="glucose", value=180)
    _queries(lambda: client.get(f"/cases/{case.pk}/"))  # the estimator is cached from here
    _, sql = _queries(lambda: client.get(f"/cases/{case.pk}/"))
    assert len(sql) <= CASE_PAGE, "\n".join(sql)
    assert _no_model_json(sql), "the model's JSON was read"


def test_listing_models_reads_no_json_and_does_not_grow_with_the_models(clinician, trained_model):
    """GET /api/v1/models: the same queries for 1 model as for 3; neither it nor the home page
    reads a model's JSON (the page reads each model's error matrix afresh, one query each)."""
    token = issue_api_token(issuer=None, owner=clinician, name="EHR")[1]
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    page = Client()
    page.force_login(clinician)
    cases.start_case(user=clinician, trained_model=trained_model)

    def both():
        api_response, api_sql = _queries(lambda: api.get("/api/v1/models"))
        _, page_sql = _queries(lambda: page.get("/"))
        return json.loads(api_response.content), api_sql, page_sql

    both()  # once-a-while writes (the token's last use) and caches out of the way
    listed, api_one, page_one = both()
    assert [m["ready"] for m in listed] == [True]
    for _ in range(2):  # two more ready models of the same dataset
        trained_model.pk = None
        trained_model.save()
    listed, api_three, page_three = both()
    assert [m["ready"] for m in listed] == [True, True, True]
    assert len(api_three) == len(api_one), "\n".join(api_three)
    # the matrix in force is read afresh per model (selectors.matrices.resolve), nothing else
    assert len(page_three) == len(page_one) + 2, "\n".join(page_three)
    assert _no_model_json(api_three + page_three), "a model's JSON was read"


def test_a_step_locks_the_case_row_alone(clinician, trained_model):
    """Every row lock a step takes is on the case row only, never its model's or dataset's:
    one UPDATE of the case row per step (an UPDATE locks its target rows alone, the model and
    dataset read through its FROM are not locked) and no SELECT ... FOR of anything else."""
    token = issue_api_token(issuer=None, owner=clinician, name="EHR")[1]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    case = cases.start_case(user=clinician, trained_model=trained_model)
    (_, first_sql, _), (_, second_sql, _) = _walk(
        client, f"/api/v1/cases/{case.pk}", f"/api/v1/cases/{case.pk}/steps"
    )
    locks = [q for q in first_sql + second_sql if " FOR " in q or q.startswith("UPDATE ")]
    assert len(locks) == 2, locks
    assert all(q.startswith('UPDATE "diagnosis_diagnosiscase" SET "updated_at"') for q in locks)


def test_the_answer_to_a_step_is_the_case_as_read_afresh(clinician, trained_model):
    """Each step's answer (built from what the step read under its lock) equals a new GET,
    through the last step that closes the case."""
    token = issue_api_token(issuer=None, owner=clinician, name="EHR")[1]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    case = cases.start_case(user=clinician, trained_model=trained_model)
    read = f"/api/v1/cases/{case.pk}"
    state = json.loads(client.get(read).content)
    bodies = [
        {"action": "unavailable", "test": "sex"},
        {"action": "result", "test": "glucose", "value": 180},
        {"action": "result", "test": "insulin", "value": 150},
        {"action": "classify", "label": 1},
    ]
    for body in bodies:
        answer = client.post(
            f"{read}/steps", {**body, "seen": state["version"]}, content_type="application/json"
        )
        assert answer.status_code == 200, answer.content[:300]
        state = json.loads(answer.content)
        assert state == json.loads(client.get(read).content)
    assert not state["is_open"] and len(state["steps"]) == 4


def test_a_v1_case_start_costs_a_fixed_number_of_queries(clinician, trained_model):
    """/api/v1: a case start costs at most V1_START queries, reads nothing back, no JSON."""
    token = issue_api_token(issuer=None, owner=clinician, name="EHR")[1]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

    def start():
        return client.post(
            "/api/v1/cases", {"model": trained_model.pk}, content_type="application/json"
        )

    assert start().status_code == 201  # the token's last use and the estimator cache
    with CaptureQueriesContext(connection) as captured:
        response = start()
    assert response.status_code == 201, response.content[:300]
    sql = [q["sql"] for q in captured.captured_queries]
    assert len(sql) <= V1_START, "\n".join(sql)
    assert not any(q.startswith('SELECT "diagnosis_diagnosiscase"') for q in sql), sql
    assert _no_model_json(sql), "the model's JSON was read"
    state = json.loads(response.content)
    fresh = json.loads(client.get(f"/api/v1/cases/{state['case']}").content)
    assert state == fresh


def test_several_results_cost_one_insert_more_each_and_answer_as_read_afresh(
    clinician, trained_model
):
    """Several results in one step are each taken on the row the step locked: a second result
    costs its INSERT alone (no lock, savepoint or read again), and the answer equals a new read."""
    client = Client()
    client.force_login(clinician)

    def several(results: dict) -> tuple[dict, list[str]]:
        case = cases.start_case(user=clinician, trained_model=trained_model)
        url = f"/api/cases/{case.pk}/step"
        body = {"action": "results", "results": results}
        response, sql = _queries(lambda: client.post(url, body, content_type="application/json"))
        state = json.loads(response.content)
        assert state == json.loads(client.get(url).content)
        return state, sql

    several({"glucose": 100})  # the session, the user and the estimator cache, read once
    one_state, one = several({"glucose": 180})
    two_state, two = several({"glucose": 180, "insulin": 150})
    assert [len(one_state["steps"]), len(two_state["steps"])] == [1, 2]
    inserts = [q for q in two if q.startswith('INSERT INTO "diagnosis_diagnosisstep"')]
    assert len(inserts) == 2, inserts
    assert len(two) == len(one) + 1, "\n".join(two)
    assert _no_model_json(one + two), "the model's JSON was read"
