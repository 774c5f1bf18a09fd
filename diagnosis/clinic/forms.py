"""Forms of the clinician's screen.

Forms only turn text into typed values and show messages; the checks
themselves (range, choices, permissions) live in the services, which the JSON
API calls too, so the screens and the API cannot disagree.
"""

from __future__ import annotations

from typing import Any

from django import forms

from diagnosis.catalog.forms import number_text
from diagnosis.catalog.models import DiagnosticTest

from .services.step import clean_value


class ResultForm(forms.Form):
    """The result of one test: a number within the test's range, or one of its choices.

    The field only carries the widget (a number input with range and unit, or
    a select of choices); the value is checked by the service's
    :func:`~diagnosis.clinic.services.step.clean_value`, the same function the JSON
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
                attrs["min"] = number_text(test.min_value)
            if test.max_value is not None:
                attrs["max"] = number_text(test.max_value)
            unit = f" {test.unit}" if test.unit else ""
            low, high = number_text(test.min_value), number_text(test.max_value)
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
