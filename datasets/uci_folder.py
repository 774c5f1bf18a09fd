"""Read one dataset from a UCI-style folder.

A folder holds one or more ``.data`` files (:mod:`datasets.uci_data`), usually a
``.names`` file and optionally Turney's ``costs/`` folder (:mod:`datasets.turney_costs`).
UCI's ``.names`` files for the clinical datasets are prose, not C4.5 format, so each known
dataset has a built-in spec chosen by the data file's name (:mod:`datasets.uci_specs`); any
other folder needs a C4.5-format ``.names`` file (:mod:`datasets.uci_names`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .dataset import UCIDataset, UCIFormatError
from .turney_costs import read_costs
from .uci_data import parse_number, pick_data_file, read_rows
from .uci_names import read_c45_names
from .uci_specs import spec_for

__all__ = ["read_uci_folder"]


def read_uci_folder(path, *, name: str | None = None, **options) -> UCIDataset:
    """Read one dataset from a UCI-style folder.

    Parameters
    ----------
    path : str or Path
        The folder.
    name : str, optional
        Stem of the ``.data`` file to read (e.g. ``"ann-train"``) when the
        folder holds several; also the dataset's name (default: the stem).
    **options
        Dataset-specific: ``binary`` (heart, default True),
        ``questionnaire_free`` (thyroid, default False).

    Raises
    ------
    UCIFormatError
        For a missing or malformed file, naming file, row and column.
    TypeError
        For an option the dataset does not have.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise UCIFormatError(f"{folder}: not a folder")
    data_file = pick_data_file(folder, name)
    spec = spec_for(data_file)
    if spec is None:
        return _read_generic(folder, data_file, name, options)
    unknown = set(options) - set(spec.options)
    if unknown:
        raise TypeError(
            f"dataset {spec.key!r} has no option {sorted(unknown)[0]!r}; "
            f"its options are {sorted(spec.options) or 'none'}"
        )
    settings = {**spec.options, **options}
    rows = read_rows(data_file, len(spec.columns))
    features = [c for c in spec.columns if c != spec.class_column and c not in spec.dropped]
    columns = {c: i for i, c in enumerate(spec.columns)}
    X = np.empty((len(rows), len(features)))
    y = np.empty(len(rows), dtype=np.int64)
    class_index = columns[spec.class_column]
    for r, (line_number, fields) in enumerate(rows):
        for j, feature in enumerate(features):
            X[r, j] = parse_number(fields[columns[feature]], data_file, line_number, feature)
        raw = parse_number(fields[class_index], data_file, line_number, spec.class_column)
        try:
            y[r] = spec.class_of(raw, settings)
        except ValueError as error:
            raise UCIFormatError(
                f"{data_file.name}: row {line_number}, column {spec.class_column!r}: "
                f"class value {fields[class_index]!r}: {error}"
            ) from None
    for feature in spec.zero_is_missing:
        column = X[:, features.index(feature)]
        column[column == 0] = np.nan
    costs = read_costs(
        folder,
        features,
        aliases=spec.cost_aliases,
        derived=spec.derived,
        free=spec.free(settings),
    )
    return UCIDataset(
        name=name or data_file.name[: -len(".data")],
        feature_names=features,
        categorical=[features.index(c) for c in spec.categorical],
        X=X,
        y=y,
        class_labels=list(spec.class_labels(settings)),
        costs=costs,
        description=spec.description,
        formulas=dict(spec.formulas),
    )


def _read_generic(
    folder: Path, data_file: Path, name: str | None, options: dict[str, object]
) -> UCIDataset:
    """A folder that is not a known dataset: types and class values from its C4.5 .names."""
    columns, class_column, class_values, categorical_values = read_c45_names(folder, data_file)
    if options:
        raise TypeError(f"{data_file.name} is not a known dataset; it has no options")
    rows = read_rows(data_file, len(columns))
    ignored = {c for c, values in categorical_values.items() if values is None}
    features = [c for c in columns if c != class_column and c not in ignored]
    X = np.empty((len(rows), len(features)))
    y = np.empty(len(rows), dtype=np.int64)
    for r, (line_number, fields) in enumerate(rows):
        for j, feature in enumerate(features):
            text = fields[columns.index(feature)]
            values = categorical_values.get(feature)
            if values is None or text == "?":
                X[r, j] = parse_number(text, data_file, line_number, feature)
            elif text in values:
                X[r, j] = values.index(text)
            else:
                raise UCIFormatError(
                    f"{data_file.name}: row {line_number}, column {feature!r}: {text!r} is not "
                    f"one of {values}"
                )
        label = fields[-1]
        if label not in class_values:
            raise UCIFormatError(
                f"{data_file.name}: row {line_number}, column {class_column!r}: class {label!r} "
                f"is not one of {class_values}"
            )
        y[r] = class_values.index(label)
    return UCIDataset(
        name=name or data_file.name[: -len(".data")],
        feature_names=features,
        categorical=[j for j, f in enumerate(features) if categorical_values.get(f)],
        X=X,
        y=y,
        class_labels=class_values,
        costs=read_costs(folder, features),
        description=f"read from {data_file.name} with C4.5 attribute types",
    )
