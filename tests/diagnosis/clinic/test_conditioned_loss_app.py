"""The conditioned-loss model in the app: trained by the service, walked step by step."""

from __future__ import annotations

import json
import re

import pytest
from thyroid_like import CLASSES, THYROID_TESTS, thyroid_like_rows

from diagnosis.catalog.services.datasets import create_dataset
from diagnosis.clinic.models import DiagnosisCase, DiagnosisStep
from diagnosis.clinic.selectors.cases import case_state
from diagnosis.clinic.selectors.models import case_outcomes, models_for_user
from diagnosis.clinic.selectors.tree import tree_layout
from diagnosis.clinic.services import cases
from diagnosis.clinic.services import step as step_service
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors.models import model_report
from diagnosis.training.services import training


def test_conditioned_loss_trains_through_the_service_with_referral_counts(thyroid_model):
    """Held-out metrics count referrals apart: n_referred + n_classified = cases, rate agrees."""
    metrics = thyroid_model.metrics
    n = metrics["n_test_cases"]
    assert metrics["n_referred"] + metrics["n_classified"] == n
    assert metrics["n_referred"] == sum(row[-1] for row in metrics["confusion"])
    assert metrics["reject_rate"] == pytest.approx(metrics["n_referred"] / n)
    assert metrics["n_referred"] > 0, "elderly patients no test can tell apart should be referred"


def test_a_case_walked_by_the_advice_ends_classified_or_referred_with_risks(
    thyroid_model, clinician
):
    """Following the advice: free answers, priced tests, then a decision with its risks."""
    rows, _ = thyroid_like_rows()
    dataset = thyroid_model.dataset
    tests = {t.index: t for t in dataset.tests.all()}
    seen_risks = []
    kinds = []
    for row in rows[:12]:
        case = cases.start_case(user=clinician, trained_model=thyroid_model)
        for _ in range(len(tests) + 1):
            state = case_state(user=clinician, case=case)
            advice = state.advice
            if state.explanation.risks:
                seen_risks.append((advice, state.explanation.risks))
            if advice.kind == "extract":
                step_service.record_result(
                    user=clinician,
                    case=case,
                    test=tests[advice.test_index],
                    value=row[advice.test_index],
                )
            elif advice.kind == "classify":
                step = step_service.classify(user=clinician, case=case, label=advice.label_index)
                break
            else:
                step = step_service.refer(user=clinician, case=case)
                break
        else:
            pytest.fail(f"no decision after every test was asked for: {advice}")
        case.refresh_from_db()
        kinds.append(advice.kind)
        assert step.followed_advice
        if advice.kind == "reject":
            assert case.status == DiagnosisCase.REFERRED and step.kind == DiagnosisStep.REFER
            assert case.final_label is None
        else:
            assert case.status == DiagnosisCase.CLASSIFIED and step.kind == DiagnosisStep.CLASSIFY
    assert seen_risks, "decisions on priced tests carry their risks"
    # The first rows include patients over 75, whose classes no test tells apart.
    assert {"classify", "reject"} <= set(kinds), kinds
    for advice, risks in seen_risks:
        actions = [r["action"] for r in risks]
        assert actions[0].startswith("Classify as ") and actions[1] == "Refer"
        assert all(a.startswith("Order ") for a in actions[2:])
        assert {r["key"] for r in risks} >= {"classify", "reject"}
        assert [r["risk"] for r in risks] == [r.risk for r in advice.evidence.risks]
        chosen = min(risks, key=lambda r: r["risk"])["key"]
        assert [r["key"] for r in risks if r["lowest"]] == [chosen]
        expected = {"classify": "classify", "reject": "reject"}.get(chosen, "extract")
        assert advice.kind == expected


def test_order_label_names_the_test(thyroid_model, clinician):
    """The first priced decision lists "Order TSH" among its risks (the paper's costliest test)."""
    rows, _ = thyroid_like_rows()
    tests = {t.index: t for t in thyroid_model.dataset.tests.all()}
    case = cases.start_case(user=clinician, trained_model=thyroid_model)
    state = case_state(user=clinician, case=case)
    while not state.explanation.risks:  # free questionnaire answers come first
        index = state.advice.test_index
        step_service.record_result(
            user=clinician, case=case, test=tests[index], value=rows[0][index]
        )
        state = case_state(user=clinician, case=case)
    assert "Order TSH" in [r["action"] for r in state.explanation.risks]


