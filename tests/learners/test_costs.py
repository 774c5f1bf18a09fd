"""Hand-worked checks of the shared test-cost model (ALGORITHMS.md §1)."""

import numpy as np
import pytest

from learners.costs import CostModel


@pytest.fixture
def grouped():
    """A=10/2 and B=6/5 share a group, C=3 stands alone, D is free, E = f(A, C)."""
    return CostModel(
        [10, 6, 3, 4, 0],
        discounted=[2, 5, 3, 4, 0],
        groups=["blood", "blood", None, None, None],
        free=[3],
        derived={4: (0, 2)},
    )


def test_group_discount_depends_on_order(grouped):
    """A then B costs 10 + 5 = 15, B then A costs 6 + 2 = 8."""
    assert grouped.path_cost([0, 1]) == pytest.approx(15)
    assert grouped.path_cost([1, 0]) == pytest.approx(8)


def test_marginal_cost_uses_discount_only_after_a_group_member(grouped):
    """The discounted price applies once another test of the group is done."""
    assert grouped.marginal_cost(0) == 10
    assert grouped.marginal_cost(0, {1}) == 2
    assert grouped.marginal_cost(0, {2}) == 10


def test_already_done_and_free_tests_cost_nothing(grouped):
    """A done test costs 0 again; a free test always costs 0."""
    assert grouped.marginal_cost(2, {2}) == 0
    assert grouped.marginal_cost(3) == 0


def test_derived_test_priced_by_missing_inputs(grouped):
    """E = f(A, C) costs A + C with nothing done, only C once A is done, 0 once both are."""
    assert grouped.marginal_cost(4) == pytest.approx(13)
    assert grouped.marginal_cost(4, {0}) == pytest.approx(3)
    assert grouped.marginal_cost(4, {0, 2}) == 0
    assert grouped.done_closure({4}) == frozenset({0, 2, 4})


def test_derived_input_gets_group_discount():
    """A derived test whose input shares a group with a done test pays the discount."""
    model = CostModel([10, 6, 0], discounted=[2, 5, 0], groups=["g", "g", None], derived={2: (0,)})
    assert model.marginal_cost(2, {1}) == pytest.approx(2)


def test_discount_source_names_the_done_group_partner(grouped):
    """B after C then A is discounted by A; nothing done, or only C, names no source."""
    assert grouped.discount_source(1, [2, 0]) == 0
    assert grouped.discount_source(1, []) is None
    assert grouped.discount_source(1, [2]) is None


def test_discount_source_follows_the_inputs_a_derived_test_brought(grouped):
    """E = f(A, C) done brings A, so B is discounted by A; a done or derived test has none."""
    assert grouped.discount_source(1, [4]) == 0
    assert grouped.discount_source(0, [1, 0]) is None  # A itself is done: free, not discounted
    assert grouped.discount_source(4, [1]) is None  # derived: it costs its missing inputs


def test_total_cost_applies_discounts_in_index_order(grouped):
    """TC = A 10 + B 5 + C 3 + D 0 + E 0 (its inputs are done) = 18."""
    assert grouped.total_cost() == pytest.approx(18)


def test_standard_cost():
    """Standard cost = TC + min_i (1 - f_i) * max M, here 3 + 0.25 * 10."""
    model = CostModel([1, 2])
    assert model.standard_cost([75, 25], [[0, 10], [4, 0]]) == pytest.approx(3 + 0.25 * 10)


def test_marginal_costs_vector(grouped):
    """marginal_costs prices every test at once given what is done."""
    np.testing.assert_allclose(grouped.marginal_costs({1}), [2, 0, 3, 0, 5])


def test_to_dict_round_trip(grouped):
    """from_dict(to_dict()) gives an equal model with the same prices."""
    again = CostModel.from_dict(grouped.to_dict())
    assert again == grouped
    assert again.path_cost([1, 0, 4]) == grouped.path_cost([1, 0, 4])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"costs": [1, -2]}, "non-negative"),
        ({"costs": [1, np.inf]}, "finite"),
        ({"costs": [[1, 2]]}, "flat list"),
        ({"costs": [5, 5], "discounted": [6, 1]}, "above its full price"),
        ({"costs": [5, 5], "discounted": [1]}, "expected 2"),
        ({"costs": [5, 5], "groups": ["a"]}, "expected 2"),
        ({"costs": [5, 5], "derived": {0: (0,)}}, "other features"),
        ({"costs": [5, 5], "derived": {0: (7,)}}, "out of range"),
        ({"costs": [5, 5], "free": [3]}, "out of range"),
    ],
)
def test_bad_inputs_raise(kwargs, message):
    """Malformed prices, lengths or references raise a ValueError saying what is wrong."""
    with pytest.raises(ValueError, match=message):
        CostModel(**kwargs)


def test_out_of_range_test_index(grouped):
    """Pricing a test that does not exist raises IndexError."""
    with pytest.raises(IndexError):
        grouped.marginal_cost(9)


@pytest.mark.parametrize(
    "derived, cycle",
    [
        ({0: (1,), 1: (0,)}, "0 -> 1 -> 0"),
        ({0: (1,), 1: (2,), 2: (0,)}, "0 -> 1 -> 2 -> 0"),
        ({3: (2,), 2: (0, 1), 1: (2,)}, "2 -> 1 -> 2"),
    ],
)
def test_derived_cycle_is_refused_at_construction(derived, cycle):
    """A derived feature needing itself through other derived ones is refused, naming the cycle."""
    with pytest.raises(ValueError, match=f"derived features form a cycle: {cycle}"):
        CostModel([1, 2, 3, 4], derived=derived)


def test_derived_chain_of_any_depth_is_priced():
    """Derived inputs may be derived themselves: 3 <- 2 <- 1 <- 0 costs the one real test."""
    model = CostModel([5, 0, 0, 0], derived={3: (2,), 2: (1,), 1: (0,)})
    assert model.marginal_cost(3) == pytest.approx(5)
    assert model.done_closure({3}) == frozenset({0, 1, 2, 3})


def test_shared_derived_input_is_not_a_cycle():
    """Two derived features sharing a derived input (a diamond) is no cycle."""
    model = CostModel([4, 6, 0, 0, 0], derived={4: (2, 3), 2: (0,), 3: (0, 1)})
    assert model.marginal_cost(4) == pytest.approx(10)
