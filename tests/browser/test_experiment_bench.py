"""The bench in Chromium with a REAL Celery worker: set up, watch, read, export (issue 14).

A two-learner, three-cost experiment on the demo heart data is set up through the form,
computed by a ``celery -A config worker -Q experiments`` process against the test database
and Redis, and read back: the results table, the Plotly chart, the CSV export.  Screenshots
of the set-up, running and results pages and the research page go to var/screenshots/
($SCREENSHOT_DIR) at 1366x768 and 820x1180.
"""

from __future__ import annotations

import csv
import io
import os
import sys
from pathlib import Path

import pytest
from browser_helpers import ADMIN, CLINICIAN, log_in, new_page
from playwright.sync_api import expect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "diagnosis"))
from celery_workers import (  # noqa: E402  (tests/diagnosis's helper for real workers)
    require_services,
    start_worker,
    stop_worker,
    worker_database_url,
)

pytestmark = [pytest.mark.browser, pytest.mark.celery_worker, pytest.mark.slow]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}
#: The rows of a two-learner experiment: the learners in words, then the two baselines.
NAMES = ("EG2", "C4.5", "Order nothing (no test)", "Order every test, then a C4.5 tree")
#: A worker's first fits compile the tree kernels; a busy shared machine is slow.
FINISH_TIMEOUT_MS = 300_000


def _shot(page, name: str, size: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"{name}-{size}.png"), full_page=True)


def _watch_errors(page) -> list[str]:
    """Console errors and uncaught exceptions (a CSP refusal shows up here)."""
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    return problems


@pytest.fixture
def heart(transactional_db):
    """Demo users and the heart data (no models, no demo experiment)."""
    from django.core.management import call_command

    from diagnosis.catalog.models import Dataset
    from diagnosis.management.demo_data import HEART

    call_command(
        "load_demo_data",
        "--no-train",
        "--no-experiment",
        "--only",
        HEART,
        stdout=open(os.devnull, "w"),
    )
    return Dataset.objects.get(name=HEART)


@pytest.fixture
def worker(heart, tmp_path):
    """One real worker process on the experiments queue."""
    broker = require_services()
    process = start_worker(
        database_url=worker_database_url(),
        broker=broker,
        log=tmp_path / "worker.log",
        name="bench",
        queues="experiments",
    )
    yield tmp_path / "worker.log"
    stop_worker(process)


def test_set_up_watch_read_and_export_an_experiment(chromium, live_server, heart, worker):
    """Two learners, three costs on heart: the worker finishes it; table, chart and CSV agree."""
    from diagnosis.bench.models import Experiment

    context, page = new_page(chromium, live_server)
    problems = _watch_errors(page)
    try:
        log_in(page, *ADMIN)
        page.get_by_role("link", name="Experiments").first.click()
        page.get_by_role("link", name="Set up an experiment").click()
        expect(page.get_by_role("heading", name="Set up an experiment")).to_be_visible()
        page.select_option("#id_dataset", str(heart.pk))
        page.locator("#id_learner_eg2").check()
        page.locator("#id_learner_c45").check()
        # Ticking shows the learner's parameters; an unticked learner's stay folded.
        expect(page.locator("[data-learner-params='eg2']")).to_be_visible()
        expect(page.locator("[data-learner-params='icet']")).to_be_hidden()
        page.get_by_label("A sweep of uniform error costs").check()
        page.get_by_label("Error costs to sweep").fill("10, 100, 1000")
        page.get_by_label("Folds (k)").fill("3")
        # The page counts the tasks before anything is saved: (2 learners + the 2 baselines)
        # x 3 costs x 3 folds.
        expect(page.locator("#task-count")).to_contain_text("= 36 tasks")
        _shot(page, "experiment-setup", "laptop")
        with page.expect_navigation():
            page.get_by_role("button", name="Start the experiment").click()
        experiment = Experiment.objects.get()
        assert experiment.n_tasks == (2 + 2) * 3 * 3
        expect(page.locator("#experiment-progress")).to_be_visible()
        _shot(page, "experiment-running", "laptop")

        # The page polls, then reloads itself with the results when the worker is done.
        expect(page.locator(".results-table").first).to_be_visible(timeout=FINISH_TIMEOUT_MS)
        experiment.refresh_from_db()
        assert experiment.status == Experiment.DONE, experiment.status_reason
        expect(page.locator("#experiment-status")).to_have_text("Done")

        # The table: per cost, both learners and both baselines with a mean ± spread, in
        # words; the cheapest first.
        tables = page.locator(".results-table")
        expect(tables).to_have_count(3)
        first = tables.first.locator("tbody tr")
        expect(first).to_have_count(4)
        learners = {first.nth(i).locator(".learner-name").inner_text().strip() for i in range(4)}
        assert learners == set(NAMES)
        expect(tables.first.locator("tbody tr[data-baseline]")).to_have_count(2)
        cell = first.first.locator("td").nth(1).inner_text()
        assert "±" in cell, cell
        mean = float(cell.split("±")[0].strip().rstrip("%"))  # percent of the standard cost
        best = min(
            (r for r in experiment.results["table"] if r["matrix_index"] == 0),
            key=lambda r: r["normalized_cost"]["mean"],
        )
        assert mean == pytest.approx(best["normalized_cost"]["mean"], abs=0.005)

        # The chart: Plotly drew it (an SVG with one trace per learner, named in the legend).
        chart = page.locator("#fig-normalized-cost-chart")
        expect(chart.locator(".main-svg").first).to_be_visible()
        expect(chart.locator(".legendtext")).to_have_count(4)
        assert set(chart.locator(".legendtext").all_text_contents()) == set(NAMES)
        expect(chart.locator(".scatterlayer .trace")).to_have_count(4)
        # Tests in charts by their names, never their column codes.
        tests_chart = page.locator("#fig-tests-paid-chart")
        expect(tests_chart.locator(".main-svg").first).to_be_visible()
        ticks = set(tests_chart.locator(".ytick text").all_text_contents())
        codes = set(heart.tests.values_list("name", flat=True))
        labels = set(heart.tests.values_list("label", flat=True))
        assert ticks and ticks <= labels and not ticks & (codes - labels), ticks
        expect(page.locator("#recommendation")).to_contain_text("per patient")
        _shot(page, "experiment-results", "laptop")

        # Export CSV: one row per task, the same learners.
        with page.expect_download() as download:
            page.locator("#export-csv").click()
        text = Path(download.value.path()).read_text(encoding="utf-8")
        rows = list(csv.DictReader(io.StringIO(text)))
        assert len(rows) == 36, text[:500]
        assert {r["learner"] for r in rows} == set(NAMES), text[:500]
        assert {r["matrix"] for r in rows} == {"uniform 10", "uniform 100", "uniform 1000"}
        assert all(r["status"] == "done" for r in rows)
        assert not problems, problems
    finally:
        context.close()


