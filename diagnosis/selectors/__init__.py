"""Reads for the screens and the API (keyword-only, permission-checked).

The cases' reads are the clinic's (``diagnosis.clinic.selectors``).
"""

from .costs import cost_model_for
from .models import model_report, visible_model

__all__ = ["cost_model_for", "model_report", "visible_model"]
