"""The model's advice in words: test names, class labels and money, from its numbers.

The one place the app turns an action and its :class:`learners.policy.Evidence`
into sentences.  It reads the advice dictionary stored with every step
(``action.to_dict()`` plus the names of the classes and tests it mentions,
see :func:`diagnosis.selectors.cases.action_to_dict`), so an old step reads
the same tomorrow as it did when it was taken.  Nothing here decides or
prices anything: every number (expected costs, the best class, the cost once
a result is known, the risks) was computed by the model; this module only
words it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Explanation", "advice_headline", "explain", "money"]


def money(value: float | None) -> str:
    """``$1,234.50``; an en dash for no value."""
    return "–" if value is None else f"${float(value):,.2f}"


def _cases(support: float) -> str:
    """A training-case count in words; fractional under C4.5's missing-value shares."""
    if float(support).is_integer():
        n = int(support)
        return f"{n} training case{'' if n == 1 else 's'}"
    return f"about {support:.1f} training cases"


@dataclass(frozen=True)
class Explanation:
    """What the screen (and the API) shows about one piece of advice.

    ``why`` holds whole sentences; ``proba`` rows ``{"label", "p", "percent"}``
    aligned with the model's classes; ``risks`` rows ``{"action", "risk",
    "key", "lowest"}`` for a model that weighs the risk of every action (the
    conditioned-loss model), in the model's order.
    """

    headline: str
    why: list[str] = field(default_factory=list)
    proba: list[dict] = field(default_factory=list)
    risks: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "headline": self.headline,
            "why": list(self.why),
            "proba": [dict(p) for p in self.proba],
            "risks": [dict(r) for r in self.risks],
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
    rows = []
    for risk in risks:
        kind, test = risk.get("kind"), risk.get("test")
        if kind == "extract":
            action, key = f"Order {names.test(test)}", f"extract:{test}"
        elif kind == "reject":
            action, key = "Refer", "reject"
        else:
            action, key = f"Classify as {names.cls(evidence.get('best_class'))}", "classify"
        rows.append({"action": action, "risk": float(risk["risk"]), "key": key, "lowest": False})
    if rows:
        min(rows, key=lambda row: row["risk"])["lowest"] = True
    return rows


def _conclusion_now(advice: Mapping[str, Any]) -> str:
    """What the model would conclude if the patient stopped now, as a clause ("" if unknown)."""
    now = advice.get("conclusion_now")
    if not now:
        return ""
    if now.get("kind") == "reject":
        return "if you referred now"
    return f"if you concluded {now.get('label')} now"


def explain(advice: Mapping[str, Any] | None) -> Explanation | None:
    """The stored ``advice`` (see module docstring) in words; None for no advice.

    Extract: the price and how the expected cost of the conclusion falls once
    the result is known (``conclude_cost`` → ``cost_after``); Classify: the
    class, its probability and expected error cost (and referral's); Reject:
    referral's expected cost against the best class's.  Each ends with how
    many training cases stand behind the estimate.
    """
    if not advice:
        return None
    names = _Names(advice)
    evidence: Mapping[str, Any] = advice.get("evidence") or {}
    kind = advice.get("kind")
    why: list[str] = []
    if kind == "extract":
        test = advice.get("test_label") or names.test(advice.get("test_index"))
        cost = advice.get("cost")
        price = (
            "free for this patient"
            if cost is not None and float(cost) == 0
            else f"for {money(cost)}"
        )
        now, after = evidence.get("conclude_cost"), evidence.get("cost_after")
        clause = _conclusion_now(advice)
        if now is not None and after is not None and float(after) < float(now):
            why.append(
                f"Order {test} {price}: the expected cost of an error falls from {money(now)}"
                + (f" ({clause})" if clause else "")
                + f" to {money(after)} once the result is known."
            )
        elif now is not None and after is not None:
            # The model orders it for what lies further down its path, not this result alone.
            why.append(
                f"Order {test} {price}: the expected cost of an error is {money(now)}"
                + (f" ({clause})" if clause else "")
                + f", and about {money(after)} once this result alone is known; "
                "the tests it leads to are what the model expects to pay off."
            )
        elif now is not None:
            why.append(
                f"Order {test} {price}. The expected cost of an error is {money(now)}"
                + (f" {clause}" if clause else " if you concluded now")
                + "."
            )
        else:
            why.append(f"Order {test} {price}.")
        headline = f"Order {test}"
    elif kind == "classify":
        label = advice.get("label") or names.cls(advice.get("label_position"))
        proba = advice.get("proba") or []
        position = advice.get("label_position")
        p = (
            f" (p = {proba[position]:.2f})"
            if position is not None and position < len(proba)
            else ""
        )
        why.append(
            f"Conclude {label}{p}; expected error cost {money(advice.get('expected_cost'))}."
        )
        if evidence.get("refer_cost") is not None:
            why.append(
                f"Referring instead would cost {money(evidence['refer_cost'])} in expectation."
            )
        headline = str(label)
    else:
        best = evidence.get("best_class")
        costs = evidence.get("class_costs") or []
        if best is not None and costs:
            why.append(
                f"Refer: the expected cost of referring, {money(advice.get('expected_cost'))}, "
                f"is below that of the best class, {names.cls(best)} ({money(costs[best])})."
            )
        else:
            why.append(f"Refer: expected cost {money(advice.get('expected_cost'))}.")
        headline = "Refer to a specialist"
    support = evidence.get("support")
    if support:
        why.append(f"Based on {_cases(float(support))}.")
    proba = advice.get("proba") if kind != "extract" else evidence.get("proba")
    proba_rows = [
        {"label": names.cls(i), "p": float(p), "percent": round(100.0 * float(p), 1)}
        for i, p in enumerate(proba or [])
    ]
    return Explanation(
        headline=headline,
        why=why,
        proba=proba_rows,
        risks=_risk_rows(evidence.get("risks") or [], evidence, names),
    )
