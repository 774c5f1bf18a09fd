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
    # From the top: a full-page capture of a scrolled page draws the sticky cost bar where the
    # window was, over the content (not what a clinician sees; test_sticky_cost_bar_* checks that).
    page.evaluate("window.scrollTo(0, 0)")
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


def _risk_case(trained):
    """A conditioned-loss case whose free questions are answered from a demo patient, so the
    screen advises a priced test with its risk chart."""
    import math

    from django.contrib.auth.models import User

    from diagnosis.clinic.selectors.cases import case_state
    from diagnosis.clinic.services import cases
    from diagnosis.clinic.services import step as step_service

    clinician = User.objects.get(username=CLINICIAN[0])
    tests = {t.index: t for t in trained.dataset.tests.all()}
    patient = trained.dataset.cases.order_by("id").first()
    case = cases.start_case(user=clinician, trained_model=trained, patient_reference="MRN-RISK")
    for _ in range(len(tests)):
        advice = case_state(user=clinician, case=case).advice
        if advice.kind != "extract" or float(advice.cost or 0) > 0:
            break
        test, value = tests[advice.test_index], patient.values[advice.test_index]
        if value is None or (isinstance(value, float) and math.isnan(value)):
            step_service.mark_unavailable(user=clinician, case=case, test=test)
        else:
            step_service.record_result(user=clinician, case=case, test=test, value=value)
    return case


@pytest.mark.parametrize("size", list(SIZES))
def test_decision_page_and_risk_case_fit_their_width(
    chromium, live_server, thyroid_risk_model, size
):
    """The conditioned-loss case and its decision page (alone, with the case, a tree) fit."""
    case = _risk_case(thyroid_risk_model)
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    try:
        page.set_default_timeout(90_000)
        log_in(page, *CLINICIAN)
        found: list[str] = []
        assert page.goto(f"/cases/{case.pk}/").ok
        assert page.locator("[data-figure]").count(), "the risk chart is on the screen"
        check_fits(page, "risk-case", size, found)
        decision = f"/models/{thyroid_risk_model.pk}/decision/"
        for name, url in (
            ("decision", decision),
            ("decision-case", f"{decision}?case={case.pk}"),
            ("decision-tree", f"{decision}?case={case.pk}&tree=1"),
        ):
            assert page.goto(url).ok, url
            check_fits(page, name, size, found)
        assert found == [], "\n".join(found[:30])
    finally:
        context.close()


#: Where the sticky "Cost so far" bar ends, and the box of what the page scrolled to: the
#: element focused on load (the value to type, the button to accept), the link's target, and
#: the advice's headline (the recommended test and its price).
COVERED_JS = """
() => {
  const bar = document.querySelector('.cost-box').getBoundingClientRect();
  const focused = document.activeElement && document.activeElement !== document.body
    ? document.activeElement : null;
  const target = location.hash ? document.querySelector(location.hash) : null;
  // the advice's headline only when the page opens on the advice (not on another form)
  const head = !location.hash && !location.search ? document.getElementById('advice-head') : null;
  const box = (el) => el ? (({top, bottom}) => ({top, bottom}))(el.getBoundingClientRect()) : null;
  return {barBottom: bar.bottom, focused: box(focused), target: box(target), advice: box(head),
          focusedName: focused ? focused.outerHTML.slice(0, 80) : '', scrollY: window.scrollY,
          viewport: window.innerHeight};
}
"""


def _covered(page, label: str, size: str) -> list[str]:
    """What the screen scrolled to on load that sits under the sticky bar or off the window:
    the advice's headline, the focused field or button, the link's target (a viewport PNG)."""
    page.wait_for_timeout(300)  # the browser's own scroll to the focus or the target
    seen = page.evaluate(COVERED_JS)
    page.screenshot(path=str(OUT / f"sticky-{label}-{size}.png"))  # the window only
    problems = []
    for what in ("advice", "focused", "target"):
        box = seen[what]
        if box and (box["top"] < seen["barBottom"] - 1 or box["bottom"] > seen["viewport"] + 1):
            problems.append(f"{label} at {size}: {what} at {box} ({seen})")
    return problems


@pytest.mark.parametrize("size", list(SIZES))
def test_sticky_cost_bar_never_covers_what_the_screen_scrolls_to(
    chromium, live_server, heart_model, thyroid_risk_model, size
):
    """On load the advice headline, focused field and link target sit below the sticky bar."""
    risk_case = _risk_case(thyroid_risk_model)
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    try:
        page.set_default_timeout(90_000)
        log_in(page, *CLINICIAN)
        case_url = start_case(page, heart_model, f"MRN-STICKY-{size}")
        for name, value in (("chol", "240"), ("fbs", "1"), ("trestbps", "130"), ("age", "61")):
            order(page, case_url, name, value, reason="from the referral letter")
        problems: list[str] = []
        OUT.mkdir(parents=True, exist_ok=True)
        for label, url in (
            ("case", case_url),
            ("order", f"{case_url}?test=thalach#order-entry"),
            ("correct", f"{case_url}?correct=2"),
            ("risk-case", f"/cases/{risk_case.pk}/"),
        ):
            assert page.goto(url).ok, url
            problems += _covered(page, label, size)
        # scrolled half a screen down, as a clinician reading on would (looked at, not checked)
        page.goto(case_url)
        page.mouse.wheel(0, SIZES[size][1] // 2)
        page.wait_for_timeout(300)
        page.screenshot(path=str(OUT / f"sticky-scrolled-{size}.png"))
        assert problems == [], "\n".join(problems)
    finally:
        context.close()
