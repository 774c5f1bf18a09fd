"""Screens of issue 11's app part, in Chromium at laptop and tablet size: the forest's trees
page with a case, the model page's matrix in force (followed edit, and the "trained with a
different matrix" flag), and the research page's paper figures.

Writes ``var/screenshots/40-*.png`` (or $SCREENSHOT_DIR) to look at.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from browser_helpers import ADMIN, CLINICIAN, approve_for_clinicians, log_in, new_page
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}
EDITED = [[0, 100], [900, 0]]  # the heart demo's "Uniform 100", edited: a missed disease dearer


def _train(learner: str, params: dict, name: str):
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from diagnosis.catalog.models import Dataset
    from diagnosis.management.demo_data import HEART
    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services.training import create_training, run_training

    if not Dataset.objects.filter(name=HEART).exists():
        call_command("load_demo_data", "--no-train", "--only", HEART, stdout=open(os.devnull, "w"))
    dataset = Dataset.objects.get(name=HEART)
    trained = create_training(
        user=User.objects.get(username=ADMIN[0]),
        dataset=dataset,
        learner=learner,
        params=params,
        error_matrix=dataset.error_matrices.filter(name="Uniform 100").first(),
        name=name,
    )
    result = run_training(trained_model_id=trained.pk)
    assert result.status == TrainedModel.SUCCEEDED, result.error
    return approve_for_clinicians(result)


def _edit_matrix(trained) -> None:
    matrix = trained.error_matrix
    matrix.matrix = EDITED
    matrix.save()  # what the admin's matrix form does (its history records when)


def _watch(page) -> list[str]:
    """Script errors and Content-Security-Policy violations the page reports."""
    seen: list[str] = []
    page.on("pageerror", lambda exc: seen.append(str(exc)))
    page.on(
        "console",
        lambda message: (
            seen.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation', e =>"
        " console.error('Content Security Policy violation: ' + e.violatedDirective"
        " + ' ' + e.blockedURI));"
    )
    return seen


def _shot(page, name: str, size: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"40-{name}-{size}.png"), full_page=True)


@pytest.mark.parametrize("size", list(SIZES))
def test_forest_trees_page_with_a_case(chromium, live_server, transactional_db, size):
    """The forest's trees page for a case after one result: finished and waiting counts that
    add up, one small multiple per tree, the advised test's count; a tree opens in the viewer."""
    forest = _train("budget_rf", {"max_trees": 12}, "BudgetRF heart (screens)")
    patient = next(
        c for c in forest.dataset.cases.order_by("id") if all(v is not None for v in c.values)
    )
    tests = {t.name: t for t in forest.dataset.tests.all()}
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    errors = _watch(page)
    try:
        log_in(page, *CLINICIAN)
        page.goto(f"/cases/new/?model={forest.pk}")
        with page.expect_navigation():
            page.get_by_role("button", name="Start the case").click()
        case_url = page.url
        for _ in range(1):
            if page.locator("#advice").get_attribute("data-kind") != "extract":
                break
            name = page.locator("#entry input[name=test]").input_value()
            value = patient.values[tests[name].index]
            select = page.locator("#entry select[name=value]")
            if select.count():
                select.select_option(value=str(int(value)))
            else:
                page.locator("#entry input[name=value]").fill(f"{value:g}")
            with page.expect_navigation():
                page.locator("#entry button[type=submit]").first.click()
        link = page.get_by_role("link", name="show which trees this patient has finished")
        with page.expect_navigation():
            link.click()
        status = page.locator(".ensemble-status")
        expect(status).to_be_visible()
        finished = int(re.search(r"(\d+) finished", status.inner_text()).group(1))
        waiting = int(re.search(r"(\d+) waiting", status.inner_text()).group(1))
        n_trees = page.locator(".ensemble-member").count()
        assert finished + waiting == n_trees >= 1
        assert page.locator(".ensemble-member svg.tree-thumb").count() == n_trees
        assert page.locator(".ensemble-member.finished").count() == finished
        advice = page.locator(".ensemble-advice").inner_text()
        if "Recommended next" in advice:
            count = int(re.search(r"(\d+) of the \d+ trees are waiting on it", advice).group(1))
            assert page.locator(".ensemble-member.waits-on-advised").count() == count
        _shot(page, "forest-trees-case", size)
        with page.expect_navigation():
            page.get_by_role("link", name="Open tree 1", exact=True).first.click()
        expect(page.locator("#tree-view.ready")).to_be_visible()
        expect(page.locator("#chosen-head")).to_contain_text("Tree 1")
        _shot(page, "forest-tree-1-open", size)
        with page.expect_navigation():
            page.get_by_role("link", name=re.compile(r"Back to case")).click()
        assert page.url == case_url
    finally:
        context.close()
    assert not errors, errors