def test_screens_at_tablet_size_and_cancel_from_the_page(chromium, live_server, heart, worker):
    """Tablet screenshots; a queued experiment says it waits, and Cancel stops it."""
    from django.contrib.auth.models import User

    from diagnosis.bench.models import Experiment
    from diagnosis.bench.services.experiments import create_experiment

    admin = User.objects.get(username=ADMIN[0])
    waiting = create_experiment(  # never sent to the queue: it stays waiting for a worker
        user=admin,
        dataset=heart,
        learners=[{"key": "eg2", "params": {}}, {"key": "dtmc", "params": {}}],
        matrix_kind="uniform",
        costs=[10, 1000],
        k=3,
        launch=False,
        name="Waiting experiment",
    )
    for size, (width, height) in SIZES.items():
        context, page = new_page(chromium, live_server, width=width, height=height)
        problems = _watch_errors(page)
        try:
            log_in(page, *ADMIN)
            page.goto("/experiments/new/")
            if size == "tablet":
                page.locator("#id_learner_eg2").check()
                page.locator("#id_learner_budget_rf").check()
                _shot(page, "experiment-setup", size)
                # Bad input: nothing saved, each message where it belongs.
                page.get_by_label("Folds (k)").fill("1")
                page.get_by_label("Error costs to sweep").fill("")
                with page.expect_navigation():
                    page.get_by_role("button", name="Start the experiment").click()
                expect(page.locator("#form-errors")).to_contain_text("Nothing was saved.")
                expect(page.locator("#matrix-errors")).to_contain_text(
                    "Enter at least one error cost"
                )
                expect(page.locator(".field-error").filter(has_text="Folds")).to_contain_text(
                    "k must be at least 2"
                )
                _shot(page, "experiment-setup-errors", size)
                assert Experiment.objects.count() == 1
                # The refused form answers 400 on purpose; Chromium logs that as an error.
                assert problems == [
                    "Failed to load resource: the server responded with a status of 400 "
                    "(Bad Request)"
                ], problems
                problems.clear()
            page.goto(f"/experiments/{waiting.pk}/")
            expect(page.locator("#experiment-progress [data-message]")).to_contain_text(
                "Waiting for a worker"
            )
            _shot(page, "experiment-running", size)
            assert not problems, problems
        finally:
            context.close()
    # Cancel from the page (the waiting experiment never ran).
    context, page = new_page(chromium, live_server)
    try:
        log_in(page, *ADMIN)
        page.goto(f"/experiments/{waiting.pk}/")
        with page.expect_navigation():
            page.locator("#cancel-experiment").click()
        expect(page.locator("#experiment-status")).to_have_text("Cancelled")
        expect(page.locator("#resume-experiment")).to_be_visible()
    finally:
        context.close()
    waiting.refresh_from_db()
    assert waiting.status == Experiment.CANCELLED


