"""A dataset's prices as they are now (read from its tests), as a snapshot or a CostModel."""

from __future__ import annotations

from diagnosis.shared.costs import CostSnapshot, cost_snapshot_of
from learners import CostModel

__all__ = ["cost_model_for", "cost_snapshot"]


def cost_snapshot(dataset) -> CostSnapshot:
    """The dataset's current prices, test names, words, generated marks and formulas."""
    return cost_snapshot_of(dataset, list(dataset.tests.select_related("group").order_by("index")))


def cost_model_for(dataset) -> CostModel:
    """The dataset's current prices as a CostModel (price 0 = free; derived tests by index)."""
    return cost_snapshot(dataset).prices
