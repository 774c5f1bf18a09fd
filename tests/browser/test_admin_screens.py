"""The admin screens at laptop and tablet sizes, and the model page's live status pill.

Screenshots go to var/screenshots/ ($SCREENSHOT_DIR) as admin-*-laptop.png / -tablet.png.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import ADMIN, log_in, new_page
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}


@pytest.mark.parametrize("size", list(SIZES))
def test_admin_dataset_matrix_and_import_screens(chromium, live_server, heart_model, size):
    """The dataset page fits the laptop's width with every price box on screen; matrix grid and
    import page (one heading, each error once) are saved as PNGs."""
    dataset = heart_model.dataset
    width, height = SIZES[size]
    OUT.mkdir(parents=True, exist_ok=True)
    context, page = new_page(chromium, live_server, width=width, height=height)
    try:
        log_in(page, *ADMIN)
        page.goto(f"/admin/catalog/dataset/{dataset.pk}/change/")
        if size == "laptop":
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            for box in page.locator("#tests-group tr.has_original td.field-price input").all():
                right = box.bounding_box()
                assert right is not None and right["x"] + right["width"] <= width
            for box in page.locator(
                "#tests-group tr.has_original td.field-discounted_price input"
            ).all():
                right = box.bounding_box()
                assert right is not None and right["x"] + right["width"] <= width
        page.screenshot(path=str(OUT / f"admin-dataset-{size}.png"), full_page=True)
        page.locator("#tests-group details.more-fields summary").first.click()
        page.locator("#tests-group").screenshot(path=str(OUT / f"admin-tests-more-{size}.png"))
        grid = page.locator("#error_matrices-group")
        grid.scroll_into_view_if_needed()
        labels = dataset.class_labels
        first = grid.locator("table.cost-matrix").first
        assert [t.strip() for t in first.locator("thead th").all_text_contents()[1:]] == labels
        assert [t.strip() for t in first.locator("tbody th").all_text_contents()] == labels
        grid.screenshot(path=str(OUT / f"admin-matrix-{size}.png"))

        page.goto("/admin/catalog/dataset/import/")
        page.locator("select[name=source]").select_option("uci")
        page.locator("input[name=name]").fill("New data")
        with page.expect_navigation():
            page.locator("input[type=submit][value=Import]").click()
        assert page.locator("h1", has_text="Import a dataset").count() == 1
        assert page.get_by_text("Give the folder path.").count() == 1
        page.screenshot(path=str(OUT / f"admin-import-{size}.png"), full_page=True)
    finally:
        context.close()


def test_status_pill_follows_the_training(chromium, live_server, heart_model):
    """The pill beside the model's name turns from Queued to Running when the training starts."""
    from django.utils import timezone

    from diagnosis.training.models import TrainedModel

    queued = TrainedModel.objects.create(
        dataset=heart_model.dataset,
        name="Pill",
        learner="eg2",
        params={},
        cost_snapshot=heart_model.cost_snapshot,
        matrix_snapshot=heart_model.matrix_snapshot,
        status=TrainedModel.QUEUED,
    )
    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *ADMIN)
        page.goto(f"/models/{queued.pk}/")
        pill = page.locator("#model-status")
        assert pill.inner_text() == TrainedModel(status=TrainedModel.QUEUED).get_status_display()
        TrainedModel.objects.filter(pk=queued.pk).update(
            status=TrainedModel.RUNNING, started_at=timezone.now(), progress=0.2
        )
        running = TrainedModel(status=TrainedModel.RUNNING).get_status_display()
        # A locator assertion polls without eval, which the page's CSP forbids.
        expect(page.locator("#model-status")).to_have_text(running, timeout=5000)
        assert "pill-running" in pill.get_attribute("class")
    finally:
        context.close()
