"""The prices a model is trained with, as a typed :class:`CostSnapshot`, and a dataset's tests
to one.

A trained model (and an experiment) keeps the prices it was trained with in a JSON column
(``cost_snapshot``): ``CostModel.to_dict()`` plus the app's own keys, ``names`` (the tests),
``vocabulary`` (what the codes mean), ``generated`` (prices the automatic generator made) and
``formulas`` (how derived tests follow from their inputs).  :meth:`CostSnapshot.from_json`
reads that document, checking every field, and :meth:`CostSnapshot.to_json` writes the same
document back; nothing else reads the column's keys.

Pure: the tests come already read (``selectors.costs.cost_snapshot`` reads them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError

from learners import CostModel, ModelDocumentError
from learners._document import cost_model, field, mapping, no_unknown_fields, number
from learners.derived import DerivedFormula

from .vocabulary import Vocabulary, vocabulary_snapshot

__all__ = ["CostSnapshot", "FormulaSpec", "ModelDocumentError", "cost_snapshot_of"]

#: The keys ``CostModel.to_dict()`` writes, in its order.
_PRICE_KEYS = ("costs", "discounted", "groups", "delayed", "derived", "free")
#: The app's keys, in the order a snapshot has always been written.
_APP_KEYS = ("names", "vocabulary", "generated", "formulas")


@dataclass(frozen=True)
class FormulaSpec:
    """A derived test's formula as snapshotted: its text and relative tolerance (not parsed:
    :meth:`CostSnapshot.derived_formulas` parses it against the test's inputs)."""

    text: str
    tolerance: float

    def to_json(self) -> dict[str, Any]:
        return {"formula": self.text, "tolerance": self.tolerance}


@dataclass(frozen=True)
class CostSnapshot:
    """The prices a model was trained with, and the app's words for them.

    ``vocabulary``, ``generated`` and ``formulas`` are None for a snapshot written before
    that key existed (it is then left out of :meth:`to_json` as well, so a stored row reads
    and writes back unchanged).
    """

    prices: CostModel
    names: tuple[str, ...]
    #: class names and nominal choices at training (None: trained before they were kept)
    vocabulary: Vocabulary | None = None
    #: indices of the tests whose price the automatic generator made
    generated: tuple[int, ...] | None = None
    #: derived test name -> its formula (a derived test without one is typed in)
    formulas: Mapping[str, FormulaSpec] | None = None

    @classmethod
    def from_json(cls, data: Any, where: str = "cost snapshot") -> CostSnapshot:
        """The snapshot stored as ``data``; :class:`~learners.ModelDocumentError` (a
        ValueError) naming the field when it is malformed."""
        data = mapping(data, where)
        no_unknown_fields(data, _PRICE_KEYS + _APP_KEYS, where)
        for key in _PRICE_KEYS:
            field(data, key, where)  # every snapshot has had all six
        prices = cost_model({k: data[k] for k in _PRICE_KEYS}, where)
        names = field(data, "names", where)
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ModelDocumentError(f"{where}.names: expected a list of test names")
        vocabulary = None
        if "vocabulary" in data:
            vocabulary = Vocabulary.from_json(data["vocabulary"], f"{where}.vocabulary")
        generated = None
        if "generated" in data:
            generated = _indices(data["generated"], f"{where}.generated", prices.n_features)
        formulas = None
        if "formulas" in data:
            formulas = {
                str(name): _formula(spec, f"{where}.formulas[{name!r}]")
                for name, spec in mapping(data["formulas"], f"{where}.formulas").items()
            }
        return cls(
            prices=prices,
            names=tuple(names),
            vocabulary=vocabulary,
            generated=generated,
            formulas=formulas,
        )

    def to_json(self) -> dict[str, Any]:
        """The stored document: ``CostModel.to_dict()`` and the app's keys, as always written."""
        document: dict[str, Any] = {**self.prices.to_dict(), "names": list(self.names)}
        if self.vocabulary is not None:
            document["vocabulary"] = self.vocabulary.to_json()
        if self.generated is not None:
            document["generated"] = list(self.generated)
        if self.formulas is not None:
            document["formulas"] = {name: spec.to_json() for name, spec in self.formulas.items()}
        return document

    def is_generated(self, index: int) -> bool:
        """Whether test ``index``'s price was made by the automatic generator."""
        return index in (self.generated or ())

    def derived_from(self, index: int) -> list[str]:
        """The names of the tests test ``index`` is derived from (empty for a test of its own)."""
        return [self.names[j] for j in self.prices.derived.get(index, ())]

    def derived_formulas(self) -> dict[int, DerivedFormula]:
        """Derived test index -> its formula, each checked against its inputs.

        A model trained before formulas existed, or a derived test without one, has none:
        its value is then typed in with its inputs.  A stored formula that no longer parses
        is a ``ValidationError`` naming the test.
        """
        names = list(self.names)
        result = {}
        for name, spec in (self.formulas or {}).items():
            if name not in names or names.index(name) not in self.prices.derived:
                continue
            index = names.index(name)
            try:
                result[index] = DerivedFormula.from_dict(
                    spec.to_json(), allowed=self.derived_from(index)
                )
            except ValueError as exc:
                raise ValidationError(f"The stored formula of {name} is invalid: {exc}.") from None
        return result

    def same_prices(self, other: CostSnapshot) -> bool:
        """Whether ``other`` prices the same tests the same way (prices, names, formulas); the
        words of the codes and the generated marks do not count."""
        return (self.prices, self.names, self.formulas) == (
            other.prices,
            other.names,
            other.formulas,
        )


