"""Watched after (issue 27) in Chromium: a confirmed diagnosis recorded on a closed case's
screen, then confirmations from a shifted population through /api/v1 raise the drift alarm
on the model page and the home card.  Screenshots of the confirm form and the monitoring
panel go to $SCREENSHOT_DIR (var/screenshots) at 1366x768 and 820x1180."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import CLINICIAN, log_in, new_page
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}
#: The model page loads plotly.js; on a machine shared by eight sessions it takes its time.
LOADED_MS = 90_000


def _shot(page, name: str, size: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"{name}-{size}.png"), full_page=True)


def test_a_confirmed_diagnosis_on_the_case_screen_and_a_drift_alarm(
    chromium, live_server, heart_model
):
    """The clinician records a closed case's confirmed diagnosis on its screen; then cases
    concluded "healthy" are confirmed diseased through the API, and the model page and the
    home card show the drift alarm."""
    from django.contrib.auth.models import User
    from django.test import Client

    from diagnosis.clinic.models import ConfirmedDiagnosis
    from diagnosis.clinic.services.cases import start_case
    from diagnosis.clinic.services.step import classify
    from diagnosis.integration.services.api_tokens import issue_api_token

    clinician = User.objects.get(username=CLINICIAN[0])
    labels = heart_model.cost_snapshot["vocabulary"]["class_labels"]
    first = start_case(user=clinician, trained_model=heart_model, patient_reference="H-001")
    classify(user=clinician, case=first, label=0)
    for size, (width, height) in SIZES.items():
        context, page = new_page(chromium, live_server, width=width, height=height)
        context.set_default_timeout(LOADED_MS)
        try:
            log_in(page, *CLINICIAN)
            page.goto(f"/cases/{first.pk}/")  # a closed case opens on its summary
            form = page.locator("#confirmed-diagnosis")
            expect(form).to_be_visible()
            if size == "laptop":
                expect(page.locator("#confirmed-none")).to_be_visible()
                form.scroll_into_view_if_needed()
                _shot(page, "confirm-form", size)
                page.select_option("#confirmed-label", label=labels[1])
                with page.expect_navigation():
                    page.locator("#record-confirmed").click()
            expect(page.locator("#confirmed-now")).to_contain_text(labels[1])
            expect(page.locator("#confirmed-now")).to_contain_text("the conclusion was wrong")
            if size == "tablet":
                form.scroll_into_view_if_needed()
                _shot(page, "confirm-form", size)
        finally:
            context.close()
    stored = ConfirmedDiagnosis.objects.get(case=first)
    assert (stored.label, stored.recorded_by, stored.source) == (1, clinician, "case")

    # A shifted population: patients concluded healthy turn out diseased, confirmed by the EHR.
    _, token = issue_api_token(issuer=clinician, owner=clinician, name="ward EHR")
    ehr = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    for i in range(9):
        case = start_case(user=clinician, trained_model=heart_model, patient_reference=f"H-{i}")
        classify(user=clinician, case=case, label=0)
        answer = ehr.post(
            f"/api/v1/cases/{case.pk}/confirmed-diagnosis",
            data={"label": labels[1]},
            content_type="application/json",
        )
        assert answer.status_code == 201, answer.content
    for size, (width, height) in SIZES.items():
        context, page = new_page(chromium, live_server, width=width, height=height)
        context.set_default_timeout(LOADED_MS)
        try:
            log_in(page, *CLINICIAN)
            card_alarm = page.locator(f"[data-drift-alarm='{heart_model.pk}']")
            expect(card_alarm).to_be_visible()
            page.goto(f"/models/{heart_model.pk}/")
            alarm = page.locator("#drift-alarm")
            expect(alarm).to_be_visible()
            expect(alarm).to_contain_text("10 confirmed cases")
            expect(page.locator("#monitoring-realized")).to_contain_text("10 of 10 closed")
            page.locator("#monitoring").scroll_into_view_if_needed()
            _shot(page, "monitoring-panel", size)
        finally:
            context.close()
