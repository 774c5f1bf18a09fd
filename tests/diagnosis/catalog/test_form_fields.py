"""The forms' typed field access (forms.field_of) and the error-matrix choice labels."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django import forms

from diagnosis.catalog.forms import ErrorMatrixChoiceField, field_of


class _Form(forms.Form):
    colour = forms.ChoiceField(choices=[("r", "red")])


def test_field_of_gives_the_forms_own_field():
    """field_of returns the bound form's copy of the field, as the class it was declared with."""
    form = _Form()
    field = field_of(form, "colour", forms.ChoiceField)
    assert field is form.fields["colour"]
    field.choices = [("g", "green")]
    assert list(form.fields["colour"].choices) == [("g", "green")]


def test_field_of_refuses_another_field_class():
    """Asking for a class the field is not raises TypeError naming both."""
    with pytest.raises(TypeError, match="'colour' is a ChoiceField, not a ModelChoiceField"):
        field_of(_Form(), "colour", forms.ModelChoiceField)


def test_an_error_matrix_is_named_with_its_dataset():
    """The select shows "<dataset>: <matrix>", so same-named matrices of datasets differ."""
    matrix = SimpleNamespace(name="default", dataset=SimpleNamespace(name="Heart"))
    field = ErrorMatrixChoiceField(queryset=None, required=False)
    assert field.label_from_instance(matrix) == "Heart: default"
