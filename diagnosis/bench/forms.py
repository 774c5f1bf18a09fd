"""The experiment set-up form: dataset, learners with their parameters, error costs, folds.

The form only turns text into values.  Every check (learner parameters against the
registry's constraints, k against the smallest class, an empty sweep, ...) is made by
``services.experiments.create_experiment``, whose field-keyed errors the view puts back on
this form's fields; the training form shares the parameter widgets' bounds from the same
registry.

A numeric learner parameter may hold several values separated by commas ("10, 20, 40"):
each combination becomes one learner of the experiment (a budget curve, a sweep of w).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from diagnosis.bench.models import Experiment
from diagnosis.catalog.forms import (
    ErrorMatrixChoiceField,
    MatrixSelect,
    field_of,
    param_field,
    param_field_name,
)
from diagnosis.catalog.models import Dataset, ErrorMatrix
from diagnosis.catalog.selectors.datasets import default_error_matrices
from diagnosis.shared import learner_registry

__all__ = ["MAX_VARIANTS", "ExperimentForm", "initial_from_experiment", "split_values"]

#: Most learners one parameter list may expand to (the engine caps the total too).
MAX_VARIANTS = 20

_SEPARATORS = re.compile(r"[,;\s]+")

# Which engine error goes under which field of this form.
_ERROR_FIELDS = {
    "name": "name",
    "dataset": "dataset",
    "learners": "learners",
    "matrices": "matrix_kind",
    "k": "k",
    "repeats": "repeats",
    "seed": "seed",
}


def split_values(text: Any) -> list[str]:
    """``"10, 100 1000"`` -> ``["10", "100", "1000"]`` (commas, semicolons or spaces)."""
    return [part for part in _SEPARATORS.split(str(text or "").strip()) if part]


def _fmt(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _values_field(spec: learner_registry.ParamSpec, common: dict[str, Any]) -> forms.Field:
    """Numbers are text so that they may list several values (a sweep)."""
    bounds = []
    if spec.min is not None:
        bounds.append(f"at least {spec.min:g}")
    if spec.max is not None:
        bounds.append(f"at most {spec.max:g}")
    attrs = {"inputmode": "decimal", "autocomplete": "off", "class": "param-values"}
    if bounds:
        attrs["title"] = " and ".join(bounds)
    return forms.CharField(widget=forms.TextInput(attrs=attrs), max_length=200, **common)


class PositiveClassSelect(forms.Select):
    """Options ``<dataset id>:<class code>`` tagged with their dataset, so the page can hide
    other datasets' classes (as the matrix list does)."""

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        dataset_id = str(value).partition(":")[0]
        if dataset_id:
            option["attrs"]["data-dataset"] = dataset_id
        return option


