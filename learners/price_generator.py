"""Automatic test prices for a dataset that has none (paper 000 §4.1, ALGORITHMS.md).

Only five UCI datasets come with test prices (Turney's).  Paper 000 prices the
others with a parametric generator; this module is that generator, the one
definition the admin action (``diagnosis/services/price_generation.py``) and
``learners.synthetic.assign_costs`` call.

The parameters (:class:`PriceGeneratorParams`) are the paper's:

``cost_range`` ``cr``
    every price is drawn in ``[low, high]`` (paper: [1, 100]).
``group_fraction`` ``g``
    there are ``m = round(g * |A|)`` groups; each attribute joins each group
    with probability ``1 / (m + 1)`` (the paper's ``1 / (g|A| + 1)``), the same
    as its probability of joining none: a uniform choice among the groups and
    "no group".  A group that
    ends up with a single test is no group: nothing is ever discounted in it.
``delayed_fraction`` ``d``
    exactly ``round(d * |A|)`` tests, chosen at random, are delayed (their
    result arrives later).
``group_discount`` ``φ``
    a grouped test's discounted price is its price minus ``φ`` times the
    cheapest price in its group, so every price stays positive (``φ < 1``).
``mode`` ``ρ``
    ``"uniform"`` (ρ = 0): prices uniform in the range.  ``"gain"`` (ρ = 1):
    semi-random prices from a normal truncated to the range whose mean grows
    in proportion to the attribute's information gain (informative tests tend
    to be the expensive ones): mean ``low + (high - low) * gain / max gain``,
    standard deviation ``(high - low) / 4``.  The paper gives no spread; this
    one keeps the gain visible in the prices while letting any price occur.
    When no attribute carries information, gain mode prices uniformly.
``seed``
    the same parameters, seed and gains give the same prices, bit for bit.

Prices are rounded to cents; a discounted price follows from them (to a millionth).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy.stats import truncnorm

from .costs import CostModel

__all__ = [
    "MODES",
    "GeneratedPrices",
    "PriceGeneratorParams",
    "generate_prices",
    "information_gains",
]

#: ``uniform``: ρ = 0; ``gain``: ρ = 1 (prices grow with the information gain).
MODES = ("uniform", "gain")

_CENT = 0.01
_MAX_SEED = 2**32 - 1
_MAX_PRICE = 1e9


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


def _fraction(name: str, value: Any, *, below_one: bool = False) -> float:
    value = _number(name, value)
    if below_one and not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be at least 0 and below 1, got {value:g}")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be between 0 and 1, got {value:g}")
    return value


@dataclass(frozen=True)
class PriceGeneratorParams:
    """The generator's parameters, validated on creation (``ValueError`` naming the field).

    Defaults are the values the paper's experiments are described with:
    ``cr = [1, 100]``, ``g = 0.2``, ``d = 0``, ``φ = 0.8``, ``ρ = 1`` (gain).
    """

    cost_range: tuple[float, float] = (1.0, 100.0)
    group_fraction: float = 0.2
    delayed_fraction: float = 0.0
    group_discount: float = 0.8
    mode: str = "gain"
    seed: int = 0

    def __post_init__(self) -> None:
        cost_range = self.cost_range
        if isinstance(cost_range, (str, bytes)) or not isinstance(cost_range, Iterable):
            raise ValueError(f"cost_range must be a pair (low, high), got {cost_range!r}")
        pair = list(cost_range)
        if len(pair) != 2:
            raise ValueError(f"cost_range must be a pair (low, high), got {cost_range!r}")
        low = _number("the lowest price", pair[0])
        high = _number("the highest price", pair[1])
        if low < _CENT:
            raise ValueError(f"the lowest price must be at least 0.01, got {low:g}")
        if high < low:
            raise ValueError(f"the highest price ({high:g}) must not be below the lowest ({low:g})")
        if high > _MAX_PRICE:
            raise ValueError(f"the highest price must be at most {_MAX_PRICE:g}, got {high:g}")
        object.__setattr__(self, "cost_range", (low, high))
        object.__setattr__(self, "group_fraction", _fraction("group_fraction", self.group_fraction))
        object.__setattr__(
            self, "delayed_fraction", _fraction("delayed_fraction", self.delayed_fraction)
        )
        object.__setattr__(
            self,
            "group_discount",
            _fraction("group_discount", self.group_discount, below_one=True),
        )
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise ValueError(f"seed must be a whole number, got {seed!r}")
        if not 0 <= int(seed) <= _MAX_SEED:
            raise ValueError(f"seed must be between 0 and {_MAX_SEED}, got {seed}")
        object.__setattr__(self, "seed", int(seed))

    def to_dict(self) -> dict:
        """JSON-ready parameters (``from_dict`` reads them back)."""
        data = asdict(self)
        data["cost_range"] = list(self.cost_range)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PriceGeneratorParams:
        """Parameters from :meth:`to_dict`; unknown keys are refused."""
        if not isinstance(data, Mapping):
            raise ValueError(f"price generator parameters must be an object, got {data!r}")
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown price generator parameter(s): {', '.join(unknown)}")
        values = dict(data)
        if "cost_range" in values and isinstance(values["cost_range"], list):
            values["cost_range"] = tuple(values["cost_range"])
        return cls(**values)


@dataclass(frozen=True)
class GeneratedPrices:
    """One draw of the generator: a price, discounted price, group and delay per test."""

    prices: tuple[float, ...]
    discounted: tuple[float, ...]
    groups: tuple[str | None, ...]
    delayed: tuple[bool, ...]
    params: PriceGeneratorParams
    gains: tuple[float, ...] | None = field(default=None)

    @property
    def n_features(self) -> int:
        return len(self.prices)

    def cost_model(
        self,
        *,
        derived: Mapping[int, Sequence[int]] | None = None,
        free: Iterable[int] | None = None,
    ) -> CostModel:
        """These prices as the :class:`CostModel` every learner and screen prices with."""
        return CostModel(
            list(self.prices),
            discounted=list(self.discounted),
            groups=list(self.groups),
            delayed=list(self.delayed),
            derived=derived,
            free=free,
        )


def information_gains(X, y, *, categorical: Iterable[int] = ()) -> np.ndarray:
    """Information gain of each attribute about the class (bits; missing values ignored).

    A numeric attribute's gain is that of its best binary threshold (as the
    C4.5-family trees split it); a categorical one's is the multiway split on
    its values.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D table, got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must hold one class per row of X ({X.shape[0]}), got {y.shape}")
    nominal = {int(c) for c in categorical}
    bad = sorted(c for c in nominal if not 0 <= c < X.shape[1])
    if bad:
        raise ValueError(f"categorical column(s) {bad} outside 0..{X.shape[1] - 1}")
    _, codes = np.unique(y, return_inverse=True)
    return np.array(
        [
            (_multiway_gain if f in nominal else _threshold_gain)(X[:, f], codes)
            for f in range(X.shape[1])
        ],
        dtype=float,
    )


