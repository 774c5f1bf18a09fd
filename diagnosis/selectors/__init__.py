"""Reads for the screens and the API (keyword-only, permission-checked)."""

from .cases import (
    CaseState,
    TestOption,
    advice_for,
    case_for_user,
    case_state,
    closed_cases_for_user,
    compute_case_state,
    open_cases_for_user,
    team_cases_for_user,
)
from .costs import cost_model_for
from .explanations import Explanation, advice_headline, explain
from .models import model_report, models_for_user, visible_model
from .tree import model_has_tree, tree_layout

__all__ = [
    "CaseState",
    "Explanation",
    "TestOption",
    "advice_for",
    "advice_headline",
    "case_for_user",
    "case_state",
    "closed_cases_for_user",
    "compute_case_state",
    "cost_model_for",
    "explain",
    "model_has_tree",
    "model_report",
    "models_for_user",
    "open_cases_for_user",
    "team_cases_for_user",
    "tree_layout",
    "visible_model",
]
