"""A dataset's tests to a price snapshot, and a snapshot back to ``learners.CostModel``.

Pure: the tests come already read (``selectors.costs.cost_snapshot`` reads them).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.core.exceptions import ValidationError

from learners import CostModel
from learners.derived import DerivedFormula

from .vocabulary import vocabulary_snapshot

__all__ = ["cost_model_from_snapshot", "cost_snapshot_of", "formulas_from_snapshot"]


def cost_snapshot_of(dataset, tests: Sequence) -> dict:
    """``dataset``'s prices as ``CostModel.to_dict()`` plus ``names`` (test names).

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
    snapshot = model.to_dict()
    snapshot["names"] = [t.name for t in tests]
    # What the codes mean (class names, nominal choices), so later edits never rewrite history.
    snapshot["vocabulary"] = vocabulary_snapshot(dataset, tests)
    # How derived values follow from their inputs, kept with the prices a model is trained with.
    # Which prices the automatic generator made (paper 000 §4.1): shown as "generated".
    snapshot["generated"] = [t.index for t in tests if t.price_generated]
    snapshot["formulas"] = {
        t.name: {"formula": t.formula, "tolerance": t.formula_tolerance}
        for t in tests
        if t.derived_from and t.formula
    }
    return snapshot


def cost_model_from_snapshot(snapshot: dict) -> CostModel:
    """The CostModel a trained model was trained with (names, formulas, vocabulary ignored)."""
    return CostModel.from_dict(
        {
            k: v
            for k, v in snapshot.items()
            if k not in ("names", "formulas", "vocabulary", "generated")
        }
    )


def formulas_from_snapshot(snapshot: dict) -> dict[int, DerivedFormula]:
    """Derived test index -> its formula, as snapshotted with a model's prices.

    A model trained before formulas existed (no ``formulas`` key), or a derived
    test without one, has none: its value is then typed in with its inputs.
    """
    names = list(snapshot.get("names") or [])
    derived = {int(k): [names[i] for i in v] for k, v in (snapshot.get("derived") or {}).items()}
    result = {}
    for name, spec in (snapshot.get("formulas") or {}).items():
        if name not in names or names.index(name) not in derived:
            continue
        index = names.index(name)
        try:
            result[index] = DerivedFormula.from_dict(spec, allowed=derived[index])
        except ValueError as exc:
            raise ValidationError(f"The stored formula of {name} is invalid: {exc}.") from None
    return result
