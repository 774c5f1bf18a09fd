"""Patient pages and JSON are never cached; static files keep their long caching."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.sessions.models import Session
from django.templatetags.static import static
from django.urls import reverse
from django.utils import timezone

from diagnosis.clinic.models import DiagnosisCase


def test_pages_and_json_are_marked_no_store_and_private(client, clinician, trained_model):
    """The home page, a case page and the step API all answer Cache-Control: no-store, private."""
    client.force_login(clinician)
    case = DiagnosisCase.objects.create(trained_model=trained_model, clinician=clinician)
    case_url = reverse("case-detail", args=[case.pk])
    for url in (reverse("home"), case_url, reverse("api-case-step", args=[case.pk])):
        response = client.get(url)
        assert response.status_code == 200, url
        directives = {d.strip() for d in response["Cache-Control"].split(",")}
        assert {"no-store", "private"} <= directives, (url, response["Cache-Control"])


def test_the_sign_in_page_also_denies_unused_browser_features(client):
    """Every answer, even the anonymous sign-in page, has a Permissions-Policy denying sensors."""
    response = client.get(reverse("login"))
    assert "camera=()" in response["Permissions-Policy"]
    assert "geolocation=()" in response["Permissions-Policy"]
    policy = response["Content-Security-Policy"]
    assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy


def test_static_files_are_not_marked_no_store(client):
    """WhiteNoise answers static files before the middleware, so they stay cacheable."""
    response = client.get(static("css/app.css"))  # its hashed name, as pages link it
    assert response.status_code == 200
    assert "no-store" not in response.get("Cache-Control", "")


def test_a_session_idle_longer_than_its_age_is_signed_out(client, clinician, settings):
    """A session whose expiry passed (no request for SESSION_COOKIE_AGE) sends the user to login."""
    client.force_login(clinician)
    assert client.get(reverse("home")).status_code == 200
    Session.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"].startswith(settings.LOGIN_URL)


def test_each_request_pushes_the_idle_deadline_back(client, clinician, settings):
    """A request saves the session, so its expiry is SESSION_COOKIE_AGE from that request."""
    client.force_login(clinician)
    Session.objects.update(expire_date=timezone.now() + timedelta(seconds=30))
    client.get(reverse("home"))
    expiry = Session.objects.get().expire_date
    remaining = (expiry - timezone.now()).total_seconds()
    assert settings.SESSION_COOKIE_AGE - 60 < remaining <= settings.SESSION_COOKIE_AGE
