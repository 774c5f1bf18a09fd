"""A feature-budgeted forest on the clinician's step screen: screenshots at laptop and tablet size.

Writes ``var/screenshots/20-forest-case-*.png`` (or $SCREENSHOT_DIR) for review.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from browser_helpers import ADMIN, CLINICIAN, approve_for_clinicians, log_in, new_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}


@pytest.fixture
def heart_forest(transactional_db):
    """Demo heart data and a 10-tree BudgetRF trained on it in-process."""
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from diagnosis.catalog.models import Dataset
    from diagnosis.management.demo_data import HEART
    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services.training import create_training, run_training

    call_command("load_demo_data", "--no-train", "--only", HEART, stdout=open(os.devnull, "w"))
    dataset = Dataset.objects.get(name=HEART)
    trained = create_training(
        user=User.objects.get(username=ADMIN[0]),
        dataset=dataset,
        learner="budget_rf",
        params={"max_trees": 10},
        error_matrix=dataset.error_matrices.filter(name="Uniform 100").first(),
        name="BudgetRF heart (browser test)",
    )
    result = run_training(trained_model_id=trained.pk)
    assert result.status == TrainedModel.SUCCEEDED, result.error
    return approve_for_clinicians(result)


@pytest.mark.parametrize("size", list(SIZES))
def test_forest_case_screen_says_how_many_trees_wait(chromium, live_server, heart_forest, size):
    """The forest's advice names how many of its trees wait on the test, through to its
    conclusion ("all N trees reached a leaf"); saved as PNGs to look at."""
    tests = {t.name: t for t in heart_forest.dataset.tests.all()}
    patient = next(
        c for c in heart_forest.dataset.cases.order_by("id") if all(v is not None for v in c.values)
    )
    OUT.mkdir(parents=True, exist_ok=True)
    width, height = SIZES[size]
    context, page = new_page(chromium, live_server, width=width, height=height)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        log_in(page, *CLINICIAN)
        page.goto(f"/cases/new/?model={heart_forest.pk}")
        with page.expect_navigation():
            page.get_by_role("button", name="Start the case").click()
        advice = page.locator("#advice")
        assert advice.get_attribute("data-kind") == "extract"
        assert re.search(r"\d+ of the model's 10 trees (is|are) waiting on", advice.inner_text())
        page.screenshot(path=str(OUT / f"20-forest-case-start-{size}.png"), full_page=True)
        for _ in range(len(tests)):
            if advice.get_attribute("data-kind") != "extract":
                break
            name = page.locator("#entry input[name=test]").input_value()
            value = patient.values[tests[name].index]
            select = page.locator("#entry select[name=value]")
            if select.count():
                select.select_option(value=str(int(value)))
            else:
                page.locator("#entry input[name=value]").fill(f"{value:g}")
            with page.expect_navigation():
                page.get_by_role("button", name="Save result").click()
        assert advice.get_attribute("data-kind") in {"classify", "reject"}
        assert "all 10 trees reached a leaf" in advice.inner_text()
        page.screenshot(path=str(OUT / f"21-forest-case-conclude-{size}.png"), full_page=True)
    finally:
        context.close()
    assert errors == [], errors
