"""The clinic's screens: thin views that read through ``selectors`` and write through
``services``."""

from .cases import case_detail, case_new, case_summary
from .home import home
from .trained_models import (
    model_card,
    model_decision,
    model_detail,
    model_ensemble,
    model_progress,
    model_tree,
)

__all__ = [
    "case_detail",
    "case_new",
    "case_summary",
    "home",
    "model_card",
    "model_detail",
    "model_decision",
    "model_ensemble",
    "model_progress",
    "model_tree",
]
