"""Admin forms: every price, range, choice list and error matrix is checked before saving.

Nothing is typed as JSON: class labels and choices are lines of text, derived-from inputs a
comma-separated list, an error matrix a grid of number boxes labelled with the class names.
Every error names its row (the test or matrix) and its field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.forms.models import BaseInlineFormSet
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from diagnosis.shared.validation import (
    clean_choices,
    clean_formula,
    clean_matrix,
    clean_plausible_range,
    clean_price_pair,
    clean_range,
    clean_reject_cost,
)

from .models import Dataset, DiagnosticTest, ErrorMatrix


class LinesField(forms.CharField):
    """A list of strings edited one per line."""

    def __init__(self, *, rows: int = 3, **kwargs) -> None:
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": rows, "cols": 28}))
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if isinstance(value, (list, tuple)):
            return "\n".join(str(v) for v in value)
        return value

    # The stubs type a CharField's value as text; this one's cleaned value is the list of lines.
    def to_python(self, value) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        return [line.strip() for line in str(text).splitlines() if line.strip()]


class ChoicesField(LinesField):
    """Nominal codes, one ``code: label`` per line (e.g. ``0: normal``)."""

    def prepare_value(self, value):
        if isinstance(value, (list, tuple)):
            return "\n".join(
                f"{c.get('code')}: {c.get('label')}" if isinstance(c, dict) else str(c)
                for c in value
            )
        return value

    # The cleaned value is the list of choices, not LinesField's list of lines.
    def to_python(self, value) -> list[dict]:  # type: ignore[override]
        choices = []
        for line in super().to_python(value):
            code, colon, label = line.partition(":")
            code = code.strip()
            try:
                number = float(code)
                parsed: object = int(number) if number.is_integer() else number
            except ValueError:
                parsed = code
            choices.append({"code": parsed, "label": label.strip() if colon else ""})
        return choices


class NamesField(forms.CharField):
    """Test names, comma-separated (``TT4, T4U``)."""

    def prepare_value(self, value):
        if isinstance(value, (list, tuple)):
            return ", ".join(str(v) for v in value)
        return value

    # The stubs type a CharField's value as text; this one's cleaned value is the list of names.
    def to_python(self, value) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        return [n.strip() for n in str(text).split(",") if n.strip()]


class MatrixWidget(forms.MultiWidget):
    """K x K number boxes in a table: a row per actual class, a column per concluded class."""

    def __init__(self, class_labels, attrs=None) -> None:
        self.class_labels = list(class_labels)
        k = len(self.class_labels)
        cell = {"step": "any", "min": "0", "class": "matrix-cell"}
        widgets: dict[str, forms.Widget | type[forms.Widget]] = {
            f"r{i}c{j}": forms.NumberInput(attrs=cell) for i in range(k) for j in range(k)
        }
        super().__init__(widgets, attrs)

    def decompress(self, value):
        k = len(self.class_labels)
        return _flat(value, k) if value else [None] * (k * k)

    def render(self, name, value, attrs=None, renderer=None):
        labels, k = self.class_labels, len(self.class_labels)
        if not k:
            return format_html("<p>{}</p>", "Save the class labels first; the grid follows them.")
        values = _flat(value, k) if value else [None] * (k * k)
        base_id = (attrs or {}).get("id") or self.attrs.get("id") or name
        head = format_html_join("", '<th scope="col">{}</th>', ((label,) for label in labels))
        rows = []
        for i, actual in enumerate(labels):
            cells = []
            for j, concluded in enumerate(labels):
                n = i * k + j
                # set by MultiWidget.__init__ since Django 3.1; django-stubs omit it
                suffix = self.widgets_names[n]  # type: ignore[attr-defined]
                box = self.widgets[n].render(
                    name + suffix,
                    values[n],
                    {
                        "id": base_id + suffix,
                        "aria-label": f"cost when the patient is {actual} "
                        f"and the conclusion is {concluded}",
                    },
                    renderer,
                )
                cells.append(format_html('<td class="{}">{}</td>', "diag" if i == j else "", box))
            rows.append(
                format_html('<tr><th scope="row">{}</th>{}</tr>', actual, mark_safe("".join(cells)))
            )
        return format_html(
            '<table class="cost-matrix"><thead><tr><th scope="col" class="corner">'
            "patient &darr; concluded &rarr;</th>{}</tr></thead><tbody>{}</tbody></table>",
            head,
            mark_safe("".join(rows)),
        )


def _flat(value, k: int) -> list:
    """A K x K table (list of rows) or an already flat list of K*K cells, as a flat list."""
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple)):
        return [
            value[i][j] if i < len(value) and j < len(value[i]) else None
            for i in range(k)
            for j in range(k)
        ]
    cells = list(value) if isinstance(value, (list, tuple)) else []
    return (cells + [None] * (k * k))[: k * k]


class MatrixField(forms.Field):
    """The grid's K x K raw cells as rows; numbers are checked by ``clean_matrix``."""

    def __init__(self, class_labels, **kwargs) -> None:
        self.class_labels = list(class_labels)
        kwargs.setdefault("widget", MatrixWidget(self.class_labels))
        kwargs.setdefault(
            "help_text",
            "What each conclusion costs for each actual class (row: the patient's class; "
            "column: the class concluded); 0 on the diagonal means a right conclusion is free.",
        )
        super().__init__(**kwargs)

    def to_python(self, value):
        k = len(self.class_labels)
        cells = ["" if v is None else str(v).strip() for v in _flat(value, k)]
        return [[cells[i * k + j] or None for j in range(k)] for i in range(k)]

    def validate(self, value) -> None:
        if self.required and not any(c is not None for row in value or [] for c in row):
            raise ValidationError("Enter the error costs.", code="required")

    def has_changed(self, initial, data) -> bool:
        k = len(self.class_labels)

        def number(v):
            try:
                return float(v)
            except (TypeError, ValueError):
                return v if v not in ("", None) else None

        before = [number(v) for v in _flat(initial, k)] if initial else [None] * (k * k)
        return before != [number(v) for v in _flat(data, k)]