@pytest.mark.parametrize("size", list(SIZES))
def test_model_pages_show_the_matrix_in_force_and_the_flag(
    chromium, live_server, transactional_db, size
):
    """After the matrix is edited, plain Boosting's page shows the edited matrix in force and
    since when; the EG2 tree's page flags it with a retrain button that queues a new model."""
    boosting = _train("boosting", {"n_trials": 4}, "Boosting heart (screens)")
    tree = _train("eg2", {}, "EG2 heart (screens)")
    _edit_matrix(boosting)
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    errors = _watch(page)
    try:
        log_in(page, *ADMIN)
        page.goto(f"/models/{boosting.pk}/")
        section = page.locator("#matrix-in-force")
        expect(section).to_contain_text("Error matrix in force")
        expect(section).to_contain_text("as edited on")
        expect(page.locator("#matrix-now")).to_contain_text("900.00")
        section.scroll_into_view_if_needed()
        _shot(page, "boosting-matrix-in-force", size)
        with page.expect_navigation():
            page.get_by_role("link", name="View its trees").click()
        expect(page.locator(".ensemble-member").first).to_contain_text("Vote")
        assert page.locator(".ensemble-member svg.tree-thumb").count() >= 1
        _shot(page, "boosting-trees", size)
        page.goto(f"/models/{tree.pk}/")
        flag = page.locator("#matrix-in-force")
        expect(flag).to_contain_text("Trained with a different matrix")
        expect(page.locator("#matrix-live")).to_contain_text("900.00")
        _shot(page, "tree-trained-with-different-matrix", size)
        with page.expect_navigation():
            page.get_by_role("button", name="Retrain with the current matrix").click()
        assert re.search(r"/models/(\d+)/$", page.url).group(1) != str(tree.pk)
        expect(page.locator(".messages")).to_contain_text("Queued a retrain")
    finally:
        context.close()
    assert not errors, errors


@pytest.mark.parametrize("size", list(SIZES))
def test_research_page_shows_the_paper_figures(chromium, live_server, transactional_db, size):
    """The research page draws every committed paper figure, each under its title with the
    caption naming its script."""
    from django.conf import settings
    from django.contrib.auth.models import Group, User

    from diagnosis.permissions import CLINICIANS

    files = sorted(Path(settings.RESEARCH_FIGURES_DIR).glob("*.json"))
    user = User.objects.create_user("reader", password="reader-pass-123")
    user.groups.add(Group.objects.get_or_create(name=CLINICIANS)[0])
    context, page = new_page(chromium, live_server, width=SIZES[size][0], height=SIZES[size][1])
    errors = _watch(page)
    try:
        log_in(page, "reader", "reader-pass-123")
        page.goto("/research/")
        expect(page.locator("#paper-figures-head")).to_be_visible()
        figures = page.locator(".research-figure")
        assert figures.count() == len(files)
        if files:
            expect(page.locator(".research-figure .figure .main-svg").first).to_be_visible()
            expect(page.locator(".research-figure figcaption").first).to_contain_text(
                "Measured by benchmarks/"
            )
        _shot(page, "research", size)
    finally:
        context.close()
    assert not errors, errors
