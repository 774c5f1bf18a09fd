"""The two simple strategies every experiment also runs, as rows beside the learners.

On the same folds and matrices as the learners (``learners.baselines``): a learner that is not
cheaper than ordering nothing is never deployed from the bench.  Named here because both the
experiments' writes (``services.experiments``, ``services.experiment_runner``) and their reads
(``selectors.experiment_results``) tell a baseline row from a learner's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["BASELINES", "ORDER_EVERYTHING", "ORDER_NOTHING", "is_baseline"]

ORDER_NOTHING = "order_nothing"
ORDER_EVERYTHING = "order_everything"
BASELINES: tuple[dict[str, Any], ...] = (
    {"key": ORDER_NOTHING, "params": {}, "label": "Order nothing (no test)", "baseline": True},
    {
        "key": ORDER_EVERYTHING,
        "params": {},
        "label": "Order every test, then a C4.5 tree",
        "baseline": True,
    },
)


def is_baseline(entry: Mapping[str, Any]) -> bool:
    """Whether an experiment's learner entry is one of :data:`BASELINES`."""
    return bool(entry.get("baseline"))
