"""Admin forms: every price, range, choice list and error matrix is checked before saving."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.forms.models import BaseInlineFormSet

from .models import Dataset, DiagnosticTest, ErrorMatrix
from .services.validation import (
    clean_choices,
    clean_formula,
    clean_matrix,
    clean_price_pair,
    clean_range,
    clean_reject_cost,
)


class DatasetForm(forms.ModelForm):
    class Meta:
        model = Dataset
        fields = ["name", "description", "class_labels", "source"]

    def clean_class_labels(self):
        labels = self.cleaned_data["class_labels"]
        if not isinstance(labels, list) or not all(
            isinstance(x, str) and x.strip() for x in labels
        ):
            raise ValidationError(
                'Class labels must be a list of names, e.g. ["healthy", "disease"].'
            )
        if len(labels) < 2:
            raise ValidationError("A dataset needs at least two classes.")
        if len(set(labels)) != len(labels):
            raise ValidationError("Class labels must be unique.")
        if self.instance.pk:
            used = self.instance.cases.order_by("-label").values_list("label", flat=True).first()
            if used is not None and used >= len(labels):
                raise ValidationError(
                    f"Cases use class code {used}; keep at least {used + 1} class labels."
                )
        return [x.strip() for x in labels]


class DiagnosticTestForm(forms.ModelForm):
    class Meta:
        model = DiagnosticTest
        fields = [
            "index",
            "name",
            "label",
            "unit",
            "kind",
            "min_value",
            "max_value",
            "choices",
            "price",
            "discounted_price",
            "group",
            "delayed",
            "derived_from",
            "formula",
            "formula_tolerance",
        ]

    def clean(self):
        data = super().clean()
        name = data.get("name") or "this test"
        if data.get("price") is not None and data.get("discounted_price") is not None:
            try:
                clean_price_pair(data["price"], data["discounted_price"], name=name)
            except ValidationError as exc:
                self.add_error("discounted_price", exc)
        try:
            clean_range(data.get("min_value"), data.get("max_value"), name=name)
        except ValidationError as exc:
            self.add_error("max_value", exc)
        if data.get("kind") == DiagnosticTest.NOMINAL:
            try:
                data["choices"] = clean_choices(data.get("choices"), name=name)
            except ValidationError as exc:
                self.add_error("choices", exc)
        elif data.get("choices"):
            self.add_error("choices", f"Only nominal tests have choices; {name} is numeric.")
        derived = data.get("derived_from") or []
        if not isinstance(derived, list) or not all(isinstance(x, str) for x in derived):
            self.add_error(
                "derived_from", 'Derived from must be a list of test names, e.g. ["TT4", "T4U"].'
            )
        elif data.get("formula") or "formula_tolerance" in self.changed_data:
            try:
                formula = clean_formula(
                    data.get("formula"),
                    data.get("formula_tolerance"),
                    derived_from=derived,
                    name=name,
                )
            except ValidationError as exc:
                field = "formula" if data.get("formula") else "formula_tolerance"
                self.add_error(field, exc)
            else:
                if formula is not None:
                    data["formula"] = formula.text
        return data


class DiagnosticTestFormSet(BaseInlineFormSet):
    """Checks across a dataset's tests: unique names, indices 0..n-1, derived inputs exist."""

    def clean(self):
        # Ours first: its messages name the problem better than Django's generic duplicate check.
        if not any(self.errors):
            self._check_tests()
        super().clean()

    def _check_tests(self) -> None:
        kept = [
            f.cleaned_data
            for f in self.forms
            if f.cleaned_data and not f.cleaned_data.get("DELETE", False)
        ]
        names = [d["name"] for d in kept]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValidationError(f"Test names must be unique; repeated: {', '.join(duplicates)}.")
        indices = sorted(d["index"] for d in kept)
        if indices != list(range(len(kept))):
            raise ValidationError(
                f"Test indices must be 0..{len(kept) - 1}, one per column, got {indices}."
            )
        dataset = self.instance
        if dataset.pk:
            case = dataset.cases.first()
            if case is not None and len(case.values) != len(kept):
                raise ValidationError(
                    f"The cases have {len(case.values)} values each, so the dataset needs exactly "
                    f"{len(case.values)} tests (it would have {len(kept)})."
                )
        for d in kept:
            for source in d.get("derived_from") or []:
                if source not in names or source == d["name"]:
                    raise ValidationError(
                        f"Test {d['name']!r} is derived from {source!r}, "
                        "which is not another test of this dataset."
                    )
            group = d.get("group")
            if group is not None and dataset.pk and group.dataset_id != dataset.pk:
                raise ValidationError(
                    f"Test {d['name']!r}: group {group.name!r} belongs to another dataset."
                )


class ErrorMatrixForm(forms.ModelForm):
    class Meta:
        model = ErrorMatrix
        fields = ["name", "matrix", "reject_cost"]
        help_texts = {"matrix": "One row per actual class, e.g. [[0, 100], [500, 0]]."}

    def clean_reject_cost(self):
        return clean_reject_cost(self.cleaned_data.get("reject_cost"))


class ErrorMatrixFormSet(BaseInlineFormSet):
    """A matrix must be K x K for the dataset's classes, finite and non-negative."""

    def clean(self):
        super().clean()
        labels = self.instance.class_labels or []
        names = []
        for form in self.forms:
            data = getattr(form, "cleaned_data", None)
            if not data or data.get("DELETE"):
                continue
            names.append(data.get("name"))
            if "matrix" in data:
                try:
                    data["matrix"] = clean_matrix(data["matrix"], labels)
                    form.instance.matrix = data["matrix"]
                except ValidationError as exc:
                    form.add_error("matrix", exc)
        duplicates = sorted({n for n in names if n and names.count(n) > 1})
        if duplicates:
            raise ValidationError(
                f"Error matrix names must be unique; repeated: {', '.join(duplicates)}."
            )


class ImportForm(forms.Form):
    """Import a dataset from an uploaded CSV or from a UCI folder on the server."""

    SOURCE_CHOICES = [("csv", "CSV file with a header row"), ("uci", "UCI folder on the server")]

    source = forms.ChoiceField(choices=SOURCE_CHOICES)
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    file = forms.FileField(required=False, help_text="CSV: the first row names the columns.")
    class_column = forms.CharField(required=False, help_text="CSV: the column holding the class.")
    categorical = forms.CharField(
        required=False, help_text="CSV: comma-separated columns to treat as categories."
    )
    folder = forms.CharField(
        required=False, help_text="UCI: path of a folder such as .../data/uci/heart-disease."
    )

    def clean(self):
        data = super().clean()
        if data.get("source") == "csv":
            if not data.get("file"):
                self.add_error("file", "Choose a CSV file.")
            if not data.get("class_column"):
                self.add_error("class_column", "Name the class column.")
        elif data.get("source") == "uci" and not data.get("folder"):
            self.add_error("folder", "Give the folder path.")
        return data

    def categorical_columns(self) -> list[str]:
        return [
            c.strip() for c in (self.cleaned_data.get("categorical") or "").split(",") if c.strip()
        ]
