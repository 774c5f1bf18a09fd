"""Fuzz: no body a program can POST to the step API gets a 500; each refusal says why in JSON."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnosis.models import DiagnosisCase

FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["chol", "thal", "sex", "1e999", "Infinity", "NaN", "-0", "9" * 5000]),
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
STEP_BODIES = st.fixed_dictionaries(
    {},
    optional={
        "action": st.one_of(
            st.sampled_from(["result", "unavailable", "classify", "refer", "correct", "undo"]),
            JSON_VALUES,
        ),
        "test": JSON_VALUES,
        "value": JSON_VALUES,
        "label": JSON_VALUES,
        "position": JSON_VALUES,
        "reason": JSON_VALUES,
        "seen": JSON_VALUES,
    },
)


@pytest.fixture
def case_client(clinician, trained_model):
    client = Client()
    client.force_login(clinician)
    case = DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)
    return client, reverse("api-case-step", args=[case.pk])


def _answered_without_a_crash(response) -> None:
    assert response.status_code < 500, response.content[:300]
    if response.status_code >= 400:
        message = response.json()["error"]
        assert isinstance(message, str) and message.strip()


@FUZZ
@given(body=STEP_BODIES)
def test_any_step_body_is_answered_with_state_or_a_json_error(case_client, body):
    """Arbitrary JSON step bodies (lists, objects, huge numbers, infinities) never give a 500."""
    client, url = case_client
    text = json.dumps(body, allow_nan=True)  # NaN/Infinity tokens too, as sloppy clients send
    _answered_without_a_crash(client.post(url, data=text, content_type="application/json"))


@FUZZ
@given(raw=st.binary(max_size=64) | st.text(max_size=64).map(str.encode))
def test_any_raw_body_is_answered_with_state_or_a_json_error(case_client, raw):
    """Bytes that are not JSON, or not UTF-8, get a 400 JSON error, never a 500."""
    client, url = case_client
    _answered_without_a_crash(client.post(url, data=raw, content_type="application/json"))


@pytest.mark.parametrize(
    "text",
    [
        '{"action": "result", "test": ["chol"], "value": 1}',
        '{"action": "result", "test": {"name": "chol"}, "value": 1}',
        '{"action": "result", "test": "sex", "value": Infinity}',
        '{"action": "result", "test": "sex", "value": "1e999"}',
        '{"action": "result", "test": "chol", "value": ' + "9" * 5000 + "}",
        '{"action": "result", "test": "chol", "value": 1e999}',
        "[" * 100_000 + "]" * 100_000,
        '{"action": "classify", "label": [0]}',
        '{"action": "refer", "reason": {"why": 1}}',
        '{"action": "correct", "position": "first", "value": 1, "reason": "x"}',
        '{"action": "refer", "seen": [1]}',
    ],
)
def test_bodies_that_once_crashed_the_api_get_a_400_naming_the_problem(case_client, text):
    """The bad inputs found by earlier fuzzing each get a 400 JSON error, and no step is saved."""
    client, url = case_client
    response = client.post(url, data=text, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]
    assert not DiagnosisCase.objects.get().steps.exists()
