"""The words of a trained model's codes (``shared.vocabulary``), and of its dataset's now."""

from __future__ import annotations

from typing import Any

from ..shared.vocabulary import Vocabulary, vocabulary_snapshot

__all__ = ["current_vocabulary", "vocabulary_of"]


def current_vocabulary(dataset) -> dict[str, Any]:
    """The dataset's class names and nominal choices as they are now (a snapshot's shape)."""
    return vocabulary_snapshot(dataset, dataset.tests.order_by("index"))


def vocabulary_of(trained) -> Vocabulary:
    """The words of ``trained``'s codes as when it was trained (live for a model without)."""
    stored = (trained.cost_snapshot or {}).get("vocabulary")
    if stored is None:
        stored = current_vocabulary(trained.dataset)
    return Vocabulary(class_labels=list(stored["class_labels"]), choices=dict(stored["choices"]))