if TYPE_CHECKING:
    # The form the mixin is combined with, so mypy knows its fields and errors; at run time
    # it stays a plain mixin.
    _FormBase = forms.BaseForm
else:
    _FormBase = object


class NamedErrorsMixin(_FormBase):
    """Prefixes each field error with its row and field, unless the message already names them.

    ``row_name()`` says which row (test, matrix) the form is; Django's own messages
    ("Enter a number.") then read "glucose, price: Enter a number."
    """

    def row_name(self) -> str:
        raise NotImplementedError

    def full_clean(self) -> None:
        super().full_clean()
        if not self.errors:
            return
        row = self.row_name()
        name = row.split(" ", 1)[-1]  # "Test glucose" -> "glucose": a message naming it is kept
        for field, errors in self.errors.items():
            if field == NON_FIELD_ERRORS or field not in self.fields:
                continue
            label = str(self.fields[field].label or field).lower()
            named = [
                message if name in message else f"{row}, {label}: {message}"
                for message in map(str, errors)
            ]
            self.errors[field] = self.error_class(named, renderer=self.renderer)


class DatasetForm(forms.ModelForm):
    class_labels = LinesField(
        label="Class labels",
        rows=4,
        help_text="One class per line; the order gives the class code (first line = 0).",
    )

    class Meta:
        model = Dataset
        fields = ["name", "description", "class_labels", "source"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2, "cols": 60})}

    def clean_class_labels(self):
        labels = self.cleaned_data["class_labels"]
        if len(labels) < 2:
            raise ValidationError("A dataset needs at least two classes.")
        if len(set(labels)) != len(labels):
            repeated = sorted({x for x in labels if labels.count(x) > 1})
            raise ValidationError(f"Class labels must be unique; repeated: {', '.join(repeated)}.")
        if self.instance.pk:
            used = self.instance.cases.order_by("-label").values_list("label", flat=True).first()
            if used is not None and used >= len(labels):
                raise ValidationError(
                    f"Cases use class code {used}; keep at least {used + 1} class labels."
                )
        return [x.strip() for x in labels]


def _narrow(width_em: float, **attrs) -> dict:
    return {"style": f"width: {width_em}em", **attrs}


