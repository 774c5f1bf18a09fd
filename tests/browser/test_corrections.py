"""Corrections, confirmed closing and stale tabs in headless Chromium, with screenshots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import CLINICIAN, focused_after_load, log_in, new_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}


def dollars(text: str) -> float:
    return float(text.strip().replace("$", "").replace(",", ""))


def shot(page, name: str, size: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"{name}-{size}.png"), full_page=True)


def start_case(page, model, reference: str) -> str:
    row = page.locator("article.model-card", has_text=str(model))
    row.get_by_placeholder("Patient ref.").fill(reference)
    with page.expect_navigation():
        row.get_by_role("button", name="Start a case").click()
    return page.url.split("?")[0]


def order(page, case_url: str, name: str, value: str) -> None:
    """Enter ``value`` for test ``name`` through "order a different test"."""
    page.goto(f"{case_url}?test={name}#order-entry")
    page.locator("#entry input[name=value]").fill(value)
    with page.expect_navigation():
        page.get_by_role("button", name="Save result").click()


@pytest.mark.parametrize("size", list(SIZES))
def test_correct_a_value_and_see_the_audit(chromium, live_server, heart_model, size):
    """A mistyped cholesterol is corrected: the original is struck with who and why, no charge."""
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    try:
        log_in(page, *CLINICIAN)
        case_url = start_case(page, heart_model, f"MRN-C-{size}")
        order(page, case_url, "chol", "204")  # in range, but transposed
        cost = dollars(page.locator("#accumulated-cost").inner_text())
        page.locator("#step-1").get_by_role("link", name="Correct").click()
        page.wait_for_url("**?correct=0")
        # The correction field has the keyboard focus.
        assert focused_after_load(page).get_attribute("name") == "correct-value"
        page.keyboard.type("240")
        page.get_by_label("Why (kept in the case's record)").fill("transposed digits")
        shot(page, "20-case-correct-form", size)
        with page.expect_navigation():
            page.get_by_role("button", name="Save the correction").click()
        first, second = page.locator("#step-1"), page.locator("#step-2")
        assert first.get_attribute("data-correction") == "corrected"
        assert first.locator("s").inner_text() == "204 mg/dl"
        audit = page.locator("#step-1-audit").inner_text()
        assert "Corrected to 240 mg/dl (step 2) by clinician" in audit
        assert "transposed digits" in audit
        assert "corrects step 1; no extra charge" in second.inner_text()
        assert "240 mg/dl" in second.inner_text()
        assert dollars(second.locator("td.num").inner_text()) == 0
        assert dollars(page.locator("#accumulated-cost").inner_text()) == pytest.approx(cost)
        assert "Value corrected" in page.locator("body").inner_text()
        shot(page, "21-case-corrected-audit", size)
        # The summary keeps the same audit.
        page.goto(case_url + "summary/")
        assert "transposed digits" in page.locator("#step-1-audit").inner_text()
    finally:
        context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_confirm_a_referral(chromium, live_server, heart_model, size):
    """Refer asks first (going back changes nothing); confirming by keyboard keeps the reason."""
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    try:
        log_in(page, *CLINICIAN)
        case_url = start_case(page, heart_model, f"MRN-R-{size}")
        with page.expect_navigation():
            page.get_by_role("button", name="Refer the patient").click()
        assert page.get_by_role("heading", name="Refer the patient to a specialist?").is_visible()
        assert "This overrules the model" in page.locator("#confirm").inner_text()
        shot(page, "22-confirm-referral", size)
        with page.expect_navigation():
            page.get_by_role("link", name="No, back to the case").click()
        assert page.url.split("?")[0].split("#")[0] == case_url
        assert page.locator("#advice").count() == 1  # still open
        with page.expect_navigation():
            page.get_by_role("button", name="Refer the patient").click()
        page.get_by_label("Why you overrule the advice").fill("patient asked for a cardiologist")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent").strip() == (
            "Yes, refer and close the case"
        )
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.url.endswith("/summary/")
        assert "Referred" in page.locator("#decision").inner_text()
        assert "patient asked for a cardiologist" in page.locator("#steps-table").inner_text()
        assert "patient asked for a cardiologist" in page.locator("#decision").inner_text()
        shot(page, "23-summary-referred-with-reason", size)
    finally:
        context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_a_stale_tab_error_is_shown_and_the_entry_kept(chromium, live_server, heart_model, size):
    """A step from a second, stale tab is refused with what changed; the typed value survives."""
    context, first = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    try:
        log_in(first, *CLINICIAN)
        case_url = start_case(first, heart_model, f"MRN-S-{size}")
        second = context.new_page()
        second.goto(f"{case_url}?test=thalach#order-entry")
        order(first, case_url, "chol", "233")  # the first tab moves the case on
        second.locator("#entry input[name=value]").fill("150")
        with second.expect_navigation():
            second.get_by_role("button", name="Save result").click()
        alert = second.locator("#case-errors")
        assert alert.get_attribute("role") == "alert"
        message = alert.inner_text()
        assert "This page was out of date" in message
        assert "Serum cholesterol = 233 mg/dl) was recorded by you (clinician)" in message
        assert "Nothing from your form was saved" in message
        assert second.locator("#entry input[name=value]").input_value() == "150"
        assert "Maximum heart rate" not in second.locator("#steps-table").inner_text()
        shot(second, "24-case-stale-tab", size)
        # Submitting again from the refreshed page goes through.
        with second.expect_navigation():
            second.get_by_role("button", name="Save result").click()
        assert "Maximum heart rate" in second.locator("#steps-table").inner_text()
        assert second.locator("#case-errors").count() == 0
    finally:
        context.close()


def test_patient_history_search_and_earlier_cases(chromium, live_server, heart_model):
    """Home finds a patient's cases by reference; a new case lists the earlier one's outcome."""
    context, page = new_page(chromium, live_server, width=1366, height=768)
    try:
        log_in(page, *CLINICIAN)
        start_case(page, heart_model, "MRN-H-1")
        with page.expect_navigation():
            page.get_by_role("button", name="Refer the patient").click()
        with page.expect_navigation():
            page.get_by_role("button", name="Yes, refer and close the case").click()
        page.goto("/")
        start_case(page, heart_model, "MRN-H-1")
        history = page.locator("#patient-history")
        assert "Earlier cases of MRN-H-1" in history.inner_text()
        assert "Referred" in history.inner_text()
        shot(page, "25-case-patient-history", "laptop")
        page.goto("/")
        page.locator("#patient-query").fill("h-1")
        with page.expect_navigation():
            page.get_by_role("button", name="Search your cases").click()
        rows = page.locator("#patient-cases tbody tr")
        assert rows.count() == 2
        assert "Referred" in rows.nth(1).inner_text() and "Open" in rows.nth(0).inner_text()
        shot(page, "26-home-patient-search", "laptop")
        page.set_viewport_size({"width": 820, "height": 1180})
        shot(page, "26-home-patient-search", "tablet")
    finally:
        context.close()