def _entropy(counts: np.ndarray) -> np.ndarray:
    n = counts.sum(axis=-1, keepdims=True)
    p = np.divide(counts, n, out=np.zeros_like(counts, dtype=float), where=n > 0)
    return -(p * np.log2(np.where(p > 0, p, 1.0))).sum(axis=-1)


def _threshold_gain(column: np.ndarray, codes: np.ndarray) -> float:
    known = ~np.isnan(column)
    values, labels = column[known], codes[known]
    if values.size < 2:
        return 0.0
    order = np.argsort(values, kind="stable")
    values, labels = values[order], labels[order]
    k = int(codes.max()) + 1
    onehot = np.eye(k)[labels]
    left = np.cumsum(onehot, axis=0)[:-1]
    total = onehot.sum(axis=0)
    valid = values[1:] > values[:-1]
    if not valid.any():
        return 0.0
    n = values.size
    sizes = left.sum(axis=1)
    children = (sizes * _entropy(left) + (n - sizes) * _entropy(total - left)) / n
    return max(0.0, float(_entropy(total) - children[valid].min()))


def _multiway_gain(column: np.ndarray, codes: np.ndarray) -> float:
    known = ~np.isnan(column)
    values, labels = column[known], codes[known]
    if values.size < 2:
        return 0.0
    k = int(codes.max()) + 1
    _, value_codes = np.unique(values, return_inverse=True)
    table = np.zeros((int(value_codes.max()) + 1, k))
    np.add.at(table, (value_codes, labels), 1.0)
    n = values.size
    children = (table.sum(axis=1) * _entropy(table)).sum() / n
    return max(0.0, float(_entropy(table.sum(axis=0)) - children))


