"""The tree page opened from a case: root in view, the patient's values, details on tap."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pytest
from browser_helpers import CLINICIAN, log_in, new_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}


def value_text(test, value: float) -> str:
    """How the page words a recorded value: a choice's label, or the number and its unit."""
    if test.is_nominal:
        return test.choice_label(value)
    return f"{value:g} {test.unit}".strip()


def case_with_a_split(model):
    """A case whose first advised test is answered and whose second is unavailable.

    Returns the case and the (test, value) answered first.  The second test
    being unavailable sends the patient down every branch (fractional routing).
    """
    from django.contrib.auth.models import User

    from diagnosis.clinic.selectors.cases import case_state
    from diagnosis.clinic.services import cases
    from diagnosis.clinic.services import step as step_service

    clinician = User.objects.get(username=CLINICIAN[0])
    tests = {t.name: t for t in model.dataset.tests.all()}
    for patient in model.dataset.cases.order_by("id"):
        if any(v is None for v in patient.values):
            continue
        case = cases.start_case(user=clinician, trained_model=model)
        first = case_state(user=clinician, case=case).advice
        test = tests[first.test_name]
        value = patient.values[test.index]
        step_service.take_step(
            user=clinician, case=case, action="result", test=test.name, value=value
        )
        second = case_state(user=clinician, case=case).advice
        if second.kind == "extract":
            step_service.take_step(
                user=clinician, case=case, action="unavailable", test=second.test_name
            )
            return case, test, value
    raise AssertionError("no patient reaches a second test")


def inside(box, width: int, height: int) -> bool:
    return (
        box is not None
        and box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= width
        and box["y"] + box["height"] <= height
    )


def open_tree(page, model, case) -> None:
    page.goto(f"/models/{model.pk}/tree/?case={case.pk}")
    page.locator(".tree-node.root").wait_for()


@pytest.mark.parametrize("size", list(SIZES))
def test_tree_from_a_case_shows_root_values_and_details(chromium, live_server, heart_model, size):
    """Opened from a case: root in view, no sideways scroll, patient values and shares shown,
    and keyboard focus or a tap on a node shows its details."""
    width, height = SIZES[size]
    case, test, value = case_with_a_split(heart_model)
    expected = value_text(test, value)
    context = chromium.new_context(
        viewport={"width": width, "height": height},
        base_url=live_server.url,
        has_touch=size == "tablet",
    )
    context.set_default_timeout(15000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        log_in(page, *CLINICIAN)
        open_tree(page, heart_model, case)
        root = page.locator(".tree-node.root .tree-card-box")
        assert inside(root.bounding_box(), width, height), root.bounding_box()
        # The whole drawing fits the box across: nothing hides off to the side.
        view = page.locator("#tree-view").bounding_box()
        drawing = page.locator(".tree-viewport").bounding_box()
        assert drawing["x"] >= view["x"] - 1
        assert drawing["x"] + drawing["width"] <= view["x"] + view["width"] + 1
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # The patient's own value on the root card, and in the path above the tree.
        on_root = page.locator(".tree-node.root .tree-patient")
        assert on_root.is_visible()
        assert expected in on_root.text_content()
        assert page.locator(".tree-path").get_by_text(expected, exact=True).is_visible()
        # The unavailable test split the patient: its branches carry their shares.
        shares = [
            int(re.match(r"(\d+)%", t).group(1))
            for t in page.locator(".tree-edge-label.on-path .tree-share").all_text_contents()
        ]
        assert len(shares) >= 2 and all(0 < s < 100 for s in shares)
        # The path above the tree gives the same shares of the patient as the drawing.
        listed = page.locator(".tree-path strong.tree-share").all_text_contents()
        assert {int(t.rstrip("%")) for t in listed} == set(shares)
        # Keyboard: Tab from the toolbar reaches the root; its details appear.
        panel = page.locator("#tree-details-panel")
        assert panel.is_hidden()
        page.get_by_role("button", name="Zoom to this patient").focus()
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.getAttribute('data-node')") == "0"
        assert panel.is_visible()
        assert test.display_label in panel.inner_text()
        assert "Price here" in panel.inner_text() and "Training cases" in panel.inner_text()
        assert expected in panel.inner_text()
        # Arrow keys walk the tree: down to the first branch and back up to the root.
        page.keyboard.press("ArrowDown")
        first = page.evaluate("document.activeElement.getAttribute('data-node')")
        assert page.evaluate("document.activeElement.getAttribute('data-parent')") == "0"
        assert panel.get_attribute("data-node") == first
        page.keyboard.press("ArrowRight")
        assert page.evaluate("document.activeElement.getAttribute('data-node')") != first
        page.keyboard.press("ArrowUp")
        assert page.evaluate("document.activeElement.getAttribute('data-node')") == "0"
        page.keyboard.press("Escape")
        assert panel.is_hidden()
        # A tap (tablet) or click on a leaf shows the model's conclusion there.
        leaf = page.locator(".tree-node.leaf.on-path").first
        if size == "tablet":
            leaf.locator(".tree-card-box").tap()
        else:
            leaf.locator(".tree-card-box").click()
        assert panel.is_visible()
        assert "Conclusion" in panel.inner_text() and "Expected cost" in panel.inner_text()
        # Zooming in enlarges the drawing; "Whole tree" fits it again.
        before = page.locator(".tree-viewport").bounding_box()["width"]
        page.get_by_role("button", name="Zoom to this patient").click()
        after = page.locator(".tree-viewport").bounding_box()["width"]
        assert after > before
        page.get_by_role("button", name="Whole tree").click()
        assert math.isclose(
            page.locator(".tree-viewport").bounding_box()["width"], before, rel_tol=0.01
        )
    finally:
        context.close()
    assert errors == [], errors


@pytest.mark.parametrize("which", ["heart", "thyroid"])
def test_tree_screenshots(chromium, live_server, request, which):
    """The tree page of a case, heart (nominal branches) and thyroid (deep), at both sizes."""
    model = request.getfixturevalue("heart_model" if which == "heart" else "thyroid_tree_model")
    case, _, _ = case_with_a_split(model)
    OUT.mkdir(parents=True, exist_ok=True)
    for size, (width, height) in SIZES.items():
        context, page = new_page(chromium, live_server, width=width, height=height)
        try:
            log_in(page, *CLINICIAN)
            open_tree(page, model, case)
            root = page.locator(".tree-node.root .tree-card-box")
            assert inside(root.bounding_box(), width, height)
            path = OUT / f"13-tree-{which}-{size}.png"
            page.screenshot(path=str(path))
            page.get_by_role("button", name="Zoom to this patient").click()
            zoomed = OUT / f"14-tree-{which}-zoomed-{size}.png"
            page.screenshot(path=str(zoomed))
            assert path.stat().st_size > 10_000 and zoomed.stat().st_size > 10_000
        finally:
            context.close()
