"""The screens' error pages (400, 403, 404, 413, 500): the site's own look, what happened and
what to do, with their status; /api paths keep answering JSON."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from diagnosis.clinic import selectors


@pytest.fixture
def signed_in(clinician) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(clinician)
    return client


def _page(response, status: int) -> str:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("text/html")
    page = " ".join(response.content.decode().split())
    assert 'class="site-header"' in page and "css/app" in page  # templates/base.html
    assert 'role="alert"' in page
    assert "Back to models and cases" in page
    return page


def test_a_request_the_server_cannot_read_gets_the_400_page(signed_in, settings):
    """A form with more fields than DATA_UPLOAD_MAX_NUMBER_FIELDS: 400, saying nothing was
    saved and to reload and do it again, with a link back to the form; not Django's bare
    "Bad Request"."""
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    form = {f"field{i}": "x" for i in range(50)}
    came_from = "http://testserver" + reverse("case-new")
    page = _page(signed_in.post(reverse("case-new"), form, HTTP_REFERER=came_from), 400)
    assert "This request could not be read" in page
    assert f'<a href="{came_from}">Back to the page you were on</a>' in page
    assert "Signed in as" in page  # the header as on every page
    assert "nothing was saved" in page
    assert "reload the page, and do it again" in page
    assert "<h1>Bad Request (400)</h1>" not in page


def test_a_body_over_the_size_limit_gets_the_413_page(signed_in, settings):
    """A form body over DATA_UPLOAD_MAX_MEMORY_SIZE: 413 naming the limit in MB and what to
    send instead; no link back to another site."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440  # Django's default, 2.5 MiB
    body = "reason=" + "x" * 2_700_000
    response = signed_in.post(
        reverse("case-new"),
        body,
        content_type="application/x-www-form-urlencoded",
        HTTP_REFERER="https://elsewhere.example/form",
    )
    page = _page(response, 413)
    assert "Too much sent at once" in page
    assert "larger than <strong>2.5 MB</strong>" in page
    assert "nothing was saved" in page
    assert "send less at once" in page
    assert "elsewhere.example" not in page  # a link back only to this site's own pages


def test_a_page_the_user_may_not_open_gets_the_403_page(signed_in):
    """A clinician opening the training form (model admins only): 403 with the site's look."""
    page = _page(signed_in.get(reverse("train")), 403)
    assert "You may not do this" in page


def test_an_expired_form_gets_the_csrf_403_page(clinician):
    """A form sent without its CSRF token (an old tab, cookies blocked): 403 saying to reload
    and send it again."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(clinician)
    page = _page(client.post(reverse("home"), {"q": "x"}), 403)
    assert "This form has expired" in page
    assert "reload the page" in page


def test_a_missing_page_gets_the_404_page(signed_in):
    """A model that does not exist: 404 with the site's look."""
    page = _page(signed_in.get(reverse("model-detail", args=[999_999])), 404)
    assert "There is nothing at this address" in page


def test_a_crash_gets_the_500_page(signed_in, monkeypatch):
    """A bug in a page (a selector that raises stands for any): 500 saying it was logged and
    how to check a step was saved; no internals."""

    def broken(**kwargs):
        raise RuntimeError("a bug with internals")

    monkeypatch.setattr(selectors, "models_for_user", broken)
    page = _page(signed_in.get(reverse("home")), 500)
    assert "Something went wrong" in page
    assert "open the case again" in page
    assert "internals" not in page


def test_api_paths_still_answer_json_for_the_same_faults(signed_in, settings):
    """The same over-large form body under /api/ is a JSON 413, never one of these pages
    (tests/diagnosis/integration/test_api_errors.py covers both APIs' JSON bodies)."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = signed_in.post(
        "/api/cases/1/step", "x" * 5000, content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 413
    assert response.json()["error"]


def test_a_host_not_allowed_gets_the_400_page_not_a_500(signed_in):
    """A Host header not in ALLOWED_HOSTS (Django's DisallowedHost): the 400 page, no link
    back to that host."""
    response = signed_in.get(
        reverse("home"), HTTP_HOST="evil.example", HTTP_REFERER="http://evil.example/"
    )
    page = _page(response, 400)
    assert "This request could not be read" in page
    assert "evil.example" not in page
