"""The advice in words: names, money and the model's own numbers, from the stored advice dict."""

from __future__ import annotations

import pytest

from diagnosis.selectors import action_to_dict, advice_headline, explain
from diagnosis.selectors.explanations import money
from learners.policy import Extract, Risk, decide, evidence_for

pytestmark = pytest.mark.django_db

# Missing the disease costs four times a false alarm; referring costs 30.
MATRIX = [[0.0, 100.0], [400.0, 0.0]]
REFER = 30.0


def test_extract_says_price_and_how_the_expected_error_cost_falls(toy_dataset):
    """An order is worded with the test's name, its price and conclude_cost -> cost_after."""
    evidence = evidence_for(
        (0.9, 0.1), cost_matrix=MATRIX, reject_cost=None, support=115.0, cost_after=12.0
    )
    advice = action_to_dict(Extract(test=1, cost=3.0, evidence=evidence), dataset=toy_dataset)
    now = decide(evidence.proba, classes=[0, 1], cost_matrix=MATRIX)
    assert advice["conclusion_now"]["label_index"] == now.label
    words = explain(advice)
    assert words.headline == "Order Insulin"
    assert words.why[0] == (
        f"Order Insulin for {money(3.0)}: the expected cost of an error falls from "
        f"{money(evidence.conclude_cost)} "
        f"(if you concluded {['healthy', 'disease'][now.label]} now) "
        f"to {money(12.0)} once the result is known."
    )
    assert words.why[-1] == "Based on 115 training cases."
    assert advice_headline(advice) == "order Insulin"


def test_extract_says_when_stopping_now_would_be_a_referral(toy_dataset):
    """When referring is the model's conclusion for the current belief, the order says so."""
    evidence = evidence_for(
        (0.5, 0.5), cost_matrix=MATRIX, reject_cost=REFER, support=20.0, cost_after=5.0
    )
    advice = action_to_dict(Extract(test=0, cost=10.0, evidence=evidence), dataset=toy_dataset)
    assert decide(evidence.proba, classes=[0, 1], cost_matrix=MATRIX, reject_cost=REFER).kind == (
        "reject"
    )
    assert "(if you referred now)" in explain(advice).why[0]


def test_classify_says_class_probability_error_cost_and_referral(toy_dataset):
    """A conclusion is worded with the class name, its probability and both expected costs."""
    action = decide((0.05, 0.95), classes=[0, 1], cost_matrix=MATRIX, reject_cost=REFER, support=37)
    assert action.kind == "classify"
    words = explain(action_to_dict(action, dataset=toy_dataset, classes=[0, 1]))
    assert words.headline == "disease"
    assert words.why[0] == (
        f"Conclude disease (p = {action.proba[1]:.2f}); "
        f"expected error cost {money(action.expected_cost)}."
    )
    assert words.why[1] == (
        f"Referring instead would cost {money(action.evidence.refer_cost)} in expectation."
    )
    assert words.why[2] == "Based on 37 training cases."
    assert [p["label"] for p in words.proba] == ["healthy", "disease"]


def test_reject_compares_referral_with_the_best_class(toy_dataset):
    """A referral is worded as its expected cost against the best class's."""
    action = decide((0.5, 0.5), classes=[0, 1], cost_matrix=MATRIX, reject_cost=REFER, support=8)
    assert action.kind == "reject"
    advice = action_to_dict(action, dataset=toy_dataset, classes=[0, 1])
    words = explain(advice)
    best = action.evidence.best_class
    assert words.why[0] == (
        f"Refer: the expected cost of referring, {money(action.expected_cost)}, is below that "
        f"of the best class, {['healthy', 'disease'][best]} "
        f"({money(action.evidence.class_costs[best])})."
    )
    assert advice_headline(advice) == "refer"


def test_risks_become_rows_by_key_with_the_lowest_marked(toy_dataset):
    """Risks are worded from Risk.kind/test (no string parsing); the least one is marked once."""
    risks = (Risk("classify", 40.0), Risk("reject", 30.0), Risk("extract", 12.5, 0))
    evidence = evidence_for((0.6, 0.4), cost_matrix=MATRIX, reject_cost=REFER, risks=risks)
    advice = action_to_dict(Extract(test=0, cost=10.0, evidence=evidence), dataset=toy_dataset)
    rows = explain(advice).risks
    assert [r["action"] for r in rows] == ["Classify as disease", "Refer", "Order Glucose"]
    assert [r["key"] for r in rows] == [r.key for r in risks]
    assert [r["risk"] for r in rows] == [r.risk for r in risks]
    assert [r["lowest"] for r in rows] == [False, False, True]


def test_no_advice_has_no_explanation():
    """A closed case (no advice) explains nothing and has no headline."""
    assert explain(None) is None and advice_headline(None) == ""
