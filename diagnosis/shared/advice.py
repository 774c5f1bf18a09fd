"""The advice a case screen shows and a step stores, as a typed :class:`Advice`.

The advice is the model's own action (``action.to_dict()``: ``Extract`` / ``Classify`` /
``Reject`` with its :class:`learners.policy.Evidence`) plus the names it needs (class and test
labels), the error costs the model decided with (:class:`DecisionCosts`), where a patient split
by an unavailable test went (:class:`BranchRow`) and what concluding now would be
(:class:`Conclusion`).  ``selectors.cases.advice_for`` builds it; a step stores
:meth:`Advice.to_json` in ``DiagnosisStep.advice`` and both APIs answer with it, so the JSON
shape is the one every stored row has.  :meth:`Advice.from_json` reads a stored row back,
checking every field; it also reads the rows written before a key existed (no
``known_count``, ``conclusion_now``, ``costs``, ``branches``, ``unavailable_labels``; evidence
without ``refers_now``, ``waiting``, ``members``) and the first advice shape (before the
evidence: ``reason``, ``risks`` and ``proba`` as ``{"label", "p"}`` rows), whose headline reads
as it did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from learners import ModelDocumentError
from learners._document import mapping, no_unknown_fields, number
from learners.policy import Evidence, Risk

__all__ = [
    "Advice",
    "BranchRow",
    "Conclusion",
    "DecisionCosts",
    "ModelDocumentError",
    "evidence_from_json",
]

Kind = Literal["extract", "classify", "reject"]
KINDS: tuple[Kind, ...] = ("extract", "classify", "reject")

_EVIDENCE_KEYS = (
    "proba",
    "support",
    "class_costs",
    "refer_cost",
    "conclude_cost",
    "best_class",
    "refers_now",
    "cost_after",
    "nodes",
    "risks",
    "waiting",
    "members",
)
#: The keys of the action's own ``to_dict()``, by kind, in its order.
_ACTION_KEYS: dict[str, tuple[str, ...]] = {
    "extract": ("kind", "test", "cost", "evidence"),
    "classify": ("kind", "label", "proba", "expected_cost", "evidence"),
    "reject": ("kind", "proba", "expected_cost", "evidence"),
}
#: The names the app adds, in the order it has always written them.
_NAME_KEYS = (
    "test_index",
    "test_name",
    "test_label",
    "label_index",
    "label",
    "label_position",
    "class_labels",
    "test_labels",
)
_LATER_KEYS = ("conclusion_now", "known_count", "unavailable_labels", "costs", "branches")
#: Keys of the first advice shape, before the evidence: read, not kept.
_FIRST_SHAPE_KEYS = ("reason", "risks")
_KNOWN_KEYS = frozenset(
    [k for keys in _ACTION_KEYS.values() for k in keys]
    + list(_NAME_KEYS + _LATER_KEYS + _FIRST_SHAPE_KEYS)
)


# ------------------------------------------------------------------ readers
def _fail(where: str, expected: str, value: Any) -> ModelDocumentError:
    return ModelDocumentError(f"{where}: expected {expected}, got {value!r:.60}")


def _int(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _fail(where, "a whole number", value)
    return value


def _opt_int(value: Any, where: str) -> int | None:
    return None if value is None else _int(value, where)


def _opt_number(value: Any, where: str) -> float | None:
    return None if value is None else number(value, where)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(where, "text", value)
    return value


def _opt_text(value: Any, where: str) -> str | None:
    return None if value is None else _text(value, where)


def _list(value: Any, where: str) -> list:
    if not isinstance(value, list):
        raise _fail(where, "a list", value)
    return value


def _texts(value: Any, where: str) -> tuple[str, ...]:
    return tuple(_text(v, f"{where}[{i}]") for i, v in enumerate(_list(value, where)))


def _numbers(value: Any, where: str) -> tuple[float, ...]:
    return tuple(number(v, f"{where}[{i}]") for i, v in enumerate(_list(value, where)))


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(where, "true or false", value)
    return value


def _number_or_numbers(value: Any, where: str) -> float | tuple[float, ...] | None:
    if isinstance(value, list):
        return _numbers(value, where)
    return _opt_number(value, where)


def _plain(value: float | tuple[float, ...] | None) -> float | list[float] | None:
    return list(value) if isinstance(value, tuple) else value


# ----------------------------------------------------------------- evidence
def _risk(data: Any, where: str) -> Risk:
    data = mapping(data, where)
    no_unknown_fields(data, ("kind", "test", "risk"), where)
    kind = _text(data.get("kind"), f"{where}.kind")
    if kind not in KINDS:
        raise _fail(f"{where}.kind", "extract, classify or reject", kind)
    return Risk(
        kind=kind,
        risk=number(data.get("risk"), f"{where}.risk"),
        test=_opt_int(data.get("test"), f"{where}.test"),
    )


def _node(value: Any, where: str) -> tuple[int, float]:
    pair = _list(value, where)
    if len(pair) != 2:
        raise _fail(where, "[node, share]", value)
    return _int(pair[0], f"{where}[0]"), number(pair[1], f"{where}[1]")


def evidence_from_json(data: Any, where: str = "evidence") -> Evidence:
    """:class:`learners.policy.Evidence` from its ``to_dict()``; what it derives
    (``conclude_cost``, ``best_class``, ``refers_now``) is derived again from the numbers."""
    data = mapping(data, where)
    no_unknown_fields(data, _EVIDENCE_KEYS, where)
    for key, check in (("best_class", _opt_int), ("conclude_cost", _opt_number)):
        check(data.get(key), f"{where}.{key}")
    if data.get("refers_now") is not None:
        _bool(data["refers_now"], f"{where}.refers_now")
    class_costs = _numbers(data.get("class_costs"), f"{where}.class_costs")
    if not class_costs:
        raise _fail(f"{where}.class_costs", "one expected cost per class", class_costs)
    return Evidence(
        proba=_numbers(data.get("proba"), f"{where}.proba"),
        support=number(data.get("support"), f"{where}.support"),
        class_costs=class_costs,
        refer_cost=_opt_number(data.get("refer_cost"), f"{where}.refer_cost"),
        cost_after=_opt_number(data.get("cost_after"), f"{where}.cost_after"),
        nodes=tuple(
            _node(v, f"{where}.nodes[{i}]")
            for i, v in enumerate(_list(data.get("nodes", []), f"{where}.nodes"))
        ),
        risks=tuple(
            _risk(v, f"{where}.risks[{i}]")
            for i, v in enumerate(_list(data.get("risks", []), f"{where}.risks"))
        ),
        waiting=_opt_number(data.get("waiting"), f"{where}.waiting"),
        members=_opt_number(data.get("members"), f"{where}.members"),
    )


# ------------------------------------------------------------- the app's parts
@dataclass(frozen=True)
class Conclusion:
    """What the model concludes from its evidence had the patient stopped now (an order's
    ``conclusion_now``): refer, or the class ``label_index`` named ``label``."""

    kind: Literal["classify", "reject"]
    label_index: int | None = None
    label: str | None = None

    @classmethod
    def from_json(cls, data: Any, where: str = "conclusion_now") -> Conclusion:
        data = mapping(data, where)
        no_unknown_fields(data, ("kind", "label_index", "label"), where)
        kind = data.get("kind")
        if kind not in ("classify", "reject"):
            raise _fail(f"{where}.kind", "classify or reject", kind)
        return cls(
            kind=kind,
            label_index=_opt_int(data.get("label_index"), f"{where}.label_index"),
            label=_opt_text(data.get("label"), f"{where}.label"),
        )

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "label_index": self.label_index, "label": self.label}


@dataclass(frozen=True)
class DecisionCosts:
    """The error costs a model decides with (``selectors.advice_context.decision_costs``).

    ``basis`` ``"expected_cost"``: the class of least expected cost under ``matrix`` (rows:
    actual, columns: concluded), referral at ``reject_cost`` (None: never refers);
    ``"risk"``: the conditioned-loss model's own loss (``penalty``, ``reward``).  ``basis``
    None: a model without an error matrix (stored as ``{}``).
    """

    basis: Literal["expected_cost", "risk"] | None = None
    class_labels: tuple[str, ...] = ()
    matrix: tuple[tuple[float, ...], ...] = ()
    reject_cost: float | tuple[float, ...] | None = None
    penalty: float | None = None
    reward: float | None = None

    @classmethod
    def from_json(cls, data: Any, where: str = "costs") -> DecisionCosts:
        data = mapping(data, where)
        if not data:
            return cls()
        keys = ("basis", "class_labels", "matrix", "reject_cost", "penalty", "reward")
        no_unknown_fields(data, keys, where)
        basis = data.get("basis")
        if basis not in ("expected_cost", "risk"):
            raise _fail(f"{where}.basis", "expected_cost or risk", basis)
        return cls(
            basis=basis,
            class_labels=_texts(data.get("class_labels"), f"{where}.class_labels"),
            matrix=tuple(
                _numbers(row, f"{where}.matrix[{i}]")
                for i, row in enumerate(_list(data.get("matrix"), f"{where}.matrix"))
            ),
            reject_cost=_number_or_numbers(data.get("reject_cost"), f"{where}.reject_cost"),
            penalty=_opt_number(data.get("penalty"), f"{where}.penalty"),
            reward=_opt_number(data.get("reward"), f"{where}.reward"),
        )

    def to_json(self) -> dict[str, Any]:
        if self.basis is None:
            return {}
        return {
            "basis": self.basis,
            "class_labels": list(self.class_labels),
            "matrix": [list(row) for row in self.matrix],
            "reject_cost": _plain(self.reject_cost),
            "penalty": self.penalty,
            "reward": self.reward,
        }


@dataclass(frozen=True)
class BranchRow:
    """One place a patient split by an unavailable test ended
    (``selectors.advice_context.branch_rows``): the node, the patient's ``share`` there, the
    past patients there (``support``, ``mix`` of (class, patients) largest first), the split
    edges taken in words (``conditions``), the tests that split it and the test an internal
    node still waits on (None at a leaf)."""

    node: int
    share: float
    support: float
    mix: tuple[tuple[str, float], ...] = ()
    conditions: tuple[str, ...] = ()
    split_tests: tuple[str, ...] = ()
    waits_on: str | None = None

    @classmethod
    def from_json(cls, data: Any, where: str = "branch") -> BranchRow:
        data = mapping(data, where)
        keys = ("node", "share", "support", "mix", "conditions", "split_tests", "waits_on")
        no_unknown_fields(data, keys, where)
        mix = []
        for i, pair in enumerate(_list(data.get("mix"), f"{where}.mix")):
            at = f"{where}.mix[{i}]"
            if not isinstance(pair, list) or len(pair) != 2:
                raise _fail(at, "[class, patients]", pair)
            mix.append((_text(pair[0], f"{at}[0]"), number(pair[1], f"{at}[1]")))
        return cls(
            node=_int(data.get("node"), f"{where}.node"),
            share=number(data.get("share"), f"{where}.share"),
            support=number(data.get("support"), f"{where}.support"),
            mix=tuple(mix),
            conditions=_texts(data.get("conditions"), f"{where}.conditions"),
            split_tests=_texts(data.get("split_tests"), f"{where}.split_tests"),
            waits_on=_opt_text(data.get("waits_on"), f"{where}.waits_on"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "share": self.share,
            "support": self.support,
            "mix": [[label, weight] for label, weight in self.mix],
            "conditions": list(self.conditions),
            "split_tests": list(self.split_tests),
            "waits_on": self.waits_on,
        }


# ------------------------------------------------------------------- advice
@dataclass(frozen=True)
class Advice:
    """The model's next action for one patient, with the names and context it is shown with.

    The action's numbers: ``kind``; ``test`` (its index) and ``cost`` (its price for this
    patient now) for an order; ``proba`` and ``expected_cost`` for a conclusion or a
    referral (a referral's ``proba`` may be None); ``evidence``.  The names: ``test_index``,
    ``test_name``, ``test_label`` (an order), ``label_index`` (class code), ``label`` (class
    name) and ``label_position`` (in the model's classes) for a conclusion;
    ``class_labels`` aligned with the model's class positions and ``test_labels`` (index
    as text -> label) for every test the action mentions.  Then ``conclusion_now`` (an
    order), ``known_count`` (results the advice rests on; None on rows stored before it was
    kept), ``unavailable_labels``, ``costs`` and ``branches`` (None: not stored with it).
    """

    kind: Kind
    evidence: Evidence | None = None
    test: int | None = None
    cost: float | None = None
    proba: tuple[float, ...] | None = None
    expected_cost: float | None = None
    test_index: int | None = None
    test_name: str | None = None
    test_label: str | None = None
    label_index: int | None = None
    label: str | None = None
    label_position: int | None = None
    class_labels: tuple[str, ...] = ()
    test_labels: Mapping[str, str] = field(default_factory=dict)
    conclusion_now: Conclusion | None = None
    known_count: int | None = None
    unavailable_labels: tuple[str, ...] = ()
    costs: DecisionCosts | None = None
    branches: tuple[BranchRow, ...] | None = None

    @classmethod
    def from_json(cls, data: Any, where: str = "advice") -> Advice:
        """The advice stored as ``data`` (see the module docstring for the shapes read);
        :class:`~learners.ModelDocumentError` (a ValueError) naming a malformed field."""
        data = mapping(data, where)
        no_unknown_fields(data, _KNOWN_KEYS, where)
        kind = data.get("kind")
        if kind not in KINDS:
            raise _fail(f"{where}.kind", "extract, classify or reject", kind)
        kind = cast(Kind, kind)
        evidence = data.get("evidence")
        test_labels = mapping(data.get("test_labels", {}), f"{where}.test_labels")
        test_index = _opt_int(data.get("test_index"), f"{where}.test_index")
        costs = data.get("costs")
        branches = data.get("branches")
        conclusion = data.get("conclusion_now")
        known_count = data.get("known_count")
        return cls(
            kind=kind,
            evidence=None
            if evidence is None
            else evidence_from_json(evidence, f"{where}.evidence"),
            # the first shape kept only the index
            test=_opt_int(data.get("test", test_index), f"{where}.test")
            if kind == "extract"
            else None,
            cost=_opt_number(data.get("cost"), f"{where}.cost"),
            proba=_proba(data.get("proba"), f"{where}.proba"),
            expected_cost=_opt_number(data.get("expected_cost"), f"{where}.expected_cost"),
            test_index=test_index,
            test_name=_opt_text(data.get("test_name"), f"{where}.test_name"),
            test_label=_opt_text(data.get("test_label"), f"{where}.test_label"),
            label_index=_opt_int(data.get("label_index"), f"{where}.label_index"),
            label=_opt_text(data.get("label"), f"{where}.label"),
            label_position=_opt_int(data.get("label_position"), f"{where}.label_position"),
            class_labels=_texts(data.get("class_labels", []), f"{where}.class_labels"),
            test_labels={
                str(k): _text(v, f"{where}.test_labels[{k!r}]") for k, v in test_labels.items()
            },
            conclusion_now=None
            if conclusion is None
            else Conclusion.from_json(conclusion, f"{where}.conclusion_now"),
            known_count=None if known_count is None else _int(known_count, f"{where}.known_count"),
            unavailable_labels=_texts(
                data.get("unavailable_labels", []), f"{where}.unavailable_labels"
            ),
            costs=None if costs is None else DecisionCosts.from_json(costs, f"{where}.costs"),
            branches=None
            if branches is None
            else tuple(
                BranchRow.from_json(row, f"{where}.branches[{i}]")
                for i, row in enumerate(_list(branches, f"{where}.branches"))
            ),
        )

    def to_json(self) -> dict[str, Any]:
        """The stored and answered JSON: the action's ``to_dict()`` keys for its kind, then
        the names, then what is known of the context, each in the order always written."""
        action: dict[str, Any] = {
            "kind": self.kind,
            "test": self.test,
            "cost": self.cost,
            "label": self.label,
            "proba": None if self.proba is None else list(self.proba),
            "expected_cost": self.expected_cost,
            "evidence": None if self.evidence is None else self.evidence.to_dict(),
        }
        document = {key: action[key] for key in _ACTION_KEYS[self.kind]}
        names = {
            "test_index": self.test_index,
            "test_name": self.test_name,
            "test_label": self.test_label,
            "label_index": self.label_index,
            "label": self.label,
            "label_position": self.label_position,
            "class_labels": list(self.class_labels),
            "test_labels": dict(self.test_labels),
        }
        for key in _NAME_KEYS:
            document.setdefault(key, names[key])  # a conclusion's label keeps its place
        if self.conclusion_now is not None:
            document["conclusion_now"] = self.conclusion_now.to_json()
        if self.known_count is not None:
            document["known_count"] = self.known_count
        if self.unavailable_labels:
            document["unavailable_labels"] = list(self.unavailable_labels)
        if self.costs is not None:
            document["costs"] = self.costs.to_json()
        if self.branches is not None:
            document["branches"] = [row.to_json() for row in self.branches]
        return document

    @property
    def headline(self) -> str:
        """The advice in a few words: "order TSH", "conclude sick", "refer"."""
        if self.kind == "extract":
            return f"order {self.test_label or self.test_name}"
        if self.kind == "classify":
            return f"conclude {self.label}"
        return "refer"

    def class_name(self, position: int | None) -> str:
        """The class at ``position`` in the model's classes, by the name stored with it."""
        if position is None:
            return "–"
        if 0 <= position < len(self.class_labels):
            return self.class_labels[position]
        return f"class {position}"

    def test_name_of(self, index: int | None) -> str:
        """Test ``index`` by the label stored with the advice."""
        if index is None:
            return "–"
        return self.test_labels.get(str(index), f"test {index}")


def _proba(value: Any, where: str) -> tuple[float, ...] | None:
    """A conclusion's probabilities; the first shape's ``{"label", "p"}`` rows read as ``p``."""
    if value is None:
        return None
    rows = _list(value, where)
    if rows and all(isinstance(row, Mapping) for row in rows):
        return tuple(number(row.get("p"), f"{where}[{i}].p") for i, row in enumerate(rows))
    return _numbers(rows, where)
