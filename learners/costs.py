"""The test-cost model shared by every learner, policy, evaluator and screen.

Turney's model (paper 000 §2, ALGORITHMS.md §1): a test has a full price and a
discounted price; the discounted price is charged when another test of the same
group was already done for this case; a test already done is free.  Derived
tests cost the marginal price of their missing inputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

__all__ = ["CostModel"]


class CostModel:
    """Prices of the tests (features) of one dataset, for one case at a time.

    Parameters
    ----------
    costs : sequence of float, length n_features
        Full price of each test.
    discounted : sequence of float, optional
        Price charged when another test of the same group is already done.
        Defaults to the full price.  Must not exceed the full price.
    groups : sequence of (str or None), optional
        Group name of each test, or None for a test in no group.
    delayed : sequence of bool, optional
        Whether each test's result arrives later (a lab test).
    derived : mapping of int to tuple of int, optional
        Feature computed from other features (e.g. thyroid FTI from TT4 and
        T4U).  Its price is the marginal price of its missing inputs, and
        doing it makes its inputs done.
    free : iterable of int, optional
        Features that cost nothing (e.g. questionnaire answers).

    Notes
    -----
    :meth:`marginal_cost` is the one pricing function; every other price is
    built from it, so learners, the evaluator and the clinician's screen can
    never disagree about what a test costs.
    """

    def __init__(
        self,
        costs: Sequence[float] | np.ndarray,
        *,
        discounted: Sequence[float] | np.ndarray | None = None,
        groups: Sequence[str | None] | None = None,
        delayed: Sequence[bool] | np.ndarray | None = None,
        derived: Mapping[int, Sequence[int]] | None = None,
        free: Iterable[int] | None = None,
    ) -> None:
        self.costs = _as_price_vector(costs, "costs")
        n_features = self.costs.shape[0]
        self.discounted = (
            self.costs.copy()
            if discounted is None
            else _as_price_vector(discounted, "discounted", n_features)
        )
        above = np.flatnonzero(self.discounted > self.costs + 1e-12)
        if above.size:
            f = int(above[0])
            raise ValueError(
                f"discounted price of feature {f} ({self.discounted[f]:g}) is above "
                f"its full price ({self.costs[f]:g})"
            )
        self.groups = _as_groups(groups, n_features)
        self.delayed = (
            np.zeros(n_features, dtype=bool) if delayed is None else _as_flags(delayed, n_features)
        )
        self.derived = _as_derived(derived, n_features)
        self.free = _as_free(free, n_features)
        self._cache: dict[tuple[frozenset, int], float] = {}

    # ------------------------------------------------------------------ basics
    @property
    def n_features(self) -> int:
        """Number of tests described by the model."""
        return int(self.costs.shape[0])

    @classmethod
    def uniform(cls, n_features: int, cost: float = 1.0) -> CostModel:
        """Every test costs ``cost``; no groups, nothing delayed."""
        return cls([float(cost)] * int(n_features))

    def done_closure(self, done: Iterable[int]) -> frozenset[int]:
        """Tests that count as done once ``done`` are: derived tests bring their inputs."""
        closed = set(int(t) for t in done)
        stack = [t for t in closed if t in self.derived]
        while stack:
            for source in self.derived[stack.pop()]:
                if source not in closed:
                    closed.add(source)
                    if source in self.derived:
                        stack.append(source)
        return frozenset(closed)

    # ------------------------------------------------------------- the pricing
    def marginal_cost(self, test: int, done: Iterable[int] = ()) -> float:
        """Price of doing ``test`` for a case on which ``done`` are already done.

        Parameters
        ----------
        test : int
            Feature index of the test to price.
        done : iterable of int
            Tests already done for this case (order does not matter).

        Returns
        -------
        float
            0 for a done or free test; the discounted price when a test of the
            same group is done; the full price otherwise.  A derived test costs
            the marginal price of its missing inputs, bought in index order.
        """
        test = self._check_index(test)
        done_set = done if isinstance(done, frozenset) else frozenset(int(t) for t in done)
        key = (done_set, test)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        price = self._price(test, self.done_closure(done_set))
        if len(self._cache) < 100_000:
            self._cache[key] = price
        return price

    def discount_source(self, test: int, done_in_order: Iterable[int]) -> int | None:
        """The done test whose group makes ``test`` cheaper now than its full price, or None.

        ``done_in_order`` lists the tests done so far, in the order they were
        done; the first of them (or of the inputs a derived one brought) that
        alone already lowers ``test``'s :meth:`marginal_cost` is named.  A test
        already done (it is free) and a derived test (it costs its missing
        inputs) have no discount source.
        """
        test = self._check_index(test)
        order = [int(t) for t in done_in_order]
        done = frozenset(order)
        full = self.marginal_cost(test, ())
        if (
            test in self.derived
            or test in self.done_closure(done)
            or self.marginal_cost(test, done) >= full
        ):
            return None
        for done_test in order:
            brought = sorted(self.done_closure({done_test}) - {done_test})
            for candidate in (done_test, *brought):
                if candidate not in self.derived and self.marginal_cost(test, {candidate}) < full:
                    return candidate
        return None

    def marginal_costs(self, done: Iterable[int] = ()) -> np.ndarray:
        """Marginal price of every test given ``done``, as an array of n_features."""
        done_set = frozenset(int(t) for t in done)
        return np.array([self.marginal_cost(t, done_set) for t in range(self.n_features)])

    def path_cost(self, tests: Iterable[int], done: Iterable[int] = ()) -> float:
        """Price of doing ``tests`` in this order, starting from ``done``."""
        so_far = set(int(t) for t in done)
        total = 0.0
        for t in tests:
            total += self.marginal_cost(t, frozenset(so_far))
            so_far.add(int(t))
        return total

    def total_cost(self) -> float:
        """TC: the price of doing every test on one case (group discounts applied)."""
        return self.path_cost(range(self.n_features))

    def standard_cost(self, class_frequencies: Sequence[float], cost_matrix) -> float:
        """Turney's standard cost: ``TC + min_i (1 - f_i) * max M``.

        Parameters
        ----------
        class_frequencies : sequence of float
            Class frequencies (or counts; they are normalized).
        cost_matrix : array-like of shape (K, K)
            ``M[actual, predicted]``.
        """
        f = np.asarray(class_frequencies, dtype=float)
        if f.ndim != 1 or f.size == 0 or np.any(f < 0) or not np.isfinite(f).all() or f.sum() <= 0:
            raise ValueError("class_frequencies must be a non-empty vector of non-negative numbers")
        f = f / f.sum()
        matrix = np.asarray(cost_matrix, dtype=float)
        if matrix.shape != (f.size, f.size):
            raise ValueError(
                f"cost_matrix must be {f.size}x{f.size} for {f.size} classes, got {matrix.shape}"
            )
        return self.total_cost() + float(np.min(1.0 - f)) * float(np.max(matrix))

    # --------------------------------------------------------- serialization
    def to_dict(self) -> dict:
        """Plain-JSON description of the model."""
        return {
            "costs": self.costs.tolist(),
            "discounted": self.discounted.tolist(),
            "groups": list(self.groups),
            "delayed": self.delayed.tolist(),
            "derived": {str(k): list(v) for k, v in sorted(self.derived.items())},
            "free": sorted(self.free),
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> CostModel:
        """Inverse of :meth:`to_dict`."""
        derived = {int(k): tuple(v) for k, v in (data.get("derived") or {}).items()}
        return cls(
            data["costs"],
            discounted=data.get("discounted"),
            groups=data.get("groups"),
            delayed=data.get("delayed"),
            derived=derived,
            free=data.get("free"),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CostModel) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"CostModel(n_features={self.n_features}, TC={self.total_cost():g})"

    # ---------------------------------------------------------------- private
    def _check_index(self, test) -> int:
        try:
            index = int(test)
        except (TypeError, ValueError):
            raise TypeError(f"test must be a feature index, got {test!r}") from None
        if not 0 <= index < self.n_features:
            raise IndexError(f"test {index} is out of range for {self.n_features} features")
        return index

    def _price(self, test: int, done: frozenset[int]) -> float:
        if test in done or test in self.free:
            return 0.0
        if test in self.derived:
            bought = set(done)
            price = 0.0
            for source in sorted(self.derived[test]):
                if source not in bought:
                    price += self._price(source, self.done_closure(bought))
                    bought.add(source)
            return price
        group = self.groups[test]
        if group is not None and any(
            self.groups[t] == group and t not in self.free and t not in self.derived for t in done
        ):
            return float(self.discounted[test])
        return float(self.costs[test])


def _as_price_vector(values, name: str, n_features: int | None = None) -> np.ndarray:
    try:
        prices = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of numbers") from None
    if prices.ndim != 1:
        raise ValueError(f"{name} must be one price per feature (a flat list)")
    if n_features is not None and prices.shape[0] != n_features:
        raise ValueError(f"{name} has {prices.shape[0]} entries, expected {n_features}")
    bad = np.flatnonzero(~np.isfinite(prices) | (prices < 0))
    if bad.size:
        f = int(bad[0])
        raise ValueError(f"{name}[{f}] = {prices[f]!r}: prices must be finite and non-negative")
    return prices


def _as_groups(groups, n_features: int) -> tuple[str | None, ...]:
    if groups is None:
        return (None,) * n_features
    groups = tuple(None if g in (None, "") else str(g) for g in groups)
    if len(groups) != n_features:
        raise ValueError(f"groups has {len(groups)} entries, expected {n_features}")
    return groups


def _as_flags(values, n_features: int) -> np.ndarray:
    flags = np.asarray(values, dtype=bool)
    if flags.shape != (n_features,):
        raise ValueError(f"delayed has {flags.size} entries, expected {n_features}")
    return flags


def _as_derived(derived, n_features: int) -> dict[int, tuple[int, ...]]:
    result: dict[int, tuple[int, ...]] = {}
    for target, sources in (derived or {}).items():
        target = int(target)
        sources = tuple(int(s) for s in sources)
        for index in (target, *sources):
            if not 0 <= index < n_features:
                raise ValueError(f"derived refers to feature {index}, out of range")
        if not sources or target in sources:
            raise ValueError(f"derived feature {target} needs other features as inputs")
        result[target] = sources
    _refuse_derived_cycle(result)
    return result


def _refuse_derived_cycle(derived: dict[int, tuple[int, ...]]) -> None:
    """Raise ValueError when a derived feature (indirectly) needs itself as an input.

    Derived inputs may themselves be derived, to any depth, but the pricing
    recursion and :meth:`CostModel.done_closure` need the inputs graph acyclic.
    Iterative depth-first search: a back edge to a feature still on the path is
    a cycle.
    """
    on_path, finished = set(), set()
    for start in derived:
        if start in finished:
            continue
        path, stack = [start], [iter(derived[start])]
        on_path.add(start)
        while stack:
            source = next(stack[-1], None)
            if source is None:
                done = path.pop()
                on_path.discard(done)
                finished.add(done)
                stack.pop()
                continue
            if source in on_path:
                cycle = path[path.index(source) :] + [source]
                raise ValueError(
                    "derived features form a cycle: "
                    + " -> ".join(str(f) for f in cycle)
                    + " (each needs the next as an input)"
                )
            if source in derived and source not in finished:
                path.append(source)
                on_path.add(source)
                stack.append(iter(derived[source]))


def _as_free(free, n_features: int) -> frozenset[int]:
    result = frozenset(int(f) for f in (free or ()))
    for index in result:
        if not 0 <= index < n_features:
            raise ValueError(f"free refers to feature {index}, out of range")
    return result
