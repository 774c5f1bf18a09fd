"""The training's models: trained models and their checkpoints, approval decisions, the
selection's candidate measurements.

They keep the tables they had in the diagnosis app (``db_table``).
"""

from .approval import ModelDecision
from .selection import CandidateMeasurement
from .training import TrainedModel, TrainingCheckpoint

__all__ = ["CandidateMeasurement", "ModelDecision", "TrainedModel", "TrainingCheckpoint"]
