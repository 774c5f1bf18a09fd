"""The training page's form.

Forms only turn text into typed values and show messages; the checks themselves live in the
services.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from diagnosis.catalog.forms import (
    ErrorMatrixChoiceField,
    MatrixSelect,
    field_of,
    number_field,
    param_field,
    param_field_name,
)
from diagnosis.catalog.models import Dataset, ErrorMatrix
from diagnosis.catalog.selectors.datasets import default_error_matrices
from diagnosis.shared import learner_registry


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
                self.fields[field_name] = param_field(p, number_field)
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
