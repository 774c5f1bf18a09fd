"""Plain-JSON persistence for every learner.  Loading never runs code.

A model document is::

    {"format": "learners-model", "version": 1, "learner": "<class name>",
     "params": {...get_params()...}, "fitted": {...learner-specific state...}}

Only classes named in :data:`LEARNERS` can be loaded, so a document cannot
make the loader import or call anything else.  A document is untrusted input:
every field is checked (:mod:`learners._document`) before anything uses it,
and whatever is wrong with it (malformed JSON, a missing or mistyped field, a
tree with a cycle, an index out of range, an unsupported version) raises
:class:`ModelDocumentError` saying which field and what was expected.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import numpy as np

from ._document import (
    LOAD_ERRORS,
    MAX_INT_DIGITS,
    ModelDocumentError,
    cost_model,
    field,
    integer,
    integers,
    mapping,
    no_unknown_fields,
    number,
    reading,
)
from .costs import CostModel

__all__ = [
    "LEARNERS",
    "ModelDocumentError",
    "SUPPORTED_VERSIONS",
    "SerializableMixin",
    "model_from_json",
    "model_to_json",
]

FORMAT = "learners-model"
#: Version written by :func:`model_to_json`.
VERSION = 1
#: Versions :func:`model_from_json` reads.
SUPPORTED_VERSIONS = (1,)

#: learner class name -> module that defines it (the only loadable classes).
LEARNERS: dict[str, str] = {
    "C45Classifier": "learners.tree",
    "EG2Classifier": "learners.tree",
    "IDXClassifier": "learners.tree",
    "CSID3Classifier": "learners.tree",
    "DTMCClassifier": "learners.tree",
    "OptimalTreeClassifier": "learners.tree",
    "ACTClassifier": "learners.act",
    "LSID3Classifier": "learners.act",
    "ICETClassifier": "learners.act",
    "ConditionedLossClassifier": "learners.conditioned_loss",
    "BoostingClassifier": "learners.boosting",
    "BudgetRFClassifier": "learners.forest",
    "CostSelectedClassifier": "learners.selection",
}

_DOCUMENT_FIELDS = ("format", "version", "learner", "params", "fitted")


class SerializableMixin:
    """``to_json`` / ``from_json`` for an estimator with JSON-able fitted state.

    Subclasses implement ``_fitted_state()`` returning a JSON-able dict and
    ``_load_fitted_state(state)`` restoring it; the latter checks every field
    it reads and raises :class:`ModelDocumentError` on a malformed one.
    """

    def to_json(self) -> str:
        """Serialize parameters and fitted state to a JSON string."""
        return model_to_json(self)

    @classmethod
    def from_json(cls, text: str):
        """Rebuild a model serialized by :meth:`to_json`."""
        model = model_from_json(text)
        if not isinstance(model, cls):
            raise ModelDocumentError(
                f"document holds a {type(model).__name__}, not a {cls.__name__}"
            )
        return model

    def _fitted_state(self) -> dict:  # pragma: no cover - implemented by learners
        raise NotImplementedError

    def _load_fitted_state(self, state: dict) -> None:  # pragma: no cover
        raise NotImplementedError


def model_to_json(model) -> str:
    """Serialize any fitted learner of :data:`LEARNERS` to a JSON string."""
    name = type(model).__name__
    if name not in LEARNERS:
        raise TypeError(f"{name} is not a serializable learner")
    document = {
        "format": FORMAT,
        "version": VERSION,
        "learner": name,
        # Callbacks (e.g. a progress hook) are runtime wiring, not part of the model.
        "params": {
            k: encode_value(v) for k, v in model.get_params(deep=False).items() if not callable(v)
        },
        "fitted": model._fitted_state(),
    }
    return json.dumps(document, allow_nan=False, separators=(",", ":"))


def model_from_json(text: str | bytes | dict):
    """Load a learner serialized by :func:`model_to_json`.

    Loading runs no code from the document: the learner class comes from the
    closed :data:`LEARNERS` registry, and every field is checked before use.

    Raises
    ------
    ModelDocumentError
        (a ValueError) if the document is not valid JSON, not a learners
        model, of an unsupported version, names an unknown learner or
        parameter, or holds a malformed or inconsistent field; the message
        names the field.
    """
    try:
        document = parse_document(text) if isinstance(text, (str, bytes, bytearray)) else text
        return _load(document)
    except ModelDocumentError:
        raise
    except RecursionError as exc:
        raise ModelDocumentError("model document is nested too deeply") from exc
    except LOAD_ERRORS as exc:
        # A check the loaders missed: still the one clear error type.
        raise ModelDocumentError(f"malformed model document ({type(exc).__name__}: {exc})") from exc


def parse_document(text: str | bytes | bytearray, what: str = "model document") -> Any:
    """Strict JSON: no NaN or Infinity tokens, no number that overflows a float,
    no integer literal longer than :data:`~learners._document.MAX_INT_DIGITS` digits,
    no nesting deeper than Python's recursion limit. ``what`` names the text in errors."""

    def refuse_constant(token: str):
        raise ModelDocumentError(f"{what} holds {token}, which is not JSON (no NaN or infinity)")

    def finite_float(token: str) -> float:
        value = float(token)
        if value != value or value in (float("inf"), float("-inf")):
            raise ModelDocumentError(f"{what} holds the number {token[:40]}, too large for a float")
        return value

    def bounded_int(token: str) -> int:
        digits = len(token.lstrip("-"))
        if digits > MAX_INT_DIGITS:
            raise ModelDocumentError(
                f"{what} holds an integer of {digits} digits (at most {MAX_INT_DIGITS})"
            )
        return int(token)

    try:
        return json.loads(
            text, parse_constant=refuse_constant, parse_float=finite_float, parse_int=bounded_int
        )
    except ModelDocumentError:
        raise
    except RecursionError as exc:
        raise ModelDocumentError(f"{what} is nested too deeply") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise ModelDocumentError(f"{what} is not valid JSON: {exc}") from exc


