"""The clinic's models: cases and their steps, confirmed diagnoses, the case audit, teams.

They keep the tables they had in the diagnosis app (``db_table``).
"""

from .audit import CaseAccess
from .cases import DiagnosisCase, DiagnosisStep
from .confirmations import ConfirmedDiagnosis
from .teams import Team

__all__ = ["CaseAccess", "ConfirmedDiagnosis", "DiagnosisCase", "DiagnosisStep", "Team"]
