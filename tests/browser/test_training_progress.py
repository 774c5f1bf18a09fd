"""The model page's live progress bar, driven by database updates (no worker needed)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from browser_helpers import ADMIN, CLINICIAN, log_in, new_page
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_progress_bar_follows_the_database_then_shows_failure(chromium, live_server, heart_model):
    """The bar and message update by polling; when the run fails, the page shows the reason."""
    from django.utils import timezone

    from diagnosis.training.models import TrainedModel

    running = TrainedModel.objects.create(
        dataset=heart_model.dataset,
        name="Live progress",
        learner="eg2",
        params={},
        cost_snapshot=heart_model.cost_snapshot,
        matrix_snapshot=heart_model.matrix_snapshot,
        status=TrainedModel.RUNNING,
        progress=0.1,
        progress_message="Loading the cases",
        started_at=timezone.now() - timedelta(seconds=3),
    )
    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *ADMIN)
        page.goto(f"/models/{running.pk}/")
        box = page.locator("#training-progress")
        assert box.locator("[data-percent]").inner_text() == "10%"
        TrainedModel.objects.filter(pk=running.pk).update(
            progress=0.65, progress_message="Evaluating"
        )
        # A locator assertion polls without eval, which the page's CSP forbids.
        expect(page.locator("#training-progress [data-percent]")).to_have_text("65%", timeout=5000)
        assert "Evaluating" in box.inner_text()
        assert box.locator(".progress").get_attribute("aria-valuenow") == "65"
        assert "s" in box.locator("[data-elapsed]").inner_text()
        TrainedModel.objects.filter(pk=running.pk).update(
            status=TrainedModel.FAILED,
            error="ValueError: no usable test",
            finished_at=timezone.now(),
        )
        page.locator("#training-failed").wait_for(timeout=5000)  # the page reloaded itself
        assert "ValueError: no usable test" in page.locator("#training-failed").inner_text()
    finally:
        context.close()


def test_train_form_offers_only_the_chosen_datasets_matrices(chromium, live_server, heart_model):
    """The error-matrix list follows the chosen dataset; the learner's own parameters are shown."""
    from diagnosis.catalog.services.datasets import create_dataset
    from diagnosis.shared import learner_registry

    other = create_dataset(
        name="Other data",
        class_labels=["a", "b"],
        tests=[{"name": "x", "label": "X", "price": 1.0, "discounted_price": 1.0}],
        rows=[[float(i)] for i in range(12)],
        labels=[i % 2 for i in range(12)],
        error_matrices=[{"name": "Other matrix", "matrix": [[0, 1], [5, 0]]}],
    )
    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *ADMIN)
        page.goto("/train/")

        def offered() -> list[str]:
            return page.locator("#id_error_matrix option:not([hidden])").all_inner_texts()

        page.select_option("#id_dataset", str(heart_model.dataset.pk))
        assert any("Uniform 100" in t for t in offered())
        assert not any("Other matrix" in t for t in offered())
        page.select_option("#id_dataset", str(other.pk))
        assert any("Other matrix" in t for t in offered())
        assert not any("Uniform 100" in t for t in offered())
        for key in learner_registry.LEARNERS:
            page.select_option("#id_learner", key)
            shown = page.locator(f'[data-learner-params="{key}"]')
            assert shown.is_visible()
            for other in learner_registry.LEARNERS:
                if other != key:
                    assert not page.locator(f'[data-learner-params="{other}"]').is_visible()
    finally:
        context.close()


def test_an_interrupted_training_says_the_worker_died_and_offers_no_case(
    chromium, live_server, heart_model
):
    """The page of a run cut short by a dead worker says so, at which round, and that no case
    can start with it; a clinician does not find it on the home page."""
    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services import training_queue

    cut = TrainedModel.objects.create(
        dataset=heart_model.dataset,
        name="ACT cut short",
        learner="act",
        params={"r": 8},
        cost_snapshot=heart_model.cost_snapshot,
        matrix_snapshot=heart_model.matrix_snapshot,
        status=TrainedModel.RUNNING,
        model_json=heart_model.model_json,
        metrics=heart_model.metrics,
        anytime_round="r=1",
        attempts=1,
    )
    training_queue.cut_short(cut, reason="The worker stopped reporting for more than 30 seconds")
    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *ADMIN)
        page.goto(f"/models/{cut.pk}/")
        notice = page.locator("#training-interrupted")
        text = notice.inner_text()
        assert "the worker died" in text
        assert "The worker stopped (died) at r=1 of 8; this model was cut short" in text
        assert "not offered to clinicians" in text
        assert page.locator("#model-status").inner_text() == "Interrupted (cut short)"
        assert page.get_by_text("Start a case with this model").count() == 0
    finally:
        context.close()
    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *CLINICIAN)
        page.goto("/")
        assert "ACT cut short" not in page.content()
        assert heart_model.name in page.content()
    finally:
        context.close()
