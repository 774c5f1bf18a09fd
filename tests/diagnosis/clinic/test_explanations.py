"""The advice in words: names, money and the model's own numbers, from the typed advice."""

from __future__ import annotations

import dataclasses
import re
from types import SimpleNamespace

import pytest

from diagnosis.clinic.selectors.cases import advice_for, estimator_for
from diagnosis.clinic.selectors.explanations import advice_headline, explain, patients, percent
from diagnosis.shared.advice import Advice, DecisionCosts
from diagnosis.shared.money import format_money
from learners.policy import Extract, Reject, Risk, decide, evidence_for

pytestmark = pytest.mark.django_db

# Missing the disease costs four times a false alarm; referring costs 30.
MATRIX = [[0.0, 100.0], [400.0, 0.0]]
REFER = 30.0
CLASSES = ["healthy", "disease"]


def _model(matrix=MATRIX, refer=REFER):
    """The attributes decision_costs reads from a fitted expected-cost model."""
    return SimpleNamespace(cost_matrix_=matrix, reject_cost_=refer)


def test_extract_says_price_what_stopping_costs_and_what_the_test_saves(toy_dataset):
    """An order says its price, the expected error cost now and after, and the saving."""
    evidence = evidence_for(
        (0.9, 0.1), cost_matrix=MATRIX, reject_cost=None, support=115.0, cost_after=12.0
    )
    advice = advice_for(Extract(test=1, cost=3.0, evidence=evidence), dataset=toy_dataset)
    now = decide(evidence.proba, classes=[0, 1], cost_matrix=MATRIX)
    words = explain(advice)
    assert words.headline == "Order Insulin"
    assert words.why[0] == f"Order Insulin: {format_money(3.0)} for this patient now."
    saving = evidence.conclude_cost - 12.0
    assert saving > 3.0
    assert words.why[1] == (
        f"Concluding {CLASSES[now.label]} now would cost {format_money(evidence.conclude_cost)} in "
        f"expected errors; once Insulin is known it expects {format_money(12.0)}, so the result is "
        f"expected to save {format_money(saving)}, more than its price of {format_money(3.0)}."
    )
    assert words.why[2] == (
        "How sure: healthy 90.0%, disease 10.0%, from 115 past patients who reached the same point."
    )
    assert advice_headline(advice) == "order Insulin"


def test_a_test_that_saves_less_than_its_price_says_it_pays_off_further_down(toy_dataset):
    """When the result alone saves less than the price, the words say so instead of 'worth it'."""
    evidence = evidence_for((0.9, 0.1), cost_matrix=MATRIX, support=20.0, cost_after=39.0)
    advice = advice_for(Extract(test=1, cost=5.0, evidence=evidence), dataset=toy_dataset)
    sentence = explain(advice).why[1]
    assert f"expected to save {format_money(evidence.conclude_cost - 39.0)}" in sentence
    assert f"less than its price of {format_money(5.0)}" in sentence
    assert "the tests it leads to" in sentence


def test_extract_says_when_stopping_now_would_be_a_referral(toy_dataset):
    """When referring is the model's conclusion for the current belief, the order says so."""
    evidence = evidence_for(
        (0.5, 0.5), cost_matrix=MATRIX, reject_cost=REFER, support=20.0, cost_after=5.0
    )
    advice = advice_for(Extract(test=0, cost=10.0, evidence=evidence), dataset=toy_dataset)
    assert decide(evidence.proba, classes=[0, 1], cost_matrix=MATRIX, reject_cost=REFER).kind == (
        "reject"
    )
    assert (
        explain(advice)
        .why[1]
        .startswith(f"Referring now would cost {format_money(REFER)} in expectation; ")
    )


def test_classify_says_class_error_cost_referral_and_certainty(toy_dataset):
    """A conclusion names the class, its expected error cost, referral's, and the support."""
    action = decide((0.05, 0.95), classes=[0, 1], cost_matrix=MATRIX, reject_cost=REFER, support=37)
    assert action.kind == "classify"
    words = explain(advice_for(action, dataset=toy_dataset, classes=[0, 1]))
    assert words.headline == "disease"
    assert words.why[0] == (
        "Conclude disease: nothing more to pay for this patient; the expected cost of an error "
        f"is {format_money(action.expected_cost)}."
    )
    assert words.why[1] == (
        f"Referring instead would cost {format_money(action.evidence.refer_cost)} in expectation."
    )
    assert words.why[2] == (
        "How sure: disease 95.0%, healthy 5.0%, from 37 past patients who reached the same point."
    )
    assert [p["label"] for p in words.proba] == CLASSES


