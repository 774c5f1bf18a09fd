"""Readers for model documents: one error type, one checked reader per kind of field.

A model document (:mod:`learners.serialization`) is untrusted input: a file
may be tampered with or corrupted.  Every loader reads its fields through the
readers below, which take the JSON value and ``where`` (its path in the
document, e.g. ``"fitted.tree.feature"``) and return a checked Python or
numpy value, or raise :class:`ModelDocumentError` naming the field and what
was expected.  Nothing is trusted because an array length happens to match.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from numbers import Integral

import numpy as np

from ._validation import check_reject_cost
from .costs import CostModel

__all__ = [
    "LOAD_ERRORS",
    "MAX_CASES",
    "MAX_CLASSES",
    "MAX_FEATURES",
    "MAX_INT_DIGITS",
    "MAX_NODES",
    "ModelDocumentError",
    "cost_model",
    "feature_key",
    "field",
    "flags",
    "integer",
    "integers",
    "items",
    "labels",
    "mapping",
    "no_unknown_fields",
    "number",
    "numbers",
    "read",
    "reading",
    "reject_cost",
    "table",
]

#: Most features (tests) a model may describe.
MAX_FEATURES = 100_000
#: Most classes a model may predict.
MAX_CLASSES = 10_000
#: Most nodes of one tree.
MAX_NODES = 10_000_000
#: Most training cases a document may carry (the conditioned-loss model keeps them).
MAX_CASES = 10_000_000
#: Longest integer literal accepted in a document: a 128-bit generator state has 39 digits.
MAX_INT_DIGITS = 40

_INFINITIES = {"inf": math.inf, "-inf": -math.inf}


class ModelDocumentError(ValueError):
    """A model document that is malformed, inconsistent, or of an unsupported version.

    The message names the field (its path in the document) and what was expected.
    """


#: What reading a malformed value can raise inside numpy, the estimators or
#: :class:`~learners.costs.CostModel`; :func:`reading` turns them into
#: :class:`ModelDocumentError`.
LOAD_ERRORS = (
    KeyError,
    TypeError,
    AttributeError,
    OverflowError,
    IndexError,
    ValueError,
    ZeroDivisionError,
    RecursionError,
)


@contextmanager
def reading(where: str) -> Iterator[None]:
    """Turn an error raised while reading ``where`` into :class:`ModelDocumentError`."""
    try:
        yield
    except ModelDocumentError:
        raise
    except KeyError as exc:
        raise ModelDocumentError(f"{where}: missing field {exc.args[0]!r}") from exc
    except RecursionError as exc:
        raise ModelDocumentError(f"{where}: nested too deeply") from exc
    except LOAD_ERRORS as exc:
        raise ModelDocumentError(f"{where}: {exc}") from exc


def _fail(where: str, message: str) -> ModelDocumentError:
    return ModelDocumentError(f"{where}: {message}")


def _kind(value) -> str:
    """Short description of a JSON value's type for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


# ------------------------------------------------------------------ objects
def mapping(value, where: str) -> Mapping:
    """``value`` if it is a JSON object."""
    if not isinstance(value, Mapping):
        raise _fail(where, f"expected an object, got {_kind(value)}")
    return value


def field(data: Mapping, key: str, where: str):
    """``data[key]``; a missing key is a :class:`ModelDocumentError` naming it."""
    mapping(data, where)
    if key not in data:
        raise _fail(where, f"missing field {key!r}")
    return data[key]


def read(data: Mapping, key: str, where: str, reader, **options):
    """``reader(data[key], "<where>.<key>", **options)``: a field read by a checked reader."""
    return reader(field(data, key, where), f"{where}.{key}", **options)


def no_unknown_fields(data: Mapping, known, where: str) -> None:
    """Refuse keys of ``data`` outside ``known`` (a corrupted or foreign document)."""
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise _fail(where, f"unknown field(s) {', '.join(map(repr, unknown))}")


