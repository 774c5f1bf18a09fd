"""The ACT training page tells one story while it runs, and its anytime chart reads at both
widths (screenshots in $SCREENSHOT_DIR, default var/screenshots/)."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest
from browser_helpers import ADMIN, log_in, new_page
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser]

SCREENSHOT_DIR = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"1366x768": (1366, 768), "820x1180": (820, 1180)}


def _heart_act_training():
    """Demo heart data (no models) and a queued ACT training with the demo's settings."""
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from diagnosis.catalog.models import Dataset
    from diagnosis.management.demo_data import HEART
    from diagnosis.management.demo_models import demo_error_matrix, demo_models_of
    from diagnosis.training.services.training import create_training

    call_command("load_demo_data", "--no-train", "--no-experiment", "--only", HEART, stdout=None)
    dataset = Dataset.objects.get(name=HEART)
    _, label, params = next(m for m in demo_models_of(HEART) if m[0] == "act")
    return create_training(
        user=User.objects.get(username=ADMIN[0]),
        dataset=dataset,
        learner="act",
        params=params,
        error_matrix=demo_error_matrix(dataset),
        name="ACT while it runs",
    )


def _first_round_done(trained, *, seconds: float) -> float:
    """The worker's own write after round r=1 (services.anytime._store_round), with the demo
    fixture's r=1 model; returns its held-out estimated cost."""
    from diagnosis.management.demo_data import HEART
    from diagnosis.management.demo_models import fixture_path
    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services.anytime import _store_round

    fixture = json.loads(fixture_path(dataset_name=HEART, learner="act").read_text())
    cost = fixture["metrics"]["mean_total_cost"] + 0.12  # a later round saves 12 cents
    best = {
        "cost": cost,
        "label": "r=1",
        "r": 1,
        "metrics": {k: v for k, v in fixture["metrics"].items() if k != "anytime"},
        "fit_seconds": seconds - 2.0,
        "elapsed": seconds - 1.0,
        "training_estimate": None,
        "derived_params": {},
        "model_json": json.dumps(fixture["model"], separators=(",", ":")),
    }
    _store_round(trained.pk, best, knob="r", n_train=212, budget=None)
    TrainedModel.objects.filter(pk=trained.pk).update(
        progress=0.47, progress_message="r=2: fitting"
    )
    return cost


def test_the_act_page_tells_one_story_while_it_runs(chromium, live_server):
    """Queued, the card says nothing has started; once the worker has stored round r=1, the
    facts beside the bar name r=1, its cost (the same as the table's) and the time spent, with
    no 'none yet', 'not yet known' or 'not started' left; screenshots at both widths."""
    from django.utils import timezone

    from diagnosis.training.models import TrainedModel

    trained = _heart_act_training()
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    for size, (width, height) in SIZES.items():
        TrainedModel.objects.filter(pk=trained.pk).update(
            status=TrainedModel.QUEUED,
            started_at=None,
            progress=0.0,
            metrics={},
            anytime_round="",
            model_json="",
        )
        trained.checkpoints.all().delete()
        context, page = new_page(chromium, live_server, width=width, height=height)
        try:
            log_in(page, *ADMIN)
            page.goto(f"/models/{trained.pk}/", wait_until="domcontentloaded")
            facts = page.locator("#anytime-facts")
            assert "none yet" in facts.inner_text() and "not started" in facts.inner_text()
            # The worker claims it and finishes round r=1 while the page is open.
            TrainedModel.objects.filter(pk=trained.pk).update(
                status=TrainedModel.RUNNING, started_at=timezone.now() - timedelta(seconds=44)
            )
            cost = _first_round_done(trained, seconds=44)
            expect(page.locator("[data-anytime-round]")).to_contain_text("r=1", timeout=8000)
            expect(page.locator("#training-progress [data-percent]")).to_have_text("47%")
            expect(page.locator("#anytime-checkpoints tbody tr")).to_have_count(1)
            text = facts.inner_text()
            for stale in ("none yet", "not yet known", "not started"):
                assert stale not in text, text
            money = f"${cost:,.2f}"
            assert money in page.locator("[data-anytime-cost]").inner_text()
            assert money in page.locator("#anytime-checkpoints tbody tr").inner_text()
            spent = float(page.locator("[data-anytime-time]").inner_text().split(" s")[0])
            assert spent >= 44.0
            assert "ready after 43.0 s" in page.locator("[data-anytime-time]").inner_text()
            page.locator("#anytime-live .main-svg").first.wait_for()
            # The live chart's cost axis starts at $0: 12 cents are no cliff.
            ticks = page.locator("#anytime-live .ytick text").all_text_contents()
            assert ticks[0] == "$0", ticks
            page.screenshot(path=str(SCREENSHOT_DIR / f"act-running-{size}.png"), full_page=True)
        finally:
            context.close()


def test_the_anytime_chart_of_a_finished_act_model_reads_at_both_widths(chromium, live_server):
    """The demo ACT model's chart: dollar ticks from $0, none hidden under the axis title, at
    1366 and 820 px; screenshots at both widths."""
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from diagnosis.catalog.models import Dataset
    from diagnosis.management.demo_data import HEART
    from diagnosis.management.demo_models import create_demo_model, demo_models_of

    call_command("load_demo_data", "--no-train", "--no-experiment", "--only", HEART, stdout=None)
    dataset = Dataset.objects.get(name=HEART)
    learner, label, params = next(m for m in demo_models_of(HEART) if m[0] == "act")
    model = create_demo_model(
        user=User.objects.get(username=ADMIN[0]),
        dataset=dataset,
        learner=learner,
        label=label,
        params=params,
        say=lambda line: None,
    )
    assert model.checkpoints.count() >= 2
    for size, (width, height) in SIZES.items():
        context, page = new_page(chromium, live_server, width=width, height=height)
        try:
            log_in(page, *ADMIN)
            page.goto(f"/models/{model.pk}/", wait_until="domcontentloaded", timeout=60000)
            chart = page.locator('[data-figure="fig-checkpoints"]')
            chart.locator(".main-svg").first.wait_for()
            ticks = chart.locator(".ytick text").all_text_contents()
            assert ticks[0] == "$0" and all(t.startswith("$") for t in ticks), ticks
            title = chart.locator(".ytitle").bounding_box()
            for tick in chart.locator(".ytick text").all():
                box = tick.bounding_box()
                assert box["x"] >= title["x"] + title["width"], (size, tick.text_content())
            chart.scroll_into_view_if_needed()
            page.screenshot(path=str(SCREENSHOT_DIR / f"act-model-{size}.png"), full_page=True)
        finally:
            context.close()
