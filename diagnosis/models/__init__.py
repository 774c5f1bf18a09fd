"""Database models: datasets and their priced tests, trained models, diagnosis cases."""

from .api_tokens import ApiToken
from .cases import DiagnosisCase, DiagnosisStep
from .datasets import Dataset, DatasetCase, DiagnosticTest, ErrorMatrix, TestGroup
from .experiments import Experiment, ExperimentTask
from .training import TrainedModel, TrainingCheckpoint

__all__ = [
    "ApiToken",
    "Dataset",
    "DatasetCase",
    "DiagnosisCase",
    "DiagnosisStep",
    "DiagnosticTest",
    "ErrorMatrix",
    "Experiment",
    "ExperimentTask",
    "TestGroup",
    "TrainedModel",
    "TrainingCheckpoint",
]
