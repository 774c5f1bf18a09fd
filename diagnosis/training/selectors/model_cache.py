"""Fitted estimators kept in memory, so a clinician's screen does not re-parse JSON per click.

One entry per model id.  A request on the hot path (a case's step or page) reads the
``TrainedModel`` row *without* its ``model_json`` (``defer``: the conditioned-loss document
holds its training rows, a 40-tree forest is ~2 MB) and the entry is used as long as the
row's training record is the one it was loaded from: ``status``, ``finished_at``,
``fit_seconds``, ``anytime_round`` and ``attempts``, which every write of a new fitted model
changes (a finished training sets ``finished_at``; an anytime round its ``anytime_round`` and
``fit_seconds``; a retried run its ``attempts``).  When the row was read *with* its JSON, the
JSON itself decides (its length and SHA-1), so a model whose document changed in memory or in
the database is loaded afresh.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

from learners import model_from_json
from learners.baselines import OrderEverything, OrderNothing
from learners.selection import CostSelectedClassifier

__all__ = ["RECORD_FIELDS", "clear", "deciding_model", "get_estimator"]

MAX_MODELS = 16

#: The fields of a ``TrainedModel`` that change whenever its fitted model does.
RECORD_FIELDS = ("status", "finished_at", "fit_seconds", "anytime_round", "attempts")


@dataclass(frozen=True)
class _Entry:
    record: tuple
    digest: tuple[int, str]
    estimator: object


_lock = threading.Lock()
_cache: OrderedDict[int, _Entry] = OrderedDict()


def _record(trained_model) -> tuple:
    return tuple(getattr(trained_model, name) for name in RECORD_FIELDS)


def _digest(text: str) -> tuple[int, str]:
    return (len(text), hashlib.sha1(text.encode()).hexdigest())


def _json_is_loaded(trained_model) -> bool:
    return "model_json" not in trained_model.get_deferred_fields()


def _cached(pk, test, record: tuple) -> object | None:
    with _lock:
        entry = _cache.get(pk)
        if entry is None or not test(entry):
            return None
        if entry.record != record:  # the same model, its record read again
            _cache[pk] = _Entry(record=record, digest=entry.digest, estimator=entry.estimator)
        _cache.move_to_end(pk)
        return entry.estimator


def get_estimator(trained_model):
    """The fitted model of a succeeded ``TrainedModel`` (loaded once, then cached; LRU).

    ``trained_model`` may come with ``model_json`` deferred: its JSON is then read from the
    database only when the cache does not hold this training's model.
    """
    record = _record(trained_model)
    if not _json_is_loaded(trained_model):
        found = _cached(trained_model.pk, lambda entry: entry.record == record, record)
        if found is not None:
            return found
        trained_model.refresh_from_db(fields=["model_json"])
    text = trained_model.model_json
    if not text:
        raise ValueError(
            f"model {trained_model.pk} has no fitted model (status {trained_model.status})"
        )
    digest = _digest(text)
    found = _cached(trained_model.pk, lambda entry: entry.digest == digest, record)
    if found is not None:
        return found
    estimator = model_from_json(text)
    with _lock:
        _cache[trained_model.pk] = _Entry(record=record, digest=digest, estimator=estimator)
        _cache.move_to_end(trained_model.pk)
        while len(_cache) > MAX_MODELS:
            _cache.popitem(last=False)
    return estimator


def clear() -> None:
    """Forget every cached estimator (tests)."""
    with _lock:
        _cache.clear()


def deciding_model(estimator):
    """The model whose trees decide: a "let the data choose" model's refitted winner (when
    that is a learner; a simple strategy that won has no tree), else the model itself.

    The selector answers every step with its winner's, so the winner's diagram is the one
    that explains the advice.
    """
    if isinstance(estimator, CostSelectedClassifier) and not isinstance(
        estimator.best_estimator_, OrderNothing | OrderEverything
    ):
        return estimator.best_estimator_
    return estimator
