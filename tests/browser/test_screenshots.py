"""Screenshots of the main screens at laptop and tablet sizes (var/screenshots/, $SCREENSHOT_DIR).

Run: ``python -m pytest tests/browser/test_screenshots.py`` and look at the PNGs.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from browser_helpers import ADMIN, CLINICIAN, log_in, new_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# SCREENSHOT_DIR puts them elsewhere (e.g. outside the checkout while reviewing).
OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}


def complete_patient(dataset):
    return next(c for c in dataset.cases.order_by("id") if all(v is not None for v in c.values))


def enter_recommended(page, tests, values) -> None:
    name = page.locator("#entry input[name=test]").input_value()
    value = values[tests[name].index]
    select = page.locator("#entry select[name=value]")
    if select.count():
        select.select_option(value=str(int(value)))
    else:
        page.locator("#entry input[name=value]").fill(f"{value:g}")
    with page.expect_navigation():
        page.get_by_role("button", name="Save result").click()


def shot(page, name: str, size: str) -> Path:
    path = OUT / f"{name}-{size}.png"
    # From the top: a full-page capture of a page scrolled on load (to its focused field) draws
    # the sticky cost bar where the window was, over the advice, which no clinician sees.
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(path), full_page=True)
    return path


def wait_for_figures(page) -> None:
    for figure in page.locator("[data-figure]").all():
        figure.locator(".main-svg").first.wait_for()


@pytest.mark.parametrize("size", list(SIZES))
def test_screenshots(chromium, live_server, heart_model, size):
    """Every main screen renders (figures drawn) and is saved as a PNG for review."""
    from django.utils import timezone

    from diagnosis.training.models import TrainedModel

    OUT.mkdir(parents=True, exist_ok=True)
    width, height = SIZES[size]
    tests = {t.name: t for t in heart_model.dataset.tests.all()}
    patient = complete_patient(heart_model.dataset)
    saved = []
    context, page = new_page(chromium, live_server, width=width, height=height)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    try:
        page.goto("/accounts/login/")
        saved.append(shot(page, "01-login", size))
        log_in(page, *CLINICIAN)
        saved.append(shot(page, "02-home", size))

        page.goto(f"/cases/new/?model={heart_model.pk}")
        page.get_by_label("Patient reference (optional)").fill("MRN-0042")
        with page.expect_navigation():
            page.get_by_role("button", name="Start the case").click()
        case_url = page.url
        saved.append(shot(page, "03-case-start", size))
        enter_recommended(page, tests, patient.values)
        saved.append(shot(page, "04-case-midway", size))
        for _ in range(len(tests)):
            if page.locator("#advice").get_attribute("data-kind") != "extract":
                break
            enter_recommended(page, tests, patient.values)
        # A second test of cholesterol's group, from "order a different test", shows the discount.
        page.goto(case_url + "?test=chol#order-entry")
        page.locator("#entry input[name=value]").fill(f"{patient.values[tests['chol'].index]:g}")
        with page.expect_navigation():
            page.get_by_role("button", name="Save result").click()
        page.goto(case_url + "?test=fbs#order-entry")
        saved.append(shot(page, "05-case-other-test-discount", size))
        page.goto(case_url)
        saved.append(shot(page, "06-case-conclude", size))

        page.goto(f"/models/{heart_model.pk}/tree/?case={case_url.rstrip('/').split('/')[-1]}")
        wait_for_figures(page)
        saved.append(shot(page, "07-tree-with-case", size))

        page.goto(case_url)
        if page.locator("#advice").get_attribute("data-kind") == "classify":
            label = page.locator("#advice .headline").inner_text().strip()
            with page.expect_navigation():
                page.get_by_role("button", name=f"Accept: classify as {label}").click()
        else:
            with page.expect_navigation():
                page.get_by_role("button", name="Refer the patient").click()
        saved.append(shot(page, "08a-confirm-close", size))
        with page.expect_navigation():
            page.get_by_role("button", name="close the case").click()
        saved.append(shot(page, "08-summary", size))

        page.goto(f"/models/{heart_model.pk}/")
        wait_for_figures(page)
        saved.append(shot(page, "09-model", size))

        page.goto("/")
        page.get_by_role("button", name="Log out").click()
        log_in(page, *ADMIN)
        page.goto("/train/")
        saved.append(shot(page, "10-train", size))
        running = TrainedModel.objects.create(
            dataset=heart_model.dataset,
            name="EG2 w=0.5 (training)",
            learner="eg2",
            params={"w": 0.5},
            cost_snapshot=heart_model.cost_snapshot,
            matrix_snapshot=heart_model.matrix_snapshot,
            status=TrainedModel.RUNNING,
            progress=0.42,
            progress_message="Fitting on 212 cases",
            started_at=timezone.now() - timedelta(seconds=12),
            heartbeat_at=timezone.now(),
        )
        page.goto(f"/models/{running.pk}/")
        page.wait_for_timeout(1500)  # one poll of the progress JSON
        saved.append(shot(page, "11-model-training", size))
    finally:
        context.close()
    assert all(p.stat().st_size > 10_000 for p in saved)
    assert errors == [], errors  # no JavaScript errors, no failed requests (e.g. a missing asset)


def test_screenshot_risk_chart(chromium, live_server, thyroid_risk_model):
    """The risk chart of a real conditioned-loss case: one bar per action the model weighed."""
    from django.contrib.auth.models import User

    from diagnosis.clinic.selectors.cases import case_state
    from diagnosis.clinic.services import cases
    from diagnosis.clinic.services import step as step_service

    clinician = User.objects.get(username=CLINICIAN[0])
    patient = complete_patient(thyroid_risk_model.dataset)
    case = cases.start_case(user=clinician, trained_model=thyroid_risk_model)
    state = case_state(user=clinician, case=case)
    while state.advice.kind == "extract" and not state.explanation.risks:
        # Free history questions come first; they carry no risks.
        index = state.advice.test_index
        step_service.take_step(
            user=clinician,
            case=case,
            action="result",
            test=state.advice.test_name,
            value=patient.values[index],
        )
        state = case_state(user=clinician, case=case)
    assert state.explanation.risks, "a priced decision carries the risk of every action"
    OUT.mkdir(parents=True, exist_ok=True)
    for size, (width, height) in SIZES.items():
        context, page = new_page(chromium, live_server, width=width, height=height)
        try:
            log_in(page, *CLINICIAN)
            page.goto(f"/cases/{case.pk}/")
            wait_for_figures(page)
            bars = page.locator("[data-figure=fig-risks] .bars .point")
            assert bars.count() == len(state.explanation.risks)
            path = shot(page, "12-case-risk-chart", size)
            assert path.stat().st_size > 10_000
        finally:
            context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_screenshot_ehr_admin(chromium, live_server, heart_model, size):
    """The EHR pages of the admin (CDS clients, SMART clients, a test's code) render at both
    sizes with no JavaScript error, and are saved for review."""
    from django.contrib.auth.models import User

    from diagnosis.integration.services.codes import load_demo_codes

    load_demo_codes()
    User.objects.create_superuser("root-shots", password="root-shots-password")
    OUT.mkdir(parents=True, exist_ok=True)
    width, height = SIZES[size]
    context, page = new_page(chromium, live_server, width=width, height=height)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    saved = []
    try:
        log_in(page, "root-shots", "root-shots-password")
        for name, url in (
            ("20-cds-client-add", "/admin/integration/cdsclient/add/"),
            ("21-smart-client-add", "/admin/integration/smartclient/add/"),
            ("22-test-codes", "/admin/integration/testcode/"),
            ("23-class-codes", "/admin/integration/classcode/"),
        ):
            response = page.goto(url)
            assert response is not None and response.status == 200, url
            saved.append(shot(page, name, size))
    finally:
        context.close()
    assert all(p.stat().st_size > 10_000 for p in saved)
    assert errors == [], errors