def test_a_conclusion_against_the_more_likely_class_names_the_error_costs(toy_dataset):
    """Concluding the less likely class says why: its expected costs and the matrix entries."""
    action = decide((0.7, 0.3), classes=[0, 1], cost_matrix=MATRIX, support=12)
    assert action.kind == "classify" and action.label == 1, "missing disease costs 4x"
    advice = advice_for(action, dataset=toy_dataset, classes=[0, 1], estimator=_model())
    why = explain(advice).why
    costs = action.evidence.class_costs
    assert why[1] == (
        "disease is less likely (30.0%) than healthy (70.0%), but concluding healthy would cost "
        f"{format_money(costs[0])} in expected errors against {format_money(costs[1])} "
        "for disease: "
        f"concluding healthy for a patient who is disease costs {format_money(MATRIX[1][0])}, "
        f"concluding disease for a patient who is healthy costs {format_money(MATRIX[0][1])} "
        "(see the error costs below)."
    )
    # The conclusion of the more likely class never carries that sentence.
    likely = decide((0.9, 0.1), classes=[0, 1], cost_matrix=MATRIX, support=12)
    assert likely.label == 0
    words = explain(advice_for(likely, dataset=toy_dataset, estimator=_model()))
    assert not any("less likely" in sentence for sentence in words.why)


def test_reject_compares_referral_with_the_cheapest_conclusion(toy_dataset):
    """A referral is worded as its expected cost against the cheapest class's."""
    action = decide((0.5, 0.5), classes=[0, 1], cost_matrix=MATRIX, reject_cost=REFER, support=8)
    assert action.kind == "reject"
    advice = advice_for(action, dataset=toy_dataset, classes=[0, 1])
    words = explain(advice)
    best = action.evidence.best_class
    assert words.why[0] == (
        f"Refer the patient: a referral costs {format_money(action.expected_cost)} in expectation, "
        f"less than the cheapest conclusion, {CLASSES[best]}, at "
        f"{format_money(action.evidence.class_costs[best])} in expected errors."
    )
    assert advice_headline(advice) == "refer"


def test_counts_of_past_patients_are_whole_numbers():
    """Fractional supports (C4.5 shares) are rounded and said to be approximate."""
    assert patients(322.4) == "about 322 past patients"
    assert patients(1.0) == "1 past patient"
    assert patients(4206.0) == "4,206 past patients"
    assert patients(0.3) == "less than one past patient"
    assert (
        "1.857"
        not in explain(
            Advice.from_json(
                {
                    "kind": "classify",
                    "label": "healthy",
                    "label_position": 0,
                    "proba": [0.8, 0.2],
                    "expected_cost": 20.0,
                    "class_labels": CLASSES,
                    "evidence": {
                        "proba": [0.8, 0.2],
                        "support": 1.857,
                        "class_costs": [20.0, 80.0],
                    },
                }
            )
        ).why[-1]
    )


def test_money_percent_and_signs():
    """Money has a dollar sign and cents, a negative risk a real minus, percentages one decimal."""
    assert format_money(1234.5) == "$1,234.50" and format_money(None) == "–"
    assert format_money(-87.92) == "−$87.92" and format_money(4142) == "$4,142.00"
    assert format_money(-0.001) == "$0.00"
    assert percent(0.458) == "45.8%" and percent(0.99991) == "over 99.9%"
    assert percent(0.0001) == "under 0.1%" and percent(1.0) == "100.0%"


def test_branches_of_an_unavailable_test_are_each_named_with_their_share(trained_model):
    """A patient split by an unavailable test: every branch's condition, share and patients."""
    estimator = estimator_for(trained_model)
    tree = estimator.tree_
    root_test = int(tree.feature[0])
    action = estimator.next_action({}, unavailable={root_test})
    nodes = action.evidence.nodes
    assert len(nodes) > 1, "the root's test is unavailable: the patient goes down every edge"
    dataset = trained_model.dataset
    advice = advice_for(
        action,
        dataset=dataset,
        classes=estimator.classes_.tolist(),
        estimator=estimator,
        known={},
    )
    label = dataset.tests.get(index=root_test).display_label
    words = explain(advice)
    intro = next(s for s in words.why if "not available" in s)
    assert intro == words.why[-1] and intro.startswith(f"{label} was not available")
    assert len(words.branches) == len(nodes)
    sentence = " ".join(words.branches)
    assert {row.node for row in advice.branches} == {n for n, _ in nodes}
    for node, share in nodes:
        row = next(r for r in advice.branches if r.node == node)
        assert row.share == share
        assert f"{percent(share)} of this patient" in sentence
        assert patients(tree.class_weight[node].sum()) in sentence
        assert all(c.startswith(label) for c in row.conditions)
    assert sum(share for _, share in nodes) == pytest.approx(1.0)


