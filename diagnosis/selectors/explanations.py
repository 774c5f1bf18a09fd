"""The model's advice in words: test names, class labels and money, from its numbers.

The one place the app turns an action and its :class:`learners.policy.Evidence`
into sentences.  It reads the advice dictionary stored with every step
(``action.to_dict()`` plus the names of the classes and tests it mentions,
the costs the model decides with and where a split patient went, see
:func:`diagnosis.selectors.cases.action_to_dict`), so an old step reads the
same tomorrow as it did when it was taken.  Nothing here decides or prices
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

from ..shared.money import format_money

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


class _Names:
    """Class and test names stored with the advice (positions and indices to words)."""

    def __init__(self, advice: Mapping[str, Any]) -> None:
        self.classes: Sequence[str] = list(advice.get("class_labels") or [])
        self.tests: Mapping[str, str] = dict(advice.get("test_labels") or {})

    def cls(self, position: int | None) -> str:
        if position is None:
            return "–"
        if 0 <= position < len(self.classes):
            return self.classes[position]
        return f"class {position}"

    def test(self, index: int | None) -> str:
        if index is None:
            return "–"
        return self.tests.get(str(index), f"test {index}")


def advice_headline(advice: Mapping[str, Any] | None) -> str:
    """The advice in a few words: "order TSH", "conclude sick", "refer"; "" for none."""
    if not advice:
        return ""
    kind = advice.get("kind")
    if kind == "extract":
        return f"order {advice.get('test_label') or advice.get('test_name')}"
    if kind == "classify":
        return f"conclude {advice.get('label')}"
    return "refer"


def _risk_rows(risks: Sequence[Mapping[str, Any]], evidence: Mapping, names: _Names) -> list[dict]:
    """The model's risk of each action it weighed, worded; ``lowest`` marks the first least one."""
    rows: list[dict[str, Any]] = []
    for risk in risks:
        kind, test = risk.get("kind"), risk.get("test")
        if kind == "extract":
            action, key = f"Order {names.test(test)}", f"extract:{test}"
        elif kind == "reject":
            action, key = "Refer", "reject"
        else:
            action, key = f"Classify as {names.cls(evidence.get('best_class'))}", "classify"
        value = float(risk["risk"])
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


def _cost_grid(costs: Mapping[str, Any] | None) -> dict:
    """The error costs in force as labelled rows (actual class x concluded class) for the screen."""
    if not costs or not costs.get("matrix"):
        return {}
    labels = list(costs.get("class_labels") or [])
    refer = costs.get("reject_cost")
    refer_row = (
        list(refer)
        if isinstance(refer, list)
        else [refer] * len(labels)
        if refer is not None
        else None
    )
    rows = []
    for i, values in enumerate(costs["matrix"]):
        rows.append(
            {
                "label": labels[i] if i < len(labels) else f"class {i}",
                "cells": [format_money(v) for v in values],
                "refer": None if refer_row is None else format_money(refer_row[i]),
            }
        )
    return {
        "basis": costs.get("basis", "expected_cost"),
        "class_labels": labels,
        "rows": rows,
        "refer_priced": refer_row is not None,
        "penalty": None if costs.get("penalty") is None else format_money(costs["penalty"]),
        "reward": None if costs.get("reward") is None else format_money(costs["reward"]),
    }


def _price_words(cost: Any) -> str:
    if cost is not None and float(cost) == 0:
        return "free for this patient"
    return f"{format_money(cost)} for this patient now"


def _how_sure(proba: Sequence[float], support: Any, names: _Names, where: str) -> str:
    """ "How sure: normal 82%, hypothyroid 12% ..., from 40 past patients <where>." """
    ranked = sorted(range(len(proba)), key=lambda i: -float(proba[i]))
    shown = [f"{names.cls(i)} {percent(proba[i])}" for i in ranked if float(proba[i]) >= 0.0005]
    mix = ", ".join(shown) if shown else "no class stands out"
    if support is None:
        return f"How sure: {mix}."
    return f"How sure: {mix}, from {patients(float(support))} {where}."


#: Branches of a split patient named one by one; the smaller rest are summed.
MAX_BRANCHES = 4