# ------------------------------------------------------------------ scalars
def _is_int(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def integer(value, where: str, *, low: int, high: int) -> int:
    """A whole number in ``[low, high]``."""
    if not _is_int(value):
        raise _fail(where, f"expected a whole number, got {_kind(value)} {_short(value)}")
    if not low <= value <= high:
        raise _fail(where, f"{_short(value)} is out of range: expected {low} to {high}")
    return int(value)


def number(value, where: str, *, low: float | None = None, high: float | None = None) -> float:
    """A finite number, optionally bounded (``low <= value <= high``)."""
    if not _is_real(value):
        raise _fail(where, f"expected a number, got {_kind(value)} {_short(value)}")
    try:
        result = float(value)
    except OverflowError:
        raise _fail(where, f"{_short(value)} is too large") from None
    if not math.isfinite(result):
        raise _fail(where, f"expected a finite number, got {result!r}")
    if (low is not None and result < low) or (high is not None and result > high):
        raise _fail(where, f"{result!r} is out of range: expected {_bounds(low, high)}")
    return result


def _bounds(low, high) -> str:
    if high is None:
        return f"at least {low}"
    if low is None:
        return f"at most {high}"
    return f"{low} to {high}"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# ------------------------------------------------------------------- arrays
def _as_list(value, where: str, length: int | None) -> list:
    if not isinstance(value, list):
        raise _fail(where, f"expected a list, got {_kind(value)}")
    if length is not None and len(value) != length:
        raise _fail(where, f"has {len(value)} entries, expected {length}")
    return value


def items(value, where: str, *, length: int | None = None) -> list:
    """A JSON list (of anything; the caller reads each entry), optionally of ``length``."""
    return _as_list(value, where, length)


def _fast_array(values: list, kinds: str) -> np.ndarray | None:
    """numpy's own conversion when every entry already has one of ``kinds``; else None."""
    if not values:
        return None
    try:
        array = np.asarray(values)
    except (ValueError, TypeError, OverflowError):
        return None
    if array.ndim == 1 and array.dtype.kind in kinds:
        return array
    return None


def numbers(
    value,
    where: str,
    *,
    length: int | None = None,
    low: float | None = None,
    allow_none: bool = False,
    infinities: bool = False,
) -> np.ndarray:
    """A flat list of finite numbers as a float array.

    ``allow_none``: null stands for NaN (the documents write NaN as null).
    ``infinities``: the strings ``"inf"`` / ``"-inf"`` stand for infinities.
    ``low`` bounds the numbers (NaN and infinities excepted).
    """
    values = _as_list(value, where, length)
    array = _fast_array(values, "if")
    if array is not None:
        result = array.astype(float)
        if not np.isfinite(result).all():
            i = int(np.flatnonzero(~np.isfinite(result))[0])
            raise _fail(f"{where}[{i}]", f"expected a finite number, got {float(result[i])!r}")
    else:
        result = np.empty(len(values))
        for i, v in enumerate(values):
            if v is None and allow_none:
                result[i] = np.nan
            elif infinities and isinstance(v, str) and v in _INFINITIES:
                result[i] = _INFINITIES[v]
            else:
                result[i] = number(v, f"{where}[{i}]")
    if low is not None:
        below = np.flatnonzero(result < low)
        if below.size:
            i = int(below[0])
            raise _fail(f"{where}[{i}]", f"{float(result[i])!r} is below {low}")
    return result


def integers(
    value, where: str, *, low: int, high: int, length: int | None = None, dtype=np.int64
) -> np.ndarray:
    """A flat list of whole numbers in ``[low, high]`` as an array of ``dtype``.

    ``[low, high]`` must fit ``dtype``.
    """
    values = _as_list(value, where, length)
    array = _fast_array(values, "iu")
    if array is None:
        return np.array(
            [integer(v, f"{where}[{i}]", low=low, high=high) for i, v in enumerate(values)],
            dtype=dtype,
        )
    bad = np.flatnonzero((array < low) | (array > high))
    if bad.size:
        i = int(bad[0])
        raise _fail(f"{where}[{i}]", f"{array[i]} is out of range: expected {low} to {high}")
    return array.astype(dtype)


def flags(value, where: str, *, length: int | None = None) -> np.ndarray:
    """A flat list of booleans."""
    values = _as_list(value, where, length)
    for i, v in enumerate(values):
        if not isinstance(v, bool):
            raise _fail(f"{where}[{i}]", f"expected true or false, got {_kind(v)} {_short(v)}")
    return np.array(values, dtype=bool)


def table(
    value,
    where: str,
    *,
    rows: int | None = None,
    columns: int | None = None,
    low: float | None = None,
    allow_none: bool = False,
) -> np.ndarray:
    """A list of equally long lists of numbers as a 2-D float array."""
    values = _as_list(value, where, rows)
    if values and columns is None:
        first = _as_list(values[0], f"{where}[0]", None)
        columns = len(first)
    array = _fast_2d(values, columns)
    if array is not None:
        if low is not None and (array < low).any():
            i, j = np.argwhere(array < low)[0]
            raise _fail(f"{where}[{i}][{j}]", f"{float(array[i, j])!r} is below {low}")
        return array
    result = np.empty((len(values), columns or 0))
    for i, row in enumerate(values):
        result[i] = numbers(row, f"{where}[{i}]", length=columns, low=low, allow_none=allow_none)
    return result


def _fast_2d(values: list, columns: int | None) -> np.ndarray | None:
    if not values or not columns:
        return None
    try:
        array = np.asarray(values)
    except (ValueError, TypeError, OverflowError):
        return None
    if array.shape != (len(values), columns) or array.dtype.kind not in "if":
        return None
    array = array.astype(float)
    return array if np.isfinite(array).all() else None


def labels(value, where: str) -> np.ndarray:
    """Class labels: a non-empty list of distinct strings, or of distinct numbers."""
    values = _as_list(value, where, None)
    if not 1 <= len(values) <= MAX_CLASSES:
        raise _fail(where, f"has {len(values)} classes, expected 1 to {MAX_CLASSES}")
    texts = [isinstance(v, str) for v in values]
    for i, v in enumerate(values):
        if isinstance(v, str):
            continue
        if isinstance(v, bool):
            continue
        number(v, f"{where}[{i}]")
    if any(texts) and not all(texts):
        raise _fail(where, "mixes text and number labels")
    array = np.asarray(values)
    if np.unique(array).shape[0] != len(values):
        raise _fail(where, "holds a label twice")
    return array


def feature_key(key, where: str, *, n_features: int) -> int:
    """A feature index written as an object key (JSON keys are strings: ``"3"``)."""
    if isinstance(key, str):
        if not (key.isascii() and key.isdigit()) or len(key) > len(str(MAX_FEATURES)):
            raise _fail(where, f"expected a feature index as key, got {_short(key)}")
        key = int(key)
    return integer(key, where, low=0, high=n_features - 1)


# ------------------------------------------------------------- cost model
_COST_MODEL_FIELDS = ("costs", "discounted", "groups", "delayed", "derived", "free")


def cost_model(value, where: str, *, n_features: int | None = None) -> CostModel:
    """A :class:`CostModel` from its ``to_dict`` form, every field checked first.

    ``n_features``: the number of tests the model must describe.
    """
    data = mapping(value, where)
    no_unknown_fields(data, _COST_MODEL_FIELDS, where)
    costs = numbers(field(data, "costs", where), f"{where}.costs", low=0.0)
    n = costs.shape[0]
    if not 1 <= n <= MAX_FEATURES:
        raise _fail(f"{where}.costs", f"has {n} tests, expected 1 to {MAX_FEATURES}")
    if n_features is not None and n != n_features:
        raise _fail(f"{where}.costs", f"has {n} tests but the model has {n_features} features")
    if data.get("discounted") is not None:
        numbers(data["discounted"], f"{where}.discounted", length=n, low=0.0)
    groups = data.get("groups")
    if groups is not None:
        for i, g in enumerate(_as_list(groups, f"{where}.groups", n)):
            if g is not None and not isinstance(g, str):
                raise _fail(f"{where}.groups[{i}]", f"expected a name or null, got {_kind(g)}")
    if data.get("delayed") is not None:
        flags(data["delayed"], f"{where}.delayed", length=n)
    derived = data.get("derived")
    if derived is not None:
        for key, sources in mapping(derived, f"{where}.derived").items():
            target = f"{where}.derived[{key!r}]"
            feature_key(key, target, n_features=n)
            integers(sources, target, low=0, high=n - 1)
    if data.get("free") is not None:
        integers(data["free"], f"{where}.free", low=0, high=n - 1)
    with reading(where):
        return CostModel.from_dict(data)


def reject_cost(value, where: str, *, n_classes: int, allow_none: bool = True):
    """A referral price: null (when allowed), a number, or one number per class;
    finite and non-negative."""
    if value is None and allow_none:
        return None
    if isinstance(value, list):
        numbers(value, where, length=n_classes, low=0.0)
    else:
        number(value, where, low=0.0)
    with reading(where):
        return check_reject_cost(value, n_classes)
