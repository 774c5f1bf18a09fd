"""The admin: invalid prices, ranges, choices and matrices are refused with clear messages."""

from __future__ import annotations

import html
import io
import json

import pytest
from django.urls import reverse

from diagnosis.models import Dataset, DiagnosticTest, ErrorMatrix, TrainedModel


@pytest.fixture
def admin_client(client, model_admin):
    client.force_login(model_admin)
    return client


def _form_data(dataset: Dataset) -> dict:
    """The dataset change form as the admin page would post it, unchanged."""
    data = {
        "name": dataset.name,
        "description": dataset.description,
        "class_labels": json.dumps(dataset.class_labels),
        "source": dataset.source,
    }
    groups = list(dataset.groups.all())
    tests = list(dataset.tests.order_by("index"))
    matrices = list(dataset.error_matrices.all())
    for prefix, objects in (("groups", groups), ("tests", tests), ("error_matrices", matrices)):
        data.update(
            {
                f"{prefix}-TOTAL_FORMS": len(objects),
                f"{prefix}-INITIAL_FORMS": len(objects),
                f"{prefix}-MIN_NUM_FORMS": 0,
                f"{prefix}-MAX_NUM_FORMS": 1000,
            }
        )
    for i, g in enumerate(groups):
        data.update(
            {f"groups-{i}-id": g.pk, f"groups-{i}-dataset": dataset.pk, f"groups-{i}-name": g.name}
        )
    for i, t in enumerate(tests):
        row = {
            "id": t.pk,
            "dataset": dataset.pk,
            "index": t.index,
            "name": t.name,
            "label": t.label,
            "unit": t.unit,
            "kind": t.kind,
            "min_value": "" if t.min_value is None else t.min_value,
            "max_value": "" if t.max_value is None else t.max_value,
            "choices": json.dumps(t.choices),
            "price": t.price,
            "discounted_price": t.discounted_price,
            "group": t.group_id or "",
            "derived_from": json.dumps(t.derived_from),
            "formula": t.formula,
            "formula_tolerance": t.formula_tolerance,
        }
        if t.delayed:
            row["delayed"] = "on"
        data.update({f"tests-{i}-{k}": v for k, v in row.items()})
    for i, m in enumerate(matrices):
        data.update(
            {
                f"error_matrices-{i}-id": m.pk,
                f"error_matrices-{i}-dataset": dataset.pk,
                f"error_matrices-{i}-name": m.name,
                f"error_matrices-{i}-matrix": json.dumps(m.matrix),
                f"error_matrices-{i}-reject_cost": "" if m.reject_cost is None else m.reject_cost,
            }
        )
    return data


def _post(client, dataset, data):
    response = client.post(reverse("admin:diagnosis_dataset_change", args=[dataset.pk]), data)
    return response, html.unescape(response.content.decode())


def _snapshot(dataset):
    return (
        list(DiagnosticTest.objects.filter(dataset=dataset).order_by("index").values()),
        list(ErrorMatrix.objects.filter(dataset=dataset).order_by("name").values()),
        Dataset.objects.filter(pk=dataset.pk).values().get(),
    )


def test_unchanged_form_saves(admin_client, toy_dataset):
    """The helper's unchanged post is valid (so the failures below are the edits' fault)."""
    response, _ = _post(admin_client, toy_dataset, _form_data(toy_dataset))
    assert response.status_code == 302


def _matrix_field(dataset, name="Uniform 100"):
    index = list(dataset.error_matrices.all()).index(dataset.error_matrices.get(name=name))
    return f"error_matrices-{index}-matrix"


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        ("[[0, 100, 5], [100, 0, 5]]", "Row 1 (healthy) must have 2 entries"),
        ("[[0, 100]]", "must have 2 rows, one per class (healthy, disease)"),
        ("[[0, -1], [100, 0]]", "Row 1 (healthy), column 2 (disease): -1 is negative"),
        ('[[0, "abc"], [100, 0]]', "column 2 (disease): 'abc' is not a number"),
        ('[[0, "inf"], [100, 0]]', "must be a finite number"),
    ],
)
def test_invalid_error_matrix_is_refused(admin_client, toy_dataset, matrix, message):
    """Non-square, wrong-size, negative, non-numeric or infinite matrix: message, nothing saved."""
    before = _snapshot(toy_dataset)
    data = _form_data(toy_dataset)
    data[_matrix_field(toy_dataset)] = matrix
    response, text = _post(admin_client, toy_dataset, data)
    assert response.status_code == 200
    assert message in text
    assert _snapshot(toy_dataset) == before