class DiagnosticTestForm(NamedErrorsMixin, forms.ModelForm):
    choices = ChoicesField(
        required=False,
        rows=3,
        label="Choices",
        help_text="Nominal tests: one code: label per line, e.g. 0: normal.",
    )
    derived_from = NamesField(
        required=False,
        label="Derived from",
        help_text="Tests it is computed from, comma-separated (e.g. TT4, T4U).",
        widget=forms.TextInput(attrs=_narrow(9)),
    )

    class Meta:
        model = DiagnosticTest
        widgets = {
            "index": forms.NumberInput(attrs=_narrow(3.5)),
            "name": forms.TextInput(attrs=_narrow(8)),
            "label": forms.TextInput(attrs=_narrow(11)),
            "unit": forms.TextInput(attrs=_narrow(4.5)),
            "price": forms.NumberInput(attrs=_narrow(5.5, step="any")),
            "discounted_price": forms.NumberInput(attrs=_narrow(5.5, step="any")),
            "min_value": forms.NumberInput(attrs=_narrow(6, step="any")),
            "max_value": forms.NumberInput(attrs=_narrow(6, step="any")),
            "plausible_min": forms.NumberInput(attrs=_narrow(6, step="any")),
            "plausible_max": forms.NumberInput(attrs=_narrow(6, step="any")),
            "formula": forms.TextInput(attrs=_narrow(9)),
            "formula_tolerance": forms.NumberInput(attrs=_narrow(5, step="any")),
        }
        labels = {"discounted_price": "Price in group", "delayed": "Lab (later)"}
        fields = ["index", *DiagnosticTest.EDITABLE_FIELDS]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # The narrow inline column cuts "Nominal (coded categories)" to "Nominal (coc": the
        # select says one word and its title the rest.
        kind = self.fields["kind"]
        assert isinstance(kind, forms.ChoiceField)  # a model field with choices
        # django-stubs type the choices read back as any choices input; Django 5 gives the pairs
        pairs = kind.choices
        kind.choices = [(value, label.split(" (")[0]) for value, label in pairs]  # type: ignore[misc,union-attr]
        kind.widget.attrs["title"] = "Nominal: coded categories, with their choices"

    def row_name(self) -> str:
        data = getattr(self, "cleaned_data", {}) or {}
        shown = data.get("label") or data.get("name") or self.instance.display_label
        return f"Test {shown or 'new'}"

    def clean(self):
        super().clean()
        data = self.cleaned_data
        # the clinician's name for the test (its label), the column code only without one
        name = data.get("label") or data.get("name") or "this test"
        if data.get("price") is not None and data.get("discounted_price") is not None:
            try:
                clean_price_pair(data["price"], data["discounted_price"], name=name)
            except ValidationError as exc:
                self.add_error("discounted_price", exc)
        try:
            low, high = clean_range(data.get("min_value"), data.get("max_value"), name=name)
        except ValidationError as exc:
            self.add_error("max_value", exc)
        else:
            self._clean_plausible(data, name, low, high)
        if data.get("kind") == DiagnosticTest.NOMINAL and not data.get("choices"):
            self.add_error(
                "choices", f"{name} is nominal: give its choices, one code: label per line."
            )
        elif data.get("kind") == DiagnosticTest.NOMINAL:
            try:
                data["choices"] = clean_choices(data.get("choices"), name=name)
            except ValidationError as exc:
                self.add_error("choices", exc)
        elif data.get("choices"):
            self.add_error("choices", f"Only nominal tests have choices; {name} is numeric.")
        if {"price", "discounted_price"} & set(self.changed_data):
            self.instance.price_generated = False  # typed in: no longer the generator's
        derived = data.get("derived_from") or []
        if data.get("formula") or "formula_tolerance" in self.changed_data:
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

    def _clean_plausible(self, data, name: str, low, high) -> None:
        """The plausible range inside the hard range, low ≤ high, whole for a count."""
        if data.get("kind") == DiagnosticTest.NOMINAL:
            if data.get("plausible_min") is not None or data.get("plausible_max") is not None:
                self.add_error(
                    "plausible_min",
                    f"{name} is nominal: only numeric tests have a plausible range.",
                )
            if data.get("integer_only"):
                self.add_error(
                    "integer_only", f"{name} is nominal: its codes are whole numbers already."
                )
            return
        try:
            clean_plausible_range(
                data.get("plausible_min"),
                data.get("plausible_max"),
                min_value=low,
                max_value=high,
                integer_only=data.get("integer_only"),
                name=name,
                unit=data.get("unit") or "",
            )
        except ValidationError as exc:
            field = "plausible_max" if data.get("plausible_max") is not None else "plausible_min"
            self.add_error(field, exc)


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


class ErrorMatrixForm(NamedErrorsMixin, forms.ModelForm):
    """A named matrix as a grid labelled with the dataset's classes, plus the referral cost."""

    class Meta:
        model = ErrorMatrix
        fields = ["name", "matrix", "reject_cost"]
        labels = {"reject_cost": "Cost of referring"}
        widgets = {
            "name": forms.TextInput(attrs=_narrow(24)),
            "reject_cost": forms.NumberInput(attrs=_narrow(7, step="any", min="0")),
        }

    def __init__(self, *args, class_labels=(), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.class_labels = list(class_labels)
        self.fields["matrix"] = MatrixField(self.class_labels, label="Error costs")

    def row_name(self) -> str:
        data = getattr(self, "cleaned_data", {}) or {}
        return f"Matrix {data.get('name') or self.instance.name or 'new'}"

    def clean_matrix(self):
        return clean_matrix(self.cleaned_data.get("matrix"), self.class_labels)

    def clean_reject_cost(self):
        return clean_reject_cost(self.cleaned_data.get("reject_cost"))


class ErrorMatrixFormSet(BaseInlineFormSet):
    """Each matrix is K x K for the dataset's classes (checked by the library); names unique."""

    def get_form_kwargs(self, index):
        kwargs = super().get_form_kwargs(index)
        kwargs["class_labels"] = list(self.instance.class_labels or [])
        return kwargs

    def clean(self):
        super().clean()
        names = []
        for form in self.forms:
            data = getattr(form, "cleaned_data", None)
            if not data or data.get("DELETE"):
                continue
            names.append(data.get("name"))
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
        super().clean()
        data = self.cleaned_data
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
