"""Forms of the clinician's screen and the training page.

Forms only turn text into typed values and show messages; the checks
themselves (range, choices, permissions) live in the services, which the JSON
API calls too, so the screens and the API cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django import forms
from django.core.exceptions import ValidationError

from diagnosis.services.step import clean_value

from .models import Dataset, DiagnosticTest, ErrorMatrix
from .selectors.models import default_error_matrices
from .shared import learner_registry

_FieldT = TypeVar("_FieldT", bound=forms.Field)


def field_of(form: forms.BaseForm, name: str, kind: type[_FieldT]) -> _FieldT:
    """``form.fields[name]`` as the field class the form declares it with (checked)."""
    field = form.fields[name]
    if not isinstance(field, kind):
        raise TypeError(f"field {name!r} is a {type(field).__name__}, not a {kind.__name__}")
    return field


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


class ResultForm(forms.Form):
    """The result of one test: a number within the test's range, or one of its choices.

    The field only carries the widget (a number input with range and unit, or
    a select of choices); the value is checked by the service's
    :func:`~diagnosis.services.step.clean_value`, the same function the JSON
    API goes through.
    """

    def __init__(
        self, *args: Any, test: DiagnosticTest, choices: list | None = None, **kwargs: Any
    ) -> None:
        """``choices``: the test's choices as the case's model learned them (else today's)."""
        super().__init__(*args, **kwargs)
        self.test = test
        self.choices = list(test.choices or []) if choices is None else choices
        label = f"{test.display_label} result"
        attrs = {"autofocus": True, "accesskey": "v", "class": "value-input"}
        if test.is_nominal:
            choices = [("", "— choose —")] + [
                (str(int(c["code"])), str(c["label"])) for c in self.choices
            ]
            # strip=False: the value reaches clean_value as sent, which refuses a padded one
            # (" 1", " male") as both JSON APIs do
            self.fields["value"] = forms.CharField(
                label=label,
                required=False,
                strip=False,
                widget=forms.Select(attrs=attrs, choices=choices),
            )
        else:
            if test.integer_only:
                attrs.update({"step": "1", "inputmode": "numeric"})
            else:
                attrs.update({"step": "any", "inputmode": "decimal"})
            if test.min_value is not None:
                attrs["min"] = _fmt(test.min_value)
            if test.max_value is not None:
                attrs["max"] = _fmt(test.max_value)
            unit = f" {test.unit}" if test.unit else ""
            low, high = _fmt(test.min_value), _fmt(test.max_value)
            help_parts = []
            if low and high:
                help_parts.append(f"Between {low} and {high}{unit}")
            elif low:
                help_parts.append(f"At least {low}{unit}")
            elif high:
                help_parts.append(f"At most {high}{unit}")
            if test.integer_only:
                help_parts.append("whole numbers only")
            narrower = (test.plausible_min, test.plausible_max) != (test.min_value, test.max_value)
            if test.plausible_text() and narrower:
                help_parts.append(f"expected {test.plausible_text()}")
            self.fields["value"] = forms.CharField(
                label=label,
                required=False,
                widget=forms.NumberInput(attrs=attrs),
                help_text="; ".join(help_parts),
            )

    def clean_value(self) -> float:
        return clean_value(self.test, self.cleaned_data["value"], self.choices)


class ClassifyForm(forms.Form):
    """The clinician's conclusion: one of the dataset's classes."""

    def __init__(self, *args: Any, class_labels: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["label"] = forms.TypedChoiceField(
            label="Classify as",
            choices=[("", "— choose a class —")]
            + [(str(i), c) for i, c in enumerate(class_labels)],
            coerce=int,
            error_messages={
                "required": "Choose the class to conclude.",
                "invalid_choice": "That is not one of this model's classes.",
            },
        )


class StartCaseForm(forms.Form):
    patient_reference = forms.CharField(
        label="Patient reference (optional)",
        required=False,
        max_length=200,
        help_text="A record number or initials; no names needed.",
    )


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
        attrs["min"] = _fmt(spec.min)
    if spec.max is not None:
        attrs["max"] = _fmt(spec.max)
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


UNKNOWN = "unknown"


class ResultsForm(forms.Form):
    """Several tests in one form (free questions, a derived test with its inputs).

    One field per test, named ``t<index>``, built like :class:`ResultForm`'s;
    a nominal test's list ends with "unknown / not available", a numeric test
    has an "unknown" box ``t<index>_unknown``.  :meth:`results` gives the
    service the raw values by test name (``None`` = unknown); the service
    (``record_results``) checks them all and saves all or nothing.
    """

    def __init__(
        self, *args: Any, tests: list[DiagnosticTest], vocabulary=None, **kwargs: Any
    ) -> None:
        """``vocabulary``: the case's model's words for its codes (else today's choices)."""
        super().__init__(*args, **kwargs)
        self.tests = list(tests)
        self.rows: list[tuple[DiagnosticTest, str, str | None]] = []
        for position, test in enumerate(self.tests):
            choices = vocabulary.choices_for(test) if vocabulary is not None else None
            field = ResultForm(test=test, choices=choices).fields["value"]
            field.label = test.display_label
            attrs = field.widget.attrs
            attrs.pop("accesskey", None)
            if position:
                attrs.pop("autofocus", None)
            name = f"t{test.index}"
            unknown_name = None
            if test.is_nominal:
                field.widget.choices = [
                    *field.widget.choices,
                    (UNKNOWN, "unknown / not available"),
                ]
            else:
                unknown_name = f"{name}_unknown"
                self.fields[unknown_name] = forms.BooleanField(label="unknown", required=False)
            self.fields[name] = field
            self.rows.append((test, name, unknown_name))

    def results(self) -> dict[str, Any]:
        """Test name -> the value as typed, or None when marked unknown."""
        data = self.data
        results: dict[str, Any] = {}
        for test, name, unknown_name in self.rows:
            value = data.get(name)
            unknown = value == UNKNOWN or (unknown_name is not None and data.get(unknown_name))
            results[test.name] = None if unknown else value
        return results

    def add_test_errors(self, errors: dict[str, list[str]]) -> list[str]:
        """Put the service's messages next to their fields; returns those about no field."""
        by_name = {test.name: name for test, name, _ in self.rows}
        rest: list[str] = []
        for test_name, messages in errors.items():
            field = by_name.get(test_name)
            for message in messages:
                if field is None:
                    rest.append(message)
                else:
                    self.add_error(field, message)
        return rest

    def bound_rows(self) -> list[dict[str, Any]]:
        """What the template draws per test: the test, its field and its "unknown" box."""
        return [
            {
                "test": test,
                "field": self[name],
                "unknown": self[unknown_name] if unknown_name else None,
            }
            for test, name, unknown_name in self.rows
        ]
