"""A CDS Hooks call whose database connection is lost, for real (its PostgreSQL server process
ended mid-call): the JWT's jti is spent in the call's own transaction, so an attempt that never
committed leaves no jti and DatabaseRetryMiddleware's re-run is not taken for a replay; a
second real call with the same token is."""

from __future__ import annotations

import psycopg
import pytest
from cds_helpers import GLUCOSE, code_toy_dataset, hook_body, new_key, observation, register, sign
from django.db import connection
from django.test import Client

from diagnosis.clinic.models import DiagnosisStep
from diagnosis.integration.models import CdsCard, SeenJti

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _drop_a_dead_connection():
    """The test thread's connection closed after each test (one the test ended must not reach
    the database flush)."""
    yield
    connection.close()


class EndConnection:
    """An execute wrapper ending this connection's server process (from another connection)
    before the first statement ``picks`` chooses; once."""

    def __init__(self, picks) -> None:
        self.picks, self.done = picks, 0

    def __call__(self, execute, sql, params, many, context):
        if not self.done and self.picks(str(sql)):
            pid = context["connection"].connection.info.backend_pid
            db = connection.settings_dict
            with psycopg.connect(
                host=db["HOST"], port=db["PORT"] or 5432, user=db["USER"],
                password=db["PASSWORD"] or None, dbname=db["NAME"], autocommit=True,
            ) as admin:  # fmt: skip
                admin.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
            self.done += 1
        return execute(sql, params, many, context)


@pytest.fixture
def ehr(clinician, trained_model):
    code_toy_dataset(trained_model.dataset)
    key = new_key()
    register(clinician, key)
    path = f"/cds-services/cost-aware-model-{trained_model.pk}"
    return key, path


def post(path: str, token: str, body) -> object:
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}", raise_request_exception=False)
    return client.post(path, data=body, content_type="application/json")


def glucose_call():
    return hook_body(observations=[observation("g1", GLUCOSE, 120, unit="mg/dL")])


@pytest.mark.parametrize(
    "where",
    [
        pytest.param(lambda sql: sql.startswith("INSERT") and "diagnosisstep" in sql, id="step"),
        pytest.param(lambda sql: sql.startswith("INSERT") and "seenjti" in sql, id="jti"),
        pytest.param(lambda sql: sql.startswith("INSERT") and "cdscard" in sql, id="card"),
    ],
)
def test_a_call_lost_before_its_commit_runs_again_and_is_not_a_replay(ehr, where):
    """The connection ends as the jti, the step or the card is written: nothing committed, so
    the middleware runs the call once more, that run is accepted (200, the step saved once,
    the jti kept once), and the same token sent again afterwards is a replay (401)."""
    key, path = ehr
    token = sign(key, aud="http://testserver" + path)
    end = EndConnection(where)
    with connection.execute_wrapper(end):
        answer = post(path, token, glucose_call())
    assert end.done == 1
    assert answer.status_code == 200, answer.content
    assert DiagnosisStep.objects.filter(test__name="glucose").count() == 1
    assert (SeenJti.objects.count(), CdsCard.objects.count()) == (1, 1)
    again = post(path, token, glucose_call())
    assert again.status_code == 401 and "replayed" in again.json()["error"]
    assert CdsCard.objects.count() == 1


def test_an_answered_refusal_spends_its_token(ehr):
    """A call refused after its token was verified (a fhirServer not registered) still spends
    its jti: the same token with another body is a replay, not a second chance."""
    key, path = ehr
    token = sign(key, aud="http://testserver" + path)
    refused = post(path, token, hook_body(prefetch=False, fhirServer="http://127.0.0.1:9/"))
    assert refused.status_code == 403, refused.content
    again = post(path, token, glucose_call())
    assert again.status_code == 401 and "replayed" in again.json()["error"]
    assert (DiagnosisStep.objects.count(), SeenJti.objects.count()) == (0, 1)
