"""A clinician works a real heart patient through the screens in headless Chromium."""

from __future__ import annotations

import pytest
from browser_helpers import CLINICIAN, focused_after_load, log_in, new_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GROUP_OF = {
    "chol": "A",
    "fbs": "A",
    "thalach": "B",
    "thal": "B",
    "exang": "C",
    "oldpeak": "C",
    "slope": "C",
}


def dollars(text: str) -> float:
    return float(text.strip().replace("$", "").replace(",", ""))


def complete_heart_patient(dataset):
    """The first past patient with every test value present (so every test can be entered)."""
    for case in dataset.cases.order_by("id"):
        if all(v is not None for v in case.values):
            return case
    raise AssertionError("the heart dataset has no complete case")


def enter_result(page, tests, name: str, values) -> tuple[float, str]:
    """Enter ``name``'s value in the entry form; returns the price shown and any discount note."""
    section = page.locator("section:has(#entry)")
    price = dollars(section.locator(".price").first.inner_text())
    notes = section.locator(".discount-note")
    note = notes.first.inner_text() if notes.count() else ""
    value = values[tests[name].index]
    select = page.locator("#entry select[name=value]")
    if select.count():
        select.select_option(value=str(int(value)))
    else:
        page.locator("#entry input[name=value]").fill(f"{value:g}")
    with page.expect_navigation():
        page.get_by_role("button", name="Save result").click()
    return price, note


def group_partner(done: list[str]) -> str:
    """A test sharing a group with a done test, else cholesterol to start group A."""
    for name in done:
        group = GROUP_OF.get(name)
        for other, other_group in GROUP_OF.items():
            if other_group == group and other not in done:
                return other
    return "chol" if "chol" not in done else "fbs"


def test_follow_the_advice_to_a_classification(chromium, live_server, heart_model):
    """Cost shown = sum of step prices shown; a second test of a group is charged the discount."""
    dataset = heart_model.dataset
    tests = {t.name: t for t in dataset.tests.all()}
    patient = complete_heart_patient(dataset)
    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *CLINICIAN)
        row = page.locator("article.model-card", has_text=str(heart_model))
        row.get_by_placeholder("Patient ref.").fill(f"heart-{patient.pk}")
        with page.expect_navigation():
            row.get_by_role("button", name="Start a case").click()
        assert "/cases/" in page.url

        done: list[str] = []
        prices: list[float] = []
        discounted: list[tuple[str, float, str]] = []
        for _ in range(2 * len(tests)):
            kind = page.locator("#advice").get_attribute("data-kind")
            if kind == "extract":
                name = page.locator("#entry input[name=test]").input_value()
                assert name not in done
            elif discounted:
                break
            else:
                # The model is ready to conclude but no group discount happened on its path:
                # order a test of an already-used group from "Order a different test instead".
                name = group_partner(done)
                page.locator(f'#test-options tr[data-test="{name}"] a').click()
                page.wait_for_url(f"**?test={name}*")
                assert page.locator("#entry input[name=test]").input_value() == name
            price, note = enter_result(page, tests, name, patient.values)
            if note:
                discounted.append((name, price, note))
            done.append(name)
            prices.append(price)
        else:
            pytest.fail("the case never reached a conclusion")

        print("steps:", list(zip(done, prices, strict=True)), "discounted:", discounted)
        assert page.locator("#advice").get_attribute("data-kind") == "classify"
        assert done, "the model ordered no test at all"
        # The accumulated cost on screen is the sum of the prices shown for the steps.
        shown_total = dollars(page.locator("#accumulated-cost").inner_text())
        step_prices = [
            dollars(t.split("\n")[0])
            for t in page.locator("#steps-table tbody td.num").all_inner_texts()
        ]
        assert step_prices == pytest.approx(prices, abs=0.005)
        assert shown_total == pytest.approx(sum(prices), abs=0.005)
        # The group discount: the price shown and charged is the discounted one, and says so.
        assert discounted, "no second test of a group was ordered"
        name, price, note = discounted[0]
        assert price == pytest.approx(tests[name].discounted_price)
        assert price < tests[name].price
        partners = [
            tests[d].display_label for d in done if GROUP_OF.get(d) == GROUP_OF[name] and d != name
        ]
        assert any(p in note for p in partners), note

        label = page.locator("#advice .headline").inner_text().strip()
        with page.expect_navigation():
            page.get_by_role("button", name=f"Accept: classify as {label}").click()
        # Closing asks first; the confirm button has the focus, so Enter confirms.
        assert focused_after_load(page).text_content().strip() == (
            f"Yes, classify as {label} and close the case"
        )
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.url.endswith("/summary/")
        assert dollars(page.locator("#total-cost").inner_text()) == pytest.approx(
            sum(prices), abs=0.005
        )
        assert f"Classified as {label}" in page.locator("#decision").inner_text()
    finally:
        context.close()


def test_login_required_and_bad_value_message(chromium, live_server, heart_model):
    """Anonymous visits land on the login page; a bad value shows a message, fixed by keyboard."""
    context, page = new_page(chromium, live_server, width=820, height=1180)
    try:
        page.goto(f"/models/{heart_model.pk}/")
        assert "/accounts/login/" in page.url
        log_in(page, *CLINICIAN)
        page.goto(f"/cases/new/?model={heart_model.pk}")
        with page.expect_navigation():
            page.get_by_role("button", name="Start the case").click()
        page.goto(page.url + "?test=chol")
        page.locator("#entry input[name=value]").fill("5000")
        with page.expect_navigation():
            page.get_by_role("button", name="Save result").click()
        error = page.locator("#entry .errorlist").inner_text()
        assert "at most 700" in error
        assert page.locator("#steps-table").count() == 0  # nothing saved
        # The value input has the keyboard focus for the next try: fix it from the keyboard alone.
        assert focused_after_load(page).get_attribute("name") == "value"
        page.keyboard.press("Control+A")
        page.keyboard.type("240")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert "Serum cholesterol" in page.locator("#steps-table").inner_text()
        assert "240 mg/dl" in page.locator("#steps-table").inner_text()
    finally:
        context.close()
