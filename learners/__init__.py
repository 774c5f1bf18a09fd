"""Cost-sensitive learners for step-by-step diagnosis.

A pure library (numpy and scikit-learn only): one cost model, one policy
interface, and the learners, evaluator and serializers built on them.
Learners are imported on first use so that ``import learners`` stays cheap.
"""

import importlib

from .costs import CostModel
from .policy import Action, Classify, Extract, Policy, Reject, decide
from .serialization import LEARNERS, ModelDocumentError, model_from_json, model_to_json

_LAZY = {
    **LEARNERS,
    "evaluate": "learners.evaluation",
    "cross_validate": "learners.evaluation",
    "EvaluationReport": "learners.evaluation",
    "CaseResult": "learners.evaluation",
    "TreeStructure": "learners.tree._structure",
}

__all__ = [
    "Action",
    "Classify",
    "CostModel",
    "Extract",
    "ModelDocumentError",
    "Policy",
    "Reject",
    "decide",
    "model_from_json",
    "model_to_json",
    *_LAZY,
]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'learners' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