def _branches(advice: Mapping[str, Any]) -> tuple[str, list[str]]:
    """How an unavailable test was handled: a sentence, then each branch's share in words."""
    rows = advice.get("branches") or []
    if len(rows) < 2:
        return "", []
    split: list[str] = []
    for row in rows:
        for test in row.get("split_tests") or []:
            if test not in split:
                split.append(test)
    parts = []
    shown, rest = rows[:MAX_BRANCHES], rows[MAX_BRANCHES:]
    for row in shown:
        where = " and ".join(row.get("conditions") or []) or "this branch"
        mix = row.get("mix") or []
        if row.get("waits_on"):
            then = f"still waiting on {row['waits_on']}"
        elif mix:
            then = f"most of them {mix[0][0]}"
        else:
            then = "no past patients"
        parts.append(
            f"{where}: {percent(row['share'])} of this patient ({patients(row['support'])}, {then})"
        )
    if rest:
        parts.append(
            f"{len(rest)} smaller branches: {percent(sum(r['share'] for r in rest))} "
            f"of this patient together ({patients(sum(r['support'] for r in rest))})"
        )
    tests = " and ".join(split) if split else "A test"
    verb = "were" if len(split) > 1 else "was"
    return (
        f"{tests} {verb} not available (or gave no result), so the model followed this patient "
        "down every branch, in the shares past patients took, and combined them:",
        parts,
    )


def _unavailable(advice: Mapping[str, Any], basis: str | None) -> list[str]:
    """Tests marked unavailable that did not split the patient: how the model did without them."""
    split = {t for row in advice.get("branches") or [] for t in row.get("split_tests") or []}
    rest = [label for label in advice.get("unavailable_labels") or [] if label not in split]
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
    costs: Mapping[str, Any] | None,
    names: _Names,
) -> list[str]:
    """Why a conclusion goes against the more likely class: the error costs that justify it."""
    if position is None or not proba or position >= len(proba) or not class_costs:
        return []
    likely = max(range(len(proba)), key=lambda i: float(proba[i]))
    if likely == position or float(proba[likely]) <= float(proba[position]):
        return []
    chosen, other = names.cls(position), names.cls(likely)
    sentence = (
        f"{chosen} is less likely ({percent(proba[position])}) than {other} "
        f"({percent(proba[likely])}), but concluding {other} would cost "
        f"{format_money(class_costs[likely])} in expected errors against "
        f"{format_money(class_costs[position])} for {chosen}"
    )
    matrix = (costs or {}).get("matrix") or []
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
def _explain_expected_cost(
    advice: Mapping[str, Any], evidence: Mapping[str, Any], names: _Names
) -> tuple[str, list[str]]:
    """Trees and other models that conclude the class of least expected cost."""
    kind = advice.get("kind")
    costs = advice.get("costs") or {}
    why: list[str] = []
    proba = list(advice.get("proba") or evidence.get("proba") or [])
    class_costs = list(evidence.get("class_costs") or [])
    if kind == "extract":
        test = advice.get("test_label") or names.test(advice.get("test_index"))
        cost = advice.get("cost")
        why.append(f"Order {test}: {_price_words(cost)}.")
        now, after = evidence.get("conclude_cost"), evidence.get("cost_after")
        conclusion = advice.get("conclusion_now") or {}
        if conclusion.get("kind") == "reject":
            stop = f"Referring now would cost {format_money(now)} in expectation"
        elif conclusion.get("label") is not None:
            stop = (
                f"Concluding {conclusion['label']} now would cost {format_money(now)} "
                "in expected errors"
            )
        else:
            stop = f"Concluding now would cost {format_money(now)} in expected errors"
        if now is not None and after is not None:
            saving = cents(cents(now) - cents(after))
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
        label = advice.get("label") or names.cls(advice.get("label_position"))
        position = advice.get("label_position")
        why.append(
            f"Conclude {label}: nothing more to pay for this patient; the expected cost of an "
            f"error is {format_money(advice.get('expected_cost'))}."
        )
        why += _against_the_odds(position, proba, class_costs, costs, names)
        if evidence.get("refer_cost") is not None:
            why.append(
                f"Referring instead would cost {format_money(evidence['refer_cost'])} "
                "in expectation."
            )
        headline = str(label)
    else:
        best = evidence.get("best_class")
        if best is not None and class_costs:
            why.append(
                "Refer the patient: a referral costs "
                f"{format_money(advice.get('expected_cost'))} in expectation, less than the "
                f"cheapest conclusion, {names.cls(best)}, at "
                f"{format_money(class_costs[best])} in expected errors."
            )
        else:
            why.append(
                f"Refer the patient: a referral costs {format_money(advice.get('expected_cost'))} "
                "in expectation."
            )
        headline = "Refer to a specialist"
    branches = advice.get("branches") or []
    if proba and len(branches) > 1:
        # A split patient rests on every branch it reached: their patients add up.
        total = sum(float(row["support"]) for row in branches)
        why.append(_how_sure(proba, total, names, "on the branches below together"))
    elif proba:
        why.append(_how_sure(proba, evidence.get("support"), names, "who reached the same point"))
    why += _ensemble_words(advice, evidence, names)
    return headline, why


