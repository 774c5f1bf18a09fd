"""Parsing an uploaded CSV into columns, codes and rows (no database access)."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.core.exceptions import ValidationError

__all__ = ["Column", "Table", "read_csv_records", "read_csv_table"]

MISSING = {"", "?", "na", "n/a", "nan", "null", "none"}
# What one upload may hold. Beyond these a request would run for minutes and take gigabytes
# (3,000 classes in 27 KB once took 12 s and 617 MB); an error matrix is K x K cells to edit.
MAX_BYTES = 20 * 1024 * 1024
MAX_ROWS = 100_000
MAX_COLUMNS = 300
MAX_CLASSES = 50
MAX_CHOICES = 1_000  # distinct values of one nominal column
MAX_NAME = 100  # a header becomes a test's name (DiagnosticTest.name)
MAX_CELL = 1_000  # characters in one cell; csv's own limit is 131,072


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
    data: bytes | str
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
    if len(data) > MAX_BYTES:
        raise ValidationError(f"The file is larger than {MAX_BYTES // (1024 * 1024)} MB.")
    if "\x00" in data:
        line = data.count("\n", 0, data.index("\x00")) + 1
        raise ValidationError(f"Line {line} holds a NUL character: the file is not plain text.")
    return data


def _delimiter(text: str) -> str:
    """Comma, semicolon (European spreadsheets) or tab, as the header line uses it."""
    header = text.splitlines()[0] if text else ""
    try:
        return csv.Sniffer().sniff(header, delimiters=",;\t").delimiter
    except csv.Error:  # one column, or nothing to tell by: a comma
        return ","


def _records(text: str) -> list[list[str]]:
    """The CSV's records; line ends may be \\n, \\r\\n or a lone \\r (Excel for Mac), and
    fields may be separated by commas, semicolons or tabs."""
    # newline="": the csv module sees the line ends itself, as its documentation asks.
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text))
    records: list[list[str]] = []
    try:
        for record in reader:
            if len(records) > MAX_ROWS:  # the header plus MAX_ROWS data rows are allowed
                raise ValidationError(f"The file has more than {MAX_ROWS:,} data rows.")
            long_cell = next((c for c in record if len(c) > MAX_CELL), None)
            if long_cell is not None:
                column = record.index(long_cell) + 1
                raise ValidationError(
                    f"Line {reader.line_num}, column {column}: a value is longer than "
                    f"{MAX_CELL:,} characters."
                )
            records.append(record)
    except csv.Error as exc:
        if "field limit" in str(exc):  # the csv module's own cap, before our MAX_CELL check
            limit = csv.field_size_limit()
            raise ValidationError(
                f"Line {reader.line_num}: a value is longer than {limit:,} characters."
            ) from None
        raise ValidationError(f"Line {reader.line_num}: not readable as CSV ({exc}).") from None
    return records


def read_csv_records(file) -> list[list[str]]:
    """The records of an uploaded CSV file (or a path), read with the same limits
    and checks as a dataset upload (size, UTF-8, NUL, cell length, row count); for uploads
    that are not datasets, whose caller checks the columns itself."""
    return _records(_text_of(file))


def _number(text: str) -> float | None:
    """The number ``text`` spells (``inf`` included), or None when it spells none."""
    try:
        return float(text)
    except ValueError:
        return None


def read_csv_table(file, *, class_column: str, categorical: Sequence[str] = ()) -> Table:
    """Parse ``file`` (path, bytes or text stream) with a header row.

    Raises ValidationError naming the row (data row, 1 = first after the header)
    and column of the first problem.
    """
    records = _records(_text_of(file))
    if not records or not any(cell.strip() for cell in records[0]):
        raise ValidationError("The file is empty: a header row is needed.")
    header = [h.strip() for h in records[0]]
    if len(header) > MAX_COLUMNS:
        raise ValidationError(f"The header has {len(header)} columns; at most {MAX_COLUMNS}.")
    if any(not h for h in header):
        raise ValidationError(f"Header column {header.index('') + 1} has no name.")
    too_long = next((i for i, h in enumerate(header) if len(h) > MAX_NAME), None)
    if too_long is not None:
        raise ValidationError(
            f"Header column {too_long + 1} is {len(header[too_long])} characters long; "
            f"a test name has at most {MAX_NAME}."
        )
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
    if len(class_labels) > MAX_CLASSES:
        raise ValidationError(
            f"Column {class_column!r} has {len(class_labels)} different classes; at most "
            f"{MAX_CLASSES} (is it the right class column?)."
        )
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
    infinite = next(((n, t) for n, t in numeric if not math.isfinite(_number(t) or 0.0)), None)
    if not force_nominal and infinite is not None:
        n, text = infinite
        raise ValidationError(
            f"Row {n} (line {n + 1}), column {name!r}: {text!r} is not a finite number. "
            "Leave the cell empty (or '?') if the value is missing."
        )
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
    if len(labels) > MAX_CHOICES:
        raise ValidationError(
            f"Column {name!r} has {len(labels):,} different values; a categorical column may "
            f"have at most {MAX_CHOICES:,}."
        )
    code = {label: i for i, label in enumerate(labels)}
    choices = [{"code": i, "label": label} for i, label in enumerate(labels)]
    return Column(
        name, "nominal", choices
    ), lambda t: None if t.lower() in MISSING else float(code[t])


def _sorted_values(values: set[str]) -> list[str]:
    """Numbers in numeric order (so class "0" gets code 0), then text alphabetically."""
    numbers = sorted((v for v in values if _number(v) is not None), key=float)
    texts = sorted(v for v in values if _number(v) is None)
    return numbers + texts
