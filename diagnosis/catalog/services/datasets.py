"""Creating datasets: from a CSV upload, a UCI folder, or code (the demo data)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from diagnosis.permissions import require_model_admin
from diagnosis.shared.csv_table import read_csv_table
from diagnosis.shared.validation import (
    clean_choices,
    clean_formula,
    clean_matrix,
    clean_plausible_range,
    clean_price_pair,
    clean_range,
    clean_reject_cost,
)
from learners.derived import DEFAULT_TOLERANCE

from ..models import Dataset, DatasetCase, DiagnosticTest, ErrorMatrix, TestGroup

__all__ = ["create_dataset", "import_csv", "import_uci_folder", "save_error_matrix"]

_TEST_FIELDS = frozenset(DiagnosticTest.EDITABLE_FIELDS)


@transaction.atomic
def create_dataset(
    *,
    name: str,
    class_labels: Sequence[str],
    tests: Sequence[Mapping[str, Any]],
    rows: Iterable[Sequence[float | None]],
    labels: Iterable[int],
    description: str = "",
    source: str = "",
    error_matrices: Sequence[Mapping[str, Any]] = (),
) -> Dataset:
    """Save a dataset with its tests (column order = index), cases and error matrices.

    ``tests`` are dicts with keys among ``name, label, unit, kind, min_value,
    max_value, plausible_min, plausible_max, integer_only, choices, price,
    discounted_price, group (name), delayed, derived_from (names), formula,
    formula_tolerance``.  Nothing is saved when
    anything is invalid.
    """
    name = (name or "").strip()
    if not name:
        raise ValidationError("The dataset needs a name.")
    if Dataset.objects.filter(name=name).exists():
        raise ValidationError(f"A dataset named {name!r} already exists.")
    class_labels = [str(c) for c in class_labels]
    if len(class_labels) < 2 or len(set(class_labels)) != len(class_labels):
        raise ValidationError(f"A dataset needs at least two distinct classes, got {class_labels}.")
    _check_test_names(tests)
    dataset = Dataset.objects.create(
        name=name, description=description, class_labels=class_labels, source=source
    )
    groups: dict[str, TestGroup] = {}
    for index, spec in enumerate(tests):
        _create_test(dataset, index, spec, groups)
    _create_cases(dataset, rows, labels, tests)
    for matrix in error_matrices:
        save_error_matrix(
            dataset=dataset,
            name=matrix["name"],
            matrix=matrix["matrix"],
            reject_cost=matrix.get("reject_cost"),
        )
    return dataset


def save_error_matrix(*, dataset: Dataset, name: str, matrix, reject_cost=None) -> ErrorMatrix:
    """Create or update the error matrix ``name`` of ``dataset`` after validating it."""
    cleaned = clean_matrix(matrix, dataset.class_labels)
    reject = clean_reject_cost(reject_cost)
    obj, _ = ErrorMatrix.objects.update_or_create(
        dataset=dataset, name=name, defaults={"matrix": cleaned, "reject_cost": reject}
    )
    return obj


def _check_test_names(tests: Sequence[Mapping[str, Any]]) -> None:
    if not tests:
        raise ValidationError("A dataset needs at least one test (column).")
    seen = set()
    for spec in tests:
        unknown = set(spec) - _TEST_FIELDS
        if unknown:
            raise ValidationError(f"Unknown test field(s): {', '.join(sorted(unknown))}")
        test_name = str(spec.get("name", "")).strip()
        if not test_name:
            raise ValidationError("Every test needs a name.")
        if test_name in seen:
            raise ValidationError(f"Two tests are named {test_name!r}; names must be unique.")
        seen.add(test_name)
    for spec in tests:
        for source in spec.get("derived_from") or ():
            if source not in seen:
                raise ValidationError(
                    f"Test {spec['name']!r} is derived from unknown test {source!r}."
                )


def _create_test(dataset: Dataset, index: int, spec: Mapping[str, Any], groups: dict) -> None:
    test_name = str(spec["name"]).strip()
    kind = spec.get("kind", DiagnosticTest.NUMERIC)
    if kind not in (DiagnosticTest.NUMERIC, DiagnosticTest.NOMINAL):
        raise ValidationError(
            f"Test {test_name!r}: kind must be 'numeric' or 'nominal', got {kind!r}."
        )
    shown = str(spec.get("label") or "").strip() or test_name  # errors name it as clinicians do
    price, discounted = clean_price_pair(
        spec.get("price", 1.0), spec.get("discounted_price", spec.get("price", 1.0)), name=shown
    )
    low, high = clean_range(spec.get("min_value"), spec.get("max_value"), name=shown)
    integer_only = spec.get("integer_only", False)
    if not isinstance(integer_only, bool):
        raise ValidationError(f"Test {shown!r}: integer_only must be true or false.")
    plausible_low, plausible_high = clean_plausible_range(
        spec.get("plausible_min"),
        spec.get("plausible_max"),
        min_value=low,
        max_value=high,
        integer_only=integer_only,
        name=shown,
        unit=str(spec.get("unit") or ""),
    )
    choices = []
    if kind == DiagnosticTest.NOMINAL:
        choices = clean_choices(spec.get("choices"), name=shown)
        low = high = plausible_low = plausible_high = None
        integer_only = False  # a code is a whole number anyway
    group = None
    group_name = spec.get("group")
    if group_name:
        group = groups.get(group_name)
        if group is None:
            group = groups[group_name] = TestGroup.objects.create(dataset=dataset, name=group_name)
    derived_from = [str(n) for n in spec.get("derived_from") or []]
    formula = clean_formula(
        spec.get("formula"),
        spec.get("formula_tolerance"),
        derived_from=derived_from,
        name=test_name,
    )
    DiagnosticTest.objects.create(
        dataset=dataset,
        index=index,
        name=test_name,
        label=spec.get("label") or test_name,
        unit=spec.get("unit", ""),
        kind=kind,
        min_value=low,
        max_value=high,
        plausible_min=plausible_low,
        plausible_max=plausible_high,
        integer_only=integer_only,
        choices=choices,
        price=price,
        discounted_price=discounted,
        group=group,
        delayed=bool(spec.get("delayed", False)),
        derived_from=derived_from,
        formula=formula.text if formula else "",
        formula_tolerance=formula.tolerance if formula else DEFAULT_TOLERANCE,
    )


def _create_cases(dataset, rows, labels, tests) -> None:
    n_features = len(tests)
    k = len(dataset.class_labels)
    codes = [
        {c["code"] for c in spec.get("choices") or []} if spec.get("kind") == "nominal" else None
        for spec in tests
    ]
    batch = []
    count = 0
    for row_number, (row, label) in enumerate(zip(rows, labels, strict=True), start=1):
        if len(row) != n_features:
            raise ValidationError(f"Row {row_number} has {len(row)} values, expected {n_features}.")
        values = []
        for column, value in enumerate(row):
            values.append(_clean_value(value, row_number, tests[column]["name"], codes[column]))
        label = int(label)
        if not 0 <= label < k:
            raise ValidationError(f"Row {row_number}: class code {label} is not in 0..{k - 1}.")
        batch.append(DatasetCase(dataset=dataset, values=values, label=label))
        count += 1
        if len(batch) >= 1000:
            DatasetCase.objects.bulk_create(batch)
            batch = []
    DatasetCase.objects.bulk_create(batch)
    if count == 0:
        raise ValidationError("The dataset has no rows.")


def _clean_value(value, row_number: int, column: str, codes) -> float | None:
    if value is None:
        return None
    number = float(value)
    if math.isnan(number):
        return None
    if not math.isfinite(number):
        raise ValidationError(f"Row {row_number}, column {column!r}: {value!r} is not finite.")
    if codes is not None and int(number) not in codes:
        raise ValidationError(
            f"Row {row_number}, column {column!r}: code {number:g} is not one of its choices."
        )
    return number


# --------------------------------------------------------------------- imports
def import_csv(
    *,
    user,
    name: str,
    file,
    class_column: str,
    categorical: Sequence[str] = (),
    description: str = "",
) -> Dataset:
    """A dataset from a CSV with a header row; ``class_column`` holds the class.

    Numeric columns are detected; the others (and those in ``categorical``) become
    nominal tests with integer codes.  Every test costs 1 until an admin prices it.
    Errors name the row and column; nothing is saved on error.
    """
    require_model_admin(user)
    table = read_csv_table(file, class_column=class_column, categorical=categorical)
    tests = [
        {
            "name": col.name,
            "label": col.name,
            "kind": col.kind,
            "choices": col.choices,
            "price": 1.0,
            "discounted_price": 1.0,
        }
        for col in table.columns
    ]
    k = len(table.class_labels)
    return create_dataset(
        name=name,
        description=description,
        source=f"CSV upload {getattr(file, 'name', '') or ''}".strip(),
        class_labels=table.class_labels,
        tests=tests,
        rows=table.rows,
        labels=table.labels,
        error_matrices=[{"name": "0/1 loss", "matrix": _uniform(k, 1.0)}],
    )


def import_uci_folder(*, user, name: str, path) -> Dataset:
    """A dataset from a UCI folder (data, names and Turney cost files) with its prices.

    ``path`` is the folder, or one ``.data`` file in it when the folder holds
    several (thyroid's ann-train / ann-test).
    """
    require_model_admin(user)
    from datasets import read_uci_folder

    target = Path(str(path).strip())
    folder, stem = (
        (target.parent, target.name[: -len(".data")])
        if target.suffix == ".data"
        else (target, None)
    )
    if not folder.is_dir():
        raise ValidationError(f"{folder} is not a folder.")
    try:
        uci = read_uci_folder(folder, name=stem) if stem else read_uci_folder(folder)
    except (ValueError, OSError) as exc:
        raise ValidationError(f"Could not read the UCI data in {target}: {exc}") from None
    k = len(uci.class_labels)
    return create_dataset(
        name=name,
        description=uci.description or "",
        source=f"UCI {target.name}",
        class_labels=[str(c) for c in uci.class_labels],
        tests=uci_tests(uci),
        rows=[[None if math.isnan(v) else float(v) for v in row] for row in uci.X],
        labels=[int(v) for v in uci.y],
        error_matrices=[{"name": "Uniform 100", "matrix": _uniform(k, 100.0)}],
    )


def uci_tests(uci) -> list[dict]:
    """Test specs (prices, groups, delays, derived inputs) from a parsed UCI dataset."""
    names = [str(n) for n in uci.feature_names]
    categorical = {int(i) for i in (uci.categorical or ())}
    costs = uci.costs
    derived = {
        int(t): [names[int(s)] for s in sources]
        for t, sources in (costs.derived if costs else {}).items()
    }
    free = set(costs.free) if costs is not None else set()
    tests = []
    for i, feature in enumerate(names):
        spec: dict[str, Any] = {"name": feature, "label": feature, "kind": "numeric"}
        if i in categorical:
            present = sorted({int(v) for v in uci.X[:, i] if not math.isnan(v)}) or [0]
            spec["kind"] = "nominal"
            spec["choices"] = [{"code": c, "label": str(c)} for c in present]
        if costs is not None:
            spec.update(
                price=float(costs.costs[i]),
                discounted_price=float(costs.discounted[i]),
                group=costs.groups[i],
                delayed=bool(costs.delayed[i]),
            )
        if i in free or i in derived:
            spec["price"] = spec["discounted_price"] = 0.0
        if i in derived:
            spec["derived_from"] = derived[i]
            if feature in uci.formulas:
                spec["formula"] = uci.formulas[feature]
        tests.append(spec)
    return tests


def _uniform(k: int, off_diagonal: float) -> list[list[float]]:
    return [[0.0 if i == j else off_diagonal for j in range(k)] for i in range(k)]
