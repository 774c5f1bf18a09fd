"""Fuzz: no body a program can POST to the step API gets a 500; each refusal says why in JSON."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnosis.catalog.models import DiagnosticTest
from diagnosis.clinic.models import DiagnosisCase
from diagnosis.integration.services.api_tokens import issue_api_token
from diagnosis.shared.validation import MAX_BODY_BYTES

FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Text a sloppy or hostile client sends where an id, a label or a name is due: NULs, padded
# numbers and names, numbers as text, over-long strings.
AWKWARD_TEXT = st.one_of(
    st.text(max_size=12).map(lambda t: t + "\x00"),
    st.sampled_from(["0", "1", " 1", "1 ", "01", "-1", "1.0", "healthy", " disease", "disease "]),
    st.integers(min_value=0, max_value=3).map(str),
    st.integers(min_value=101, max_value=2_000).map(lambda n: "x" * n),
)
# A nominal test's choice (the toy model's "sex": labels and codes) with whitespace around it.
PADDED_CHOICES = st.builds(
    lambda choice, pad, where: (
        (pad if where != "after" else "") + choice + (pad if where != "before" else "")
    ),
    st.sampled_from(["female", "male", "0", "1", "1.0"]),
    st.text(alphabet=" \t\n\r\u00a0\u2003", min_size=1, max_size=3),
    st.sampled_from(["before", "after", "both"]),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    AWKWARD_TEXT,
    PADDED_CHOICES,
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
        "confirm_implausible": JSON_VALUES,
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


# Steps aimed at the toy model's own tests and classes, so the services' checks are reached.
TOY_STEP_BODIES = st.fixed_dictionaries(
    {"action": st.sampled_from(["result", "unavailable", "classify", "refer", "correct", "undo"])},
    optional={
        "test": st.sampled_from(["glucose", "insulin", "sex", " glucose", "glucose\x00"])
        | AWKWARD_TEXT,
        "value": SCALARS,
        "label": SCALARS,
        "position": SCALARS,
        "seen": SCALARS,
        "reason": st.sampled_from(["", "family history"]) | AWKWARD_TEXT,
        "confirm_implausible": st.booleans() | SCALARS,
    },
)


@pytest.fixture
def both_doors(clinician):
    """A signed-in client (session step API) and a token's client (/api/v1) of ``clinician``."""
    session = Client()
    session.force_login(clinician)
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    return session, Client(HTTP_AUTHORIZATION=f"Bearer {plain}")


@settings(max_examples=60, deadline=None, suppress_health_check=FUZZ.suppress_health_check)
@given(body=TOY_STEP_BODIES)
def test_both_apis_refuse_exactly_the_same_steps(clinician, trained_model, both_doors, body):
    """The same step body on a fresh case of each door (the session step API and /api/v1):
    both take it or both refuse it, never a 500, each refusal a JSON message.  Glucose has a
    plausible range and insulin takes whole numbers, so their checks are reached too."""
    DiagnosticTest.objects.filter(dataset=trained_model.dataset, name="glucose").update(
        plausible_min=40, plausible_max=400
    )
    DiagnosticTest.objects.filter(dataset=trained_model.dataset, name="insulin").update(
        integer_only=True
    )
    session, token = both_doors
    text = json.dumps(body)
    answers = {}
    for name, client, url in (
        ("session", session, lambda pk: reverse("api-case-step", args=[pk])),
        ("v1", token, lambda pk: f"/api/v1/cases/{pk}/steps"),
    ):
        case = DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)
        answer = client.post(url(case.pk), data=text, content_type="application/json")
        _answered_without_a_crash(answer)
        answers[name] = answer.status_code
    assert (answers["session"] < 300) == (answers["v1"] < 300), (answers, body)


@settings(max_examples=40, deadline=None, suppress_health_check=FUZZ.suppress_health_check)
@given(value=PADDED_CHOICES, door=st.sampled_from(["session", "v1"]))
def test_a_padded_choice_is_refused_by_both_apis(clinician, trained_model, both_doors, value, door):
    """A choice value with whitespace around it is a 400 naming the test and the spaces, on
    either API; nothing saved."""
    session, token = both_doors
    case = DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)
    client, url = (
        (session, reverse("api-case-step", args=[case.pk]))
        if door == "session"
        else (token, f"/api/v1/cases/{case.pk}/steps")
    )
    body = {"action": "result", "test": "sex", "value": value}
    answer = client.post(url, data=json.dumps(body), content_type="application/json")
    assert answer.status_code == 400, (door, value, answer.content[:300])
    assert f"The Sex result {value!r} has spaces before or after it" in answer.json()["error"]
    assert not case.steps.exists()


@settings(max_examples=20, deadline=None, suppress_health_check=FUZZ.suppress_health_check)
@given(extra=st.integers(min_value=-64, max_value=64))
def test_bodies_around_the_size_limit_get_a_413_past_it(case_client, extra):
    """A body of the size limit give or take 64 bytes: past it a 413 saying so, within it the
    usual answer; never a 500."""
    client, url = case_client
    head, tail = b'{"action": "refer", "reason": "', b'"}'
    size = MAX_BODY_BYTES + extra
    body = head + b"x" * (size - len(head) - len(tail)) + tail
    answer = client.post(url, data=body, content_type="application/json")
    _answered_without_a_crash(answer)
    if size > MAX_BODY_BYTES:
        assert answer.status_code == 413 and "larger than" in answer.json()["error"]
    else:
        assert answer.status_code == 400  # the reason is too long: read, and refused by length


@pytest.mark.parametrize(
    "text",
    [
        '{"action": "result", "test": ["chol"], "value": 1}',
        '{"action": "result", "test": {"name": "chol"}, "value": 1}',
        '{"action": "result", "test": "sex", "value": Infinity}',
        '{"action": "result", "test": "sex", "value": "1e999"}',
        '{"action": "result", "test": "chol", "value": ' + "9" * 5000 + "}",
        '{"action": "result", "test": "chol", "value": 1e999}',
        "[" * 30_000 + "]" * 30_000,  # deep, within the 64 KB a body may have
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
