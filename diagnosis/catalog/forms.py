"""The fields the apps' forms build with: learner parameters, error matrices (the training
page's form is ``diagnosis/training/forms.py``, the clinician's screen's
``diagnosis/clinic/forms.py``).

Forms only turn text into typed values and show messages; the checks
themselves (range, choices, permissions) live in the services, which the JSON
API calls too, so the screens and the API cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django import forms

from diagnosis.shared import learner_registry

_FieldT = TypeVar("_FieldT", bound=forms.Field)


def field_of(form: forms.BaseForm, name: str, kind: type[_FieldT]) -> _FieldT:
    """``form.fields[name]`` as the field class the form declares it with (checked)."""
    field = form.fields[name]
    if not isinstance(field, kind):
        raise TypeError(f"field {name!r} is a {type(field).__name__}, not a {kind.__name__}")
    return field


def number_text(value: float | None) -> str:
    """A bound as the form writes it (``f"{value:g}"``), empty for none."""
    return "" if value is None else f"{value:g}"


def param_field_name(learner_key: str, param_name: str) -> str:
    return f"{learner_key}__{param_name}"


def param_field(
    spec: learner_registry.ParamSpec,
    number_field: Callable[[learner_registry.ParamSpec, dict[str, Any]], forms.Field],
) -> forms.Field:
    """A registry parameter as a form field: a checkbox, a choice, or for a number
    ``number_field(spec, common)``, ``common`` being every field's label, help, initial."""
    common = {
        "label": spec.label,
        "help_text": spec.help,
        "required": False,
        "initial": spec.default,
    }
    if spec.type == "bool":
        return forms.BooleanField(**common)
    if spec.type == "choice":
        return forms.ChoiceField(choices=[(str(v), lbl) for v, lbl in spec.choices], **common)
    return number_field(spec, common)


def number_field(spec: learner_registry.ParamSpec, common: dict[str, Any]) -> forms.Field:
    """One number, in a number box bounded as the learner declares."""
    attrs = {"step": "1" if spec.type == "int" else "any"}
    if spec.min is not None:
        attrs["min"] = number_text(spec.min)
    if spec.max is not None:
        attrs["max"] = number_text(spec.max)
    return forms.CharField(widget=forms.NumberInput(attrs=attrs), **common)


class MatrixSelect(forms.Select):
    """A select whose options name their dataset, so the page can hide other datasets' matrices.

    The dataset's default matrix (``selectors.models.default_error_matrix``)
    is marked ``data-default``: the page selects it when the dataset changes.
    """

    default_ids: frozenset[int] = frozenset()

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        instance = getattr(value, "instance", None)
        if instance is not None:
            option["attrs"]["data-dataset"] = str(instance.dataset_id)
            if instance.pk in self.default_ids:
                option["attrs"]["data-default"] = "true"
        return option


class ErrorMatrixChoiceField(forms.ModelChoiceField):
    """An error matrix, named with its dataset ("heart: default"), in a :class:`MatrixSelect`."""

    widget: MatrixSelect  # always given one (``widget=MatrixSelect``)

    def label_from_instance(self, obj) -> str:
        return f"{obj.dataset.name}: {obj.name}"