def _ensemble_words(
    advice: Mapping[str, Any], evidence: Mapping[str, Any], names: _Names
) -> list[str]:
    """Forests and boosted ensembles: how many member trees wait on the ordered test.

    ``waiting`` of ``members`` are tree counts for a forest, vote weights for
    boosting (then worded as a share of the vote); absent for single models.
    """
    waiting, members = evidence.get("waiting"), evidence.get("members")
    if waiting is None or not members:
        return []
    waiting, members = float(waiting), float(members)
    counted = waiting.is_integer() and members.is_integer()
    if advice.get("kind") == "extract":
        test = advice.get("test_label") or names.test(advice.get("test_index"))
        if counted:
            trees = "tree is" if waiting == 1 else "trees are"
            return [f"{int(waiting)} of the model's {int(members)} {trees} waiting on {test}."]
        return [f"Trees holding {percent(waiting / members)} of the vote are waiting on {test}."]
    if waiting == 0:
        every = f"all {int(members)} trees" if counted else "every tree"
        return [f"The model concludes because {every} reached a leaf for this patient."]
    return []


# ------------------------------------------------------------------------ risk
def _explain_risk(
    advice: Mapping[str, Any], evidence: Mapping[str, Any], names: _Names, rows: list[dict]
) -> tuple[str, list[str]]:
    """The conditioned-loss model: the action of least risk, every number one of its risks."""
    kind = advice.get("kind")
    costs = advice.get("costs") or {}
    by_key = {row["key"]: row for row in rows}
    why: list[str] = []
    classify, refer = by_key.get("classify"), by_key.get("reject")
    tests = [row for row in rows if row["key"].startswith("extract:")]
    best_test = min(tests, key=lambda row: row["risk"]) if tests else None
    conclude = min((r for r in (classify, refer) if r is not None), key=lambda r: r["risk"])
    conclude_words = (
        f"concluding {names.cls(evidence.get('best_class'))} now"
        if conclude is classify
        else "referring now"
    )
    if kind == "extract":
        test = advice.get("test_label") or names.test(advice.get("test_index"))
        chosen = by_key.get(f"extract:{advice.get('test_index')}")
        why.append(f"Order {test}: {_price_words(advice.get('cost'))}.")
        if chosen is not None:
            saving = cents(cents(conclude["risk"]) - cents(chosen["risk"]))
            why.append(
                f"Its risk, {chosen['money']} with the price included, is the lowest: "
                f"{conclude_words} risks {conclude['money']}, so ordering {test} is expected "
                f"to save {format_money(saving)}."
            )
        headline = f"Order {test}"
    elif kind == "classify":
        label = advice.get("label") or names.cls(advice.get("label_position"))
        why.append(f"Conclude {label}: nothing more to pay for this patient.")
        others = [r for r in ([refer] + ([best_test] if best_test else [])) if r is not None]
        why.append(
            f"Its risk, {classify['money'] if classify else '–'}, is the lowest: "
            + ", ".join(f"{_lower_first(r['action'])} risks {r['money']}" for r in others)
            + "."
        )
        headline = str(label)
    else:
        priced = costs.get("reject_cost") if costs else evidence.get("refer_cost")
        charge = (
            f"a referral is charged {format_money(advice.get('expected_cost'))} in expectation"
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
    if costs.get("penalty") is not None and costs.get("reward") is not None:
        why.append(
            "A risk is the model's expected loss in dollars: the test's price, plus "
            f"{format_money(costs['penalty'])} for each expected wrong decision, minus "
            f"{format_money(costs['reward'])} for each expected right one; the lowest is advised."
        )
        if any(cents(row["risk"]) < 0 for row in rows):
            why.append(
                "A risk below zero is an expected gain: the reward for a likely right decision "
                "outweighs the penalty for a possible wrong one, with nothing left to pay."
            )
        why += _refer_against_its_charge(refer, costs)
    proba = list(evidence.get("proba") or [])
    if proba:
        why.append(
            _how_sure(proba, evidence.get("support"), names, "like this one in its training data")
        )
    return headline, why


def _refer_against_its_charge(refer: Mapping[str, Any] | None, costs: Mapping) -> list[str]:
    """Why the risk of referring is not the referral's charge in the error-cost grid.

    The conditioned-loss model weighs a referral by its own loss (PENALTY when the tree
    now, or one a test away, would have named the class; minus REWARD otherwise), never by
    the charge a referral is billed.  The share of wrong referrals is the one that gives
    the model's risk: ``risk = w PENALTY - (1 - w) REWARD``.
    """
    charge = costs.get("reject_cost")
    if refer is None or charge is None:
        return []
    penalty, reward = float(costs["penalty"]), float(costs["reward"])
    charges = sorted({cents(c) for c in (charge if isinstance(charge, list) else [charge])})
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


def _explain_free(advice: Mapping[str, Any], evidence: Mapping[str, Any], names: _Names):
    """A conditioned-loss question asked before any risk is weighed (it costs nothing)."""
    test = advice.get("test_label") or names.test(advice.get("test_index"))
    why = [
        f"Ask {test}: {_price_words(advice.get('cost'))}. Free answers come first; the model "
        "weighs the risk of each priced test once they are in."
    ]
    proba = list(evidence.get("proba") or [])
    if proba and advice.get("known_count") == 0:
        # Nothing answered: the tree weighs every branch, so no group of patients is "like"
        # this one yet; the mix is the model's starting estimate.
        ranked = sorted(range(len(proba)), key=lambda i: -float(proba[i]))
        mix = ", ".join(
            f"{names.cls(i)} {percent(proba[i])}" for i in ranked if float(proba[i]) >= 0.0005
        )
        why.append(f"Before any answer, the model's starting estimate: {mix}.")
    elif proba:
        why.append(
            _how_sure(proba, evidence.get("support"), names, "like this one in its training data")
        )
    return f"Ask {test}", why


def explain(advice: Mapping[str, Any] | None) -> Explanation | None:
    """The stored ``advice`` (see module docstring) in words; None for no advice."""
    if not advice:
        return None
    names = _Names(advice)
    evidence: Mapping[str, Any] = advice.get("evidence") or {}
    costs = advice.get("costs") or {}
    risks = _risk_rows(evidence.get("risks") or [], evidence, names)
    if risks:
        headline, why = _explain_risk(advice, evidence, names, risks)
    elif costs.get("basis") == "risk" and advice.get("kind") == "extract":
        headline, why = _explain_free(advice, evidence, names)
    else:
        headline, why = _explain_expected_cost(advice, evidence, names)
    split, branches = _branches(advice)
    why += _unavailable(advice, costs.get("basis"))
    if split:
        why.append(split)
    kind = advice.get("kind")
    proba = advice.get("proba") if kind != "extract" else evidence.get("proba")
    proba_rows = [
        {"label": names.cls(i), "p": float(p), "percent": round(100.0 * float(p), 1)}
        for i, p in enumerate(proba or [])
    ]
    return Explanation(
        headline=headline,
        why=why,
        proba=proba_rows,
        risks=risks,
        costs=_cost_grid(costs),
        branches=branches,
    )