def test_a_patient_in_one_place_has_no_branch_sentence(trained_model):
    """With every test available the walk ends in one place: nothing about branches is said."""
    estimator = estimator_for(trained_model)
    action = estimator.next_action({})
    advice = advice_for(action, dataset=trained_model.dataset, estimator=estimator, known={})
    assert advice.branches is None and "branches" not in advice.to_json()
    words = explain(advice)
    assert not any("not available" in s for s in words.why) and words.branches == []


def test_the_error_costs_in_force_come_as_a_labelled_grid(toy_dataset):
    """The stored costs become rows named by class, cells in dollars, and the referral price."""
    action = decide((0.05, 0.95), classes=[0, 1], cost_matrix=MATRIX, reject_cost=REFER)
    advice = advice_for(action, dataset=toy_dataset, estimator=_model())
    grid = explain(advice).costs
    assert grid["basis"] == "expected_cost" and grid["class_labels"] == CLASSES
    assert [row["label"] for row in grid["rows"]] == CLASSES
    cells = [[format_money(v) for v in row] for row in MATRIX]
    assert [row["cells"] for row in grid["rows"]] == cells
    assert [row["refer"] for row in grid["rows"]] == [format_money(REFER)] * 2
    assert grid["refer_priced"]
    unpriced = explain(advice_for(action, dataset=toy_dataset, estimator=_model(refer=None)))
    assert not unpriced.costs["refer_priced"]


# ----------------------------------------------------------- conditioned loss
RISK_COSTS = {
    "basis": "risk",
    "class_labels": CLASSES,
    "matrix": [[-100.0, 10000.0], [10000.0, -100.0]],
    "reject_cost": None,
    "penalty": 10000.0,
    "reward": 100.0,
}


def _risk_advice(action, dataset):
    return dataclasses.replace(
        advice_for(action, dataset=dataset), costs=DecisionCosts.from_json(RISK_COSTS)
    )


def _amounts(text: str) -> list[float]:
    """Every dollar amount in ``text`` (a leading minus sign kept)."""
    return [
        (-1.0 if sign else 1.0) * float(value.replace(",", ""))
        for sign, value in re.findall(r"(−?)\$([\d,]+\.\d\d)", text)
    ]


def test_a_referral_by_risk_says_it_is_not_priced_and_every_amount_is_a_risk(toy_dataset):
    """A conditioned-loss referral: no '$0.00 expected cost'; its numbers are its risks."""
    risks = (Risk("classify", 5758.0), Risk("reject", 4142.0))
    evidence = evidence_for((0.5, 0.5), cost_matrix=RISK_COSTS["matrix"], support=7, risks=risks)
    action = Reject(expected_cost=0.0, proba=evidence.proba, evidence=evidence)
    words = explain(_risk_advice(action, toy_dataset))
    text = " ".join(words.why)
    assert "referral is not priced for this model" in words.why[0]
    assert words.why[1] == (
        f"Its risk, {format_money(4142.0)}, is the lowest: classify as healthy risks "
        f"{format_money(5758.0)}. "
        "No priced test is left to order."
    )
    assert "$0.00" not in text
    allowed = {r.risk for r in risks} | {10000.0, 100.0}
    assert set(_amounts(text)) <= allowed
    assert [r["money"] for r in words.risks] == [format_money(5758.0), format_money(4142.0)]


def test_an_order_by_risk_says_what_it_saves_against_concluding_now(toy_dataset):
    """A conditioned-loss order: price, its risk, the conclusion's risk and the difference."""
    risks = (Risk("classify", -87.92), Risk("reject", 9994.0), Risk("extract", -95.5, 1))
    evidence = evidence_for((0.99, 0.01), cost_matrix=RISK_COSTS["matrix"], risks=risks)
    action = Extract(test=1, cost=3.0, evidence=evidence)
    words = explain(_risk_advice(action, toy_dataset))
    assert words.why[0] == f"Order Insulin: {format_money(3.0)} for this patient now."
    assert words.why[1] == (
        f"Its risk, {format_money(-95.5)} with the price included, is the lowest: concluding "
        f"healthy now risks {format_money(-87.92)}, so ordering Insulin is expected to save "
        f"{format_money(-87.92 - -95.5)}."
    )
    assert [r["lowest"] for r in words.risks] == [False, False, True]


