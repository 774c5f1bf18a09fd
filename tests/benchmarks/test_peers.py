"""The live peers of the issue-12 benchmarks: the tuned sklearn tree and the paired test."""

import numpy as np

from benchmarks.act_report import wilcoxon_p
from benchmarks.sklearn_policy import LEAF_GRID, TunedSklearnTreePolicy


def test_tuned_peer_keeps_large_leaves_on_noise_and_fits_a_clean_concept():
    """Labels unrelated to the features: the inner CV keeps a leaf of 10 cases or more (near
    the majority vote); a label the features decide: a leaf size that still fits it."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    noise = (rng.random(300) < 0.3).astype(int)
    clean = ((X[:, 0] > 0) ^ (X[:, 1] > 0.5)).astype(int)
    kwargs = dict(test_costs=[1.0, 1.0, 1.0], cost_matrix=[[0, 100], [100, 0]])
    on_noise = TunedSklearnTreePolicy(**kwargs).fit(X, noise)
    on_clean = TunedSklearnTreePolicy(**kwargs).fit(X, clean)
    assert on_noise.chosen_leaf_ >= 10
    assert (on_clean.predict(X) == clean).mean() >= 0.97
    assert {on_noise.chosen_leaf_, on_clean.chosen_leaf_} <= set(LEAF_GRID)


def test_two_sided_wilcoxon_is_small_only_for_a_consistent_difference():
    """Higher on each of 20 pairs: p < 0.001; equal pairs: p = 1."""
    base = np.linspace(1.0, 2.0, 20)
    assert wilcoxon_p(base + 0.5, base) < 0.001
    assert wilcoxon_p(base, base.copy()) == 1.0
