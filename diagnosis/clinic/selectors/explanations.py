"""The model's advice in words: test names, class labels and money, from its numbers.

The one place the app turns an action and its :class:`learners.policy.Evidence`
into sentences.  It reads the :class:`~diagnosis.shared.advice.Advice` stored with every
step (the action's numbers plus the names of the classes and tests it mentions, the costs
the model decides with and where a split patient went, see
:func:`diagnosis.clinic.selectors.cases.advice_for`), so an old step reads the same tomorrow as it
did when it was taken.  Nothing here decides or prices
anything: every number (expected costs, the best class, the cost once a
result is known, the risks) was computed by the model; this module only
words it, and subtracts two of them to say what a test is expected to save.

Every advice says, in dollars and whole numbers of past patients:

1. what the advice is and what it costs this patient now;
2. what concluding now would cost (expected error cost, or for the
   conditioned-loss model its risk) and what the test is expected to save;
3. how sure the model is, and on how many past patients;
4. how unavailable tests were handled (each branch's share of the patient);

and a conclusion against the more likely class names the error costs that
make it the cheaper one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from diagnosis.shared.advice import Advice, BranchRow, DecisionCosts
from diagnosis.shared.money import format_money
from learners.policy import Evidence, Risk

__all__ = [
    "Explanation",
    "advice_headline",
    "cents",
    "explain",
    "patients",
    "percent",
]


def patients(support: float) -> str:
    """How many past patients stand behind an estimate, in whole numbers.

    C4.5's missing-value handling gives fractional counts; they are rounded and said
    to be approximate.  A whole count summed in floating point (3741.0000000002) is
    exact, and says so.
    """
    support = float(support)
    if support < 0.5:
        return "less than one past patient"
    n = round(support)
    words = f"{n:,} past patient{'' if n == 1 else 's'}"
    return words if abs(support - n) < 1e-6 * max(1.0, support) else f"about {words}"


def cents(value: float) -> float:
    """A dollar amount as the screen shows it (to the cent): differences the screen states are
    taken between these, so that the arithmetic a reader does on the page checks."""
    return round(float(value), 2)


def percent(p: float) -> str:
    """A probability as the screen's bars show it (``45.8%``), never rounding a doubt away."""
    p = float(p)
    if 0.9995 <= p < 1.0:
        return "over 99.9%"
    if 0.0 < p < 0.0005:
        return "under 0.1%"
    return f"{round(100.0 * p, 1):.1f}%"


def _lower_first(text: str) -> str:
    """ "Order TSH" -> "order TSH" (test names keep their case)."""
    return text[:1].lower() + text[1:]


@dataclass(frozen=True)
class Explanation:
    """What the screen (and the API) shows about one piece of advice.

    ``why`` holds whole sentences; ``proba`` rows ``{"label", "p", "percent"}``
    aligned with the model's classes; ``risks`` rows ``{"action", "risk",
    "money", "key", "lowest"}`` for a model that weighs the risk of every
    action (the conditioned-loss model), in the model's order; ``costs`` the
    error costs the model decides with, ready for a grid (see
    :func:`_cost_grid`; empty when the advice does not carry them);
    ``branches`` where a patient split by an unavailable test went, one
    phrase per branch (the last ``why`` sentence introduces them).
    """

    headline: str
    why: list[str] = field(default_factory=list)
    proba: list[dict] = field(default_factory=list)
    risks: list[dict] = field(default_factory=list)
    costs: dict = field(default_factory=dict)
    branches: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "headline": self.headline,
            "why": list(self.why),
            "proba": [dict(p) for p in self.proba],
            "risks": [dict(r) for r in self.risks],
            "costs": dict(self.costs),
            "branches": list(self.branches),
        }


def advice_headline(advice: Advice | None) -> str:
    """The advice in a few words: "order TSH", "conclude sick", "refer"; "" for none."""
    return "" if advice is None else advice.headline


def _test_words(advice: Advice) -> str:
    """The ordered test's name: its label as stored, else by its index."""
    return advice.test_label or advice.test_name_of(advice.test_index)


