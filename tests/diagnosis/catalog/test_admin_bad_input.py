"""The admin's part of the bad-input table: a damaged action form and a negative formula
tolerance get a message, never a 500 or a saved value."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse
from test_admin import _form_data, _post

from diagnosis.catalog.models import DiagnosticTest


@pytest.mark.parametrize("selected", ["abc", "1 OR 1=1", "1.5"])
def test_a_non_numeric_selection_in_the_price_generator_is_a_message(
    admin_client, toy_dataset, selected
):
    """`_selected_action` that is not an id, on the price generator's page (its 'apply' post
    too): the list again with a message saying to tick the rows again; no 500, no prices."""
    before = list(DiagnosticTest.objects.values_list("price", "discounted_price"))
    changelist = reverse("admin:catalog_dataset_changelist")
    for extra in ({}, {"apply": "1", "seed": "0"}):
        response = admin_client.post(
            changelist,
            {"action": "generate_prices", "_selected_action": [toy_dataset.pk, selected], **extra},
            follow=True,
        )
        assert response.status_code == 200
        assert "tick them again" in html.unescape(response.content.decode())
    assert list(DiagnosticTest.objects.values_list("price", "discounted_price")) == before


@pytest.mark.parametrize("tolerance", ["-0.1", "1.5"])
def test_the_admin_refuses_a_formula_tolerance_outside_0_to_1(admin_client, toy_dataset, tolerance):
    """A test without a formula keeps its tolerance for one to come: it must still be in
    [0, 1]; the form says so and nothing is saved."""
    data = _form_data(toy_dataset)
    data["tests-0-formula_tolerance"] = tolerance
    response, page = _post(admin_client, toy_dataset, data)
    assert response.status_code == 200
    assert "the tolerance must be a number between 0 and 1" in page
    saved = DiagnosticTest.objects.values_list("formula_tolerance", flat=True)
    assert all(0 <= t <= 1 for t in saved)
