"""The members' walks the trees page draws: ``member_reach`` of BudgetRF and Boosting."""

from __future__ import annotations

import numpy as np
import pytest

from learners import BoostingClassifier, BudgetRFClassifier
from learners.policy import Extract


def _data(seed: int = 0, n: int = 300):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, (n, 4))
    y = ((X[:, 0] > 5) & (X[:, 2] > 3)).astype(int)
    flip = rng.random(n) < 0.05
    return X, np.where(flip, 1 - y, y)


@pytest.mark.parametrize(
    "model",
    [
        BudgetRFClassifier(max_trees=6, alpha=0.0, random_state=0),
        BoostingClassifier(n_trials=4, random_state=0),
    ],
    ids=["budget_rf", "boosting"],
)
def test_member_reach_is_each_trees_own_walk_and_agrees_with_the_advice(model):
    """member_reach is TreeStructure.reach per member, and the advised test is one the
    advice's ``waiting`` members (trees, or vote weight) are waiting on."""
    X, y = _data()
    model.fit(X, y)
    trees = getattr(model, "trees_", None) or model.members_
    votes = getattr(model, "alphas_", np.ones(len(trees)))
    known: dict[int, float] = {}
    for row in X[:5]:
        known = {}
        for _ in range(5):
            reaches = model.member_reach(known)
            assert [r.visited for r in reaches] == [t.reach(known).visited for t in trees]
            action = model.next_action(known)
            if not isinstance(action, Extract):
                assert all(not r.frontier for r in reaches)
                break
            waiting = sum(
                float(vote) * sum(w for n, w in r.frontier.items() if t.feature[n] == action.test)
                for t, r, vote in zip(trees, reaches, votes, strict=True)
            )
            assert waiting == pytest.approx(action.evidence.waiting)
            assert action.evidence.members == pytest.approx(float(np.sum(votes)))
            known[action.test] = float(row[action.test])