def expected_saving(advice: Advice) -> float | None:
    """What ordering the advised test is expected to save, in dollars, as the explanation
    says it (the difference of the two rounded figures it shows); None for any other advice, or
    when the model's evidence states no such figures.

    A model that weighs risks (price included) saves its least risk of stopping (concluding or
    referring) less the test's; a model of expected costs saves its expected cost of concluding
    now less what it expects once the result is known. The screen's words, the CDS Hooks cards
    and anything else that quotes a saving read it here.
    """
    evidence = advice.evidence
    if advice.kind != "extract" or evidence is None:
        return None
    if evidence.risks:
        chosen = next(
            (r.risk for r in evidence.risks if r.kind == "extract" and r.test == advice.test_index),
            None,
        )
        stop = [r.risk for r in evidence.risks if r.kind != "extract"]
        if chosen is None or not stop:
            return None
        return cents(cents(min(stop)) - cents(chosen))
    if evidence.conclude_cost is None or evidence.cost_after is None:
        return None
    return cents(cents(evidence.conclude_cost) - cents(evidence.cost_after))


def _risk_rows(risks: Sequence[Risk], best_class: int | None, names: Advice) -> list[dict]:
    """The model's risk of each action it weighed, worded; ``lowest`` marks the first least one."""
    rows: list[dict[str, Any]] = []
    for risk in risks:
        kind, test = risk.kind, risk.test
        if kind == "extract":
            action, key = f"Order {names.test_name_of(test)}", f"extract:{test}"
        elif kind == "reject":
            action, key = "Refer", "reject"
        else:
            action, key = f"Classify as {names.class_name(best_class)}", "classify"
        value = float(risk.risk)
        rows.append(
            {
                "action": action,
                "risk": value,
                "money": format_money(value),
                "key": key,
                "lowest": False,
            }
        )
    if rows:
        min(rows, key=lambda row: row["risk"])["lowest"] = True
    return rows


def _cost_grid(costs: DecisionCosts | None) -> dict:
    """The error costs in force as labelled rows (actual class x concluded class) for the screen."""
    if costs is None or not costs.matrix:
        return {}
    labels = list(costs.class_labels)
    refer = costs.reject_cost
    refer_row = (
        list(refer)
        if isinstance(refer, tuple)
        else [refer] * len(labels)
        if refer is not None
        else None
    )
    rows = []
    for i, values in enumerate(costs.matrix):
        rows.append(
            {
                "label": labels[i] if i < len(labels) else f"class {i}",
                "cells": [format_money(v) for v in values],
                "refer": None if refer_row is None else format_money(refer_row[i]),
            }
        )
    return {
        "basis": costs.basis or "expected_cost",
        "class_labels": labels,
        "rows": rows,
        "refer_priced": refer_row is not None,
        "penalty": None if costs.penalty is None else format_money(costs.penalty),
        "reward": None if costs.reward is None else format_money(costs.reward),
    }


def _price_words(cost: Any) -> str:
    if cost is not None and float(cost) == 0:
        return "free for this patient"
    return f"{format_money(cost)} for this patient now"


def _how_sure(proba: Sequence[float], support: Any, names: Advice, where: str) -> str:
    """ "How sure: normal 82%, hypothyroid 12% ..., from 40 past patients <where>." """
    ranked = sorted(range(len(proba)), key=lambda i: -float(proba[i]))
    shown = [
        f"{names.class_name(i)} {percent(proba[i])}" for i in ranked if float(proba[i]) >= 0.0005
    ]
    mix = ", ".join(shown) if shown else "no class stands out"
    if support is None:
        return f"How sure: {mix}."
    return f"How sure: {mix}, from {patients(float(support))} {where}."


#: Branches of a split patient named one by one; the smaller rest are summed.
MAX_BRANCHES = 4


def _branches(advice: Advice) -> tuple[str, list[str]]:
    """How an unavailable test was handled: a sentence, then each branch's share in words."""
    rows: Sequence[BranchRow] = advice.branches or ()
    if len(rows) < 2:
        return "", []
    split: list[str] = []
    for row in rows:
        for test in row.split_tests:
            if test not in split:
                split.append(test)
    parts = []
    shown, rest = rows[:MAX_BRANCHES], rows[MAX_BRANCHES:]
    for row in shown:
        where = " and ".join(row.conditions) or "this branch"
        if row.waits_on:
            then = f"still waiting on {row.waits_on}"
        elif row.mix:
            then = f"most of them {row.mix[0][0]}"
        else:
            then = "no past patients"
        parts.append(
            f"{where}: {percent(row.share)} of this patient ({patients(row.support)}, {then})"
        )
    if rest:
        parts.append(
            f"{len(rest)} smaller branches: {percent(sum(r.share for r in rest))} "
            f"of this patient together ({patients(sum(r.support for r in rest))})"
        )
    tests = " and ".join(split) if split else "A test"
    verb = "were" if len(split) > 1 else "was"
    return (
        f"{tests} {verb} not available (or gave no result), so the model followed this patient "
        "down every branch, in the shares past patients took, and combined them:",
        parts,
    )


