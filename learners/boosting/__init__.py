"""Boosting and Cost-Boosting of pruned C4.5 trees (paper 004, ALGORITHMS.md §7).

:class:`BoostingClassifier` grows its trials with the trees' one builder
(:mod:`learners.tree._builder`) and walks them with
:class:`~learners.tree.TreeStructure`; the weight updates are the plain
functions of :mod:`learners.boosting._weights`.
"""

from ._model import BoostingClassifier
from ._weights import (
    adaboost_alpha,
    adaboost_update,
    check_unity,
    cost_boosting_update,
    reset_weights,
    unit_error_scale,
    weighted_error,
)

__all__ = [
    "BoostingClassifier",
    "adaboost_alpha",
    "adaboost_update",
    "check_unity",
    "cost_boosting_update",
    "reset_weights",
    "unit_error_scale",
    "weighted_error",
]
