"""Fuzz: no body an EHR can POST to a CDS hook or its feedback gets a 500; each refusal is a
4xx JSON saying why, and a refused call saves nothing (no case, step, card or feedback)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from cds_helpers import (
    GLUCOSE,
    INSULIN,
    SEX,
    bundle,
    code_toy_dataset,
    hook_body,
    new_key,
    observation,
    register,
    sign,
)
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnosis.clinic.models import CaseAccess, DiagnosisCase, DiagnosisStep
from diagnosis.integration.models import CdsCard, CdsFeedback, CdsPatientCase

FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
REFUSALS = {400, 404, 409, 412, 413}

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.text(max_size=6).map(lambda t: t + "\x00"),
    st.sampled_from(
        ["patient-view", "order-select", "Observation", "Bundle", "final", "p1", "mg/dL", "1e999"]
    ),
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
CODINGS = st.sampled_from([GLUCOSE, INSULIN, SEX, ("http://loinc.org", "0000-0"), ("", "")])
UNITS = st.one_of(
    st.none(), st.sampled_from(["mg/dL", "mmol/L", "u[IU]/mL", ""]), st.text(max_size=5)
)
OBS_VALUES = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.sampled_from(["male", "female", "0", "1", " male", "unknown"]),
)


@st.composite
def observations(draw) -> dict[str, Any]:
    resource = observation(
        draw(st.sampled_from(["o1", "o2", "o3"])),
        draw(CODINGS),
        draw(OBS_VALUES),
        unit=draw(UNITS),
        patient=draw(st.sampled_from(["p1", "p1", "p2"])),
    )
    for field in draw(st.lists(st.sampled_from(sorted(resource)), max_size=2, unique=True)):
        if draw(st.booleans()):
            del resource[field]
        else:
            resource[field] = draw(JSON_VALUES)
    if draw(st.booleans()):
        resource["status"] = draw(st.sampled_from(["final", "cancelled", "amended", "bogus"]))
    return resource


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, prefix + (i,))
    return found


@st.composite
def hook_bodies(draw) -> Any:
    """A valid hook call with Observations, then some of its fields replaced or removed."""
    hook = draw(st.sampled_from(["patient-view", "order-select"]))
    body = hook_body(hook, observations=draw(st.lists(observations(), max_size=3)))
    if hook == "order-select":
        draft = {
            "resourceType": "ServiceRequest",
            "id": "d1",
            "status": "draft",
            "intent": "order",
            "subject": {"reference": "Patient/p1"},
            "code": {"coding": [{"system": GLUCOSE[0], "code": GLUCOSE[1]}]},
        }
        body["context"]["selections"] = ["ServiceRequest/d1"]
        body["context"]["draftOrders"] = bundle(draft)
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        paths = _paths(body)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = body
        for part in path[:-1]:
            parent = parent[part]
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(JSON_VALUES)
    return body


@pytest.fixture
def ehr(clinician, trained_model):
    code_toy_dataset(trained_model.dataset)
    key = new_key()
    register(clinician, key)
    service = f"/cds-services/cost-aware-model-{trained_model.pk}"
    return key, service


def _counts() -> tuple[int, ...]:
    return (
        DiagnosisCase.objects.count(),
        DiagnosisStep.objects.count(),
        CdsCard.objects.count(),
        CdsFeedback.objects.count(),
        CdsPatientCase.objects.count(),
        CaseAccess.objects.count(),
    )


def _post(key, path: str, raw: bytes):
    token = sign(key, aud="http://testserver" + path)
    return Client().post(
        path, data=raw, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def _check(answer, before: tuple[int, ...]) -> None:
    assert answer.status_code < 500, answer.content[:300]
    assert answer["Content-Type"] == "application/json"
    body = json.loads(answer.content)
    if answer.status_code == 200:
        for card in body.get("cards", []):
            assert 0 < len(card["summary"]) < 140
            assert card["indicator"] in ("info", "warning", "critical")
    else:
        assert answer.status_code in REFUSALS, answer.content[:300]
        assert isinstance(body["error"], str) and body["error"]
        assert _counts() == before  # a refused call saved nothing


@FUZZ
@given(body=hook_bodies())
def test_mutated_hook_calls_never_500_and_a_refusal_saves_nothing(ehr, body):
    """Valid hook calls with fields replaced by any JSON or removed: 200 with valid cards, or
    a 4xx JSON error and nothing saved."""
    key, service = ehr
    path = service + ("-order-select" if body.get("hook") == "order-select" else "")
    before = _counts()
    _check(_post(key, path, json.dumps(body).encode()), before)


@FUZZ
@given(body=st.one_of(JSON_VALUES, st.binary(max_size=64)))
def test_any_json_or_bytes_as_a_hook_body_is_a_clear_4xx(ehr, body):
    """Whatever JSON value or bytes are posted, the answer is a 4xx JSON error, nothing saved."""
    key, service = ehr
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    before = _counts()
    answer = _post(key, service, raw)
    assert answer.status_code in REFUSALS, answer.content[:300]
    _check(answer, before)


@FUZZ
@given(item=st.fixed_dictionaries(
    {},
    optional={
        "card": st.one_of(JSON_VALUES, st.just("CARD")),
        "outcome": st.one_of(st.sampled_from(["accepted", "overridden"]), JSON_VALUES),
        "acceptedSuggestions": st.one_of(JSON_VALUES, st.just([{"id": "SUGGESTION"}])),
        "overrideReason": JSON_VALUES,
        "outcomeTimestamp": st.one_of(
            JSON_VALUES, st.sampled_from(["2026-11-27T09:00:00Z", "2026-11-27", "yesterday"])
        ),
    },
))  # fmt: skip
def test_feedback_bodies_never_500_and_a_refusal_saves_nothing(ehr, item):
    """Feedback about a real card with any fields: stored, or a 4xx JSON error with nothing
    stored (an accepted conclusion card may also conclude the case)."""
    key, service = ehr
    answer = _post(key, service, json.dumps(hook_body()).encode())
    assert answer.status_code == 200, answer.content[:300]
    card = json.loads(answer.content)["cards"][0]
    item = copy.deepcopy(item)
    if item.get("card") == "CARD":
        item["card"] = card["uuid"]
    if item.get("acceptedSuggestions") == [{"id": "SUGGESTION"}]:
        item["acceptedSuggestions"] = [{"id": card["suggestions"][0]["uuid"]}]
    before = _counts()
    _check(_post(key, service + "/feedback", json.dumps({"feedback": [item]}).encode()), before)
