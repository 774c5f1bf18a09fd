"""A lead clinician's screens in headless Chromium: the team's cases and one case, read-only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import log_in, new_page
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}
LEAD = ("lead", os.environ.get("DEMO_LEAD_PASSWORD", "lead-demo"))


def _team_cases(model, size: str):
    """Two cases of the demo clinician (a member of the demo lead's team): one open, one closed."""
    from django.contrib.auth.models import User

    from diagnosis.clinic.selectors.cases import compute_case_state
    from diagnosis.clinic.services import cases as case_services
    from diagnosis.clinic.services.step import RecordResult, Refer, apply_step

    clinician = User.objects.get(username="clinician")
    open_case = case_services.start_case(
        user=clinician, trained_model=model, patient_reference=f"MRN-T1-{size}"
    )
    for _ in range(2):  # follow the advice twice, with the middle of each test's range
        state = compute_case_state(open_case)
        advice = state.advice
        if advice.kind != "extract":
            break
        test = next(o.test for o in state.test_options if o.recommended)
        value = (
            test.choices[0]["code"]
            if test.is_nominal
            else ((test.min_value or 0) + (test.max_value or 100)) / 2
        )
        apply_step(
            user=clinician, case_id=open_case.pk, command=RecordResult(test=test.name, value=value)
        )
    closed = case_services.start_case(
        user=clinician, trained_model=model, patient_reference=f"MRN-T2-{size}"
    )
    apply_step(user=clinician, case_id=closed.pk, command=Refer())
    return open_case, closed


@pytest.mark.parametrize("size", list(SIZES))
def test_a_lead_lists_the_team_cases_and_reads_one_without_any_step_form(
    chromium, live_server, heart_model, size
):
    """Team cases list both of the member's cases; the open one opens read-only, no step form."""
    open_case, closed = _team_cases(heart_model, size)
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    try:
        log_in(page, *LEAD)
        page.get_by_role("link", name="Team cases").click()
        page.wait_for_url("**/team/")
        table = page.locator("#team-cases")
        expect(table).to_contain_text(f"MRN-T1-{size}")
        expect(table).to_contain_text(f"MRN-T2-{size}")
        expect(table).to_contain_text("Referred")
        OUT.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(OUT / f"40-team-cases-{size}.png"), full_page=True)
        with page.expect_navigation():
            page.get_by_role("link", name=f"Read case #{open_case.pk}").click()
        expect(page.locator("#read-only")).to_contain_text("Only clinician takes steps")
        expect(page.locator("#steps-table tbody tr[id^=step-]")).to_have_count(
            open_case.steps.count()
        )
        assert page.locator("form input[name=action], form button[name=action]").count() == 0
        page.screenshot(path=str(OUT / f"41-team-case-read-only-{size}.png"), full_page=True)
    finally:
        context.close()