def generate_prices(
    n_features: int,
    *,
    params: PriceGeneratorParams | None = None,
    gains: Sequence[float] | np.ndarray | None = None,
) -> GeneratedPrices:
    """Draw prices, groups, discounts and delays for ``n_features`` tests.

    Parameters
    ----------
    n_features : int
        Number of tests to price (at least 1).
    params : PriceGeneratorParams, optional
        The paper's parameters and a seed (defaults: :class:`PriceGeneratorParams`).
    gains : sequence of float, optional
        Each test's information gain (:func:`information_gains`); required in
        ``"gain"`` mode, ignored in ``"uniform"`` mode.

    Raises
    ------
    ValueError
        On no tests, or gains missing, of the wrong length, negative or not finite.
    """
    params = PriceGeneratorParams() if params is None else params
    if not isinstance(params, PriceGeneratorParams):
        raise ValueError(f"params must be PriceGeneratorParams, got {type(params).__name__}")
    if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)):
        raise ValueError(f"n_features must be a whole number, got {n_features!r}")
    n = int(n_features)
    if n < 1:
        raise ValueError(f"there must be at least one test to price, got {n}")
    gain_vector: np.ndarray | None = None
    if params.mode == "gain":
        if gains is None:
            raise ValueError("gain mode needs each test's information gain (gains)")
        gain_vector = np.asarray(gains, dtype=float)
        if gain_vector.shape != (n,):
            raise ValueError(f"gains must hold one number per test ({n}), got {gain_vector.shape}")
        if not np.all(np.isfinite(gain_vector)) or np.any(gain_vector < 0):
            raise ValueError("gains must be finite and non-negative")

    rng = np.random.default_rng(params.seed)
    low, high = params.cost_range
    # Draw order is fixed (prices, groups, delays) so a seed always gives the same result.
    raw = _draw_prices(rng, n, low, high, gain_vector)
    prices = np.clip(np.round(raw, 2), low, high)
    groups = _draw_groups(rng, n, params.group_fraction)
    delayed = np.zeros(n, dtype=bool)
    delayed[rng.permutation(n)[: int(round(params.delayed_fraction * n))]] = True

    discounted = prices.copy()
    for name in sorted({g for g in groups if g is not None}):
        members = [f for f in range(n) if groups[f] == name]
        cut = params.group_discount * prices[members].min()
        # > 0 (prices >= the minimum, φ < 1); rounded only to drop float noise (4.684000000001),
        # never above the price (a range bound finer than a millionth would round up past it)
        discounted[members] = np.minimum(
            prices[members], np.maximum(np.round(prices[members] - cut, 6), 1e-6)
        )
    return GeneratedPrices(
        prices=tuple(float(p) for p in prices),
        discounted=tuple(float(d) for d in discounted),
        groups=tuple(groups),
        delayed=tuple(bool(d) for d in delayed),
        params=params,
        gains=None if gain_vector is None else tuple(float(g) for g in gain_vector),
    )


def _draw_prices(
    rng: np.random.Generator, n: int, low: float, high: float, gains: np.ndarray | None
) -> np.ndarray:
    uniform = rng.uniform(low, high, size=n)
    if gains is None or high == low or gains.max() <= 0:
        return uniform
    means = low + (high - low) * gains / gains.max()
    scale = (high - low) / 4.0
    a, b = (low - means) / scale, (high - means) / scale
    return truncnorm.rvs(a, b, loc=means, scale=scale, size=n, random_state=rng)


def _draw_groups(rng: np.random.Generator, n: int, group_fraction: float) -> list[str | None]:
    n_groups = int(round(group_fraction * n))
    if n_groups == 0:
        return [None] * n
    # Each attribute: one of the n_groups groups or none, all with probability 1 / (n_groups + 1).
    choice = rng.integers(0, n_groups + 1, size=n)
    sizes = np.bincount(choice, minlength=n_groups + 1)
    names: dict[int, str] = {}
    groups: list[str | None] = []
    for c in choice:
        if c == n_groups or sizes[c] < 2:  # "none", or a group of one (never discounted)
            groups.append(None)
            continue
        if c not in names:
            names[int(c)] = f"G{len(names) + 1}"
        groups.append(names[int(c)])
    return groups
