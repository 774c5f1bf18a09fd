"""Forms of the training page, and the fields the other forms build with (the clinician's
screen's forms are the clinic's, ``diagnosis/clinic/forms.py``).

Forms only turn text into typed values and show messages; the checks
themselves (range, choices, permissions) live in the services, which the JSON
API calls too, so the screens and the API cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django import forms
from django.core.exceptions import ValidationError

from .models import Dataset, ErrorMatrix
from .selectors.models import default_error_matrices
from .shared import learner_registry

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


def _number_field(spec: learner_registry.ParamSpec, common: dict[str, Any]) -> forms.Field:
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


class TrainForm(forms.Form):
    """Which data, which learner with which parameters, and which error costs to train with.

    Parameter fields come from the learner registry's ``ParamSpec``s; each
    learner's fields are named ``<learner>__<param>`` and only the chosen
    learner's are used.
    """

    name = forms.CharField(label="Model name (optional)", required=False, max_length=200)
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.all(), empty_label=None)
    learner = forms.ChoiceField(label="Learner", initial=learner_registry.DEFAULT_LEARNER)
    error_matrix = ErrorMatrixChoiceField(
        label="Error costs",
        queryset=ErrorMatrix.objects.select_related("dataset"),
        required=False,
        widget=MatrixSelect,
        empty_label="0/1 loss (every error costs 1; never refer)",
        help_text="What each misclassification costs, and the cost of referring.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field_of(self, "learner", forms.ChoiceField).choices = [
            (key, spec.label) for key, spec in learner_registry.LEARNERS.items()
        ]
        # The default error costs are the chosen dataset's own named matrix, never 0/1 loss.
        defaults = default_error_matrices()
        field_of(self, "error_matrix", ErrorMatrixChoiceField).widget.default_ids = frozenset(
            defaults.values()
        )
        if not self.is_bound:
            datasets = field_of(self, "dataset", forms.ModelChoiceField).queryset
            assert datasets is not None  # declared with one
            dataset = self.initial.get("dataset") or datasets.first()
            dataset_id = getattr(dataset, "pk", dataset)
            if dataset_id in defaults and "error_matrix" not in self.initial:
                self.initial["dataset"] = dataset_id
                self.initial["error_matrix"] = defaults[dataset_id]
        self.param_groups = []
        for key, spec in learner_registry.LEARNERS.items():
            names = []
            for p in spec.params:
                field_name = param_field_name(key, p.name)
                self.fields[field_name] = param_field(p, _number_field)
                names.append(field_name)
            self.param_groups.append((key, spec, names))

    def main_fields(self):
        """The fields that do not depend on the learner, in display order."""
        return [self[n] for n in ("dataset", "learner", "error_matrix", "name")]

    def bound_param_groups(self):
        """(key, spec, bound fields) per learner, for the template."""
        return [(key, spec, [self[n] for n in names]) for key, spec, names in self.param_groups]

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        dataset, matrix, key = data.get("dataset"), data.get("error_matrix"), data.get("learner")
        if dataset and matrix and matrix.dataset_id != dataset.pk:
            self.add_error(
                "error_matrix",
                f"“{matrix.name}” belongs to {matrix.dataset.name}, not {dataset.name}.",
            )
        if key in learner_registry.LEARNERS:
            raw = {
                p.name: data.get(param_field_name(key, p.name))
                for p in learner_registry.LEARNERS[key].params
            }
            try:
                data["params"] = learner_registry.clean_params(key, raw)
            except ValidationError as exc:
                for message in exc.messages:
                    self.add_error(None, message)
        return data
