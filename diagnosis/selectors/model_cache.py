"""Fitted estimators kept in memory, so a clinician's screen does not re-parse JSON per click."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

from learners import model_from_json

__all__ = ["clear", "get_estimator"]

MAX_MODELS = 16

_lock = threading.Lock()
_cache: OrderedDict[tuple[int, int, str], object] = OrderedDict()


def _key(trained_model) -> tuple[int, int, str]:
    text = trained_model.model_json or ""
    # The digest makes a retrained model (same id, new JSON) a new entry.
    return (trained_model.pk, len(text), hashlib.sha1(text.encode()).hexdigest())


def get_estimator(trained_model):
    """The fitted model of a succeeded ``TrainedModel`` (loaded once, then cached; LRU)."""
    if not trained_model.model_json:
        raise ValueError(
            f"model {trained_model.pk} has no fitted model (status {trained_model.status})"
        )
    key = _key(trained_model)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    estimator = model_from_json(trained_model.model_json)
    with _lock:
        _cache[key] = estimator
        _cache.move_to_end(key)
        while len(_cache) > MAX_MODELS:
            _cache.popitem(last=False)
    return estimator


def clear() -> None:
    """Forget every cached estimator (tests)."""
    with _lock:
        _cache.clear()
