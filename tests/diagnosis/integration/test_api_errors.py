"""Every error under /api/ is JSON whatever raised it: 404, 413 (bodies over either size limit,
on both APIs) and 500."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from diagnosis.clinic import selectors
from diagnosis.clinic.models import DiagnosisCase
from diagnosis.integration.services.api_tokens import issue_api_token
from diagnosis.shared.validation import MAX_BODY_BYTES


def _json_error(answer, status: int) -> str:
    assert answer.status_code == status, answer.content[:200]
    assert answer["Content-Type"] == "application/json"
    message = answer.json()["error"]
    assert isinstance(message, str) and message.strip()
    return message


@pytest.fixture
def doors(clinician, trained_model):
    """The step URL of each API, with a client allowed to post there."""
    case = DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)
    session = Client(raise_request_exception=False)
    session.force_login(clinician)
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    token = Client(HTTP_AUTHORIZATION=f"Bearer {plain}", raise_request_exception=False)
    return [
        (session, reverse("api-case-step", args=[case.pk])),
        (token, f"/api/v1/cases/{case.pk}/steps"),
    ]


@pytest.mark.parametrize(
    "size", [MAX_BODY_BYTES + 1, 2_621_440 + 1], ids=["over the JSON limit", "over Django's"]
)
def test_a_body_over_a_size_limit_gets_413_json_on_both_apis(doors, settings, size):
    """A body over the step APIs' 64 KB, or over Django's DATA_UPLOAD_MAX_MEMORY_SIZE (which
    Django answers with an HTML 'Bad Request'), is a 413 JSON saying the limit."""
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == 2_621_440
    body = b'{"action": "refer", "reason": "' + b"x" * size + b'"}'
    for client, url in doors:
        message = _json_error(client.post(url, data=body, content_type="application/json"), 413)
        assert "larger than" in message and "B" in message


def test_an_unknown_api_address_is_a_json_404(clinician):
    """/api/ paths that match nothing answer JSON, not the HTML 404 page."""
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {plain}")
    assert "/api/v1/nothing" in _json_error(client.get("/api/v1/nothing"), 404)
    assert _json_error(client.get("/api/nothing"), 404)


def test_a_crash_inside_an_api_view_is_a_json_500(clinician, trained_model, monkeypatch):
    """Whatever a bug raises under /api/v1 is answered JSON 500 (and the screens keep their
    page): a selector that fails stands for any bug."""

    def broken(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(selectors, "models_for_user", broken)
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {plain}", raise_request_exception=False)
    message = _json_error(client.get("/api/v1/models"), 500)
    assert "a bug" not in message  # no internals in the answer