def _unavailable(advice: Advice, basis: str | None) -> list[str]:
    """Tests marked unavailable that did not split the patient: how the model did without them."""
    split = {t for row in advice.branches or () for t in row.split_tests}
    rest = [label for label in advice.unavailable_labels if label not in split]
    if not rest:
        return []
    names = " and ".join(rest)
    verb = "are" if len(rest) > 1 else "is"
    if basis == "risk":
        return [
            f"{names} {verb} marked unavailable: the model weighs only the tests that can still "
            "be done."
        ]
    pronoun = "them" if len(rest) > 1 else "it"
    return [f"{names} {verb} marked unavailable: the model advises without {pronoun}."]


def _against_the_odds(
    position: int | None,
    proba: Sequence[float],
    class_costs: Sequence[float],
    costs: DecisionCosts | None,
    names: Advice,
) -> list[str]:
    """Why a conclusion goes against the more likely class: the error costs that justify it."""
    if position is None or not proba or position >= len(proba) or not class_costs:
        return []
    likely = max(range(len(proba)), key=lambda i: float(proba[i]))
    if likely == position or float(proba[likely]) <= float(proba[position]):
        return []
    chosen, other = names.class_name(position), names.class_name(likely)
    sentence = (
        f"{chosen} is less likely ({percent(proba[position])}) than {other} "
        f"({percent(proba[likely])}), but concluding {other} would cost "
        f"{format_money(class_costs[likely])} in expected errors against "
        f"{format_money(class_costs[position])} for {chosen}"
    )
    matrix = costs.matrix if costs is not None else ()
    if len(matrix) > max(position, likely):
        missed = matrix[position][likely]  # actual: chosen, concluded: the likely class
        false_alarm = matrix[likely][position]
        sentence += (
            f": concluding {other} for a patient who is {chosen} costs {format_money(missed)}, "
            f"concluding {chosen} for a patient who is {other} costs {format_money(false_alarm)} "
            "(see the error costs below)"
        )
    return [sentence + "."]


# --------------------------------------------------------------- expected cost
def _explain_expected_cost(advice: Advice, evidence: Evidence | None) -> tuple[str, list[str]]:
    """Trees and other models that conclude the class of least expected cost."""
    kind = advice.kind
    costs = advice.costs
    why: list[str] = []
    proba = list(advice.proba or (evidence.proba if evidence else ()))
    class_costs = list(evidence.class_costs if evidence else ())
    if kind == "extract":
        test = _test_words(advice)
        cost = advice.cost
        why.append(f"Order {test}: {_price_words(cost)}.")
        now = evidence.conclude_cost if evidence else None
        after = evidence.cost_after if evidence else None
        conclusion = advice.conclusion_now
        if conclusion is not None and conclusion.kind == "reject":
            stop = f"Referring now would cost {format_money(now)} in expectation"
        elif conclusion is not None and conclusion.label is not None:
            stop = (
                f"Concluding {conclusion.label} now would cost {format_money(now)} "
                "in expected errors"
            )
        else:
            stop = f"Concluding now would cost {format_money(now)} in expected errors"
        saving = expected_saving(advice)
        if now is not None and after is not None and saving is not None:
            price = cents(cost or 0.0)
            if saving > 0:
                tail = (
                    "at no charge"
                    if price == 0
                    else f"more than its price of {format_money(price)}"
                    if saving > price
                    else f"less than its price of {format_money(price)}: the model orders it "
                    "for the tests it leads to"
                )
                why.append(
                    f"{stop}; once {test} is known it expects {format_money(after)}, so the "
                    f"result is expected to save {format_money(saving)}, {tail}."
                )
            else:
                why.append(
                    f"{stop}; {test}'s result alone is not expected to lower that "
                    f"(about {format_money(after)} once known): the model orders it for the "
                    "tests it leads to."
                )
        elif now is not None:
            why.append(f"{stop}.")
        headline = f"Order {test}"
    elif kind == "classify":
        label = advice.label or advice.class_name(advice.label_position)
        position = advice.label_position
        why.append(
            f"Conclude {label}: nothing more to pay for this patient; the expected cost of an "
            f"error is {format_money(advice.expected_cost)}."
        )
        why += _against_the_odds(position, proba, class_costs, costs, advice)
        if evidence is not None and evidence.refer_cost is not None:
            why.append(
                f"Referring instead would cost {format_money(evidence.refer_cost)} in expectation."
            )
        headline = str(label)
    else:
        best = evidence.best_class if evidence else None
        if best is not None and class_costs:
            why.append(
                "Refer the patient: a referral costs "
                f"{format_money(advice.expected_cost)} in expectation, less than the "
                f"cheapest conclusion, {advice.class_name(best)}, at "
                f"{format_money(class_costs[best])} in expected errors."
            )
        else:
            why.append(
                f"Refer the patient: a referral costs {format_money(advice.expected_cost)} "
                "in expectation."
            )
        headline = "Refer to a specialist"
    branches = advice.branches or ()
    if proba and len(branches) > 1:
        # A split patient rests on every branch it reached: their patients add up.
        total = sum(float(row.support) for row in branches)
        why.append(_how_sure(proba, total, advice, "on the branches below together"))
    elif proba:
        support = evidence.support if evidence else None
        why.append(_how_sure(proba, support, advice, "who reached the same point"))
    why += _ensemble_words(advice, evidence)
    return headline, why


