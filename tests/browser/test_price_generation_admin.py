"""The automatic price generator in the admin, in Chromium: action, settings page, marks.

Screenshots (var/screenshots/, $SCREENSHOT_DIR): the settings page, the datasets list and the
tests table with "generated" marks, and the case screen pricing with a generated catalog.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import ADMIN, CLINICIAN, approve_for_clinicians, log_in, new_page
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}


@pytest.mark.parametrize("size", list(SIZES))
def test_generate_prices_from_the_datasets_list(chromium, live_server, transactional_db, size):
    """Choose the action, refuse a bad range with a message, then price: every test marked."""
    from django.core.management import call_command

    from diagnosis.catalog.models import Dataset
    from diagnosis.management.demo_data import PIMA

    call_command(
        "load_demo_data",
        "--no-train",
        "--no-experiment",
        "--only",
        PIMA,
        stdout=open(os.devnull, "w"),
    )
    dataset = Dataset.objects.get(name=PIMA)
    before = list(dataset.tests.order_by("index").values_list("price", flat=True))
    width, height = SIZES[size]
    OUT.mkdir(parents=True, exist_ok=True)
    context, page = new_page(chromium, live_server, width=width, height=height)
    try:
        log_in(page, *ADMIN)
        page.goto("/admin/catalog/dataset/")
        expect(page.locator("td.field-prices")).to_have_text("entered")
        page.locator(f"input[name=_selected_action][value='{dataset.pk}']").check()
        page.locator("select[name=action]").select_option("generate_prices")
        with page.expect_navigation():
            page.locator("button[name=index]").click()
        expect(page.locator("h1")).to_have_text("Generate test prices")
        page.screenshot(path=str(OUT / f"admin-generate-prices-{size}.png"), full_page=True)
        page.get_by_label("Lowest price").fill("50")
        page.get_by_label("Highest price").fill("5")
        with page.expect_navigation():
            page.get_by_role("button", name="Generate prices").click()
        expect(page.locator(".errornote")).to_contain_text("No prices were changed")
        expect(page.locator(".errorlist")).to_contain_text("must not be below the lowest")
        assert list(dataset.tests.order_by("index").values_list("price", flat=True)) == before
        page.get_by_label("Lowest price").fill("5")
        page.get_by_label("Highest price").fill("50")
        page.get_by_label("Seed").fill("3")
        with page.expect_navigation():
            page.get_by_role("button", name="Generate prices").click()
        expect(page.locator(".messagelist")).to_contain_text(f"Generated prices for {PIMA}")
        expect(page.locator("td.field-prices")).to_contain_text("generated (8 tests")
        page.screenshot(path=str(OUT / f"admin-generated-list-{size}.png"), full_page=True)
        prices = list(dataset.tests.order_by("index").values_list("price", flat=True))
        assert prices != before and all(5 <= p <= 50 for p in prices)
        page.goto(f"/admin/catalog/dataset/{dataset.pk}/change/")
        expect(page.locator("#tests-group .generated-price")).to_have_count(8)
        page.locator("#tests-group").screenshot(path=str(OUT / f"admin-generated-tests-{size}.png"))
    finally:
        context.close()


def test_case_screen_marks_generated_prices(chromium, live_server, transactional_db):
    """A model trained on generated prices: the case screen marks each price as generated."""
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from diagnosis.catalog.models import Dataset
    from diagnosis.catalog.services.price_generation import generate_dataset_prices
    from diagnosis.management.demo_data import HEART
    from diagnosis.training.services.training import create_training, run_training

    call_command(
        "load_demo_data",
        "--no-train",
        "--no-experiment",
        "--only",
        HEART,
        stdout=open(os.devnull, "w"),
    )
    dataset = Dataset.objects.get(name=HEART)
    admin = User.objects.get(username=ADMIN[0])
    generate_dataset_prices(
        user=admin, datasets=[dataset], params={"mode": "gain", "seed": 1, "group_fraction": 0.3}
    )
    trained = create_training(
        user=admin,
        dataset=dataset,
        learner="eg2",
        params={},
        error_matrix=dataset.error_matrices.first(),
        name="EG2 on generated prices",
    )
    approve_for_clinicians(run_training(trained_model_id=trained.pk))
    for size, (width, height) in SIZES.items():
        context, page = new_page(chromium, live_server, width=width, height=height)
        try:
            log_in(page, *CLINICIAN)
            page.goto(f"/cases/new/?model={trained.pk}")
            with page.expect_navigation():
                page.get_by_role("button", name="Start").first.click()
            table = page.locator("tr[data-test] .generated-price")
            expect(table).to_have_count(dataset.tests.count())
            page.screenshot(path=str(OUT / f"case-generated-prices-{size}.png"), full_page=True)
        finally:
            context.close()
