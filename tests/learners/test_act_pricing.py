"""The compiled pricing of the ACT/ICET engine equals CostModel.marginal_cost."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from learners.act import _pricing
from learners.act._encoding import encode_prices
from learners.costs import CostModel


@st.composite
def cost_models(draw):
    """Random CostModels: groups with discounts, free tests, derived chains (depth >= 2 likely)."""
    n = draw(st.integers(3, 9))
    price = st.floats(0.0, 50.0, allow_nan=False).map(lambda v: round(v, 2))
    full = draw(st.lists(price, min_size=n, max_size=n))
    fraction = draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n))
    discounted = [round(c * q, 2) for c, q in zip(full, fraction, strict=True)]
    groups = draw(st.lists(st.sampled_from([None, "a", "b"]), min_size=n, max_size=n))
    free = draw(st.sets(st.integers(0, n - 1), max_size=2))
    # a derived test draws its inputs from lower indices only, so the graph is acyclic;
    # a derived input of a derived test makes a chain of depth >= 2
    derived = {}
    for t in draw(st.sets(st.integers(1, n - 1), max_size=3)):
        derived[t] = tuple(draw(st.sets(st.integers(0, t - 1), min_size=1, max_size=3)))
    return CostModel(full, discounted=discounted, groups=groups, derived=derived, free=free)


def _done_counts(model, prices, done_set):
    done = np.zeros(model.n_features, dtype=np.int64)
    for t in done_set:
        _pricing.mark_done(t, done, prices, 1)
    return done


@settings(max_examples=300, deadline=None)
@given(model=cost_models(), data=st.data())
def test_compiled_price_equals_cost_model(model, data):
    """For every test and a random done set, the compiled price is CostModel's, to the bit."""
    prices = encode_prices(model)
    done_set = data.draw(st.sets(st.integers(0, model.n_features - 1)))
    done = _done_counts(model, prices, done_set)
    before = done.copy()
    for t in range(model.n_features):
        assert _pricing.marginal_cost(t, done, prices) == model.marginal_cost(t, done_set)
    # pricing a derived test marks its inputs on the way; it must leave done as it found it
    np.testing.assert_array_equal(done, before)


@settings(max_examples=200, deadline=None)
@given(model=cost_models(), data=st.data())
def test_done_counts_mark_the_cost_model_closure(model, data):
    """Marking a done set marks exactly CostModel.done_closure, and unmarking clears it."""
    prices = encode_prices(model)
    done_set = data.draw(st.sets(st.integers(0, model.n_features - 1)))
    done = _done_counts(model, prices, done_set)
    assert set(np.flatnonzero(done > 0).tolist()) == set(model.done_closure(done_set))
    for t in done_set:
        _pricing.mark_done(t, done, prices, -1)
    assert not done.any()


def test_derived_test_of_a_derived_test_is_priced():
    """A test derived from a derived test buys the whole chain (the old encoding refused it)."""
    model = CostModel([1.0, 2.0, 4.0, 0.0, 0.0], derived={3: (0, 1), 4: (2, 3)})
    prices = encode_prices(model)
    done = np.zeros(5, dtype=np.int64)
    assert _pricing.marginal_cost(4, done, prices) == model.marginal_cost(4) == 7.0
