"""Synthetic concepts with test costs for checking cost-sensitive learners.

:func:`make_parity` follows the boolean XOR dataset of paper 000's appendix:
the class is the parity (XOR) of a few relevant binary attributes, and
irrelevant binary attributes are added.  The relevant attributes are priced
higher than the irrelevant ones, so a greedy cost-aware learner is lured to
the cheap, useless tests while a learner that looks ahead is not.
:func:`assign_costs` prices any dataset the way paper 000 §4.1 does for
datasets without costs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

from .costs import CostModel
from .price_generator import PriceGeneratorParams, generate_prices, information_gains

__all__ = ["ParityDataset", "assign_costs", "make_parity"]


@dataclass
class ParityDataset:
    """A sampled parity concept.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features), values 0.0 / 1.0
    y : ndarray of int, the parity of the relevant attributes (flipped for
        a ``noise`` fraction of cases)
    test_costs : ndarray of float, one price per feature
    relevant : ndarray of int, the indices of the relevant attributes
    """

    X: np.ndarray
    y: np.ndarray
    test_costs: np.ndarray
    relevant: np.ndarray


def make_parity(
    n_samples: int = 1000,
    *,
    n_relevant: int = 5,
    n_irrelevant: int = 5,
    relevant_cost: float = 10.0,
    irrelevant_cost: float = 1.0,
    noise: float = 0.0,
    shuffle_features: bool = True,
    random_state=None,
) -> ParityDataset:
    """Sample the XOR of ``n_relevant`` bits among ``n_irrelevant`` cheap noise bits.

    Parameters
    ----------
    n_samples : int
        Number of cases, each attribute a fair coin.
    n_relevant, n_irrelevant : int
        Numbers of attributes inside and outside the concept (paper 000: 5 and 5).
    relevant_cost, irrelevant_cost : float
        Price of each relevant and each irrelevant test.
    noise : float in [0, 0.5)
        Fraction of labels flipped at random.
    shuffle_features : bool
        Place the relevant attributes at random positions (otherwise first).
    random_state : int, RandomState or None

    Raises
    ------
    ValueError
        On a non-positive size, no relevant attribute, negative prices or a
        noise level outside [0, 0.5).
    """
    if int(n_samples) < 1:
        raise ValueError(f"n_samples must be positive, got {n_samples!r}")
    if int(n_relevant) < 1 or int(n_irrelevant) < 0:
        raise ValueError("need at least one relevant attribute and no negative counts")
    if relevant_cost < 0 or irrelevant_cost < 0:
        raise ValueError("test prices must be non-negative")
    if not 0.0 <= noise < 0.5:
        raise ValueError(f"noise must be in [0, 0.5), got {noise!r}")
    rng = check_random_state(random_state)
    n_features = int(n_relevant) + int(n_irrelevant)
    X = rng.randint(0, 2, size=(int(n_samples), n_features)).astype(float)
    if shuffle_features:
        relevant = np.sort(rng.choice(n_features, size=int(n_relevant), replace=False))
    else:
        relevant = np.arange(int(n_relevant))
    y = (X[:, relevant].sum(axis=1) % 2).astype(int)
    flip = rng.random_sample(int(n_samples)) < noise
    y[flip] = 1 - y[flip]
    costs = np.full(n_features, float(irrelevant_cost))
    costs[relevant] = float(relevant_cost)
    return ParityDataset(X=X, y=y, test_costs=costs, relevant=relevant)


def assign_costs(
    X,
    y,
    *,
    cost_range: tuple[float, float] = (1.0, 100.0),
    group_fraction: float = 0.0,
    delayed_fraction: float = 0.0,
    discount: float = 0.5,
    semi_random: float = 0.0,
    random_state: int = 0,
) -> CostModel:
    """Random test prices for a dataset without costs (paper 000 §4.1).

    A shortcut to :func:`learners.price_generator.generate_prices` (the one
    definition) for a table ``X, y``: ``semi_random`` is the paper's flag
    ``ρ`` (0 uniform, 1 gain-proportional, the gains read from ``X, y``),
    ``discount`` its ``φ``; see that module for every parameter.
    """
    if semi_random not in (0, 1):
        raise ValueError(f"semi_random is the paper's flag rho: 0 or 1, got {semi_random!r}")
    params = PriceGeneratorParams(
        cost_range=cost_range,
        group_fraction=group_fraction,
        delayed_fraction=delayed_fraction,
        group_discount=discount,
        mode="gain" if semi_random else "uniform",
        seed=random_state,
    )
    X = np.asarray(X, dtype=float)
    gains = information_gains(X, y) if params.mode == "gain" else None
    return generate_prices(X.shape[1], params=params, gains=gains).cost_model()
