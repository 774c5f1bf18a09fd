"""Synthetic concepts with test costs for checking cost-sensitive learners.

:func:`make_parity` follows the boolean XOR dataset of paper 000's appendix:
the class is the parity (XOR) of a few relevant binary attributes, and
irrelevant binary attributes are added.  The relevant attributes are priced
higher than the irrelevant ones, so a greedy cost-aware learner is lured to
the cheap, useless tests while a learner that looks ahead is not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["ParityDataset", "make_parity"]


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