def _ensemble_words(advice: Advice, evidence: Evidence | None) -> list[str]:
    """Forests and boosted ensembles: how many member trees wait on the ordered test.

    ``waiting`` of ``members`` are tree counts for a forest, vote weights for
    boosting (then worded as a share of the vote); absent for single models.
    """
    if evidence is None or evidence.waiting is None or not evidence.members:
        return []
    waiting, members = float(evidence.waiting), float(evidence.members)
    counted = waiting.is_integer() and members.is_integer()
    if advice.kind == "extract":
        test = _test_words(advice)
        if counted:
            trees = "tree is" if waiting == 1 else "trees are"
            return [f"{int(waiting)} of the model's {int(members)} {trees} waiting on {test}."]
        return [f"Trees holding {percent(waiting / members)} of the vote are waiting on {test}."]
    if waiting == 0:
        every = f"all {int(members)} trees" if counted else "every tree"
        return [f"The model concludes because {every} reached a leaf for this patient."]
    return []


# ------------------------------------------------------------------------ risk
def _explain_risk(advice: Advice, evidence: Evidence, rows: list[dict]) -> tuple[str, list[str]]:
    """The conditioned-loss model: the action of least risk, every number one of its risks."""
    kind = advice.kind
    costs = advice.costs or DecisionCosts()
    by_key = {row["key"]: row for row in rows}
    why: list[str] = []
    classify, refer = by_key.get("classify"), by_key.get("reject")
    tests = [row for row in rows if row["key"].startswith("extract:")]
    best_test = min(tests, key=lambda row: row["risk"]) if tests else None
    conclude = min((r for r in (classify, refer) if r is not None), key=lambda r: r["risk"])
    conclude_words = (
        f"concluding {advice.class_name(evidence.best_class)} now"
        if conclude is classify
        else "referring now"
    )
    if kind == "extract":
        test = _test_words(advice)
        chosen = by_key.get(f"extract:{advice.test_index}")
        why.append(f"Order {test}: {_price_words(advice.cost)}.")
        saving = expected_saving(advice)
        if chosen is not None and saving is not None:
            why.append(
                f"Its risk, {chosen['money']} with the price included, is the lowest: "
                f"{conclude_words} risks {conclude['money']}, so ordering {test} is expected "
                f"to save {format_money(saving)}."
            )
        headline = f"Order {test}"
    elif kind == "classify":
        label = advice.label or advice.class_name(advice.label_position)
        why.append(f"Conclude {label}: nothing more to pay for this patient.")
        others = [r for r in ([refer] + ([best_test] if best_test else [])) if r is not None]
        why.append(
            f"Its risk, {classify['money'] if classify else '–'}, is the lowest: "
            + ", ".join(f"{_lower_first(r['action'])} risks {r['money']}" for r in others)
            + "."
        )
        headline = str(label)
    else:
        priced = costs.reject_cost if costs.basis else evidence.refer_cost
        charge = (
            f"a referral is charged {format_money(advice.expected_cost)} in expectation"
            if priced is not None
            else "referral is not priced for this model (the error costs it was trained with "
            "have no referral cost), so it adds nothing to this patient's bill"
        )
        why.append(f"Refer the patient: {charge}.")
        others = [r for r in ([classify] + ([best_test] if best_test else [])) if r is not None]
        why.append(
            f"Its risk, {refer['money'] if refer else '–'}, is the lowest: "
            + ", ".join(f"{_lower_first(r['action'])} risks {r['money']}" for r in others)
            + "."
            + ("" if best_test else " No priced test is left to order.")
        )
        headline = "Refer to a specialist"
    if costs.penalty is not None and costs.reward is not None:
        why.append(
            "A risk is the model's expected loss in dollars: the test's price, plus "
            f"{format_money(costs.penalty)} for each expected wrong decision, minus "
            f"{format_money(costs.reward)} for each expected right one; the lowest is advised."
        )
        if any(cents(row["risk"]) < 0 for row in rows):
            why.append(
                "A risk below zero is an expected gain: the reward for a likely right decision "
                "outweighs the penalty for a possible wrong one, with nothing left to pay."
            )
        why += _refer_against_its_charge(refer, costs)
    proba = list(evidence.proba)
    if proba:
        why.append(_how_sure(proba, evidence.support, advice, "like this one in its training data"))
    return headline, why


