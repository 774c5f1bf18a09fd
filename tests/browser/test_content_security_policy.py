"""Every screen runs under the Content-Security-Policy without a single violation."""

from __future__ import annotations

import pytest
from browser_helpers import ADMIN, CLINICIAN, log_in, new_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _watch_violations(page) -> list[str]:
    """Collects every CSP violation the page reports (event and console)."""
    seen: list[str] = []
    page.on(
        "console",
        lambda message: (
            seen.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation', e =>"
        " console.error('Content Security Policy violation: ' + e.violatedDirective"
        " + ' ' + e.blockedURI));"
    )
    return seen


def test_clinician_screens_run_only_the_servers_scripts(chromium, live_server, heart_model):
    """Home, model page (charts drawn), case, tree and research: no CSP violation anywhere."""
    import os

    from django.contrib.auth.models import User
    from django.core.management import call_command

    from diagnosis.clinic.services.cases import start_case
    from diagnosis.management.demo_data import HEART

    # the demo experiment, so the research page draws its charts (the model fixture skips it)
    call_command("load_demo_data", "--no-train", "--only", HEART, stdout=open(os.devnull, "w"))
    case = start_case(user=User.objects.get(username=CLINICIAN[0]), trained_model=heart_model)
    context, page = new_page(chromium, live_server)
    violations = _watch_violations(page)
    log_in(page, *CLINICIAN)
    for url in (
        "/",
        f"/models/{heart_model.pk}/",
        f"/cases/{case.pk}/",
        f"/models/{heart_model.pk}/tree/?case={case.pk}",
        "/research/",
    ):
        response = page.goto(url)
        assert response is not None and response.ok, url
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_load_state("networkidle")
        if url in ("/research/", f"/models/{heart_model.pk}/"):
            assert page.locator("[data-figure]").count() > 0, f"{url} drew no chart"
        for figure in page.locator("[data-figure]").all():
            figure.locator(".main-svg").first.wait_for()  # plotly drew under the policy
    context.close()
    assert violations == []


def test_admin_screens_run_only_the_servers_scripts(chromium, live_server, heart_model):
    """The admin's dataset page, the training form and the API's schema reader: no violation."""
    context, page = new_page(chromium, live_server)
    violations = _watch_violations(page)
    log_in(page, *ADMIN)
    for url in (
        f"/admin/catalog/dataset/{heart_model.dataset_id}/change/",
        "/train/",
        f"/models/{heart_model.pk}/",
        "/api/v1/docs",
    ):
        response = page.goto(url)
        assert response is not None and response.ok, url
        page.wait_for_load_state("networkidle")
    context.close()
    assert violations == []
