"""Database models: datasets and their priced tests, trained models, diagnosis cases."""

from .approval import ModelDecision
from .audit import CaseAccess
from .cases import DiagnosisCase, DiagnosisStep
from .confirmations import ConfirmedDiagnosis
from .datasets import Dataset, DatasetCase, DiagnosticTest, ErrorMatrix, TestGroup
from .selection import CandidateMeasurement
from .teams import Team
from .training import TrainedModel, TrainingCheckpoint

__all__ = [
    "CandidateMeasurement",
    "CaseAccess",
    "ConfirmedDiagnosis",
    "Dataset",
    "DatasetCase",
    "DiagnosisCase",
    "DiagnosisStep",
    "DiagnosticTest",
    "ErrorMatrix",
    "ModelDecision",
    "Team",
    "TestGroup",
    "TrainedModel",
    "TrainingCheckpoint",
]
