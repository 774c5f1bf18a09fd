"""What the readers return (:class:`UCIDataset`) and how they fail (:class:`UCIFormatError`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from learners import CostModel

__all__ = ["UCIDataset", "UCIFormatError", "strip_comment"]


class UCIFormatError(ValueError):
    """A UCI file could not be read; the message names the file, row and column."""


@dataclass(frozen=True)
class UCIDataset:
    """One dataset read from a UCI folder.

    Attributes
    ----------
    name : str
    feature_names : list of str
    categorical : list of int
        Indices of nominal features (values are the file's codes).
    X : ndarray of float, shape (n_cases, n_features)
        NaN marks a missing value.
    y : ndarray of int, shape (n_cases,)
        Index into ``class_labels``.
    class_labels : list of str
    costs : learners.CostModel or None
        Turney's prices, or None when the folder has no costs.
    description : str
    formulas : dict of str to str
        How a derived feature follows from its inputs (``learners.derived``
        syntax), e.g. ``{"FTI": "TT4 / (10 * T4U)"}``; empty when unknown.
    """

    name: str
    feature_names: list[str]
    categorical: list[int]
    X: np.ndarray
    y: np.ndarray
    class_labels: list[str]
    costs: CostModel | None
    description: str = ""
    formulas: dict[str, str] = field(default_factory=dict)

    @property
    def class_counts(self) -> dict[str, int]:
        """Number of cases of each class, by label."""
        counts = np.bincount(self.y, minlength=len(self.class_labels))
        return {label: int(n) for label, n in zip(self.class_labels, counts, strict=True)}


# C4.5's .names files and Turney's cost files both comment with '|' to the end of the line.
_COMMENT = re.compile(r"\|.*$")


def strip_comment(line: str) -> str:
    """``line`` without its ``| ...`` comment and surrounding blanks."""
    return _COMMENT.sub("", line).strip()
