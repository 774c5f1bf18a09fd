"""Automatic prices in the app: the service (all or nothing), the admin action, the marker."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from training_helpers import approve

from diagnosis.catalog.models import DiagnosticTest, TestGroup
from diagnosis.catalog.selectors.costs import cost_model_for, cost_snapshot
from diagnosis.catalog.services.datasets import create_dataset
from diagnosis.catalog.services.price_generation import generate_dataset_prices
from diagnosis.training.selectors.models import model_report
from learners.price_generator import PriceGeneratorParams, generate_prices, information_gains

pytestmark = pytest.mark.django_db

PARAMS = {
    "cost_range": [5.0, 50.0],
    "group_fraction": 0.5,
    "delayed_fraction": 0.34,
    "group_discount": 0.5,
    "mode": "gain",
    "seed": 7,
}


def _prices(dataset):
    return [
        (t.price, t.discounted_price, t.group.name if t.group else None, t.delayed)
        for t in dataset.tests.select_related("group").order_by("index")
    ]


def test_service_saves_exactly_the_generators_prices(toy_dataset, model_admin):
    """The saved catalog is the library's draw for the dataset's gains, marked generated."""
    from diagnosis.catalog.selectors.datasets import dataset_arrays

    generate_dataset_prices(user=model_admin, datasets=[toy_dataset], params=PARAMS)
    X, y, categorical = dataset_arrays(toy_dataset)
    expected = generate_prices(
        3,
        params=PriceGeneratorParams.from_dict(PARAMS),
        gains=information_gains(X, y, categorical=categorical),
    )
    tests = list(toy_dataset.tests.select_related("group").order_by("index"))
    assert [t.price for t in tests] == list(expected.prices)
    assert [t.discounted_price for t in tests] == list(expected.discounted)
    assert [t.delayed for t in tests] == list(expected.delayed)
    assert [t.group.name.removeprefix("generated ") if t.group else None for t in tests] == list(
        expected.groups
    )
    assert all(t.price_generated for t in tests)
    toy_dataset.refresh_from_db()
    assert toy_dataset.price_generation["seed"] == 7
    assert toy_dataset.price_generation["generated_by"] == model_admin.get_username()
    # The old "blood" group lost its tests and is gone; the catalog prices like any other.
    assert not TestGroup.objects.filter(dataset=toy_dataset, name="blood").exists()
    assert cost_model_for(toy_dataset).marginal_cost(0) == expected.prices[0]
    assert cost_snapshot(toy_dataset).generated == (0, 1, 2)


def test_same_seed_same_prices_in_the_app(toy_dataset, make_toy_dataset, model_admin):
    """Two datasets with the same patients priced with the same seed get the same prices."""
    twin = make_toy_dataset("Toy twin")
    generate_dataset_prices(user=model_admin, datasets=[toy_dataset, twin], params=PARAMS)
    assert _prices(toy_dataset) == _prices(twin)


def test_all_or_nothing_over_several_datasets(toy_dataset, model_admin):
    """One dataset that cannot be priced (one class, gain mode) leaves every dataset unchanged."""
    empty = create_dataset(
        name="One class",
        class_labels=["a", "b"],
        tests=[{"name": "x", "price": 3.0, "discounted_price": 3.0}],
        rows=[[1.0], [2.0]],
        labels=[0, 0],
    )
    before = _prices(toy_dataset)
    with pytest.raises(ValidationError, match="One class: gain-proportional prices need"):
        generate_dataset_prices(user=model_admin, datasets=[toy_dataset, empty], params=PARAMS)
    assert _prices(toy_dataset) == before
    assert not DiagnosticTest.objects.filter(price_generated=True).exists()
    toy_dataset.refresh_from_db()
    assert toy_dataset.price_generation == {}
    # Uniform prices need no patients.
    generate_dataset_prices(
        user=model_admin, datasets=[empty], params={**PARAMS, "mode": "uniform"}
    )
    assert empty.tests.get().price_generated


def test_derived_tests_keep_costing_their_inputs(model_admin):
    """A derived test gets no price of its own and is not marked generated."""
    dataset = create_dataset(
        name="With FTI",
        class_labels=["a", "b"],
        tests=[
            {"name": "TT4"},
            {"name": "T4U"},
            {"name": "FTI", "price": 0.0, "discounted_price": 0.0, "derived_from": ["TT4", "T4U"]},
        ],
        rows=[[1.0, 2.0, 0.5], [2.0, 1.0, 2.0], [3.0, 1.0, 3.0], [1.0, 3.0, 0.3]],
        labels=[0, 1, 1, 0],
    )
    generate_dataset_prices(user=model_admin, datasets=[dataset], params=PARAMS)
    fti = dataset.tests.get(name="FTI")
    assert fti.price == 0.0 and not fti.price_generated
    model = cost_model_for(dataset)
    assert model.marginal_cost(2) == pytest.approx(
        model.marginal_cost(0) + model.marginal_cost(1, [0])
    )


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"cost_range": [10, 1]}, "must not be below the lowest"),
        ({"group_discount": 1}, "group_discount must be at least 0 and below 1"),
        ({"mode": "fancy"}, "mode must be one of"),
        ({"colour": "red"}, "unknown price generator parameter"),
    ],
)
def test_bad_parameters_change_nothing(toy_dataset, model_admin, bad, words):
    """Invalid parameters raise a ValidationError naming the problem; no price changes."""
    before = _prices(toy_dataset)
    with pytest.raises(ValidationError, match=words):
        generate_dataset_prices(user=model_admin, datasets=[toy_dataset], params={**PARAMS, **bad})
    assert _prices(toy_dataset) == before


def test_only_model_admins_generate_prices(toy_dataset, clinician):
    """A clinician may not reprice a dataset."""
    with pytest.raises(PermissionDenied):
        generate_dataset_prices(user=clinician, datasets=[toy_dataset], params=PARAMS)


def _action_post(dataset, **fields):
    return {
        "action": "generate_prices",
        "_selected_action": [str(dataset.pk)],
        **fields,
    }


FORM = {
    "low": "2",
    "high": "80",
    "groups_percent": "30",
    "delayed_percent": "20",
    "discount_percent": "50",
    "mode": "uniform",
    "seed": "11",
}


def test_admin_action_asks_then_prices(client, toy_dataset, model_admin):
    """The action shows its settings page first, then prices and lists the dataset as generated."""
    client.force_login(model_admin)
    url = reverse("admin:catalog_dataset_changelist")
    page = client.post(url, _action_post(toy_dataset))
    assert page.status_code == 200
    assert (
        b"Generate test prices" in page.content and b"replaces their current prices" in page.content
    )
    assert not DiagnosticTest.objects.filter(price_generated=True).exists()
    done = client.post(url, _action_post(toy_dataset, apply="1", **FORM), follow=True)
    assert b"Generated prices for Toy diabetes (seed 11)" in done.content
    assert b"generated (3 tests, uniform, seed 11)" in done.content
    prices = [t.price for t in toy_dataset.tests.order_by("index")]
    assert all(2 <= p <= 80 for p in prices)
    change = client.get(reverse("admin:catalog_dataset_change", args=[toy_dataset.pk]))
    assert change.content.count(b'class="generated-price"') == 3


def test_admin_action_refuses_bad_settings_with_a_message(client, toy_dataset, model_admin):
    """High below low: the page says why and keeps the old prices."""
    client.force_login(model_admin)
    before = _prices(toy_dataset)
    page = client.post(
        reverse("admin:catalog_dataset_changelist"),
        _action_post(toy_dataset, apply="1", **{**FORM, "low": "90", "high": "10"}),
    )
    assert page.status_code == 200
    assert b"No prices were changed" in page.content
    assert b"must not be below the lowest" in page.content
    assert _prices(toy_dataset) == before


def test_editing_a_generated_price_clears_the_marker(client, toy_dataset, model_admin):
    """A price typed in the admin is no longer marked generated; the others stay marked."""
    generate_dataset_prices(user=model_admin, datasets=[toy_dataset], params=PARAMS)
    from diagnosis.catalog.admin_forms import DiagnosticTestForm

    test = toy_dataset.tests.get(name="sex")
    data = {
        f: getattr(test, f)
        for f in DiagnosticTestForm.Meta.fields
        if f not in ("group", "choices", "derived_from")
    }
    data.update(
        {
            "choices": "0: female\n1: male",
            "derived_from": "",
            "group": test.group_id or "",
            "min_value": "",
            "max_value": "",
            "price": test.price + 1,
            "discounted_price": test.price + 1,
        }
    )
    form = DiagnosticTestForm(data=data, instance=test)
    assert form.is_valid(), form.errors
    form.save()
    test.refresh_from_db()
    assert not test.price_generated
    assert toy_dataset.tests.filter(price_generated=True).count() == 2


def test_screens_and_api_say_generated(client, toy_dataset, model_admin, clinician):
    """A model trained on generated prices: its page, the case screen and the API say generated."""
    from diagnosis.clinic.services.cases import start_case
    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services.training import create_training

    generate_dataset_prices(user=model_admin, datasets=[toy_dataset], params=PARAMS)
    trained = create_training(
        user=model_admin,
        dataset=toy_dataset,
        learner="eg2",
        params={},
        error_matrix=toy_dataset.error_matrices.first(),
    )
    assert trained.cost_snapshot["generated"] == [0, 1, 2]
    report = model_report(user=model_admin, trained_model=trained)
    assert [p.generated for p in report.prices] == [True, True, True]
    from diagnosis.training.services.training import run_training

    run_training(trained_model_id=trained.pk)
    trained = approve(TrainedModel.objects.get(pk=trained.pk), model_admin)
    case = start_case(user=clinician, trained_model=trained, patient_reference="p1")
    client.force_login(clinician)
    body = client.get(f"/api/cases/{case.pk}/step").json()
    assert [t["price_generated"] for t in body["tests"]] == [True, True, True]
    # The case screen marks each generated price; the model page too (for a model admin).
    screen = client.get(reverse("case-detail", args=[case.pk]))
    assert screen.content.count(b'class="generated-price"') >= 3
    client.force_login(model_admin)
    page = client.get(reverse("model-detail", args=[trained.pk]))
    assert page.content.count(b'class="generated-price"') == 3
