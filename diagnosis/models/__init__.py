"""Database models: datasets and their priced tests, trained models (the cases are the clinic's)."""

from . import audit  # noqa: F401  (registers the catalog's change history)
from .approval import ModelDecision
from .datasets import Dataset, DatasetCase, DiagnosticTest, ErrorMatrix, TestGroup
from .selection import CandidateMeasurement
from .training import TrainedModel, TrainingCheckpoint

__all__ = [
    "CandidateMeasurement",
    "Dataset",
    "DatasetCase",
    "DiagnosticTest",
    "ErrorMatrix",
    "ModelDecision",
    "TestGroup",
    "TrainedModel",
    "TrainingCheckpoint",
]
