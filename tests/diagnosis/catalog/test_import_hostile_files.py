"""Uploads that once crashed the import (500s) or ran for minutes get a clear error instead."""

from __future__ import annotations

import io

import pytest
from django.core.exceptions import ValidationError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnosis.catalog.models import Dataset, DatasetCase, DiagnosticTest
from diagnosis.catalog.services.datasets import import_csv
from diagnosis.shared import csv_table


def _csv(data: str | bytes) -> io.BytesIO:
    upload = io.BytesIO(data.encode() if isinstance(data, str) else data)
    upload.name = "upload.csv"
    return upload


def _nothing_saved() -> bool:
    return not (
        Dataset.objects.exists() or DatasetCase.objects.exists() or DiagnosticTest.objects.exists()
    )


def test_excel_for_mac_line_ends_import_like_unix_ones(model_admin):
    """A file whose lines end in a lone CR (old Excel) gives the same rows as one ending in LF."""
    text = "age,sex,outcome\r63,M,sick\r41,F,healthy\r57,F,sick\r"
    dataset = import_csv(user=model_admin, name="Mac", file=_csv(text), class_column="outcome")
    rows = list(dataset.cases.order_by("id").values_list("values", "label"))
    assert rows == [([63.0, 1.0], 1), ([41.0, 0.0], 0), ([57.0, 0.0], 1)]


@pytest.mark.parametrize("separator", [";", "\t"])
def test_semicolon_and_tab_separated_files_import_like_comma_separated_ones(model_admin, separator):
    """A European spreadsheet's ';' or a tab between fields reads the same rows as commas."""
    text = "\n".join(
        separator.join(row)
        for row in (["age", "sex", "outcome"], ["63", "M", "sick"], ["41", "F", "healthy"])
    )
    dataset = import_csv(user=model_admin, name="Sep", file=_csv(text), class_column="outcome")
    rows = list(dataset.cases.order_by("id").values_list("values", "label"))
    assert rows == [([63.0, 1.0], 1), ([41.0, 0.0], 0)]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("a,y\n1,x\n2,h\x00i\n", r"Line 3 holds a NUL character"),
        ("a" * 101 + ",y\n1,x\n2,z\n", r"Header column 1 is 101 characters long"),
        ("a,y\n1,x\n2," + "z" * 1_001 + "\n", r"Line 3, column 2: a value is longer than 1,000"),
        ("a,y\n1,x\n2," + "z" * 131_073 + "\n", r"Line 3: a value is longer than 131,072"),
        ("a,y\n1,x\ninf,z\n3,x\n", r"Row 2 \(line 3\), column 'a': 'inf' is not a finite number"),
        ("a,y\n1,x\n-Infinity,z\n", r"'-Infinity' is not a finite number"),
        ("a,y\n" + "".join(f"{i},c{i}\n" for i in range(51)), r"51 different classes; at most 50"),
        (",".join(f"t{i}" for i in range(301)) + "\n", r"301 columns; at most 300"),
        (b"a,y\n1,\xff\n", r"not UTF-8 text \(byte 6\)"),
    ],
)
def test_hostile_file_is_refused_with_where_and_why_and_saves_nothing(model_admin, data, message):
    """Each hostile upload raises a ValidationError naming line or column; the DB is untouched."""
    with pytest.raises(ValidationError, match=message):
        import_csv(user=model_admin, name="Bad", file=_csv(data), class_column="y")
    assert _nothing_saved()


def test_more_rows_than_the_limit_are_refused(model_admin, monkeypatch):
    """One data row over MAX_ROWS is refused before anything is built."""
    # A smaller limit keeps the test fast; the reader's counting is the same at any size.
    monkeypatch.setattr(csv_table, "MAX_ROWS", 10)
    text = "a,y\n" + "".join(f"{i},{'xz'[i % 2]}\n" for i in range(11))
    with pytest.raises(ValidationError, match="more than 10 data rows"):
        import_csv(user=model_admin, name="Long", file=_csv(text), class_column="y")
    text_at_limit = "a,y\n" + "".join(f"{i},{'xz'[i % 2]}\n" for i in range(10))
    dataset = import_csv(user=model_admin, name="Ok", file=_csv(text_at_limit), class_column="y")
    assert dataset.cases.count() == 10


def test_a_categorical_column_with_too_many_values_is_refused(model_admin, monkeypatch):
    """A nominal column with more distinct values than MAX_CHOICES is refused by name."""
    monkeypatch.setattr(csv_table, "MAX_CHOICES", 3)
    text = "a,y\np,x\nq,z\nr,x\ns,z\n"
    with pytest.raises(ValidationError, match=r"Column 'a' has 4 different values"):
        import_csv(user=model_admin, name="Wide", file=_csv(text), class_column="y")


CELL = st.one_of(
    st.sampled_from(["", "?", "1", "-2.5", "inf", "nan", "1e999", "x", "M", '"', "\r", "\n", ","]),
    st.text(max_size=8),
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    header=st.lists(st.text(max_size=6), min_size=1, max_size=4),
    rows=st.lists(st.lists(CELL, min_size=0, max_size=5), max_size=6),
    line_end=st.sampled_from(["\n", "\r\n", "\r"]),
    junk=st.binary(max_size=12),
)
def test_any_upload_imports_or_says_why_and_saves_nothing(
    model_admin, header, rows, line_end, junk
):
    """Fuzz: an arbitrary upload either imports whole or raises ValidationError leaving no rows."""
    text = line_end.join(",".join(cells) for cells in [[*header, "y"], *rows])
    data = text.encode("utf-8", "surrogatepass") + junk
    before = Dataset.objects.count()
    try:
        dataset = import_csv(user=model_admin, name=f"F{before}", file=_csv(data), class_column="y")
    except ValidationError as error:
        assert str(error.messages[0]).strip()
        assert Dataset.objects.count() == before
    else:
        assert dataset.cases.count() == len(dataset.cases.all())
        dataset.delete()
