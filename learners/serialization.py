"""Plain-JSON persistence for every learner.  Loading never runs code.

A model document is::

    {"format": "learners-model", "version": 1, "learner": "<class name>",
     "params": {...get_params()...}, "fitted": {...learner-specific state...}}

Only classes named in :data:`LEARNERS` can be loaded, so a document cannot
make the loader import or call anything else.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import numpy as np

from .costs import CostModel

__all__ = ["LEARNERS", "SerializableMixin", "model_from_json", "model_to_json"]

FORMAT = "learners-model"
VERSION = 1

#: learner class name -> module that defines it (the only loadable classes).
LEARNERS: dict[str, str] = {
    "C45Classifier": "learners.tree",
    "EG2Classifier": "learners.tree",
    "IDXClassifier": "learners.tree",
    "CSID3Classifier": "learners.tree",
    "DTMCClassifier": "learners.tree",
    "ACTClassifier": "learners.act",
    "LSID3Classifier": "learners.act",
    "ICETClassifier": "learners.act",
    "ConditionedLossClassifier": "learners.conditioned_loss",
}


class SerializableMixin:
    """``to_json`` / ``from_json`` for an estimator with JSON-able fitted state.

    Subclasses implement ``_fitted_state()`` returning a JSON-able dict and
    ``_load_fitted_state(state)`` restoring it.
    """

    def to_json(self) -> str:
        """Serialize parameters and fitted state to a JSON string."""
        return model_to_json(self)

    @classmethod
    def from_json(cls, text: str):
        """Rebuild a model serialized by :meth:`to_json`."""
        model = model_from_json(text)
        if not isinstance(model, cls):
            raise ValueError(f"document holds a {type(model).__name__}, not a {cls.__name__}")
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
            k: encode_value(v)
            for k, v in model.get_params(deep=False).items()
            if not callable(v)
        },
        "fitted": model._fitted_state(),
    }
    return json.dumps(document, allow_nan=False, separators=(",", ":"))


def model_from_json(text: str | bytes | dict):
    """Load a learner serialized by :func:`model_to_json`.

    Raises
    ------
    ValueError
        If the document is not a learners model, or names an unknown learner.
    """
    document = json.loads(text) if isinstance(text, (str, bytes)) else text
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError("not a learners model document")
    if document.get("version") != VERSION:
        raise ValueError(f"unsupported model document version {document.get('version')!r}")
    name = document.get("learner")
    if name not in LEARNERS:
        raise ValueError(f"unknown learner {name!r}")
    cls = getattr(importlib.import_module(LEARNERS[name]), name)
    params = {k: decode_value(v) for k, v in document.get("params", {}).items()}
    model = cls(**params)
    model._load_fitted_state(document["fitted"])
    return model


def encode_value(value: Any) -> Any:
    """JSON-able form of a parameter value (CostModel, arrays, numpy scalars)."""
    if isinstance(value, CostModel):
        return {"__cost_model__": value.to_dict()}
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


def decode_value(value: Any) -> Any:
    """Inverse of :func:`encode_value`."""
    if isinstance(value, dict):
        if "__cost_model__" in value:
            return CostModel.from_dict(value["__cost_model__"])
        if "__array__" in value:
            return np.asarray(value["__array__"])
        if "__dict__" in value:
            return {decode_value(k): decode_value(v) for k, v in value["__dict__"]}
        raise ValueError("unexpected object in model parameters")
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    return value