def _load(document):
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ModelDocumentError('not a learners model document (no "format": "learners-model")')
    version = document.get("version")
    if (
        not isinstance(version, int)
        or isinstance(version, bool)
        or version not in SUPPORTED_VERSIONS
    ):
        raise ModelDocumentError(
            f"unsupported model document version {version!r}: this library reads version "
            + ", ".join(map(str, SUPPORTED_VERSIONS))
        )
    no_unknown_fields(document, _DOCUMENT_FIELDS, "document")
    name = field(document, "learner", "document")
    if not isinstance(name, str) or name not in LEARNERS:
        raise ModelDocumentError(f"unknown learner {name!r}: expected one of {', '.join(LEARNERS)}")
    cls = getattr(importlib.import_module(LEARNERS[name]), name)
    params = _load_params(cls, document.get("params", {}))
    with reading("params"):
        model = cls(**params)
        if getattr(cls, "_parameter_constraints", None) is not None:
            # The learner's declared types and ranges, as fit checks them: the
            # policy uses some parameters (e.g. ``probability``) without fitting.
            model._validate_params()
    fitted = mapping(field(document, "fitted", "document"), "fitted")
    with reading("fitted"):
        model._load_fitted_state(fitted)
    return model


def _load_params(cls, stored) -> dict:
    """Decoded constructor parameters; a name the learner does not take is refused."""
    stored = mapping(stored, "params")
    upgrade = getattr(cls, "_upgrade_params", None)
    if upgrade is not None:
        # a learner renames a parameter of older documents to its current name
        stored = upgrade(stored)
    accepted = set(cls._get_param_names())
    unknown = sorted(str(k) for k in stored if k not in accepted)
    if unknown:
        raise ModelDocumentError(
            f"params: {cls.__name__} takes no parameter {', '.join(map(repr, unknown))} "
            f"(its parameters: {', '.join(sorted(accepted))})"
        )
    return {k: decode_value(v, f"params.{k}") for k, v in stored.items()}


