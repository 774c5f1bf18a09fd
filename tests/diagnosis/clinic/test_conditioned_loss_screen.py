"""The conditioned-loss case screen: one consistent set of numbers, read back from the page."""

from __future__ import annotations

import html
import json
import re

import pytest
from thyroid_like import thyroid_like_rows

from diagnosis.clinic.selectors.cases import case_state
from diagnosis.clinic.services import cases
from diagnosis.clinic.services import step as step_service

MONEY = re.compile(r"(−?)\$([\d,]+\.\d\d)")
PERCENT = re.compile(r"(\d+\.\d)%")


def amounts(text: str) -> list[float]:
    """Every dollar amount written in ``text``, with its sign."""
    return [
        (-1.0 if sign else 1.0) * float(value.replace(",", ""))
        for sign, value in MONEY.findall(text)
    ]


def section(page: str, ident: str) -> str:
    """The visible text of the element with id ``ident`` up to its section's end."""
    match = re.search(rf'id="{ident}".*?</section>', page, re.DOTALL)
    assert match, f"#{ident} is on the page"
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", match.group(0))))


def cents(value: float) -> float:
    return round(float(value), 2)


def check_screen(page: str, state) -> None:
    """Every number the advice, the risk table, the chart and the cost grid show is the model's."""
    advice = state.advice
    evidence = advice.evidence
    risks = [r.risk for r in evidence.risks]
    costs = advice.costs
    by_key = {row["key"]: row["risk"] for row in state.explanation.risks}
    conclude = min(by_key["classify"], by_key["reject"])
    options = [o for o in state.test_options if o.recommended]
    allowed = {cents(r) for r in risks} | {cents(costs.penalty), cents(costs.reward)}
    allowed |= {cents(o.price_now) for o in options} | {cents(o.full_price) for o in options}
    if advice.kind == "extract":
        allowed.add(cents(advice.cost))
        # the saving is the difference of the two risks as shown (to the cent), so it checks
        allowed.add(cents(cents(conclude) - cents(by_key[f"extract:{advice.test_index}"])))

    # The advice card: each amount is a risk, a price, PENALTY/REWARD or a risk's difference.
    card = section(page, "advice")
    written = amounts(card)
    assert written, card
    assert {cents(v) for v in written} <= allowed, (written, allowed, card)
    # Probabilities: the bars and the sentence give the model's own posterior.
    shown = {float(p) for p in PERCENT.findall(card)}
    assert shown <= {round(100.0 * p, 1) for p in evidence.proba}, (shown, card)
    support = round(evidence.support)
    assert f"{support:,} past patient" in card, card
    if advice.kind == "reject":
        assert "$0.00" not in card and "not priced" in card

    # The risk table, in the model's order, in dollars.
    table = section(page, "risks-head")
    listed = re.findall(r"(−?\$[\d,]+\.\d\d)", table.split("Risk ($)", 1)[1])
    assert [cents(v) for v in amounts(" ".join(listed))][: len(risks)] == [cents(r) for r in risks]

    # The chart draws the same risks and prints each value beside its bar.
    figure = json.loads(
        re.search(
            r'<script id="fig-risks" type="application/json">(.*?)</script>', page, re.S
        ).group(1)
    )
    assert figure["data"][0]["x"] == pytest.approx(risks)
    notes = [a["text"] for a in figure["layout"]["annotations"]]
    assert [cents(amounts(n)[0]) for n in notes] == [cents(r) for r in risks]
    assert sum("advised" in n for n in notes) == 1

    # The error costs the model weighs with: PENALTY off the diagonal, minus REWARD on it.
    grid = section(page, "error-costs")
    k = len(advice.class_labels)
    cells = [cents(v) for v in amounts(grid.split("Actual \\ concluded", 1)[1])]
    expected = [
        cents(-costs.reward if i == j else costs.penalty) for i in range(k) for j in range(k)
    ]
    assert cells == expected, (cells, grid)

    # The running cost is the sum of what the steps charged.
    total = sum(s.price for s in state.steps if s.price)
    assert f'data-cost="{total}"' in page or f"${total:,.2f}" in page


def test_every_number_on_the_conditioned_loss_screen_is_the_models(
    thyroid_model, clinician, client
):
    """Walk patients by the advice; on each priced decision the page's numbers are the model's."""
    from django.urls import reverse

    rows, _ = thyroid_like_rows()
    tests = {t.index: t for t in thyroid_model.dataset.tests.all()}
    client.force_login(clinician)
    seen = set()
    for row in rows[:60]:
        case = cases.start_case(user=clinician, trained_model=thyroid_model)
        for _ in range(len(tests) + 1):
            state = case_state(user=clinician, case=case)
            advice = state.advice
            if state.explanation.risks:
                page = client.get(reverse("case-detail", args=[case.pk])).content.decode()
                check_screen(page, state)
                seen.add(advice.kind)
            if advice.kind != "extract":
                break
            step_service.record_result(
                user=clinician,
                case=case,
                test=tests[advice.test_index],
                value=row[advice.test_index],
            )
        if seen >= {"extract", "classify", "reject"}:
            break
    assert seen == {"extract", "classify", "reject"}, seen


def test_model_page_gives_the_held_out_referrals_not_never_refers(thyroid_model, clinician, client):
    """A model that referred held-out patients without a referral price says how many, at $0."""
    from django.urls import reverse

    metrics = thyroid_model.metrics
    assert metrics["n_referred"] > 0 and thyroid_model.reject_cost_snapshot is None
    client.force_login(clinician)
    page = client.get(reverse("model-detail", args=[thyroid_model.pk])).content.decode()
    stats = re.search(r'id="referral-stats">(.*?)</dd>', page, re.S).group(1)
    assert "never refers" not in page
    assert (
        f"referred {metrics['n_referred']} of the {metrics['n_test_cases']:,} held-out patients"
        in stats
    )
    assert f"({100.0 * metrics['n_referred'] / metrics['n_test_cases']:.1f}%)" in stats
    assert "no referral price" in stats and "$0.00" in stats


def test_referral_statistics_come_from_the_held_out_evaluation():
    """Counts, share and total cost of referrals are the evaluation's, priced or not."""
    from diagnosis.training.selectors.models import referral_statistics

    priced = referral_statistics(
        {"n_referred": 3, "n_test_cases": 1200, "mean_reject_cost": 0.375}, 150.0
    )
    assert priced.n == 3 and priced.of_text == "1,200"
    assert priced.percent_text == "0.2%" and priced.price_text == "$150.00"
    assert priced.total_text == "$450.00" and priced.priced
    unpriced = referral_statistics({"n_referred": 0, "n_test_cases": 92}, None)
    assert unpriced.n == 0 and not unpriced.priced and unpriced.price_text is None
    assert referral_statistics({}, None).n is None
