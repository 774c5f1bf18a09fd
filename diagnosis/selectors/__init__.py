"""Reads for the screens and the API (keyword-only, permission-checked).

The trained models' reads are the training's (``diagnosis.training.selectors``), the cases'
the clinic's (``diagnosis.clinic.selectors``).
"""

from .costs import cost_model_for

__all__ = ["cost_model_for"]
