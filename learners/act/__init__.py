"""Anytime cost-sensitive trees: ACT, its cost-blind ancestor LSID3, and the ICET baseline.

ACT and LSID3 choose each split by growing sample trees under its children
(paper 000 §3); ICET searches biased test costs for EG2 with a genetic
algorithm (Turney 1995).  All three produce a
:class:`~learners.tree.TreeStructure` and share the tree learners' policy,
prediction and JSON persistence.
"""

from .act import ACTClassifier, LSID3Classifier
from .icet import ICETClassifier

__all__ = ["ACTClassifier", "ICETClassifier", "LSID3Classifier"]
