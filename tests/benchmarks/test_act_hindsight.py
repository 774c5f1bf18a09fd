"""benchmarks/act_hindsight: a forced candidate is the tree ACT itself fits when its inner
cross-validation picks that candidate, and every candidate has its own name."""

import numpy as np

from benchmarks.act_hindsight import describe, forced_candidate
from learners.act import ACTClassifier
from learners.costs import CostModel


def _priced_concept(seed: int = 0):
    """200 cases, 4 numeric tests (prices 1, 2, 5, 20), the class set by tests 1 and 3
    with 10% of labels flipped: a cheap test that helps and an expensive one that helps more."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(200, 4))
    y = ((X[:, 1] + 2.0 * X[:, 3]) > 0).astype(int)
    flip = rng.random(200) < 0.1
    y[flip] = 1 - y[flip]
    return X, y, CostModel([1.0, 2.0, 5.0, 20.0])


def test_acts_own_tree_is_one_of_its_forced_candidates():
    """ACT's default fit (inner CV, then a refit of the winner) builds the same tree as the
    forced fit of one of its candidates: the hindsight table measures ACT's real choices."""
    X, y, costs = _priced_concept()
    kw = dict(test_costs=costs, cost_matrix=50.0 * (1 - np.eye(2)), r=3, random_state=0)
    chosen = ACTClassifier(**kw).fit(X, y).tree_.to_dict()
    probe = ACTClassifier(**kw).fit(X, y)
    n = len(probe._candidates(probe._settings(X.shape[0])))
    forced = [forced_candidate(i)(**kw).fit(X, y).tree_.to_dict() for i in range(n)]
    assert chosen in forced
    assert len({str(t) for t in forced}) > 1  # the candidates really are different trees


def test_every_candidate_has_its_own_name():
    """The table's rows are told apart: no two of ACT's candidates print the same name."""
    X, y, costs = _priced_concept()
    probe = ACTClassifier(test_costs=costs, cost_matrix=50.0 * (1 - np.eye(2)), r=3).fit(X, y)
    candidates = probe._candidates(probe._settings(X.shape[0]))
    names = [describe(c) for c in candidates]
    assert len(set(names)) == len(names) == len(candidates)