def test_negative_reject_cost_is_refused(admin_client, toy_dataset):
    """A negative reject cost is refused."""
    data = _form_data(toy_dataset)
    index = list(toy_dataset.error_matrices.all()).index(
        toy_dataset.error_matrices.get(name="Refer at 30")
    )
    data[f"error_matrices-{index}-reject_cost"] = "-5"
    response, text = _post(admin_client, toy_dataset, data)
    assert response.status_code == 200 and "Reject cost -5 is negative" in text


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("discounted_price", "20", "Discounted price of glucose (20) is above its full price (10)"),
        ("price", "-3", "Prices of glucose must be ≥ 0"),
        ("min_value", "600", "Minimum of glucose (600) is above its maximum (500)"),
        ("name", "insulin", "Test names must be unique; repeated: insulin"),
        ("index", "7", "Test indices must be 0..2"),
        ("derived_from", '["nothing"]', "derived from 'nothing', which is not another test"),
        ("choices", '[{"code": 0, "label": "x"}]', "Only nominal tests have choices"),
    ],
)
def test_invalid_test_fields_are_refused(admin_client, toy_dataset, field, value, message):
    """Bad prices, ranges, duplicate names, index gaps, unknown inputs: a message, nothing saved."""
    before = _snapshot(toy_dataset)
    data = _form_data(toy_dataset)
    data[f"tests-0-{field}"] = value
    response, text = _post(admin_client, toy_dataset, data)
    assert response.status_code == 200
    assert message in text
    assert _snapshot(toy_dataset) == before


@pytest.mark.parametrize(
    ("choices", "message"),
    [
        ('[{"code": 0, "label": "f"}, {"code": 0, "label": "m"}]', "code 0 appears twice"),
        ('[{"code": 0.5, "label": "f"}]', "code 0.5 must be a whole number"),
        ('[{"code": 0}]', 'must be an object with exactly "code" and "label"'),
        ("[]", "must be a non-empty list"),
    ],
)
def test_malformed_nominal_choices_are_refused(admin_client, toy_dataset, choices, message):
    """Nominal choices must be unique whole-number codes with labels."""
    before = _snapshot(toy_dataset)
    data = _form_data(toy_dataset)
    data["tests-2-choices"] = choices  # "sex" is the nominal test
    response, text = _post(admin_client, toy_dataset, data)
    assert response.status_code == 200 and message in text
    assert _snapshot(toy_dataset) == before


def test_class_labels_must_be_distinct(admin_client, toy_dataset):
    """Repeated class names are refused."""
    data = _form_data(toy_dataset)
    data["class_labels"] = '["a", "a"]'
    response, text = _post(admin_client, toy_dataset, data)
    assert response.status_code == 200 and "Class labels must be unique" in text


def test_valid_price_change_is_saved(admin_client, toy_dataset):
    """A consistent edit is stored."""
    data = _form_data(toy_dataset)
    data["tests-0-price"] = "11.5"
    data[_matrix_field(toy_dataset)] = "[[0, 50], [200, 0]]"
    response, _ = _post(admin_client, toy_dataset, data)
    assert response.status_code == 302
    assert toy_dataset.tests.get(name="glucose").price == 11.5
    assert toy_dataset.error_matrices.get(name="Uniform 100").matrix == [[0.0, 50.0], [200.0, 0.0]]


def test_import_page_reports_csv_errors_and_saves_nothing(admin_client):
    """A bad CSV on the admin import page shows the row/column message and creates no dataset."""
    upload = io.BytesIO(b"a,b,y\n1,2,x\n3,oops,z\n5,6,x\n")
    upload.name = "bad.csv"
    response = admin_client.post(
        reverse("admin:diagnosis_dataset_import"),
        {"source": "csv", "name": "Bad", "file": upload, "class_column": "y"},
    )
    text = html.unescape(response.content.decode())
    assert response.status_code == 200
    assert "Row 2 (line 3), column 'b': 'oops' is not a number" in text
    assert not Dataset.objects.exists()


def test_import_page_creates_the_dataset(admin_client):
    """A good CSV is imported and the admin lands on the new dataset."""
    upload = io.BytesIO(b"a,sex,y\n1,f,x\n3,m,z\n5,f,x\n")
    upload.name = "good.csv"
    response = admin_client.post(
        reverse("admin:diagnosis_dataset_import"),
        {"source": "csv", "name": "Good", "file": upload, "class_column": "y"},
    )
    dataset = Dataset.objects.get(name="Good")
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:diagnosis_dataset_change", args=[dataset.pk])
    assert dataset.cases.count() == 3


def test_import_link_is_on_the_dataset_list(admin_client, toy_dataset):
    """The dataset list offers the import page."""
    response = admin_client.get(reverse("admin:diagnosis_dataset_changelist"))
    assert reverse("admin:diagnosis_dataset_import") in response.content.decode()


def test_clinician_cannot_open_the_import_page(client, clinician):
    """Non-staff users are sent to the admin login."""
    client.force_login(clinician)
    response = client.get(reverse("admin:diagnosis_dataset_import"))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_retrain_action_queues_a_new_training(
    admin_client, trained_model, django_capture_on_commit_callbacks, monkeypatch
):
    """The retrain action calls request_training with the model's learner, params and matrix."""
    from diagnosis import tasks

    sent = []
    monkeypatch.setattr(tasks.train_model, "apply_async", lambda args, task_id: sent.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:diagnosis_trainedmodel_changelist"),
            {"action": "retrain", "_selected_action": [trained_model.pk]},
        )
    assert response.status_code == 302
    new = TrainedModel.objects.exclude(pk=trained_model.pk).get()
    assert (new.learner, new.params, new.error_matrix_id) == (
        trained_model.learner,
        trained_model.params,
        trained_model.error_matrix_id,
    )
    assert new.status == "queued" and sent == [[new.pk]]
