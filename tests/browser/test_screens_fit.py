"""Every screen fits at 1366 and 820 px (nothing wider than its container), and undo undoes.

``SCREENSHOT_DIR`` keeps a PNG of each screen checked (var/screenshots by default).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import CLINICIAN, log_in, new_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}

#: Elements that stick out of their parent, or whose content is cut or scrolls sideways.
#: Drawings that pan and zoom (the tree viewer, the charts' own SVG) are left out: they
#: scroll by design.
OVERFLOW_JS = "\n".join(
    line
    for line in (Path(__file__).parent / "overflow.js").read_text(encoding="utf-8").splitlines()
    if not line.startswith("//")  # a function, not a script: page.evaluate calls it
)


def check_fits(page, name: str, size: str, found: list[str]) -> None:
    """Adds to ``found`` each element wider than its container here; a PNG is kept for review."""
    for figure in page.locator("[data-figure]").all():
        figure.locator(".main-svg").first.wait_for()
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"fit-{name}-{size}.png"), full_page=True)
    found += [f"{name} at {size}: {problem}" for problem in page.evaluate(OVERFLOW_JS)]


def start_case(page, model, reference: str) -> str:
    row = page.locator("article.model-card", has_text=str(model))
    row.get_by_placeholder("Patient ref.").fill(reference)
    with page.expect_navigation():
        row.get_by_role("button", name="Start a case").click()
    return page.url.split("?")[0]


def save(page, button: str) -> None:
    with page.expect_navigation():
        page.get_by_role("button", name=button).click()


def order(page, case_url: str, name: str, value: str, reason: str = "") -> None:
    """Enter ``value`` for test ``name`` through "order a different test"."""
    page.goto(f"{case_url}?test={name}#order-entry")
    select = page.locator("#entry select[name=value]")
    if select.count():
        select.select_option(value=value)
    else:
        page.locator("#entry input[name=value]").fill(value)
    if reason and page.locator("#entry-reason").count():
        page.locator("#entry-reason").fill(reason)
    save(page, "Save result")


def correct(page, step: int, value: str, reason: str) -> None:
    page.locator(f"#step-{step}").get_by_role("link", name="Correct").click()
    page.wait_for_url(f"**?correct={step - 1}")
    field = page.locator("[name=correct-value]")
    if field.evaluate("e => e.tagName") == "SELECT":
        field.select_option(value=value)
    else:
        field.fill(value)
    page.get_by_label("Why (kept in the case's record)").fill(reason)
    save(page, "Save the correction")


@pytest.mark.parametrize("size", list(SIZES))
def test_every_screen_fits_its_width(chromium, live_server, heart_model, size):
    """Home, the model, tree and case screens (with notes) and the summary fit at each width."""
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    try:
        page.set_default_timeout(90_000)  # the model page is slow to build on a busy machine
        log_in(page, *CLINICIAN)
        found: list[str] = []
        check_fits(page, "home", size, found)
        case_url = start_case(page, heart_model, f"MRN-FIT-{size}")
        long_reason = (
            "the patient had a fasting sample drawn at another hospital this morning; "
            "their result is on the referral letter"
        )
        order(page, case_url, "chol", "240", reason=long_reason)
        order(page, case_url, "fbs", "1", reason="also on the referral letter")
        correct(page, 1, "204", reason="transposed digits when copying the referral letter")
        check_fits(page, "case-with-notes", size, found)
        page.goto(f"/models/{heart_model.pk}/")
        check_fits(page, "model", size, found)
        page.goto(f"/models/{heart_model.pk}/tree/?case={case_url.rstrip('/').split('/')[-1]}")
        check_fits(page, "tree", size, found)
        page.goto(case_url + "summary/")
        check_fits(page, "summary", size, found)
        assert found == [], "\n".join(found[:30])
    finally:
        context.close()


def test_undoing_a_correction_restores_the_value(chromium, live_server, heart_model):
    """Chest pain corrected then the correction undone: the first value counts again, unstruck,
    and the advice does not ask for chest pain again."""
    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *CLINICIAN)
        case_url = start_case(page, heart_model, "MRN-UNDO")
        chest_pain = heart_model.dataset.tests.get(name="cp")
        typical, asymptomatic = chest_pain.choices[0], chest_pain.choices[-1]
        order(page, case_url, "cp", str(typical["code"]))
        correct(page, 1, str(asymptomatic["code"]), reason="picked the wrong line")
        assert page.locator("#step-1").get_attribute("data-correction") == "corrected"
        page.locator("#undo summary").click()
        assert "restores step 1's" in page.locator("#undo-restores").inner_text()
        page.locator("#undo-reason").fill("the first answer was right after all")
        save(page, "Undo step 2")
        first, second = page.locator("#step-1"), page.locator("#step-2")
        assert first.get_attribute("data-correction") == "restored"
        assert first.locator("s").count() == 0
        assert typical["label"] in first.inner_text()
        assert second.get_attribute("data-correction") == "undone"
        audit = page.locator("#step-1-audit").inner_text()
        assert f"Restored: {typical['label']} counts again" in audit
        assert (
            f"step 1's {typical['label']} counts again"
            in page.locator("#step-2-audit").inner_text()
        )
        advice = page.locator("#advice-head").inner_text()
        assert chest_pain.display_label not in advice, advice
    finally:
        context.close()
