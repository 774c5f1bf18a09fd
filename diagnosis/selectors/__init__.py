"""Reads for the screens and the API (keyword-only, permission-checked)."""

from ..services.costs import cost_model_for
from .cases import (
    CaseState,
    TestOption,
    action_to_dict,
    case_state,
    compute_case_state,
    open_cases_for_user,
)
from .models import model_report, models_for_user
from .tree import tree_layout

__all__ = [
    "CaseState",
    "TestOption",
    "action_to_dict",
    "case_state",
    "compute_case_state",
    "cost_model_for",
    "model_report",
    "models_for_user",
    "open_cases_for_user",
    "tree_layout",
]