class ExperimentForm(forms.Form):
    """Dataset; learners (checked) with their parameters; one matrix or a sweep; k, repeats,
    seed.  ``cleaned_data["learners"]`` ends as the engine's ``[{"key", "params"}]``."""

    name = forms.CharField(label="Name (optional)", required=False, max_length=200)
    dataset = forms.ModelChoiceField(
        queryset=Dataset.objects.all(),
        empty_label=None,
        help_text="Every learner is tried on the same folds of this dataset's patients.",
    )
    learners = forms.MultipleChoiceField(
        label="Learners to compare",
        required=False,  # the engine says "Choose at least one learner."
        widget=forms.CheckboxSelectMultiple,
    )
    matrix_kind = forms.ChoiceField(
        label="Error costs",
        choices=[
            (
                Experiment.MATRIX_UNIFORM,
                "A sweep of uniform error costs (every error costs the same)",
            ),
            (Experiment.MATRIX_RATIO, "A sweep of false-positive / false-negative cost ratios"),
            (Experiment.MATRIX_ONE, "One error matrix of the dataset"),
        ],
        initial=Experiment.MATRIX_UNIFORM,
        widget=forms.RadioSelect,
    )
    costs = forms.CharField(
        label="Error costs to sweep",
        required=False,
        initial="10, 100, 1000",
        max_length=1000,
        help_text="Each value is one experiment matrix where every error costs that much "
        "(paper 000 used 10, 100, 1000, 10000, 100000).",
        widget=forms.TextInput(attrs={"inputmode": "decimal", "autocomplete": "off"}),
    )
    ratios = forms.CharField(
        label="FP/FN cost ratios to sweep",
        required=False,
        initial="0.1, 0.5, 1, 2, 10",
        max_length=1000,
        help_text="Two-class datasets: a false positive costs ratio × the false-negative cost.",
        widget=forms.TextInput(attrs={"inputmode": "decimal", "autocomplete": "off"}),
    )
    ratio_base = forms.FloatField(
        label="False-negative cost",
        required=False,
        initial=100.0,
        min_value=0,
        help_text="What a missed positive costs in the ratio sweep.",
    )
    positive_class = forms.ChoiceField(
        label="Positive class",
        required=False,
        widget=PositiveClassSelect,
        help_text="The class a false negative misses.",
    )
    reject_cost = forms.FloatField(
        label="Cost of referring (optional)",
        required=False,
        min_value=0,
        help_text="Sweeps only; empty: never refer.",
    )
    error_matrix = ErrorMatrixChoiceField(
        label="Error matrix",
        queryset=ErrorMatrix.objects.select_related("dataset"),
        required=False,
        widget=MatrixSelect,
        empty_label="— choose —",
    )
    k = forms.IntegerField(
        label="Folds (k)",
        initial=10,
        help_text="k-fold cross-validation, stratified; the same folds for every learner.",
        widget=forms.NumberInput(attrs={"min": 2, "step": 1}),
    )
    repeats = forms.IntegerField(
        label="Repeats",
        initial=1,
        help_text="Each repeat draws new folds.",
        widget=forms.NumberInput(attrs={"min": 1, "step": 1}),
    )
    seed = forms.IntegerField(
        label="Seed",
        initial=0,
        help_text="The same seed gives the same folds again.",
        widget=forms.NumberInput(attrs={"min": 0, "step": 1}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The field's own Python-side range checks would duplicate the engine's; they stay out.
        for name in ("k", "repeats", "seed"):
            self.fields[name].error_messages["invalid"] = "Enter a whole number."
        field_of(self, "learners", forms.ChoiceField).choices = [
            (key, spec.label) for key, spec in learner_registry.LEARNERS.items()
        ]
        defaults = default_error_matrices()
        field_of(self, "error_matrix", ErrorMatrixChoiceField).widget.default_ids = frozenset(
            defaults.values()
        )
        field_of(self, "positive_class", forms.ChoiceField).choices = [
            (f"{d.pk}:{code}", f"{d.name}: {label}")
            for d in Dataset.objects.order_by("name")
            for code, label in enumerate(d.class_labels or [])
        ]
        if not self.is_bound:
            datasets = field_of(self, "dataset", forms.ModelChoiceField).queryset
            assert datasets is not None  # declared with one
            dataset = self.initial.get("dataset") or datasets.first()
            dataset_id = getattr(dataset, "pk", dataset)
            if dataset_id is not None:
                self.initial.setdefault("dataset", dataset_id)
                if dataset_id in defaults:
                    self.initial.setdefault("error_matrix", defaults[dataset_id])
                self.initial.setdefault("positive_class", f"{dataset_id}:1")
        self.param_groups = []
        for key, spec in learner_registry.LEARNERS.items():
            names = []
            for p in spec.params:
                field_name = param_field_name(key, p.name)
                self.fields[field_name] = param_field(p, _values_field)
                names.append(field_name)
            self.param_groups.append((key, spec, names))

    # -------------------------------------------------------------- for the template
    def main_fields(self):
        return [self["name"], self["dataset"]]

    def bound_param_groups(self):
        """(key, spec, bound fields, checked) per learner, for the template."""
        chosen = set(self["learners"].value() or [])
        return [
            (key, spec, [self[n] for n in names], key in chosen)
            for key, spec, names in self.param_groups
        ]

    # -------------------------------------------------------------- parsing
    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        dataset = data.get("dataset")
        kind = data.get("matrix_kind")
        matrix = data.get("error_matrix")
        if kind == Experiment.MATRIX_ONE and dataset and matrix and matrix.dataset_id != dataset.pk:
            self.add_error(
                "error_matrix",
                f"“{matrix.name}” belongs to {matrix.dataset.name}, not {dataset.name}.",
            )
        data["positive_code"] = 1
        raw_positive = data.get("positive_class") or ""
        if kind == Experiment.MATRIX_RATIO and dataset is not None and raw_positive:
            owner, _, code = raw_positive.partition(":")
            if owner != str(dataset.pk):
                self.add_error(
                    "positive_class", f"Choose a class of {dataset.name} as the positive class."
                )
            else:
                data["positive_code"] = int(code)
        entries: list[dict] = []
        for key in data.get("learners") or []:
            try:
                entries.extend(self._variants(key, data))
            except ValidationError as exc:
                self.add_error("learners", exc)
        data["learner_entries"] = entries
        return data

    def _variants(self, key: str, data: dict) -> list[dict]:
        """One engine entry per combination of the listed values of ``key``'s parameters."""
        spec = learner_registry.LEARNERS[key]
        options: list[list[tuple[str, Any]]] = []
        for p in spec.params:
            raw = data.get(param_field_name(key, p.name))
            if p.type in ("int", "float"):
                values = split_values(raw)
                if len(set(values)) != len(values):
                    raise ValidationError(f"{spec.label}: {p.label} lists a value twice.")
                options.append([(p.name, v) for v in values] or [(p.name, None)])
            else:
                options.append([(p.name, raw)])
        combos = list(itertools.islice(itertools.product(*options), MAX_VARIANTS + 1))
        if len(combos) > MAX_VARIANTS:
            raise ValidationError(
                f"{spec.label}: the listed values make more than {MAX_VARIANTS} variants; "
                "list fewer values."
            )
        return [
            {"key": key, "params": {name: value for name, value in combo if value is not None}}
            for combo in combos
        ]

    def service_arguments(self) -> dict[str, Any]:
        """The keyword arguments of ``services.experiments.create_experiment``."""
        data = self.cleaned_data
        kind = data["matrix_kind"]
        return {
            "dataset": data["dataset"],
            "learners": data["learner_entries"],
            "matrix_kind": kind,
            "error_matrix": data.get("error_matrix") if kind == Experiment.MATRIX_ONE else None,
            "costs": split_values(data.get("costs")) if kind == Experiment.MATRIX_UNIFORM else (),
            "ratios": split_values(data.get("ratios")) if kind == Experiment.MATRIX_RATIO else (),
            "ratio_base": data.get("ratio_base") if data.get("ratio_base") is not None else 100.0,
            "positive_class": data.get("positive_code", 1),
            "reject_cost": data.get("reject_cost") if kind != Experiment.MATRIX_ONE else None,
            "k": data["k"],
            "repeats": data["repeats"],
            "seed": data["seed"],
            "name": data.get("name") or "",
        }

    def add_service_errors(self, exc: ValidationError) -> None:
        """The engine's field-keyed errors, each under this form's matching field."""
        if not hasattr(exc, "error_dict"):
            for message in exc.messages:
                self.add_error(None, message)
            return
        for key, messages in exc.message_dict.items():
            field = _ERROR_FIELDS.get(key)
            for message in messages:
                self.add_error(field, message)


def initial_from_experiment(experiment: Experiment) -> dict[str, Any]:
    """The form's initial values from a saved experiment ("clone with changes")."""
    initial: dict[str, Any] = {
        "name": f"{experiment.name} (changed)"[:200],
        "dataset": experiment.dataset_id,
        "matrix_kind": experiment.matrix_kind,
        "k": experiment.k,
        "repeats": experiment.repeats,
        "seed": experiment.seed,
    }
    keys: list[str] = []
    values: dict[str, list[str]] = {}
    for entry in experiment.learners:
        key = entry["key"]
        if key not in learner_registry.LEARNERS:
            continue
        if key not in keys:
            keys.append(key)
        for name, value in (entry.get("params") or {}).items():
            field = param_field_name(key, name)
            text = "" if value is None else _fmt(value)
            seen = values.setdefault(field, [])
            if text not in seen:
                seen.append(text)
    initial["learners"] = keys
    for field, seen in values.items():
        spec_type = _param_type(field)
        if spec_type in ("int", "float"):
            initial[field] = ", ".join(v for v in seen if v)
        elif spec_type == "bool":
            initial[field] = seen[0] in ("True", "true", "1")
        else:
            initial[field] = seen[0]
    spec = experiment.matrix_spec or {}
    if experiment.matrix_kind == Experiment.MATRIX_ONE:
        initial["error_matrix"] = spec.get("error_matrix_id")
    elif experiment.matrix_kind == Experiment.MATRIX_UNIFORM:
        initial["costs"] = ", ".join(_fmt(float(c)) for c in spec.get("costs", []))
        initial["reject_cost"] = spec.get("reject_cost")
    else:
        initial["ratios"] = ", ".join(_fmt(float(r)) for r in spec.get("ratios", []))
        initial["ratio_base"] = spec.get("base", 100.0)
        initial["positive_class"] = f"{experiment.dataset_id}:{spec.get('positive', 1)}"
        initial["reject_cost"] = spec.get("reject_cost")
    return initial


def _param_type(field: str) -> str:
    key, _, name = field.partition("__")
    for p in learner_registry.LEARNERS[key].params:
        if p.name == name:
            return p.type
    return ""
