"""Cost-sensitive learners for step-by-step diagnosis.

A pure library (numpy and scikit-learn only): one cost model, one policy
interface, and the learners, evaluator and serializers built on them.
"""

from .costs import CostModel
from .policy import Action, Classify, Extract, Policy, Reject, decide

__all__ = [
    "Action",
    "Classify",
    "CostModel",
    "Extract",
    "Policy",
    "Reject",
    "decide",
]
