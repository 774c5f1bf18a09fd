"""Database models: datasets and their priced tests (trained models are the training's, cases
the clinic's)."""

from . import audit  # noqa: F401  (registers the catalog's change history)
from .datasets import Dataset, DatasetCase, DiagnosticTest, ErrorMatrix, TestGroup

__all__ = [
    "Dataset",
    "DatasetCase",
    "DiagnosticTest",
    "ErrorMatrix",
    "TestGroup",
]
