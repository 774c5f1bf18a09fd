"""The XOR/parity generator of paper 000's appendix."""

import numpy as np
import pytest

from learners.synthetic import make_parity


def test_label_is_parity_of_the_relevant_attributes():
    """y is the XOR of exactly the relevant columns; they cost more than the others."""
    data = make_parity(
        500, n_relevant=4, n_irrelevant=6, relevant_cost=7, irrelevant_cost=2, random_state=0
    )
    assert data.X.shape == (500, 10)
    np.testing.assert_array_equal(data.y, data.X[:, data.relevant].sum(axis=1) % 2)
    assert set(np.unique(data.X)) == {0.0, 1.0}
    assert np.all(data.test_costs[data.relevant] == 7)
    assert np.sum(data.test_costs == 2) == 6


def test_noise_flips_about_the_requested_fraction():
    """With noise=0.2 about a fifth of the labels disagree with the parity."""
    data = make_parity(5000, n_relevant=3, n_irrelevant=2, noise=0.2, random_state=1)
    flipped = np.mean(data.y != data.X[:, data.relevant].sum(axis=1) % 2)
    assert 0.17 < flipped < 0.23


def test_seeded_and_validated():
    """Same seed, same data; nonsense sizes or noise raise ValueError."""
    a = make_parity(50, random_state=4)
    b = make_parity(50, random_state=4)
    np.testing.assert_array_equal(a.X, b.X)
    with pytest.raises(ValueError):
        make_parity(0)
    with pytest.raises(ValueError):
        make_parity(10, noise=0.5)


def test_assign_costs_follows_paper_000_section_4_1():
    """Prices in range, group discounts, delayed share; rho=1 prices informative tests higher."""
    from learners.synthetic import assign_costs

    data = make_parity(400, n_relevant=1, n_irrelevant=19, random_state=2)
    model = assign_costs(
        data.X,
        data.y,
        cost_range=(1, 100),
        group_fraction=0.2,
        delayed_fraction=0.25,
        discount=0.5,
        semi_random=1.0,
        random_state=0,
    )
    assert np.all((model.costs >= 1) & (model.costs <= 100))
    assert int(model.delayed.sum()) == 5
    for f, group in enumerate(model.groups):
        if group is not None:
            members = [g for g, name in enumerate(model.groups) if name == group]
            assert model.discounted[f] == pytest.approx(
                model.costs[f] - 0.5 * model.costs[members].min()
            )
    relevant = int(data.relevant[0])
    assert model.costs[relevant] > np.median(model.costs)