def _refer_against_its_charge(refer: Mapping[str, Any] | None, costs: DecisionCosts) -> list[str]:
    """Why the risk of referring is not the referral's charge in the error-cost grid.

    The conditioned-loss model weighs a referral by its own loss (PENALTY when the tree
    now, or one a test away, would have named the class; minus REWARD otherwise), never by
    the charge a referral is billed.  The share of wrong referrals is the one that gives
    the model's risk: ``risk = w PENALTY - (1 - w) REWARD``.
    """
    charge = costs.reject_cost
    if refer is None or charge is None or costs.penalty is None or costs.reward is None:
        return []
    penalty, reward = float(costs.penalty), float(costs.reward)
    charges = sorted({cents(c) for c in (charge if isinstance(charge, tuple) else [charge])})
    billed = (
        format_money(charges[0])
        if len(charges) == 1
        else f"{format_money(charges[0])} to {format_money(charges[-1])} by class"
    )
    wrong = (float(refer["risk"]) + reward) / (penalty + reward) if penalty + reward > 0 else 0.0
    return [
        f"Refer's risk, {refer['money']}, is not what a referral is charged ({billed} in the "
        "error costs below, which the bill uses and the model does not weigh): the model counts "
        "a referral as a wrong decision whenever the tree now or a tree one test away would "
        f"have named the patient's class, here {percent(wrong)} of the time, so its risk is "
        f"{percent(wrong)} of {format_money(penalty)} less {percent(1.0 - wrong)} of "
        f"{format_money(reward)}, about {refer['money']}."
    ]


def _explain_free(advice: Advice, evidence: Evidence | None) -> tuple[str, list[str]]:
    """A conditioned-loss question asked before any risk is weighed (it costs nothing)."""
    test = _test_words(advice)
    why = [
        f"Ask {test}: {_price_words(advice.cost)}. Free answers come first; the model "
        "weighs the risk of each priced test once they are in."
    ]
    proba = list(evidence.proba if evidence else ())
    if proba and advice.known_count == 0:
        # Nothing answered: the tree weighs every branch, so no group of patients is "like"
        # this one yet; the mix is the model's starting estimate.
        ranked = sorted(range(len(proba)), key=lambda i: -float(proba[i]))
        mix = ", ".join(
            f"{advice.class_name(i)} {percent(proba[i])}"
            for i in ranked
            if float(proba[i]) >= 0.0005
        )
        why.append(f"Before any answer, the model's starting estimate: {mix}.")
    elif proba:
        support = evidence.support if evidence else None
        why.append(_how_sure(proba, support, advice, "like this one in its training data"))
    return f"Ask {test}", why


def explain(advice: Advice | None) -> Explanation | None:
    """The ``advice`` (see module docstring) in words; None for no advice."""
    if advice is None:
        return None
    evidence = advice.evidence
    basis = advice.costs.basis if advice.costs else None
    risks = _risk_rows(evidence.risks, evidence.best_class, advice) if evidence is not None else []
    if risks:
        assert evidence is not None  # the risks are the evidence's
        headline, why = _explain_risk(advice, evidence, risks)
    elif basis == "risk" and advice.kind == "extract":
        headline, why = _explain_free(advice, evidence)
    else:
        headline, why = _explain_expected_cost(advice, evidence)
    split, branches = _branches(advice)
    why += _unavailable(advice, basis)
    if split:
        why.append(split)
    proba = advice.proba if advice.kind != "extract" else (evidence.proba if evidence else None)
    proba_rows = [
        {"label": advice.class_name(i), "p": float(p), "percent": round(100.0 * float(p), 1)}
        for i, p in enumerate(proba or [])
    ]
    return Explanation(
        headline=headline,
        why=why,
        proba=proba_rows,
        risks=risks,
        costs=_cost_grid(advice.costs),
        branches=branches,
    )
