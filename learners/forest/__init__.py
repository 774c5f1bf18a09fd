"""Forests of cost-aware trees: BudgetRF (paper 002)."""

from .budget_rf import ALPHA_GRID, BudgetRFClassifier

__all__ = ["ALPHA_GRID", "BudgetRFClassifier"]
