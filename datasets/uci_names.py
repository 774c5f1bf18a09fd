"""C4.5-format ``.names`` files: the class values, then each attribute's type.

The first entry lists the class values (``sick, healthy.``); each further entry is
``name: continuous.``, ``name: v1, v2.`` (nominal, stored as the value's index) or
``name: ignore.``; ``|`` starts a comment.  The class is the data file's last column.
"""

from __future__ import annotations

from pathlib import Path

from .dataset import UCIFormatError, strip_comment

__all__ = ["read_c45_names"]


def read_c45_names(
    folder: Path, data_file: Path
) -> tuple[list[str], str, list[str], dict[str, list[str] | None]]:
    """Read the folder's one ``.names`` file for ``data_file``.

    Returns
    -------
    columns : list of str
        Every column of the data file, the class column last.
    class_column : str
        The class column's name (``"class"``, or ``"class_"`` etc. when an attribute is
        already called so).
    class_values : list of str
    categorical_values : dict
        Nominal attribute -> its values in order; ``ignore`` attributes map to None.
    """
    names_files = sorted(folder.glob("*.names"))
    if len(names_files) != 1:
        raise UCIFormatError(
            f"{folder}: {data_file.name} is not a known dataset, so exactly one C4.5-format "
            f".names file is needed (found {len(names_files)})"
        )
    names_file = names_files[0]
    entries = []
    for line_number, line in enumerate(names_file.read_text(encoding="utf-8").splitlines(), 1):
        line = strip_comment(line)
        if line:
            entries.append((line_number, line.rstrip(".").strip()))
    if not entries:
        raise UCIFormatError(f"{names_file.name}: empty")
    class_line, class_text = entries[0]
    class_values = [v.strip() for v in class_text.split(",") if v.strip()]
    if ":" in class_text or len(class_values) < 2:
        raise UCIFormatError(
            f"{names_file.name}: row {class_line}: the first entry must list the class values "
            "(C4.5 format), e.g. 'sick, healthy.'"
        )
    columns: list[str] = []
    categorical_values: dict[str, list[str] | None] = {}
    for line_number, text in entries[1:]:
        if ":" not in text:
            raise UCIFormatError(
                f"{names_file.name}: row {line_number}: expected 'name: continuous.' or "
                f"'name: v1, v2.', got {text!r}"
            )
        attribute, kind = (part.strip() for part in text.split(":", 1))
        columns.append(attribute)
        if kind == "continuous":
            continue
        if kind == "ignore":
            categorical_values[attribute] = None
            continue
        values = [v.strip() for v in kind.split(",") if v.strip()]
        if not values:
            raise UCIFormatError(
                f"{names_file.name}: row {line_number}: no values for {attribute!r}"
            )
        categorical_values[attribute] = values
    class_column = "class"
    while class_column in columns:
        class_column += "_"
    return [*columns, class_column], class_column, class_values, categorical_values
