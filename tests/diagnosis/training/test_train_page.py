"""The training app's page: the form that queues a training (diagnosis/training/views.py)."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse
from login_helpers import login_request

from diagnosis.training.models import TrainedModel

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-123"  # the password tests/diagnosis/conftest.py gives every user


def login(client, user):
    assert client.login(request=login_request(), username=user.username, password=PASSWORD)
    return client


def text(response) -> str:
    """The page as a person reads it (HTML entities decoded)."""
    return html.unescape(response.content.decode())


def test_train_page_renders_params_and_queues(
    client, model_admin, toy_dataset, django_capture_on_commit_callbacks
):
    """A model admin sees every learner's parameters and a valid post queues a training."""
    from diagnosis.shared import learner_registry

    login(client, model_admin)
    page = text(client.get(reverse("train")))
    for key, spec in learner_registry.LEARNERS.items():
        assert spec.label in page
        for p in spec.params:
            assert f'name="{key}__{p.name}"' in page
    matrix = toy_dataset.error_matrices.get(name="Refer at 30")
    assert f'value="{matrix.pk}" data-dataset="{toy_dataset.pk}"' in page
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(
            reverse("train"),
            {
                "dataset": toy_dataset.pk,
                "learner": "eg2",
                "eg2__w": "0.5",
                "error_matrix": matrix.pk,
                "name": "Mine",
            },
        )
    assert response.status_code == 302
    trained = TrainedModel.objects.get(name="Mine")
    assert response["Location"] == reverse("model-detail", args=[trained.pk])
    assert trained.status == "queued" and trained.params["w"] == 0.5
    assert trained.reject_cost_snapshot == 30


def test_train_page_rejects_bad_params_and_non_admins(client, model_admin, clinician, toy_dataset):
    """An out-of-range parameter is shown and nothing is queued; clinicians get 403."""
    login(client, model_admin)
    response = client.post(
        reverse("train"), {"dataset": toy_dataset.pk, "learner": "eg2", "eg2__w": "-1"}
    )
    assert response.status_code == 400
    assert "at least 0" in text(response)
    assert not TrainedModel.objects.exists()
    client.logout()
    login(client, clinician)
    assert client.get(reverse("train")).status_code == 403
    assert (
        client.post(reverse("train"), {"dataset": toy_dataset.pk, "learner": "eg2"}).status_code
        == 403
    )
