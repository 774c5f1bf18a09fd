"""Checks shared by the services and the admin forms, with messages a person can act on."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError

from learners import ModelDocumentError
from learners._validation import check_cost_matrix
from learners.derived import DEFAULT_TOLERANCE, DerivedFormula, check_tolerance
from learners.serialization import parse_document

__all__ = [
    "BodyTooLarge",
    "clean_choices",
    "clean_formula",
    "clean_matrix",
    "clean_plausible_range",
    "clean_price_pair",
    "clean_range",
    "clean_reject_cost",
    "clean_request_field",
    "clean_step_body",
    "parse_json_object",
    "too_large_message",
]


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool):
        raise ValidationError(f"{where}: {value!r} is not a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValidationError(f"{where}: {value!r} is not a number") from None
    if not math.isfinite(number):
        raise ValidationError(f"{where}: {value!r} must be a finite number")
    return number


def clean_matrix(matrix: Any, class_labels: Sequence[str]) -> list[list[float]]:
    """``matrix[actual][predicted]`` for the K classes, as the library accepts it.

    The cells are read as numbers here (each message names the row and column by class);
    whether the table is a valid cost matrix (K x K, finite, non-negative) is the library's
    ``check_cost_matrix``.
    """
    k = len(class_labels)
    if not isinstance(matrix, (list, tuple)) or len(matrix) != k:
        raise ValidationError(
            f"The error matrix must have {k} rows, one per class ({', '.join(class_labels)})."
        )
    rows = []
    for i, row in enumerate(matrix):
        if not isinstance(row, (list, tuple)) or len(row) != k:
            raise ValidationError(
                f"Row {i + 1} ({class_labels[i]}) must have {k} entries, one per predicted class."
            )
        cleaned = []
        for j, value in enumerate(row):
            where = f"Row {i + 1} ({class_labels[i]}), column {j + 1} ({class_labels[j]})"
            if value is None or (isinstance(value, str) and not value.strip()):
                raise ValidationError(f"{where}: empty; enter a cost (0 when it costs nothing).")
            cleaned.append(_number(value, where))
        rows.append(cleaned)
    try:
        checked = check_cost_matrix(rows, k)
    except ValueError as exc:
        cell = _CELL.search(str(exc))
        if cell:
            i, j = int(cell["i"]), int(cell["j"])
            where = f"Row {i + 1} ({class_labels[i]}), column {j + 1} ({class_labels[j]})"
            raise ValidationError(f"{where}: {cell['rest']}; costs must be ≥ 0.") from None
        raise ValidationError(f"The error matrix: {exc}.") from None
    return checked.tolist()


# The library names a bad cell as "cost_matrix[i, j] = <value> is negative".
_CELL = re.compile(r"\[(?P<i>\d+), (?P<j>\d+)\] = (?P<rest>.+)$")


def clean_reject_cost(value: Any) -> float | None:
    """None (never refer) or a finite non-negative number."""
    if value is None or value == "":
        return None
    number = _number(value, "Reject cost")
    if number < 0:
        raise ValidationError(f"Reject cost {number:g} is negative; it must be ≥ 0.")
    return number


def clean_price_pair(price: Any, discounted: Any, *, name: str = "test") -> tuple[float, float]:
    """Full and discounted price: finite, non-negative, discounted ≤ full."""
    full = _number(price, f"Price of {name}")
    cheap = _number(discounted, f"Discounted price of {name}")
    if full < 0 or cheap < 0:
        raise ValidationError(f"Prices of {name} must be ≥ 0 (got {full:g} and {cheap:g}).")
    if cheap > full:
        raise ValidationError(
            f"Discounted price of {name} ({cheap:g}) is above its full price ({full:g})."
        )
    return full, cheap


def clean_range(
    min_value: Any, max_value: Any, *, name: str = "test"
) -> tuple[float | None, float | None]:
    """Optional numeric bounds with min ≤ max."""
    low = None if min_value in (None, "") else _number(min_value, f"Minimum of {name}")
    high = None if max_value in (None, "") else _number(max_value, f"Maximum of {name}")
    if low is not None and high is not None and low > high:
        raise ValidationError(f"Minimum of {name} ({low:g}) is above its maximum ({high:g}).")
    return low, high


def clean_plausible_range(
    plausible_min: Any,
    plausible_max: Any,
    *,
    min_value: float | None,
    max_value: float | None,
    integer_only: Any = False,
    name: str = "test",
    unit: str = "",
) -> tuple[float | None, float | None]:
    """Optional plausible bounds: finite, low ≤ high, inside the hard range ``min_value`` ..
    ``max_value`` (a value outside the hard range is refused, so a plausible bound there
    would never be asked about); for a whole-number test, whole bounds."""
    low = (
        None if plausible_min in (None, "") else _number(plausible_min, f"Plausible from of {name}")
    )
    high = (
        None if plausible_max in (None, "") else _number(plausible_max, f"Plausible to of {name}")
    )
    unit = f" {unit}" if unit else ""
    if low is not None and high is not None and low > high:
        raise ValidationError(
            f"The plausible range of {name} starts above where it ends "
            f"({low:g} > {high:g}{unit}); swap them."
        )
    for bound, words in ((low, "starts"), (high, "ends")):
        if bound is None:
            continue
        if min_value is not None and bound < min_value:
            raise ValidationError(
                f"The plausible range of {name} {words} at {bound:g}{unit}, below its minimum "
                f"{min_value:g}{unit}; it must lie inside the range {_range(min_value, max_value)}"
                f"{unit}."
            )
        if max_value is not None and bound > max_value:
            raise ValidationError(
                f"The plausible range of {name} {words} at {bound:g}{unit}, above its maximum "
                f"{max_value:g}{unit}; it must lie inside the range {_range(min_value, max_value)}"
                f"{unit}."
            )
        if integer_only and not bound.is_integer():
            raise ValidationError(
                f"{name} takes whole numbers only, so its plausible range must too "
                f"({bound:g} is not whole)."
            )
    return low, high


def _range(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"{low:g}–{high:g}"
    return f"≥ {low:g}" if low is not None else f"≤ {high:g}"


def clean_choices(choices: Any, *, name: str = "test") -> list[dict]:
    """Nominal choices: a non-empty list of {"code": int, "label": str}, codes and labels unique."""
    if not isinstance(choices, (list, tuple)) or not choices:
        raise ValidationError(
            f'Choices of {name} must be a non-empty list like [{{"code": 0, "label": "no"}}].'
        )
    cleaned, codes, labels = [], set(), set()
    for n, choice in enumerate(choices, start=1):
        if not isinstance(choice, dict) or set(choice) != {"code", "label"}:
            raise ValidationError(
                f'Choice {n} of {name} must be an object with exactly "code" and "label".'
            )
        code = choice["code"]
        if isinstance(code, bool) or not isinstance(code, (int, float)) or float(code) != int(code):
            raise ValidationError(f"Choice {n} of {name}: code {code!r} must be a whole number.")
        label = str(choice["label"]).strip()
        if not label:
            raise ValidationError(f"Choice {n} of {name}: the label is empty.")
        if int(code) in codes:
            raise ValidationError(f"Choices of {name}: code {int(code)} appears twice.")
        if label in labels:
            raise ValidationError(f"Choices of {name}: label {label!r} appears twice.")
        codes.add(int(code))
        labels.add(label)
        cleaned.append({"code": int(code), "label": label})
    return cleaned


def clean_formula(
    formula: Any,
    tolerance: Any = DEFAULT_TOLERANCE,
    *,
    derived_from: Sequence[str] = (),
    name: str = "test",
) -> DerivedFormula | None:
    """A derived test's formula checked by ``learners.derived`` (None when there is none).

    The formula may only use the test's inputs (``derived_from``), and must use
    every one of them: an input it ignores would still be charged.
    """
    text = "" if formula is None else str(formula).strip()
    if not text:
        if tolerance not in (None, ""):  # kept for a formula to come: still in [0, 1]
            try:
                check_tolerance(tolerance)
            except ValueError as exc:
                raise ValidationError(f"Formula tolerance of {name}: {exc}.") from None
        return None
    if not derived_from:
        raise ValidationError(
            f"{name} has a formula but no inputs: list the tests it is derived from first."
        )
    try:
        parsed = DerivedFormula.parse(
            text,
            allowed=derived_from,
            tolerance=DEFAULT_TOLERANCE if tolerance in (None, "") else tolerance,
        )
    except ValueError as exc:
        raise ValidationError(f"Formula of {name}: {exc}.") from None
    unused = [n for n in derived_from if n not in parsed.inputs]
    if unused:
        raise ValidationError(
            f"Formula of {name} does not use {', '.join(unused)}; "
            "use every input or remove it from 'derived from'."
        )
    return parsed


# ------------------------------------------------------------- JSON request bodies
MAX_BODY_BYTES = 64 * 1024
MAX_TEXT = 1_000  # characters in a reason or a typed value

# The one reader of request fields, shared by both JSON APIs (the session step API and
# /api/v1's schemas), so a value one refuses the other refuses too: the JSON types each field
# may have (true/false is never a number, "1" is never an id), what to tell the sender, and
# for text the most characters (as the database column holds, or MAX_TEXT).
REQUEST_FIELDS: dict[str, tuple[tuple[type, ...], str, int | None]] = {
    "action": ((str,), "a string", 20),
    "test": ((str,), "a test's name (a string)", 100),
    "value": ((int, float, str), "a number, or a choice's label or code", MAX_TEXT),
    "label": ((int, str), "a class's index (a whole number) or its name", 200),
    "position": ((int,), "a step's position (a whole number)", None),
    "seen": ((int,), "the case version you last read (a whole number)", None),
    "reason": ((str,), "text", MAX_TEXT),
    "results": (
        (dict,),
        'an object of test names and values, e.g. {"age": 54, "goitre": null}',
        None,
    ),
    "model": ((int,), "a ready model's id (a whole number, not text)", None),
    "patient_reference": ((str,), "text (a record number or initials)", 200),
    "confirm_implausible": (
        (bool,),
        "true (the value outside its plausible range is right) or false",
        None,
    ),
}
STEP_FIELDS = (
    "action", "test", "value", "label", "position", "seen", "reason", "results",
    "confirm_implausible",
)  # fmt: skip


def clean_request_field(name: str, value: Any) -> Any:
    """``value`` of request field ``name`` as sent (None when absent), after the checks of
    :data:`REQUEST_FIELDS`; a ValidationError naming the field otherwise."""
    if value is None:
        return None
    types, description, most = REQUEST_FIELDS[name]
    if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
        raise ValidationError(f'"{name}" must be {description}, not {_json_kind(value)}.')
    if isinstance(value, str):
        if "\x00" in value:
            raise ValidationError(
                f'"{name}" contains a NUL character (\\u0000); remove it and send again.'
            )
        if most is not None and len(value) > most:
            raise ValidationError(
                f'"{name}" is {len(value):,} characters long; at most {most:,} are kept.'
            )
    return value


def too_large_message() -> str:
    """What a body over Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is told (413)."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return (
        f"The request body is larger than {limit / 1_000_000:g} MB, the most this server "
        "reads; send less at once."
    )