def _indices(value: Any, where: str, n_features: int) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n_features for i in value
    ):
        raise ModelDocumentError(f"{where}: expected test indices 0 to {n_features - 1}")
    return tuple(value)


def _formula(spec: Any, where: str) -> FormulaSpec:
    spec = mapping(spec, where)
    no_unknown_fields(spec, ("formula", "tolerance"), where)
    text = field(spec, "formula", where)
    if not isinstance(text, str):
        raise ModelDocumentError(f"{where}.formula: expected the formula's text")
    tolerance = field(spec, "tolerance", where)
    number(tolerance, f"{where}.tolerance")  # its range is checked with the formula
    return FormulaSpec(text=text, tolerance=tolerance)  # as stored (a whole 0 stays 0)


def cost_snapshot_of(dataset, tests: Sequence) -> CostSnapshot:
    """``dataset``'s prices now, with the test names, words, generated marks and formulas.

    ``tests``: the dataset's tests in index order, each with its ``group`` at hand.
    """
    if not tests:
        raise ValidationError(f"Dataset {dataset.name!r} has no tests.")
    indices = [t.index for t in tests]
    if indices != list(range(len(tests))):
        raise ValidationError(
            f"Dataset {dataset.name!r}: test indices must be 0..{len(tests) - 1} without gaps, "
            f"got {indices}"
        )
    by_name = {t.name: t.index for t in tests}
    derived = {}
    for t in tests:
        if t.derived_from:
            missing = [n for n in t.derived_from if n not in by_name]
            if missing:
                raise ValidationError(
                    f"Test {t.name!r} is derived from unknown test(s) {', '.join(missing)}"
                )
            derived[t.index] = [by_name[n] for n in t.derived_from]
    try:
        model = CostModel(
            [t.price for t in tests],
            discounted=[t.discounted_price for t in tests],
            groups=[t.group.name if t.group_id else None for t in tests],
            delayed=[t.delayed for t in tests],
            derived=derived,
            free=[t.index for t in tests if t.price == 0 and not t.derived_from],
        )
    except ValueError as exc:
        raise ValidationError(f"Dataset {dataset.name!r}: {exc}") from None
    return CostSnapshot(
        prices=model,
        names=tuple(t.name for t in tests),
        # What the codes mean (class names, nominal choices), so later edits never rewrite
        # history.
        vocabulary=vocabulary_snapshot(dataset, tests),
        # Which prices the automatic generator made (paper 000 §4.1): shown as "generated".
        generated=tuple(t.index for t in tests if t.price_generated),
        # How derived values follow from their inputs, kept with the prices a model is
        # trained with.
        formulas={
            t.name: FormulaSpec(text=t.formula, tolerance=t.formula_tolerance)
            for t in tests
            if t.derived_from and t.formula
        },
    )
