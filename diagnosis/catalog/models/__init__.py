"""The catalog's models: datasets and their cases, priced tests, groups and error matrices,
and their change history.

They keep the tables they had in the diagnosis app (``db_table``), the history too
(``table_name``).
"""

from . import audit  # noqa: F401  (registers the catalog's change history)
from .datasets import Dataset, DatasetCase, DiagnosticTest, ErrorMatrix, TestGroup

__all__ = [
    "Dataset",
    "DatasetCase",
    "DiagnosticTest",
    "ErrorMatrix",
    "TestGroup",
]
