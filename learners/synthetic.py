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
    random_state=None,
) -> CostModel:
    """Random test prices for a dataset without costs (paper 000 §4.1).

    Parameters
    ----------
    X, y : the dataset (NaN = missing); ``y`` is used for information gains.
    cost_range : (low, high)
        Prices are drawn in this range (paper: [1, 100]).
    group_fraction : float ``g``
        ``round(g * |A|)`` groups; an attribute not yet in a group joins each
        group with probability ``1 / (g |A| + 1)`` (an attribute is in at
        most one group).
    delayed_fraction : float ``d``
        Fraction of the attributes marked delayed.
    discount : float ``phi``
        A grouped test's discounted price is its price minus ``phi`` times
        the cheapest price in its group.
    semi_random : float ``rho`` in [0, 1]
        Each price is uniform in ``cost_range`` with probability ``1 - rho``,
        otherwise drawn from a normal truncated to the range whose mean
        grows with the attribute's information gain (the informative tests
        tend to be the expensive ones).
    random_state : int, RandomState or None

    Returns
    -------
    CostModel
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    low, high = (float(v) for v in cost_range)
    if not 0 <= low <= high:
        raise ValueError(f"cost_range must be 0 <= low <= high, got {cost_range!r}")
    for name, value in (
        ("group_fraction", group_fraction),
        ("delayed_fraction", delayed_fraction),
        ("discount", discount),
        ("semi_random", semi_random),
    ):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    rng = check_random_state(random_state)
    n_features = X.shape[1]
    gains = np.array([_information_gain(X[:, f], y) for f in range(n_features)])
    rank = gains.argsort().argsort() / max(n_features - 1, 1)
    costs = rng.uniform(low, high, size=n_features)
    for noisy in np.flatnonzero(rng.random_sample(n_features) < semi_random):
        mean = low + (high - low) * rank[noisy]
        while True:  # truncated normal by rejection: the range holds 1/3 of the mass at least
            value = rng.normal(mean, (high - low) / 6.0 + 1e-12)
            if low <= value <= high:
                break
        costs[noisy] = value
    n_groups = int(round(group_fraction * n_features))
    groups: list[str | None] = [None] * n_features
    for g in range(n_groups):
        for f in range(n_features):
            if groups[f] is None and rng.random_sample() < 1.0 / (group_fraction * n_features + 1):
                groups[f] = f"G{g}"
    discounted = costs.copy()
    for name in set(g for g in groups if g is not None):
        members = [f for f in range(n_features) if groups[f] == name]
        cut = discount * costs[members].min()
        discounted[members] = costs[members] - cut
    delayed = np.zeros(n_features, dtype=bool)
    delayed[rng.permutation(n_features)[: int(round(delayed_fraction * n_features))]] = True
    return CostModel(costs, discounted=discounted, groups=groups, delayed=delayed)


def _information_gain(column: np.ndarray, y: np.ndarray) -> float:
    """Gain of the best binary split of one feature (missing values ignored)."""
    known = ~np.isnan(column)
    values, labels = column[known], y[known]
    if values.size < 2:
        return 0.0
    _, codes = np.unique(labels, return_inverse=True)
    order = np.argsort(values, kind="stable")
    values, codes = values[order], codes[order]
    k = codes.max() + 1
    left = np.cumsum(np.eye(k)[codes], axis=0)[:-1]
    total = left[-1] + np.eye(k)[codes[-1]]
    valid = values[1:] > values[:-1]
    if not valid.any():
        return 0.0

    def entropy(counts):
        n = counts.sum(axis=-1, keepdims=True)
        p = np.divide(counts, n, out=np.zeros_like(counts), where=n > 0)
        return -(p * np.log2(np.where(p > 0, p, 1.0))).sum(axis=-1)

    n = values.size
    sizes = left.sum(axis=1)
    children = (sizes * entropy(left) + (n - sizes) * entropy(total - left)) / n
    return float(entropy(total) - children[valid].min())
