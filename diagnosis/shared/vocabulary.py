"""The words a trained model's codes mean: class names and nominal choices, as at training.

A model learns codes (class 1, sex 0); the dataset says what they mean. An admin may later
rename, reorder or swap those words, so a model keeps a snapshot of them
(``cost_snapshot["vocabulary"]``), and everything that shows or reads a case's codes goes
through the model's :class:`Vocabulary` (``selectors.vocabulary.vocabulary_of``): a closed
case keeps the diagnosis and values it was decided with, and a new "male" is stored as the code
the model learned for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Vocabulary", "vocabulary_snapshot"]


def vocabulary_snapshot(dataset, tests) -> dict[str, Any]:
    """The dataset's class names and nominal choices now, to keep with a model's prices.

    ``tests``: the dataset's tests in index order, already read.
    """
    return {
        "class_labels": [str(c) for c in dataset.class_labels],
        "choices": {
            t.name: [{"code": int(c["code"]), "label": str(c["label"])} for c in t.choices or []]
            for t in tests
            if t.is_nominal
        },
    }


@dataclass(frozen=True)
class Vocabulary:
    """Class names by code, and each nominal test's choices (by test name)."""

    class_labels: list[str]
    choices: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def class_label(self, code: int | None) -> str | None:
        if code is None:
            return None
        return self.class_labels[code] if 0 <= code < len(self.class_labels) else str(code)

    def choices_for(self, test) -> list[dict[str, Any]]:
        """The test's choices as the model learned them (the live ones for a newer test)."""
        return self.choices.get(test.name, list(test.choices or []))

    def choice_label(self, test, code: float | int | None) -> str:
        """Label of a nominal code of ``test`` (the code itself when unknown)."""
        return test.choice_label(code, choices=self.choices_for(test))

    def as_trained(self, tests):
        """``tests`` (fresh instances, read-only use) with the choices the model learned.

        For selectors that hand tests on to code that asks ``test.choice_label``;
        the instances must never be saved.
        """
        for test in tests:
            if test.is_nominal:
                test.choices = self.choices_for(test)
        return tests
