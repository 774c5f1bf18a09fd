"""A degenerate model warned: trained under 0/1 loss it orders nothing, and every screen says so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import ADMIN, CLINICIAN, approve_for_clinicians, log_in, new_page
from django.urls import reverse

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}
WARNING = "No better than ordering no test"


def test_a_degenerate_model_is_warned(chromium, live_server, heart_model):
    """Form starts from the dataset's matrix; under 0/1 loss: warned on card, page and case."""
    from diagnosis.catalog.selectors.datasets import default_error_matrix
    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services.training import run_training

    dataset = heart_model.dataset
    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *ADMIN)
        page.goto("/train/")
        page.select_option("#id_dataset", str(dataset.pk))
        default = default_error_matrix(dataset=dataset)
        assert page.locator("#id_error_matrix").input_value() == str(default.pk)
        # The admin picks 0/1 loss: an error costs $1, less than any test.
        page.select_option("#id_error_matrix", "")
        page.select_option("#id_learner", "dtmc")
        page.fill("#id_name", "DTMC under 0/1 loss")
        with page.expect_navigation():
            page.get_by_role("button", name="Start training").click()
        trained = TrainedModel.objects.get(name="DTMC under 0/1 loss")
        assert trained.matrix_snapshot == [[0.0, 1.0], [1.0, 0.0]]
        run_training(trained_model_id=trained.pk)  # what the Celery worker runs
        approve_for_clinicians(trained)  # flagged: approved with a written reason
        page.goto(f"/models/{trained.pk}/")
        banner = page.locator(f'[data-model-warning="{trained.pk}"]')
        assert WARNING in banner.inner_text()
        assert banner.locator('[data-warning="no_tests"]').is_visible()
        row = page.locator('#compare-table tr[data-strategy="order_nothing"]')
        assert "$" in row.inner_text()
    finally:
        context.close()

    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *CLINICIAN)
        card = page.locator("article.model-card", has=page.locator(f"#model-{trained.pk}"))
        assert WARNING in card.locator(".model-warning").inner_text()
        healthy = page.locator("article.model-card", has=page.locator(f"#model-{heart_model.pk}"))
        assert WARNING not in healthy.inner_text()  # it beats ordering nothing
        with page.expect_navigation():
            card.get_by_role("button", name="Start a case").click()
        assert WARNING in page.locator(f'[data-model-warning="{trained.pk}"]').inner_text()
    finally:
        context.close()

    from diagnosis.clinic.models import DiagnosisCase

    case = DiagnosisCase.objects.get(trained_model=trained)
    OUT.mkdir(parents=True, exist_ok=True)
    for size, (width, height) in SIZES.items():
        context, page = new_page(chromium, live_server, width=width, height=height)
        try:
            log_in(page, *CLINICIAN)
            page.screenshot(path=str(OUT / f"home-warned-{size}.png"), full_page=True)
            page.goto(f"/models/{trained.pk}/")
            page.screenshot(path=str(OUT / f"model-warned-{size}.png"), full_page=True)
            page.goto(reverse("case-detail", args=[case.pk]))
            page.screenshot(path=str(OUT / f"case-warned-{size}.png"), full_page=True)
            page.goto(f"/models/{heart_model.pk}/")
            page.locator("#compare-table").wait_for()
            page.screenshot(path=str(OUT / f"model-compared-{size}.png"), full_page=True)
        finally:
            context.close()
