"""Greedy cost-sensitive decision trees sharing one builder and one tree layout.

Public: the five learners, :class:`TreeStructure` (and :func:`other_edge`, the
"any other category" edge of a one-vs-rest split), :func:`export_text`, and
C4.5's pessimistic error (:func:`upper_confidence_limit`,
:func:`expected_error`) for other tree learners (ACT) to reuse.
"""

from ._base import TREE_SHAPE_RULES, GreedyTreeClassifier, TreePolicyMixin
from ._structure import LEAF, TreeStructure, other_edge
from .classifiers import (
    C45Classifier,
    CSID3Classifier,
    DTMCClassifier,
    EG2Classifier,
    IDXClassifier,
)
from .export import export_text
from .optimal import OptimalTreeClassifier
from .pessimistic import expected_error, upper_confidence_limit

__all__ = [
    "LEAF",
    "TREE_SHAPE_RULES",
    "C45Classifier",
    "CSID3Classifier",
    "DTMCClassifier",
    "EG2Classifier",
    "GreedyTreeClassifier",
    "IDXClassifier",
    "OptimalTreeClassifier",
    "TreePolicyMixin",
    "TreeStructure",
    "export_text",
    "expected_error",
    "other_edge",
    "upper_confidence_limit",
]
