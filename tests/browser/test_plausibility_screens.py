"""Plausibility in headless Chromium: an implausible value is asked about, confirmed and marked.

Screenshots go to var/screenshots/ ($SCREENSHOT_DIR) as plausibility-*-laptop.png / -tablet.png.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import ADMIN, CLINICIAN, log_in, new_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}


def shot(page, name: str, size: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"plausibility-{name}-{size}.png"), full_page=True)


def enter(page, case_url: str, name: str, value: str) -> None:
    page.goto(f"{case_url}?test={name}#order-entry")
    page.locator("#entry input[name=value]").fill(value)
    with page.expect_navigation():
        page.get_by_role("button", name="Save result").click()


@pytest.mark.parametrize("size", list(SIZES))
def test_implausible_value_is_confirmed_and_recorded(chromium, live_server, heart_model, size):
    """A cholesterol of 60 mg/dl is asked about, saved once confirmed and marked in the record;
    1.5 vessels is refused as not a whole number."""
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    try:
        log_in(page, *CLINICIAN)
        row = page.locator("article.model-card", has_text=str(heart_model))
        row.get_by_placeholder("Patient ref.").fill(f"MRN-P-{size}")
        with page.expect_navigation():
            row.get_by_role("button", name="Start a case").click()
        case_url = page.url.split("?")[0]

        enter(page, case_url, "ca", "1.5")
        assert "takes whole numbers only; 1.5 is not one" in page.locator("#entry").inner_text()
        assert page.locator("#steps-table").count() == 0

        enter(page, case_url, "chol", "60")
        box = page.locator("#implausible")
        assert box.is_visible()
        assert (
            "Serum cholesterol of 60 mg/dl is outside the plausible range 100–600 mg/dl. "
            "Confirm it is right?" in box.inner_text()
        )
        assert page.locator("#steps-table").count() == 0  # nothing saved yet
        assert page.locator("#entry input[name=value]").input_value() == "60"
        box.scroll_into_view_if_needed()
        shot(page, "confirm", size)

        with page.expect_navigation():
            box.get_by_role("button", name="Yes, it is right: save").click()
        step = page.locator("#step-1")
        assert "60 mg/dl" in step.inner_text() and "confirmed" in step.inner_text()
        note = page.locator("#step-1-plausibility").inner_text()
        assert "Confirmed by clinician: 60 mg/dl is outside the plausible range 100–600 mg/dl" in (
            note
        )
        page.locator("#steps-table").scroll_into_view_if_needed()
        shot(page, "recorded", size)
        page.goto(case_url + "summary/")
        assert "100–600 mg/dl" in page.locator("#step-1-plausibility").inner_text()
    finally:
        context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_admin_plausible_range_outside_the_hard_range(chromium, live_server, heart_model, size):
    """The admin sets a plausible range beyond the hard one: refused, naming the test by name."""
    dataset = heart_model.dataset
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    try:
        log_in(page, *ADMIN)
        page.goto(f"/admin/catalog/dataset/{dataset.pk}/change/")
        chol = dataset.tests.get(name="chol").index
        row = page.locator(f"#tests-{chol}")
        row.locator("details.more-fields summary").click()
        row.locator(f"input[name=tests-{chol}-plausible_max]").fill("900")
        with page.expect_navigation():
            page.locator("input[type=submit][name=_continue]").click()
        row = page.locator(f"#tests-{chol}")
        text = row.inner_text()
        assert "The plausible range of Serum cholesterol ends at 900 mg/dl, above its maximum" in (
            text
        )
        row.locator("details.more-fields").scroll_into_view_if_needed()
        shot(page, "admin-error", size)
        assert dataset.tests.get(name="chol").plausible_max == 600
    finally:
        context.close()
