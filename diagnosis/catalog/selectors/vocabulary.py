"""The words of a trained model's codes (``shared.vocabulary``), and of its dataset's now."""

from __future__ import annotations

from diagnosis.shared.vocabulary import Vocabulary, vocabulary_snapshot

__all__ = ["current_vocabulary", "vocabulary_of"]


def current_vocabulary(dataset) -> Vocabulary:
    """The dataset's class names and nominal choices as they are now."""
    return vocabulary_snapshot(dataset, dataset.tests.order_by("index"))


def vocabulary_of(trained) -> Vocabulary:
    """The words of ``trained``'s codes as when it was trained (live for a model without)."""
    stored = trained.snapshot.vocabulary if trained.cost_snapshot else None
    return current_vocabulary(trained.dataset) if stored is None else stored
