"""The automatic price generator of paper 000 §4.1 (learners.price_generator)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from learners.price_generator import (
    GeneratedPrices,
    PriceGeneratorParams,
    generate_prices,
    information_gains,
)
from learners.synthetic import assign_costs, make_parity


@st.composite
def valid_params(draw):
    low = draw(st.floats(0.01, 1000, allow_nan=False))
    high = draw(st.floats(low, low + 5000, allow_nan=False))
    return PriceGeneratorParams(
        cost_range=(low, high),
        group_fraction=draw(st.floats(0, 1)),
        delayed_fraction=draw(st.floats(0, 1)),
        group_discount=draw(st.floats(0, 1, exclude_max=True)),
        mode=draw(st.sampled_from(["uniform", "gain"])),
        seed=draw(st.integers(0, 2**32 - 1)),
    )


@settings(max_examples=150, deadline=None)
@given(
    params=valid_params(),
    n=st.integers(1, 40),
    gain_seed=st.integers(0, 1000),
)
# Found by Hypothesis: a range bound finer than a cent, no discount, one group of two.
@example(
    params=PriceGeneratorParams(
        cost_range=(863.3046875, 863.3046875),
        group_fraction=1.0,
        delayed_fraction=0.0,
        group_discount=0.0,
        mode="uniform",
        seed=0,
    ),
    n=2,
    gain_seed=0,
)
def test_any_valid_parameters_give_a_priceable_catalog(params, n, gain_seed):
    """Any valid parameters: prices in range, discounts φ·group minimum, exact delay count."""
    gains = np.random.default_rng(gain_seed).exponential(size=n)
    result = generate_prices(n, params=params, gains=gains)
    low, high = params.cost_range
    prices = np.array(result.prices)
    discounted = np.array(result.discounted)
    assert prices.shape == discounted.shape == (n,)
    assert np.all(prices >= low - 1e-9) and np.all(prices <= high + 1e-9)
    assert np.all(discounted > 0) and np.all(discounted <= prices)
    on_cents = np.isclose(prices, np.round(prices, 2))
    assert np.all(on_cents | np.isclose(prices, low) | np.isclose(prices, high))
    assert sum(result.delayed) == int(round(params.delayed_fraction * n))
    for name in set(result.groups) - {None}:
        members = [f for f in range(n) if result.groups[f] == name]
        assert len(members) >= 2, "a group of one is no group"
        cut = params.group_discount * prices[members].min()
        np.testing.assert_allclose(discounted[members], prices[members] - cut, atol=1e-6)
        assert np.all(discounted[members] > 0)
    ungrouped = [f for f in range(n) if result.groups[f] is None]
    np.testing.assert_array_equal(discounted[ungrouped], prices[ungrouped])
    # The draw is a valid catalog for every learner and screen.
    model = result.cost_model()
    assert model.n_features == n
    assert model.marginal_cost(0) == pytest.approx(prices[0])


@settings(max_examples=50, deadline=None)
@given(params=valid_params(), n=st.integers(1, 30))
def test_same_seed_same_prices_bit_for_bit(params, n):
    """The same parameters, seed and gains always give the same catalog."""
    gains = np.linspace(0, 1, n)
    first = generate_prices(n, params=params, gains=gains)
    second = generate_prices(n, params=params, gains=gains)
    assert first == second


def test_a_different_seed_gives_different_prices():
    """Changing only the seed changes the prices (a seed is not ignored)."""
    a = generate_prices(20, params=PriceGeneratorParams(mode="uniform", seed=1))
    b = generate_prices(20, params=PriceGeneratorParams(mode="uniform", seed=2))
    assert a.prices != b.prices


def test_group_count_and_membership_follow_the_fraction():
    """g = 0 makes no group; g = 0.5 over 40 tests groups most of them in at most 20 groups."""
    none = generate_prices(40, params=PriceGeneratorParams(group_fraction=0, mode="uniform"))
    assert set(none.groups) == {None}
    many = generate_prices(
        40, params=PriceGeneratorParams(group_fraction=0.5, mode="uniform", seed=3)
    )
    named = [g for g in many.groups if g is not None]
    assert 1 <= len(set(named)) <= 20
    # "no group" is one of 21 equally likely choices: most tests are grouped.
    assert len(named) > 20


def test_gain_mode_prices_informative_tests_higher():
    """ρ = 1: on the parity concept the one relevant attribute is among the dearest tests."""
    data = make_parity(600, n_relevant=1, n_irrelevant=29, random_state=5)
    gains = information_gains(data.X, data.y)
    assert int(np.argmax(gains)) == int(data.relevant[0])
    dearer = []
    for seed in range(10):
        result = generate_prices(
            30, params=PriceGeneratorParams(mode="gain", seed=seed, group_fraction=0), gains=gains
        )
        dearer.append(result.prices[int(data.relevant[0])] > np.median(result.prices))
    assert sum(dearer) >= 9


def test_uniform_mode_ignores_gains_and_spreads_over_the_range():
    """ρ = 0: prices cover the range and do not depend on the gains."""
    params = PriceGeneratorParams(mode="uniform", cost_range=(1, 100), seed=9)
    a = generate_prices(500, params=params, gains=np.zeros(500))
    b = generate_prices(500, params=params, gains=np.arange(500.0))
    assert a.prices == b.prices
    assert min(a.prices) < 10 and max(a.prices) > 90


def test_equal_low_and_high_price_everything_the_same():
    """A range of one value prices every test at that value, in both modes."""
    for mode in ("uniform", "gain"):
        result = generate_prices(
            5, params=PriceGeneratorParams(cost_range=(7, 7), mode=mode), gains=np.ones(5)
        )
        assert result.prices == (7.0,) * 5


def test_information_gains_numeric_and_categorical():
    """A column equal to the class has gain H(y); a constant or all-missing column has none."""
    y = np.array([0, 0, 1, 1, 2, 2])
    X = np.column_stack(
        [
            y.astype(float),  # perfect, numeric threshold: best binary split only
            y.astype(float),  # perfect, categorical: multiway split
            np.ones(6),
            np.full(6, np.nan),
        ]
    )
    gains = information_gains(X, y, categorical=[1])
    assert gains[1] == pytest.approx(np.log2(3))
    assert 0 < gains[0] < gains[1]
    assert gains[2] == 0 and gains[3] == 0


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"cost_range": (0, 10)}, "lowest price must be at least 0.01"),
        ({"cost_range": (10, 5)}, "must not be below the lowest"),
        ({"cost_range": (1, float("inf"))}, "finite"),
        ({"cost_range": (1, 2, 3)}, "pair"),
        ({"cost_range": "1-100"}, "pair"),
        ({"group_fraction": 1.5}, "group_fraction must be between 0 and 1"),
        ({"delayed_fraction": -0.1}, "delayed_fraction must be between 0 and 1"),
        ({"group_discount": 1.0}, "group_discount must be at least 0 and below 1"),
        ({"group_discount": "half"}, "group_discount must be a number"),
        ({"mode": "random"}, "mode must be one of uniform, gain"),
        ({"seed": -1}, "seed must be between 0"),
        ({"seed": 1.5}, "seed must be a whole number"),
        ({"seed": True}, "seed must be a whole number"),
    ],
)
def test_bad_parameters_are_refused_with_their_name(kwargs, words):
    """Each invalid parameter raises ValueError saying which one and why."""
    with pytest.raises(ValueError, match=words):
        PriceGeneratorParams(**kwargs)


def test_bad_calls_are_refused():
    """No tests, gain mode without gains, gains of the wrong length or negative: ValueError."""
    with pytest.raises(ValueError, match="at least one test"):
        generate_prices(0, params=PriceGeneratorParams(mode="uniform"))
    with pytest.raises(ValueError, match="needs each test's information gain"):
        generate_prices(3, params=PriceGeneratorParams(mode="gain"))
    with pytest.raises(ValueError, match="one number per test"):
        generate_prices(3, params=PriceGeneratorParams(mode="gain"), gains=[1, 2])
    with pytest.raises(ValueError, match="non-negative"):
        generate_prices(2, params=PriceGeneratorParams(mode="gain"), gains=[1, -2])


@settings(max_examples=60, deadline=None)
@given(params=valid_params())
def test_parameters_round_trip_through_json(params):
    """to_dict / from_dict give back equal parameters; unknown keys are refused."""
    assert PriceGeneratorParams.from_dict(params.to_dict()) == params
    with pytest.raises(ValueError, match="unknown price generator parameter"):
        PriceGeneratorParams.from_dict({**params.to_dict(), "colour": "red"})


def test_assign_costs_is_the_generator():
    """learners.synthetic.assign_costs returns exactly the generator's catalog (one definition)."""
    data = make_parity(200, n_relevant=2, n_irrelevant=8, random_state=1)
    model = assign_costs(
        data.X, data.y, group_fraction=0.3, discount=0.5, semi_random=1, random_state=4
    )
    expected: GeneratedPrices = generate_prices(
        10,
        params=PriceGeneratorParams(group_fraction=0.3, group_discount=0.5, mode="gain", seed=4),
        gains=information_gains(data.X, data.y),
    )
    np.testing.assert_array_equal(model.costs, expected.prices)
    np.testing.assert_array_equal(model.discounted, expected.discounted)
    with pytest.raises(ValueError, match="0 or 1"):
        assign_costs(data.X, data.y, semi_random=0.5)
