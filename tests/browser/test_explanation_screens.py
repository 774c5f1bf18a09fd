"""Screenshots of the advice explained in cost terms: a tree case split by an unavailable test,
and conditioned-loss cases (an order and a referral), at laptop and tablet sizes.

Written to var/screenshots/ ($SCREENSHOT_DIR) as 13-*, 14-* and 15-*; look at them.
"""

from __future__ import annotations

import pytest
from browser_helpers import CLINICIAN, log_in, new_page
from test_screenshots import OUT, SIZES, shot, wait_for_figures

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _clinician():
    from django.contrib.auth.models import User

    return User.objects.get(username=CLINICIAN[0])


def _shoot(chromium, live_server, url: str, name: str, check) -> None:
    """Open ``url`` at every size, run ``check(page)``, save the screenshot; no JS errors."""
    OUT.mkdir(parents=True, exist_ok=True)
    for size, (width, height) in SIZES.items():
        context, page = new_page(chromium, live_server, width=width, height=height)
        errors: list[str] = []
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        try:
            log_in(page, *CLINICIAN)
            page.goto(url)
            wait_for_figures(page)
            check(page)
            path = shot(page, name, size)
            assert path.stat().st_size > 10_000
        finally:
            context.close()
        assert errors == [], errors


def test_tree_case_split_by_an_unavailable_test(chromium, live_server, heart_model):
    """The why lists each branch's share of the patient; the error-cost grid is on the screen."""
    from diagnosis.clinic.selectors.cases import case_state
    from diagnosis.clinic.services import cases
    from diagnosis.clinic.services import step as step_service

    clinician = _clinician()
    case = cases.start_case(user=clinician, trained_model=heart_model)
    first = case_state(user=clinician, case=case).advice
    step_service.take_step(user=clinician, case=case, action="unavailable", test=first.test_name)
    state = case_state(user=clinician, case=case)
    assert len(state.explanation.branches) > 1, "the first test splits the patient"
    labels = list(heart_model.dataset.class_labels)

    def check(page):
        branches = page.locator("#branches li")
        assert branches.count() == len(state.explanation.branches)
        assert branches.first.is_visible()
        grid = page.locator("#error-costs table")
        assert grid.is_visible()
        assert [h.strip() for h in grid.locator("thead th").all_inner_texts()][1:] == labels

    _shoot(chromium, live_server, f"/cases/{case.pk}/", "13-case-tree-unavailable", check)


def test_conditioned_loss_order_and_referral(chromium, live_server, thyroid_risk_model):
    """A priced order and a referral: risks in dollars, the chart's values beside it, no '$0.00'."""
    from diagnosis.clinic.selectors.cases import case_state, estimator_for
    from diagnosis.clinic.services import cases
    from diagnosis.clinic.services import step as step_service

    clinician = _clinician()
    estimator = estimator_for(thyroid_risk_model)
    referred = None
    for patient in thyroid_risk_model.dataset.cases.order_by("id")[:1500]:
        known: dict[int, float] = {}
        action = estimator.next_action(known)
        while action.kind == "extract":
            known[action.test] = patient.values[action.test]
            action = estimator.next_action(known)
        if action.kind == "reject":
            referred = patient
            break
    assert referred is not None, "some thyroid patient is referred"

    def walk(patient, until):
        case = cases.start_case(user=clinician, trained_model=thyroid_risk_model)
        state = case_state(user=clinician, case=case)
        while state.advice.kind == "extract" and not until(state):
            step_service.take_step(
                user=clinician,
                case=case,
                action="result",
                test=state.advice.test_name,
                value=patient.values[state.advice.test_index],
            )
            state = case_state(user=clinician, case=case)
        return case, state

    order, state = walk(referred, lambda s: bool(s.explanation.risks))
    assert state.advice.kind == "extract"

    def check_order(page):
        why = page.locator("#why").inner_text()
        assert "expected to save $" in why and "past patient" in why
        notes = page.locator("[data-figure=fig-risks] .annotation-text").evaluate_all(
            "texts => texts.map(t => t.textContent)"
        )
        assert sum("advised" in n for n in notes) == 1
        assert page.locator("#error-costs").is_visible()

    _shoot(chromium, live_server, f"/cases/{order.pk}/", "14-case-risk-order", check_order)

    referral, state = walk(referred, lambda s: False)
    assert state.advice.kind == "reject"

    def check_referral(page):
        card = page.locator("#advice").inner_text()
        assert "not priced" in card and "$0.00" not in card
        assert page.get_by_role("button", name="Accept: refer").is_visible()

    _shoot(chromium, live_server, f"/cases/{referral.pk}/", "15-case-risk-referral", check_referral)
