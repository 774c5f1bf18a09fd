"""The words a trained model's codes mean: class names and nominal choices, as at training.

A model learns codes (class 1, sex 0); the dataset says what they mean. An admin may later
rename, reorder or swap those words, so a model keeps a snapshot of them
(its ``CostSnapshot.vocabulary``), and everything that shows or reads a case's codes goes
through the model's :class:`Vocabulary` (``selectors.vocabulary.vocabulary_of``): a closed
case keeps the diagnosis and values it was decided with, and a new "male" is stored as the code
the model learned for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from learners import ModelDocumentError
from learners._document import field as read_field
from learners._document import integer, mapping, no_unknown_fields

__all__ = ["Vocabulary", "vocabulary_snapshot"]


def vocabulary_snapshot(dataset, tests) -> Vocabulary:
    """The dataset's class names and nominal choices now, to keep with a model's prices.

    ``tests``: the dataset's tests in index order, already read.
    """
    return Vocabulary(
        class_labels=[str(c) for c in dataset.class_labels],
        choices={
            t.name: [{"code": int(c["code"]), "label": str(c["label"])} for c in t.choices or []]
            for t in tests
            if t.is_nominal
        },
    )


@dataclass(frozen=True)
class Vocabulary:
    """Class names by code, and each nominal test's choices (by test name)."""

    class_labels: list[str]
    choices: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any, where: str = "vocabulary") -> Vocabulary:
        """The words stored with a model's prices (``{"class_labels": [...], "choices":
        {test name: [{"code", "label"}, ...]}}``); ModelDocumentError when malformed."""
        data = mapping(data, where)
        no_unknown_fields(data, ("class_labels", "choices"), where)
        labels = read_field(data, "class_labels", where)
        if not isinstance(labels, list) or not all(isinstance(c, str) for c in labels):
            raise ModelDocumentError(f"{where}.class_labels: expected a list of class names")
        choices = mapping(read_field(data, "choices", where), f"{where}.choices")
        for name, entries in choices.items():
            at = f"{where}.choices[{name!r}]"
            if not isinstance(entries, list):
                raise ModelDocumentError(f"{at}: expected a list of choices")
            for i, entry in enumerate(entries):
                entry = mapping(entry, f"{at}[{i}]")
                no_unknown_fields(entry, ("code", "label"), f"{at}[{i}]")
                integer(
                    read_field(entry, "code", f"{at}[{i}]"),
                    f"{at}[{i}].code",
                    low=-(2**31),
                    high=2**31 - 1,
                )
                if not isinstance(read_field(entry, "label", f"{at}[{i}]"), str):
                    raise ModelDocumentError(f"{at}[{i}].label: expected the choice's words")
        return cls(
            class_labels=list(labels),
            choices={str(name): [dict(e) for e in entries] for name, entries in choices.items()},
        )

    def to_json(self) -> dict[str, Any]:
        """The stored form :meth:`from_json` reads."""
        return {
            "class_labels": list(self.class_labels),
            "choices": {name: [dict(e) for e in entries] for name, entries in self.choices.items()},
        }

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