def test_risks_become_rows_by_key_with_the_lowest_marked(toy_dataset):
    """Risks are worded from Risk.kind/test (no string parsing); the least one is marked once."""
    risks = (Risk("classify", 40.0), Risk("reject", 30.0), Risk("extract", 12.5, 0))
    evidence = evidence_for((0.6, 0.4), cost_matrix=MATRIX, reject_cost=REFER, risks=risks)
    advice = advice_for(Extract(test=0, cost=10.0, evidence=evidence), dataset=toy_dataset)
    rows = explain(advice).risks
    assert [r["action"] for r in rows] == ["Classify as disease", "Refer", "Order Glucose"]
    assert [r["key"] for r in rows] == [r.key for r in risks]
    assert [r["risk"] for r in rows] == [r.risk for r in risks]
    assert [r["money"] for r in rows] == [format_money(r.risk) for r in risks]
    assert [r["lowest"] for r in rows] == [False, False, True]


def test_no_advice_has_no_explanation():
    """A closed case (no advice) explains nothing and has no headline."""
    assert explain(None) is None and advice_headline(None) == ""


def test_unavailable_tests_that_split_nothing_are_still_named(toy_dataset):
    """A test marked unavailable is named with how the model went on without it."""
    action = decide((0.05, 0.95), classes=[0, 1], cost_matrix=MATRIX)
    advice = advice_for(action, dataset=toy_dataset, estimator=_model(), unavailable=[1])
    assert advice.unavailable_labels == ("Insulin",)
    assert "Insulin is marked unavailable: the model advises without it." in explain(advice).why
    advice = dataclasses.replace(advice, costs=DecisionCosts.from_json(RISK_COSTS))
    assert any(
        s.startswith("Insulin is marked unavailable: the model weighs only the tests")
        for s in explain(advice).why
    )


def test_forest_advice_says_how_many_trees_wait_on_the_test(toy_dataset):
    """A forest's order names how many of its trees wait on the test; a conclusion says all
    trees reached a leaf; a weighted ensemble gives the share of the vote."""
    evidence = evidence_for(
        (0.9, 0.1), cost_matrix=MATRIX, support=40.0, cost_after=12.0, waiting=7, members=40
    )
    advice = advice_for(Extract(test=1, cost=3.0, evidence=evidence), dataset=toy_dataset)
    assert explain(advice).why[-1] == "7 of the model's 40 trees are waiting on Insulin."
    done = decide((0.9, 0.1), classes=[0, 1], cost_matrix=MATRIX, waiting=0, members=40)
    words = explain(advice_for(done, dataset=toy_dataset))
    assert (
        words.why[-1] == "The model concludes because all 40 trees reached a leaf for this patient."
    )
    weighted = evidence_for(
        (0.9, 0.1), cost_matrix=MATRIX, support=40.0, cost_after=12.0, waiting=1.5, members=2.0
    )
    advice = advice_for(Extract(test=1, cost=3.0, evidence=weighted), dataset=toy_dataset)
    assert explain(advice).why[-1] == (
        f"Trees holding {percent(0.75)} of the vote are waiting on Insulin."
    )
    single = evidence_for((0.9, 0.1), cost_matrix=MATRIX, support=40.0, cost_after=12.0)
    advice = advice_for(Extract(test=1, cost=3.0, evidence=single), dataset=toy_dataset)
    assert not any("waiting" in sentence for sentence in explain(advice).why)


def test_the_grid_is_the_models_snapshot_not_todays_matrix(trained_model, clinician):
    """Editing the dataset's error matrix after training leaves the case's grid as trained."""
    from diagnosis.clinic.selectors.cases import case_state
    from diagnosis.clinic.services import cases

    trained_model.error_matrix.__class__.objects.filter(pk=trained_model.error_matrix_id).update(
        matrix=[[0.0, 7.0], [9.0, 0.0]]
    )
    case = cases.start_case(user=clinician, trained_model=trained_model)
    grid = case_state(user=clinician, case=case).explanation.costs
    assert [row["cells"] for row in grid["rows"]] == [
        [format_money(v) for v in row] for row in trained_model.matrix_snapshot
    ]
    assert "$7.00" not in str(grid) and "$9.00" not in str(grid)
