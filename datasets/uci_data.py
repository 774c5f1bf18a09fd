"""UCI ``.data`` files: comma- or whitespace-separated rows, ``?`` for a missing value."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .dataset import UCIFormatError

__all__ = ["parse_number", "pick_data_file", "read_rows"]


def pick_data_file(folder: Path, name: str | None) -> Path:
    """The folder's ``<name>.data``, or its only ``.data`` file when ``name`` is None."""
    candidates = sorted(folder.glob("*.data"))
    if name is not None:
        chosen = folder / f"{name}.data"
        if chosen not in candidates:
            raise UCIFormatError(
                f"{folder}: no {name}.data (found {[c.name for c in candidates] or 'none'})"
            )
        return chosen
    if len(candidates) != 1:
        raise UCIFormatError(
            f"{folder}: expected one .data file, found {[c.name for c in candidates] or 'none'}; "
            "pass name= to choose"
        )
    return candidates[0]


def read_rows(data_file: Path, n_columns: int) -> list[tuple[int, list[str]]]:
    """``(line number, fields)`` of every non-blank row, each checked to have ``n_columns``."""
    try:
        text = data_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UCIFormatError(f"{data_file.name}: cannot be read ({error})") from None
    rows = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        fields = [f.strip() for f in line.split(",")] if "," in line else line.split()
        if len(fields) != n_columns:
            raise UCIFormatError(
                f"{data_file.name}: row {line_number} has {len(fields)} columns, "
                f"expected {n_columns}"
            )
        rows.append((line_number, fields))
    if not rows:
        raise UCIFormatError(f"{data_file.name}: no data rows")
    return rows


def parse_number(text: str, data_file: Path, line_number: int, column: str) -> float:
    """The cell as a float (NaN for ``?``); anything else is an error naming row and column."""
    if text == "?":
        return float("nan")
    try:
        value = float(text)
    except ValueError:
        raise UCIFormatError(
            f"{data_file.name}: row {line_number}, column {column!r}: {text!r} is not a number"
        ) from None
    if not np.isfinite(value):
        raise UCIFormatError(
            f"{data_file.name}: row {line_number}, column {column!r}: {text!r} is not finite"
        )
    return value
