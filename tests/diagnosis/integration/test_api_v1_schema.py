"""Schemathesis fuzzes /api/v1 from its own OpenAPI document against a live server.

Every generated call, valid or not, must get a documented status, a JSON body matching the
documented schema, and never a 500.
"""

from __future__ import annotations

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi import checks as openapi_checks

from diagnosis.clinic.models import DiagnosisCase
from diagnosis.integration.api_v1 import api
from diagnosis.integration.services.api_tokens import issue_api_token

pytestmark = pytest.mark.slow


# Built from the routes themselves (no request, no database), exactly what /openapi.json serves.
schema = schemathesis.openapi.from_dict(api.get_openapi_schema())


@pytest.fixture
def token_session(live_server, clinician, trained_model, settings):
    """A requests session with a clinician's token, and a case of theirs for the path ids."""
    settings.API_RATE_LIMIT = "100000/m"  # the fuzzer calls far faster than any EHR
    DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="schemathesis")
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {plain}"
    return session


@pytest.mark.django_db(transaction=True)
@schema.parametrize()
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_every_operation_answers_as_its_schema_says(case, live_server, token_session):
    """No 500s, only documented statuses, JSON bodies that fit the documented schemas."""
    response = case.call(base_url=live_server.url, session=token_session)
    case.validate_response(
        response,
        checks=[
            schemathesis.checks.not_a_server_error,
            openapi_checks.status_code_conformance,
            openapi_checks.content_type_conformance,
            openapi_checks.response_schema_conformance,
        ],
    )


def test_the_openapi_document_describes_every_field_of_a_case_state():
    """The case state's steps, tests, advice, evidence and explanation are nested schemas
    whose fields the document names, not free-form objects."""
    document = api.get_openapi_schema()
    schemas = document["components"]["schemas"]

    def fields(name: str) -> set[str]:
        return set(schemas[name]["properties"])

    state = schemas["CaseStateOut"]["properties"]
    assert state["steps"]["items"] == {"$ref": "#/components/schemas/StepOut"}
    assert state["tests"]["items"] == {"$ref": "#/components/schemas/TestOut"}
    assert {"position", "kind", "test", "value", "price", "followed_advice", "correction"} <= (
        fields("StepOut")
    )
    assert {"name", "price_now", "full_price", "recommended", "derived_from"} <= fields("TestOut")
    assert {"kind", "test_name", "label", "evidence", "class_labels", "costs"} <= fields(
        "AdviceOut"
    )
    assert {"proba", "class_costs", "refer_cost", "cost_after"} <= fields("EvidenceOut")
    assert {"headline", "why", "costs"} <= fields("ExplanationOut")
