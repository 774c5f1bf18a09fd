"""The clinic's reads for the screens and the API (keyword-only, permission-checked)."""

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
from .explanations import Explanation, advice_headline, explain
from .models import models_for_user
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
    "explain",
    "model_has_tree",
    "models_for_user",
    "open_cases_for_user",
    "team_cases_for_user",
    "tree_layout",
]
