"""Turney's test-cost files: the ``costs/`` folder beside a UCI dataset.

``.expense`` gives ``test: full, discounted`` (the discount applies when another test of
the same group was already done), ``.cost`` gives ``test: full``, ``.group`` assigns each
test a group (its first row lists the group symbols) and ``.delay`` says whether a result
is ``immediate`` or ``delayed``.  Tests are matched to the data's features by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from learners import CostModel

from .dataset import UCIFormatError, strip_comment

__all__ = ["read_costs"]


def read_costs(
    folder: Path,
    features: Sequence[str],
    *,
    aliases: Mapping[str, str] | None = None,
    derived: Mapping[str, tuple[str, ...]] | None = None,
    free: Iterable[str] = (),
) -> CostModel | None:
    """The :class:`learners.CostModel` of ``folder/costs``, or None when there is no such folder.

    Parameters
    ----------
    folder : Path
        The dataset folder (holding ``costs/``).
    features : sequence of str
        The data's feature names, in column order.
    aliases : mapping, optional
        Cost-file test name -> feature name, where the spellings differ.
    derived : mapping, optional
        Feature -> the features it is computed from; it costs their marginal price.
    free : iterable of str
        Features that cost nothing (e.g. history questions in paper 003's setting).
    """
    cost_folder = folder / "costs"
    if not cost_folder.is_dir():
        return None
    aliases = dict(aliases or {})
    derived = dict(derived or {})

    def only(suffix: str) -> Path | None:
        found = sorted(cost_folder.glob(f"*{suffix}"))
        if len(found) > 1:
            raise UCIFormatError(
                f"{cost_folder}: several {suffix} files: {[f.name for f in found]}"
            )
        return found[0] if found else None

    expense, cost = only(".expense"), only(".cost")
    if expense is None and cost is None:
        raise UCIFormatError(f"{cost_folder}: no .expense or .cost file")
    index = {f: j for j, f in enumerate(features)}
    n = len(features)
    full: list[float | None] = [None] * n
    discounted: list[float | None] = [None] * n
    for source in (expense, cost):
        if source is None:
            continue
        for line_number, test, values in _cost_lines(source):
            j = _feature_of(test, index, aliases, source, line_number)
            prices = [_price(v, source, line_number, test) for v in values.split(",")]
            if len(prices) not in (1, 2):
                raise UCIFormatError(
                    f"{source.name}: row {line_number}, test {test!r}: "
                    "expected '<full>' or '<full>, <discounted>'"
                )
            if full[j] is None:
                full[j] = prices[0]
                discounted[j] = prices[-1]
    groups: list[str | None] = [None] * n
    group_file = only(".group")
    if group_file is not None:
        for line_number, test, value in _cost_lines(group_file, skip_first=True):
            groups[_feature_of(test, index, aliases, group_file, line_number)] = value
    delayed = [False] * n
    delay_file = only(".delay")
    if delay_file is not None:
        for line_number, test, value in _cost_lines(delay_file):
            if value not in ("immediate", "delayed"):
                raise UCIFormatError(
                    f"{delay_file.name}: row {line_number}, test {test!r}: "
                    f"{value!r} is neither 'immediate' nor 'delayed'"
                )
            delayed[_feature_of(test, index, aliases, delay_file, line_number)] = value == "delayed"
    derived_index = {index[t]: tuple(index[s] for s in sources) for t, sources in derived.items()}
    for j in derived_index:
        full[j] = discounted[j] = 0.0  # priced through its inputs by CostModel
        delayed[j] = any(delayed[s] for s in derived_index[j])
    unpriced = [features[j] for j in range(n) if full[j] is None]
    if unpriced:
        raise UCIFormatError(f"{cost_folder}: no price for {unpriced}")
    # Every test has both prices by now (the discounted one is set with the full one).
    full_prices = [p for p in full if p is not None]
    discounted_prices = [p for p in discounted if p is not None]
    try:
        return CostModel(
            full_prices,
            discounted=discounted_prices,
            groups=groups,
            delayed=delayed,
            derived=derived_index,
            free=[index[f] for f in free],
        )
    except ValueError as error:
        raise UCIFormatError(f"{cost_folder}: {error}") from None


def _cost_lines(path: Path, *, skip_first: bool = False) -> Iterator[tuple[int, str, str]]:
    lines = [
        (n, strip_comment(line))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
    ]
    lines = [(n, line) for n, line in lines if line]
    if skip_first:  # the .group file's first row lists the group symbols
        lines = lines[1:]
    for line_number, line in lines:
        if ":" not in line:
            raise UCIFormatError(
                f"{path.name}: row {line_number}: expected '<test>: <value>', got {line!r}"
            )
        test, value = (part.strip() for part in line.split(":", 1))
        yield line_number, test, value.rstrip(".").strip()


def _feature_of(
    test: str, index: Mapping[str, int], aliases: Mapping[str, str], path: Path, line_number: int
) -> int:
    feature = aliases.get(test, test)
    if feature not in index:
        raise UCIFormatError(
            f"{path.name}: row {line_number}: test {test!r} is not a feature of "
            f"the data ({list(index)})"
        )
    return index[feature]


def _price(text: str, path: Path, line_number: int, test: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise UCIFormatError(
            f"{path.name}: row {line_number}, test {test!r}: {text.strip()!r} is not a price"
        ) from None
    if not np.isfinite(value) or value < 0:
        raise UCIFormatError(f"{path.name}: row {line_number}, test {test!r}: bad price {value}")
    return value
