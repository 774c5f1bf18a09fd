"""Which features are free, bought or derived, and the states of the model.

A *state* is the set S of priced tests already bought, encoded as a bit mask
over the priced tests (bit i = ``priced[i]``).  The classifier of a state sees
the free features, the tests of S, and every derived feature whose inputs are
all among those (e.g. thyroid FTI once TT4 and T4U are known).  A derived
feature is never bought on its own: it simply becomes usable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..costs import CostModel

__all__ = ["FeatureRoles"]


@dataclass(frozen=True)
class FeatureRoles:
    """The free, priced and derived features of one cost model."""

    n_features: int
    free: tuple[int, ...]
    priced: tuple[int, ...]
    derived: dict

    @classmethod
    def from_cost_model(cls, cost_model: CostModel) -> FeatureRoles:
        """Free = non-derived features with zero price; priced = the other non-derived ones."""
        derived = {int(k): tuple(int(s) for s in v) for k, v in cost_model.derived.items()}
        free, priced = [], []
        for feature in range(cost_model.n_features):
            if feature in derived:
                continue
            if cost_model.marginal_cost(feature, ()) == 0.0:
                free.append(feature)
            else:
                priced.append(feature)
        return cls(cost_model.n_features, tuple(free), tuple(priced), derived)

    @property
    def n_states(self) -> int:
        """2^m, m = number of priced tests."""
        return 1 << len(self.priced)

    def bought(self, state: int) -> tuple[int, ...]:
        """Feature indices of the priced tests in ``state``."""
        return tuple(f for i, f in enumerate(self.priced) if state >> i & 1)

    def state_of(self, features) -> int:
        """Bit mask of the priced tests among ``features``."""
        present = {int(f) for f in features}
        return sum(1 << i for i, f in enumerate(self.priced) if f in present)

    def with_test(self, state: int, test: int) -> int:
        """State after buying the priced test ``test`` (a feature index)."""
        return state | (1 << self.priced.index(test))

    def usable(self, state: int) -> np.ndarray:
        """Sorted feature indices the classifier of ``state`` may use."""
        known = set(self.free) | set(self.bought(state))
        changed = True
        while changed:  # derived features may themselves feed derived features
            changed = False
            for target, sources in self.derived.items():
                if target not in known and all(s in known for s in sources):
                    known.add(target)
                    changed = True
        return np.array(sorted(known), dtype=np.int64)
