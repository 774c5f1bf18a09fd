"""Classify, extract or reject: the conditioned-loss model (paper 003, ALGORITHMS.md §5)."""

from ._model import DEFAULT_WINDOW_WIDTHS, ConditionedLossClassifier

__all__ = ["DEFAULT_WINDOW_WIDTHS", "ConditionedLossClassifier"]