def encode_value(value: Any) -> Any:
    """JSON-able form of a parameter value.

    CostModel, arrays, numpy scalars, lists, dicts, and random generators: a
    ``np.random.RandomState`` (its MT19937 state) or a ``np.random.Generator``
    (its bit generator's state), so a model fitted with ``random_state=<a
    generator>`` can be saved and reloaded with the generator where it was.
    """
    if isinstance(value, CostModel):
        return {"__cost_model__": value.to_dict()}
    if isinstance(value, np.random.RandomState):
        return {"__random_state__": _plain(value.get_state(legacy=False))}
    if isinstance(value, np.random.Generator):
        return {"__generator__": _plain(value.bit_generator.state)}
    if isinstance(value, np.ndarray):
        return {"__array__": value.tolist()}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    if isinstance(value, dict):
        return {"__dict__": [[encode_value(k), encode_value(v)] for k, v in value.items()]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot serialize parameter value of type {type(value).__name__}")


def decode_value(value: Any, where: str = "params") -> Any:
    """Inverse of :func:`encode_value`, checking what it reads.

    Raises
    ------
    ModelDocumentError
        On an object that is none of the encoded forms, or a malformed one.
    """
    if isinstance(value, dict):
        if len(value) != 1:
            raise ModelDocumentError(f"{where}: unexpected object {sorted(map(str, value))}")
        ((tag, inner),) = value.items()
        if tag == "__cost_model__":
            return cost_model(inner, f"{where}.__cost_model__")
        if tag == "__random_state__":
            return _random_state(inner, f"{where}.__random_state__")
        if tag == "__generator__":
            return _generator(inner, f"{where}.__generator__")
        if tag == "__array__":
            return _array(inner, f"{where}.__array__")
        if tag == "__dict__":
            return _dict(inner, f"{where}.__dict__")
        raise ModelDocumentError(f"{where}: unexpected object with key {tag!r}")
    if isinstance(value, list):
        return [decode_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return number(value, where)
    raise ModelDocumentError(f"{where}: unexpected value of type {type(value).__name__}")


def _array(values, where: str) -> np.ndarray:
    if not isinstance(values, list):
        raise ModelDocumentError(f"{where}: expected a list")
    with reading(where):
        array = np.asarray(values)
    if array.dtype.kind not in "biufU":
        raise ModelDocumentError(
            f"{where}: expected a rectangular array of numbers, booleans or strings"
        )
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise ModelDocumentError(f"{where}: expected finite numbers")
    return array


def _dict(pairs, where: str) -> dict:
    if not isinstance(pairs, list):
        raise ModelDocumentError(f"{where}: expected a list of [key, value] pairs")
    result = {}
    for i, pair in enumerate(pairs):
        if not isinstance(pair, list) or len(pair) != 2:
            raise ModelDocumentError(f"{where}[{i}]: expected a [key, value] pair")
        key = decode_value(pair[0], f"{where}[{i}][0]")
        if not (key is None or isinstance(key, (bool, int, float, str))):
            raise ModelDocumentError(f"{where}[{i}][0]: a key must be a number or a string")
        result[key] = decode_value(pair[1], f"{where}[{i}][1]")
    return result


# ------------------------------------------------------- random generators
#: The bit generators a Generator may be restored with (a closed list: the
#: document names one, the loader never looks a name up elsewhere).
_BIT_GENERATORS = {
    "PCG64": np.random.PCG64,
    "PCG64DXSM": np.random.PCG64DXSM,
    "MT19937": np.random.MT19937,
    "Philox": np.random.Philox,
    "SFC64": np.random.SFC64,
}


def _plain(state):
    """A generator state with its arrays as lists (JSON-able)."""
    if isinstance(state, dict):
        return {k: _plain(v) for k, v in state.items()}
    if isinstance(state, np.ndarray):
        return state.tolist()
    if isinstance(state, np.generic):
        return state.item()
    return state


def _checked_state(stored, template, where: str):
    """``stored`` shaped like ``template`` (a fresh generator's state): same keys,
    same names, arrays of the same length with values in their dtype's range."""
    if isinstance(template, dict):
        data = mapping(stored, where)
        if set(data) != set(template):
            raise ModelDocumentError(
                f"{where}: expected the fields {sorted(template)}, got {sorted(map(str, data))}"
            )
        return {k: _checked_state(data[k], template[k], f"{where}.{k}") for k in template}
    if isinstance(template, np.ndarray):
        info = np.iinfo(template.dtype)
        return integers(
            stored,
            where,
            low=int(info.min),
            high=int(info.max),
            length=template.shape[0],
            dtype=template.dtype,
        )
    if isinstance(template, str):
        if stored != template:
            raise ModelDocumentError(f"{where}: expected {template!r}, got {stored!r}")
        return stored
    if isinstance(template, float):
        return number(stored, where)
    # Plain integers: 128-bit PCG words, counters, flags.
    return integer(stored, where, low=0, high=2**128 - 1)


def _generator(stored, where: str) -> np.random.Generator:
    data = mapping(stored, where)
    name = data.get("bit_generator")
    if not isinstance(name, str) or name not in _BIT_GENERATORS:
        raise ModelDocumentError(
            f"{where}.bit_generator: expected one of {', '.join(_BIT_GENERATORS)}, got {name!r}"
        )
    bit_generator = _BIT_GENERATORS[name]()
    state = _checked_state(data, bit_generator.state, where)
    with reading(where):
        bit_generator.state = state
    return np.random.Generator(bit_generator)


def _random_state(stored, where: str) -> np.random.RandomState:
    rng = np.random.RandomState()
    state = _checked_state(stored, rng.get_state(legacy=False), where)
    with reading(where):
        rng.set_state(state)
    return rng