class BodyTooLarge(ValidationError):
    """A request body over :data:`MAX_BODY_BYTES` (answered 413)."""


def parse_json_object(raw: bytes, *, what: str = "The body") -> dict[str, Any]:
    """A request body as a JSON object, parsed strictly (no NaN or Infinity, no 1e999, no
    5,000-digit numbers, no deep nesting) by the same parser that reads model files."""
    if len(raw) > MAX_BODY_BYTES:
        raise BodyTooLarge(
            f"{what} is larger than {MAX_BODY_BYTES // 1024} KB ({len(raw) // 1024} KB sent); "
            "a step or a case needs far less."
        )
    try:
        body = parse_document(bytes(raw) or b"null", what=what)
    except ModelDocumentError as exc:
        raise ValidationError(f"{exc}.") from None
    if not isinstance(body, dict):
        raise ValidationError(f'{what} must be a JSON object like {{"action": "refer"}}.')
    where = _holding_nul(body)
    if where is not None:  # PostgreSQL text cannot hold one: refused here, wherever it is
        raise ValidationError(
            f'"{where}" contains a NUL character (\\u0000); remove it and send again.'
        )
    return body


def _holding_nul(value: Any, path: str = "") -> str | None:
    """The path (``results.age``) of the first text in ``value`` with a NUL, or None."""
    if isinstance(value, str):
        return (path or "body") if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else key
            if "\x00" in key:
                return here.replace("\x00", "\\u0000")
            found = _holding_nul(item, here)
            if found is not None:
                return found
    if isinstance(value, list):
        for n, item in enumerate(value):
            found = _holding_nul(item, f"{path}[{n}]")
            if found is not None:
                return found
    return None


def clean_step_body(body: dict[str, Any]) -> dict[str, Any]:
    """The step fields of a parsed body, each read by :func:`clean_request_field`."""
    unknown = sorted(set(body) - set(STEP_FIELDS))
    if unknown:
        raise ValidationError(
            f"Unknown field(s) {', '.join(map(repr, unknown))}; the fields are "
            + ", ".join(STEP_FIELDS)
            + "."
        )
    return {name: clean_request_field(name, body.get(name)) for name in STEP_FIELDS}


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__