def test_results_and_research_screens(chromium, live_server, heart):
    """The demo experiment on the results, research, list and across-datasets pages."""
    from django.core.management import call_command

    from diagnosis.bench.models import Experiment
    from diagnosis.bench.services import runner as experiment_runner
    from diagnosis.bench.services.experiments import create_experiment
    from diagnosis.catalog.models import Dataset
    from diagnosis.management.commands.load_demo_data import DEMO_EXPERIMENT
    from diagnosis.management.demo_data import HEART, PIMA

    call_command("load_demo_data", "--no-train", "--only", HEART, stdout=open(os.devnull, "w"))
    experiment = Experiment.objects.get(status=Experiment.DONE)
    # The same learners and costs on Pima, to compare across datasets.
    call_command(
        "load_demo_data",
        "--no-train",
        "--no-experiment",
        "--only",
        PIMA,
        stdout=open(os.devnull, "w"),
    )
    pima = create_experiment(
        user=experiment.created_by,
        dataset=Dataset.objects.get(name=PIMA),
        launch=False,
        **{**DEMO_EXPERIMENT, "name": "The same on Pima"},
    )
    for pk in pima.tasks.filter(lead__isnull=True).values_list("pk", flat=True):
        experiment_runner.run_task(task_id=pk, worker="browser-test")
    for size, (width, height) in SIZES.items():
        context, page = new_page(chromium, live_server, width=width, height=height)
        problems = _watch_errors(page)
        try:
            log_in(page, *CLINICIAN)
            page.goto(f"/experiments/{experiment.pk}/")
            expect(page.locator("#fig-normalized-cost-chart .main-svg").first).to_be_visible()
            expect(page.locator("#fig-tests-paid-chart .main-svg").first).to_be_visible()
            # A clinician reads; the buttons that act are a model admin's.
            expect(page.locator("#deploy-button")).to_have_count(0)
            if size == "tablet":  # the laptop one is the model admin's, in the first test
                _shot(page, "experiment-results", size)
            page.goto("/research/")
            expect(page.locator("#research-experiments")).to_contain_text(experiment.name)
            _shot(page, "research", size)
            page.goto("/experiments/")
            page.locator(f"#compare-{experiment.pk}").check()
            page.locator(f"#compare-{pima.pk}").check()
            _shot(page, "experiment-list", size)
            with page.expect_navigation():
                page.locator("#compare-experiments").click()
            # every pair of the 2 learners and 2 baselines (6) at each of the 3 costs
            expect(page.locator("#cross-dataset tbody tr")).to_have_count(18)
            _shot(page, "experiment-compare", size)
            assert not problems, problems
        finally:
            context.close()


def test_deploy_is_refused_for_a_learner_no_better_than_ordering_nothing(
    chromium, live_server, heart
):
    """C4.5 at an error cost of $1 (below every test's price) loses to ordering nothing: the
    page says so, why and what to do instead, and offers no deploy button."""
    from django.contrib.auth.models import User

    from diagnosis.bench.services import runner as experiment_runner
    from diagnosis.bench.services.experiments import create_experiment
    from diagnosis.training.models import TrainedModel

    experiment = create_experiment(
        user=User.objects.get(username=ADMIN[0]),
        dataset=heart,
        learners=[{"key": "c45", "params": {"min_samples_leaf": 10}}],
        matrix_kind="uniform",
        costs=[1],
        k=3,
        launch=False,
        name="C4.5 at cheap errors",
    )
    for pk in experiment.tasks.filter(lead__isnull=True).values_list("pk", flat=True):
        experiment_runner.run_task(task_id=pk, worker="browser-test")
    for size, (width, height) in SIZES.items():
        context, page = new_page(chromium, live_server, width=width, height=height)
        problems = _watch_errors(page)
        try:
            log_in(page, *ADMIN)
            # the charts' plotly.js is large: on a busy machine, wait for the page, not it
            context.set_default_timeout(FINISH_TIMEOUT_MS)
            page.goto(f"/experiments/{experiment.pk}/", wait_until="domcontentloaded")
            refused = page.locator("#deploy-refused")
            expect(refused).to_be_visible()
            expect(refused).to_contain_text(
                "C4.5, leaves of at least 10 patients is no cheaper than ordering nothing"
            )
            expect(refused).to_contain_text("What to do instead")
            expect(page.locator("#deploy-button")).to_have_count(0)
            # the baselines are rows of the table, the cheapest first: ordering nothing
            best = page.locator(".results-table tbody tr").first
            expect(best.locator(".learner-name")).to_have_text("Order nothing (no test)")
            expect(page.locator("#fig-normalized-cost-chart .main-svg").first).to_be_visible(
                timeout=FINISH_TIMEOUT_MS
            )
            refused.scroll_into_view_if_needed()
            _shot(page, "experiment-deploy-refused", size)
            assert not problems, problems
        finally:
            context.close()
    assert not TrainedModel.objects.exists()