def test_referrals_are_counted_apart_in_reports(thyroid_model, clinician, model_admin):
    """A referral is its own step and case status, and model lists and reports count it apart."""
    referred = cases.start_case(user=clinician, trained_model=thyroid_model)
    step = step_service.refer(user=clinician, case=referred)
    assert step.kind == DiagnosisStep.REFER and step.label is None and step.price == 0
    classified = cases.start_case(user=clinician, trained_model=thyroid_model)
    step_service.classify(user=clinician, case=classified, label=0)
    cases.start_case(user=clinician, trained_model=thyroid_model)
    report = model_report(user=clinician, trained_model=thyroid_model)
    assert case_outcomes(thyroid_model) == {"open": 1, "classified": 1, "referred": 1}
    assert report.n_referred == thyroid_model.metrics["n_referred"]
    assert tree_layout(user=clinician, trained_model=thyroid_model) is None  # no tree to draw
    listed = models_for_user(user=clinician).get(pk=thyroid_model.pk)
    assert (listed.n_cases_open, listed.n_cases_classified, listed.n_cases_referred) == (1, 1, 1)
    other = models_for_user(user=model_admin).exclude(pk=thyroid_model.pk)
    assert all(m.n_cases_referred == 0 for m in other)


def test_step_screen_shows_the_risk_chart_with_readable_actions(thyroid_model, clinician, client):
    """The clinician's screen of a conditioned-loss case draws the risks with readable actions."""
    from django.urls import reverse

    rows, _ = thyroid_like_rows()
    tests = {t.index: t for t in thyroid_model.dataset.tests.all()}
    case = cases.start_case(user=clinician, trained_model=thyroid_model)
    state = case_state(user=clinician, case=case)
    while not state.explanation.risks:
        index = state.advice.test_index
        step_service.record_result(
            user=clinician, case=case, test=tests[index], value=rows[0][index]
        )
        state = case_state(user=clinician, case=case)
    client.force_login(clinician)
    page = client.get(reverse("case-detail", args=[case.pk])).content.decode()
    figure = re.search(
        r'<script id="fig-risks" type="application/json">(.*?)</script>', page, re.DOTALL
    )
    assert figure, "the risk chart's data is on the page"
    labels = json.dumps(json.loads(figure.group(1))["data"])
    assert "Order TSH" in labels and "Refer" in labels and "Classify" in labels


def test_risks_partial_lists_every_action_and_marks_the_advised_one(thyroid_model, clinician):
    """The risk table (the chart's text alternative) lists each action and marks the lowest."""
    from django.template.loader import render_to_string

    rows, _ = thyroid_like_rows()
    tests = {t.index: t for t in thyroid_model.dataset.tests.all()}
    case = cases.start_case(user=clinician, trained_model=thyroid_model)
    state = case_state(user=clinician, case=case)
    assert render_to_string("clinic/_risks.html", {"risks": state.explanation.risks}).strip() == ""
    while not state.explanation.risks:
        index = state.advice.test_index
        step_service.record_result(
            user=clinician, case=case, test=tests[index], value=rows[0][index]
        )
        state = case_state(user=clinician, case=case)
    html = render_to_string("clinic/_risks.html", {"risks": state.explanation.risks})
    for row in state.explanation.risks:
        assert row["action"] in html
    assert html.count("(advised: lowest risk)") == 1


def test_too_many_priced_tests_are_refused_when_training_is_requested(model_admin):
    """With more priced tests than the subset bound allows, the request itself says why."""
    from django.core.exceptions import ValidationError

    rows, labels = thyroid_like_rows(n=40)
    priced_questions = [
        {**t, "price": 1.0, "discounted_price": 1.0} if t["name"] in ("age", "on_thyroxine") else t
        for t in THYROID_TESTS
    ]
    dataset = create_dataset(
        name="All priced",
        class_labels=CLASSES,
        tests=priced_questions,
        rows=rows,
        labels=labels,
    )
    with pytest.raises(ValidationError, match=r"6 priced tests.*2\^6 = 64.*\(32\)"):
        training.create_training(
            user=model_admin,
            dataset=dataset,
            learner="conditioned_loss",
            params={"max_subsets": 32},
        )
    allowed = training.create_training(
        user=model_admin, dataset=dataset, learner="conditioned_loss", params={"max_subsets": 64}
    )
    assert allowed.status == TrainedModel.QUEUED


def test_model_page_offers_no_tree_for_a_model_without_one(thyroid_model, clinician, client):
    """A conditioned-loss model's page has no "View the tree" link (it has no tree to draw)."""
    from django.urls import reverse

    client.force_login(clinician)
    page = client.get(reverse("model-detail", args=[thyroid_model.pk])).content.decode()
    assert "Start a case with this model" in page
    assert reverse("model-tree", args=[thyroid_model.pk]) not in page
