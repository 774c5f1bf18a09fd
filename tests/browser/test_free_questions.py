"""Fewer round trips on a real thyroid patient: the free questions in one form, FTI computed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import CLINICIAN, log_in, new_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUT = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}


def dollars(text: str) -> float:
    return float(text.strip().replace("$", "").replace(",", ""))


def shot(page, name: str, size: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"{name}-{size}.png"), full_page=True)


def thyroid_patient(dataset):
    """A past patient with every value present, so each question has a real answer."""
    return next(c for c in dataset.cases.order_by("id") if all(v is not None for v in c.values))


def start_case(page, model, reference: str) -> None:
    row = page.locator("article.model-card", has_text=str(model))
    row.get_by_placeholder("Patient ref.").fill(reference)
    with page.expect_navigation():
        row.get_by_role("button", name="Start a case").click()


def free_tests(model):
    """The free, non-derived tests of the model's own price snapshot."""
    costs = model.snapshot.prices
    return [
        t
        for t in model.dataset.tests.order_by("index")
        if t.index not in costs.derived and costs.marginal_cost(t.index) == 0
    ]


def fill(page, test, value) -> None:
    field = page.locator(f"#entry [name=t{test.index}]")
    if test.is_nominal:
        field.select_option(value=str(int(value)))
    else:
        field.fill(f"{value:g}")


@pytest.mark.parametrize("size", list(SIZES))
def test_answer_the_free_questions_in_one_form(chromium, live_server, thyroid_risk_model, size):
    """All free questions come in one form; a blank one is named; saved as free steps."""
    from diagnosis.clinic.models import DiagnosisStep

    free = free_tests(thyroid_risk_model)
    assert len(free) >= 10
    patient = thyroid_patient(thyroid_risk_model.dataset)
    width, height = SIZES[size]
    context, page = new_page(chromium, live_server, width=width, height=height)
    try:
        log_in(page, *CLINICIAN)
        start_case(page, thyroid_risk_model, f"thyroid-{size}")
        form = page.locator("#entry")
        assert form.locator("input[name=action]").input_value() == "results"
        asked = [t for t in free if form.locator(f"[name=t{t.index}]").count()]
        assert [t.name for t in asked] == [t.name for t in free]  # the model uses every one
        shot(page, "13-case-free-questions", size)

        # Everything but the first question answered, one marked unknown: nothing saved.
        first, unknown = asked[0], asked[-1]
        for test in asked[1:-1]:
            fill(page, test, patient.values[test.index])
        if unknown.is_nominal:
            page.locator(f"#entry [name=t{unknown.index}]").select_option(value="unknown")
        else:
            page.locator(f"#entry [name=t{unknown.index}_unknown]").check()
        with page.expect_navigation():
            page.get_by_role("button", name=f"Save {len(asked)} answers").click()
        error = page.locator(f"#entry .field-error[data-test={first.name}] .errorlist")
        assert first.display_label in error.inner_text()
        assert page.locator("#entry .field .errorlist").count() == 1
        assert "Nothing was saved: 1 answer below needs a look" in form.inner_text()
        assert not DiagnosisStep.objects.filter(case__patient_reference=f"thyroid-{size}").exists()
        shot(page, "14-case-free-questions-error", size)

        # The typed answers were kept; answer the first and save.
        fill(page, first, patient.values[first.index])
        with page.expect_navigation():
            page.get_by_role("button", name=f"Save {len(asked)} answers").click()
        rows = page.locator("#steps-table tbody tr")
        assert rows.count() == len(asked)
        prices = [dollars(p) for p in rows.locator("td.num").all_inner_texts()]
        assert prices == [0.0] * len(asked)
        assert dollars(page.locator("#accumulated-cost").inner_text()) == 0.0
        assert "not available" in rows.nth(len(asked) - 1).inner_text()
        steps = DiagnosisStep.objects.filter(case__patient_reference=f"thyroid-{size}")
        assert [s.test.name for s in steps.order_by("position")] == [t.name for t in asked]
        # The next advice is a priced lab test, entered on its own.
        assert page.locator("#entry input[name=action]").input_value() == "result"
        assert dollars(page.locator("#advice .price").first.inner_text()) > 0
        shot(page, "15-case-after-free-questions", size)
    finally:
        context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_fti_computed(chromium, live_server, thyroid_risk_model, size):
    """Ordering FTI asks for TT4 and T4U; FTI = TT4 / T4U is then recorded at no price."""
    from django.contrib.auth.models import User

    from diagnosis.clinic.services import cases
    from diagnosis.clinic.services import step as step_service

    clinician = User.objects.get(username=CLINICIAN[0])
    dataset = thyroid_risk_model.dataset
    tests = {t.name: t for t in dataset.tests.all()}
    patient = thyroid_patient(dataset)
    case = cases.start_case(
        user=clinician, trained_model=thyroid_risk_model, patient_reference=f"fti-{size}"
    )
    step_service.record_results(
        user=clinician,
        case=case,
        results={t.name: patient.values[t.index] for t in free_tests(thyroid_risk_model)},
    )
    width, height = SIZES[size]
    context, page = new_page(chromium, live_server, width=width, height=height)
    try:
        log_in(page, *CLINICIAN)
        page.goto(f"/cases/{case.pk}/")
        with page.expect_navigation():
            page.locator("#test-options tr[data-test=FTI]").get_by_role("link").click()
        form = page.locator("#entry")
        assert form.locator("input[name=action]").input_value() == "results"
        assert form.locator(f"[name=t{tests['TT4'].index}]").count() == 1
        assert form.locator(f"[name=t{tests['T4U'].index}]").count() == 1
        assert form.locator(f"[name=t{tests['FTI'].index}]").count() == 0  # never typed
        assert "computed for you" in form.locator(".computed-note").inner_text()
        tt4, t4u = patient.values[tests["TT4"].index], patient.values[tests["T4U"].index]
        page.locator(f"#entry [name=t{tests['TT4'].index}]").fill(f"{tt4:g}")
        page.locator(f"#entry [name=t{tests['T4U'].index}]").fill(f"{t4u:g}")
        shot(page, "16-case-fti-with-inputs", size)
        with page.expect_navigation():
            page.get_by_role("button", name="Save 2 results").click()
        rows = page.locator("#steps-table tbody tr")
        names = [r.locator("td").nth(1).inner_text() for r in rows.all()]
        assert names[-3:][0].startswith(tests["TT4"].display_label)
        assert names[-1].startswith(tests["FTI"].display_label)
        fti_row = rows.nth(rows.count() - 1)
        value = float(fti_row.locator("td").nth(2).inner_text().split()[0])
        assert value == pytest.approx(tt4 / t4u, rel=1e-3)
        assert dollars(fti_row.locator("td.num").inner_text()) == 0.0
        assert "computed: TT4 / T4U" in fti_row.inner_text()
        assert fti_row.get_by_role("link", name="Correct").count() == 0  # correct its inputs
        paid = [dollars(p) for p in rows.locator("td.num").all_inner_texts()][-3:-1]
        assert sum(paid) == pytest.approx(dollars(page.locator("#accumulated-cost").inner_text()))
        assert page.locator("#test-options tr[data-test=FTI]").count() == 0
        shot(page, "17-case-fti-computed", size)
    finally:
        context.close()
