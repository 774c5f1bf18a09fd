"""Approval before use on screen (issue 27): a draft is invisible to a clinician, a flagged
model is approved only with a written reason, and a retrain is compared with the model in use
before anything is replaced (here the old model is kept)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import ADMIN, CLINICIAN, log_in, new_page
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}


def _shot(page, name: str, size: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"{name}-{size}.png"), full_page=True)


def _train(dataset, *, learner: str, error_matrix, name: str):
    """A draft trained in this process, as the worker would (every new training is a draft)."""
    from django.contrib.auth.models import User

    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services.training import create_training, run_training

    requested = create_training(
        user=User.objects.get(username=ADMIN[0]),
        dataset=dataset,
        learner=learner,
        params={},
        error_matrix=error_matrix,
        name=name,
    )
    trained = run_training(trained_model_id=requested.pk)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    assert trained.approval == TrainedModel.DRAFT
    return trained


def test_a_draft_is_invisible_to_a_clinician(chromium, live_server, heart_model):
    """The admin sees the draft marked Draft; the clinician finds it nowhere, and its page and
    its "start a case" URL answer 404 like a model that does not exist."""
    draft = _train(
        heart_model.dataset,
        learner="eg2",
        error_matrix=heart_model.error_matrix,
        name="EG2 heart draft",
    )
    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *ADMIN)
        card = page.locator("article.model-card", has=page.locator(f"#model-{draft.pk}"))
        expect(card.locator('[data-approval="draft"]')).to_have_text("Draft")
        page.goto(f"/models/{draft.pk}/", wait_until="domcontentloaded", timeout=60000)
        expect(page.locator("#model-card-link")).to_contain_text("Not yet approved")
    finally:
        context.close()

    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *CLINICIAN)
        expect(page.locator(f"#model-{heart_model.pk}")).to_be_visible()
        expect(page.locator(f"#model-{draft.pk}")).to_have_count(0)
        assert "EG2 heart draft" not in page.content()
        for url in (
            f"/models/{draft.pk}/",
            f"/models/{draft.pk}/card/",
            f"/cases/new/?model={draft.pk}",
        ):
            assert page.goto(url).status == 404, url
            missing = url.replace(str(draft.pk), str(draft.pk + 1000))
            assert page.goto(missing).status == 404, missing
    finally:
        context.close()


def test_approving_a_flagged_model_takes_a_reason(chromium, live_server, heart_model):
    """Under 0/1 loss EG2 is flagged; Approve without a reason is refused with the warning on
    the card, with a reason it is approved, logged with the reason, and the clinician sees it."""
    flagged = _train(
        heart_model.dataset, learner="eg2", error_matrix=None, name="EG2 heart, 0/1 loss"
    )
    reason = "Teaching: shows the clinicians what ordering nothing would cost."
    for size, (width, height) in SIZES.items():
        context, page = new_page(chromium, live_server, width=width, height=height)
        try:
            log_in(page, *ADMIN)
            page.goto(f"/models/{flagged.pk}/card/")
            if size == "laptop":
                expect(page.locator("#approve-form")).to_contain_text("Use with caution")
                _shot(page, "model-card-draft-flagged", size)
                with page.expect_navigation():
                    page.get_by_role("button", name="Approve this model").click()
                expect(page.locator("#decision-errors")).to_contain_text(
                    "Write why clinicians should use it anyway"
                )
                expect(page.locator("#approval-state")).to_have_text("Draft")
                _shot(page, "model-card-approval-refused", size)
                page.get_by_label("Reason (required)").fill(reason)
                with page.expect_navigation():
                    page.get_by_role("button", name="Approve this model").click()
            expect(page.locator("#approval-state")).to_have_text("Approved")
            expect(page.locator('#decision-log tr[data-action="approve"]')).to_contain_text(reason)
            _shot(page, "model-card-approved", size)
        finally:
            context.close()

    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *CLINICIAN)
        card = page.locator("article.model-card", has=page.locator(f"#model-{flagged.pk}"))
        expect(card.locator(".model-warning")).to_be_visible()
        expect(card.get_by_role("button", name="Start a case")).to_be_visible()
    finally:
        context.close()


def test_retrain_compares_old_and_new_and_the_old_is_kept(chromium, live_server, heart_model):
    """After a matrix edit the admin retrains from the model page; the retrain's card shows
    both models' costs on the same patients at the new costs; "Keep the old model" keeps it in
    use, retires the retrain, and the card records the choice and who made it."""
    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services.training import run_training

    matrix = heart_model.error_matrix
    rows = [list(row) for row in matrix.matrix]
    rows[1][0] = rows[1][0] * 8  # a missed disease now costs eight times as much
    matrix.matrix = rows
    matrix.save()
    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *ADMIN)
        page.goto(f"/models/{heart_model.pk}/", wait_until="domcontentloaded")
        with page.expect_navigation():
            page.get_by_role("button", name="Retrain with the current matrix").click()
        retrain = TrainedModel.objects.get(replaces=heart_model)
        assert retrain.approval == TrainedModel.DRAFT
        run_training(trained_model_id=retrain.pk)  # what the Celery worker runs
        retrain.refresh_from_db()
        compared = retrain.replacement_comparison
        assert compared["comparable"]
    finally:
        context.close()

    for size, (width, height) in SIZES.items():
        context, page = new_page(chromium, live_server, width=width, height=height)
        try:
            log_in(page, *ADMIN)
            page.goto(f"/models/{retrain.pk}/card/")
            table = page.locator("#retrain-table")
            expect(table.locator('tr[data-model="old"]')).to_contain_text(
                f"${compared['old']['mean']:,.2f}"
            )
            expect(table.locator('tr[data-model="new"]')).to_contain_text(
                f"${compared['new']['mean']:,.2f}"
            )
            expect(page.locator("#keep-old-form")).to_be_visible()
            page.locator("#retrain-comparison").scroll_into_view_if_needed()
            _shot(page, "retrain-comparison", size)
        finally:
            context.close()

    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *ADMIN)
        page.goto(f"/models/{retrain.pk}/card/")
        with page.expect_navigation():
            page.get_by_role("button", name="Keep the old model").click()
        expect(page.locator("#approval-state")).to_have_text("Approved")  # the old model's card
        page.goto(f"/models/{retrain.pk}/card/")
        expect(page.locator("#approval-state")).to_have_text("Retired")
        kept = page.locator('#decision-log tr[data-action="keep-old"]')
        expect(kept).to_contain_text(ADMIN[0])
        expect(kept).to_contain_text(f"${compared['old']['mean']:,.2f}")
        _shot(page, "retrain-kept-old", "laptop")
    finally:
        context.close()
    heart_model.refresh_from_db()
    retrain.refresh_from_db()
    assert (heart_model.approval, retrain.approval) == ("approved", "retired")


def test_a_model_cut_short_is_approved_on_its_card_knowing_it(chromium, live_server, heart_model):
    """An interrupted training's page says clinicians are not offered it and links its card;
    the card flags it "Cut short", refuses approval without a reason, and approves with one."""
    from django.contrib.auth.models import User

    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services.training import create_training

    cut = create_training(
        user=User.objects.get(username=ADMIN[0]),
        dataset=heart_model.dataset,
        learner=heart_model.learner,
        params={},
        error_matrix=heart_model.error_matrix,
        name="Heart model cut short",
    )
    TrainedModel.objects.filter(pk=cut.pk).update(
        status=TrainedModel.INTERRUPTED,
        progress_message="Interrupted: the worker died; the model of round r=1 of 8 was kept",
        model_json=heart_model.model_json,
        metrics=heart_model.metrics,
    )
    reason = "Round 1 already beats ordering nothing; a full retrain is queued for tonight."
    for size in ("tablet", "laptop"):  # the approval comes last, on the laptop
        width, height = SIZES[size]
        context, page = new_page(chromium, live_server, width=width, height=height)
        try:
            log_in(page, *ADMIN)
            page.goto(f"/models/{cut.pk}/")
            notice = page.locator("#training-interrupted")
            expect(notice).to_contain_text("Clinicians are not offered it")
            _shot(page, "model-page-cut-short", size)
            notice.get_by_role("link", name="model card").click()
            expect(page.locator("#approve-form")).to_contain_text("Use with caution")
            expect(page.locator("main")).to_contain_text("Cut short: the worker died")
            _shot(page, "model-card-cut-short", size)
            if size == "laptop":
                with page.expect_navigation():
                    page.get_by_role("button", name="Approve this model").click()
                expect(page.locator("#decision-errors")).to_contain_text("Cut short")
                expect(page.locator("#approval-state")).to_have_text("Draft")
                page.get_by_label("Reason (required)").fill(reason)
                with page.expect_navigation():
                    page.get_by_role("button", name="Approve this model").click()
                expect(page.locator("#approval-state")).to_have_text("Approved")
                _shot(page, "model-card-cut-short-approved", size)
        finally:
            context.close()
    cut.refresh_from_db()
    assert (cut.status, cut.approval, cut.cut_short) == ("succeeded", "approved", True)
