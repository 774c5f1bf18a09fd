"""Money reads one way everywhere: format_money, its template filter, a table beside the advice."""

from __future__ import annotations

import html
import math
import re
from decimal import Decimal

import pytest
from django.template import Context, Template
from django.urls import reverse

from diagnosis.shared.money import format_money

# Four-digit prices, so a missing thousands separator shows; errors dearer still, so the
# model orders a test rather than concluding at once.
COSTLY_TESTS = [
    {
        "name": "glucose",
        "label": "Glucose",
        "price": 1234.5,
        "discounted_price": 200.0,
        "group": "blood",
        "min_value": 0,
        "max_value": 500,
    },
    {
        "name": "insulin",
        "label": "Insulin",
        "price": 1500.0,
        "discounted_price": 300.0,
        "group": "blood",
    },
    {
        "name": "sex",
        "label": "Sex",
        "kind": "nominal",
        "price": 1000.0,
        "discounted_price": 1000.0,
        "choices": [{"code": 0, "label": "female"}, {"code": 1, "label": "male"}],
    },
]
#: Each test's price as a person reads it, written out by hand.
PRICE_TEXT = {"glucose": "$1,234.50", "insulin": "$1,500.00", "sex": "$1,000.00"}


@pytest.mark.parametrize(
    "amount, text",
    [
        (1234.5, "$1,234.50"),
        (1234567.891, "$1,234,567.89"),
        (0, "$0.00"),
        (7, "$7.00"),
        (Decimal("19.999"), "$20.00"),
        (-12, "\u2212$12.00"),
        (-87.92, "\u2212$87.92"),
        (-1500.25, "\u2212$1,500.25"),
        (-0.001, "$0.00"),
        (None, "\u2013"),
        (math.nan, "\u2013"),
        (math.inf, "\u2013"),
        (-math.inf, "\u2013"),
    ],
)
def test_format_money(amount, text):
    """Cents and thousands separators; a minus sign before the dollar; an en dash for none."""
    assert format_money(amount) == text


@pytest.mark.parametrize(
    "amount, text",
    [(1234.5, "$1,234.50"), (-12.0, "\u2212$12.00"), (None, "\u2013"), ("n/a", "")],
)
def test_money_filter_is_format_money(amount, text):
    """{{ amount|money }} writes what format_money does; text that is no number: nothing."""
    rendered = Template("{% load money %}{{ amount|money }}").render(Context({"amount": amount}))
    assert rendered == text


@pytest.mark.django_db
def test_the_price_table_and_the_advice_write_a_price_alike(client, clinician, model_admin):
    """On the case screen the recommended test's price reads the same in the table of tests
    and in the advice's words, with a thousands separator in both."""
    from login_helpers import login_request
    from toy_data import PASSWORD, toy_rows
    from training_helpers import train

    from diagnosis.catalog.services.datasets import create_dataset

    rows, labels = toy_rows()
    dataset = create_dataset(
        name="Costly toy",
        class_labels=["healthy", "disease"],
        tests=COSTLY_TESTS,
        rows=rows,
        labels=labels,
        error_matrices=[{"name": "Dear errors", "matrix": [[0, 1_000_000], [1_000_000, 0]]}],
    )
    matrix = dataset.error_matrices.get(name="Dear errors")
    trained = train(dataset, model_admin, "eg2", error_matrix=matrix)
    assert client.login(request=login_request(), username=clinician.username, password=PASSWORD)
    started = client.post(reverse("case-new") + f"?model={trained.pk}", {"patient_reference": "p"})
    assert started.status_code == 302
    response = client.get(started["Location"])
    assert response.status_code == 200
    advice = response.context["advice"]
    assert advice.kind == "extract", advice
    name = advice.test_name
    page = html.unescape(response.content.decode())
    cell = re.search(
        rf'<tr class="recommended-row" data-test="{name}"[^>]*>.*?<td class="num">([^<]+)<',
        page,
        re.S,
    )
    assert cell is not None, "the recommended test's row in the table"
    assert cell.group(1) == PRICE_TEXT[name]
    assert (
        response.context["explanation"]
        .why[0]
        .startswith(f"Order {advice.test_label}: {PRICE_TEXT[name]} for this patient now")
    )
