"""Parsing an uploaded CSV into columns, codes and rows (no database access)."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.core.exceptions import ValidationError

__all__ = ["Column", "Table", "read_csv_table"]

MISSING = {"", "?", "na", "n/a", "nan", "null", "none"}
MAX_BYTES = 50 * 1024 * 1024


@dataclass
class Column:
    """One feature column: numeric, or nominal with codes in sorted order of its text values."""

    name: str
    kind: str
    choices: list[dict] = field(default_factory=list)


@dataclass
class Table:
    columns: list[Column]
    class_labels: list[str]
    rows: list[list[float | None]]
    labels: list[int]


def _text_of(file) -> str:
    if isinstance(file, (str, Path)):
        data = Path(file).read_bytes()
    else:
        if hasattr(file, "seek"):
            file.seek(0)
        data = file.read()
    if isinstance(data, bytes):
        if len(data) > MAX_BYTES:
            raise ValidationError(f"The file is larger than {MAX_BYTES // (1024 * 1024)} MB.")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ValidationError(f"The file is not UTF-8 text (byte {exc.start}).") from None
    return data


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def read_csv_table(file, *, class_column: str, categorical: Sequence[str] = ()) -> Table:
    """Parse ``file`` (path, bytes or text stream) with a header row.

    Raises ValidationError naming the row (data row, 1 = first after the header)
    and column of the first problem.
    """
    records = list(csv.reader(io.StringIO(_text_of(file))))
    if not records or not any(cell.strip() for cell in records[0]):
        raise ValidationError("The file is empty: a header row is needed.")
    header = [h.strip() for h in records[0]]
    if any(not h for h in header):
        raise ValidationError(f"Header column {header.index('') + 1} has no name.")
    duplicates = sorted({h for h in header if header.count(h) > 1})
    if duplicates:
        raise ValidationError(f"Header names repeat: {', '.join(duplicates)}.")
    if class_column not in header:
        raise ValidationError(
            f"The class column {class_column!r} is not in the header ({', '.join(header)})."
        )
    unknown = [c for c in categorical if c not in header]
    if unknown:
        raise ValidationError(f"Categorical column(s) not in the header: {', '.join(unknown)}.")
    body = [(n, r) for n, r in enumerate(records[1:], start=1) if any(c.strip() for c in r)]
    if not body:
        raise ValidationError("The file has a header but no data rows.")
    for n, record in body:
        if len(record) != len(header):
            raise ValidationError(
                f"Row {n} (line {n + 1}) has {len(record)} fields; the header has {len(header)}."
            )
    class_at = header.index(class_column)
    class_texts = []
    for n, record in body:
        text = record[class_at].strip()
        if text.lower() in MISSING:
            raise ValidationError(
                f"Row {n} (line {n + 1}), column {class_column!r}: the class is missing."
            )
        class_texts.append(text)
    class_labels = _sorted_values(set(class_texts))
    if len(class_labels) < 2:
        raise ValidationError(f"Column {class_column!r} has only one class ({class_labels[0]!r}).")
    code_of_class = {label: i for i, label in enumerate(class_labels)}

    columns: list[Column] = []
    feature_at = [i for i, h in enumerate(header) if i != class_at]
    converters = []
    for i in feature_at:
        column, convert = _column(
            header[i], [(n, r[i].strip()) for n, r in body], header[i] in categorical
        )
        columns.append(column)
        converters.append(convert)
    rows = [
        [convert(record[i].strip()) for i, convert in zip(feature_at, converters, strict=True)]
        for _, record in body
    ]
    return Table(
        columns=columns,
        class_labels=class_labels,
        rows=rows,
        labels=[code_of_class[t] for t in class_texts],
    )


def _column(name: str, cells: list[tuple[int, str]], force_nominal: bool):
    present = [(n, text) for n, text in cells if text.lower() not in MISSING]
    numeric = [(n, text) for n, text in present if _number(text) is not None]
    if not force_nominal and present and len(numeric) == len(present):
        return Column(name, "numeric"), lambda t: None if t.lower() in MISSING else _number(t)
    if not force_nominal and numeric and len(numeric) * 2 >= len(present):
        n, text = next((n, t) for n, t in present if _number(t) is None)
        raise ValidationError(
            f"Row {n} (line {n + 1}), column {name!r}: {text!r} is not a number, but the column "
            "is otherwise numeric. Fix the value, or list the column as categorical."
        )
    labels = _sorted_values({text for _, text in present})
    if not labels:
        raise ValidationError(f"Column {name!r} has no values at all.")
    code = {label: i for i, label in enumerate(labels)}
    choices = [{"code": i, "label": label} for i, label in enumerate(labels)]
    return Column(
        name, "nominal", choices
    ), lambda t: None if t.lower() in MISSING else float(code[t])


def _sorted_values(values: set[str]) -> list[str]:
    """Numbers in numeric order (so class "0" gets code 0), then text alphabetically."""
    numbers = sorted((v for v in values if _number(v) is not None), key=lambda v: _number(v))
    texts = sorted(v for v in values if _number(v) is None)
    return numbers + texts
