"""The model page's anytime section, stop button and progress JSON (views wired to the services)."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils import timezone

from diagnosis.training.models import TrainedModel
from diagnosis.training.services import training


def _act(toy_dataset, model_admin, **params) -> TrainedModel:
    return training.create_training(
        user=model_admin,
        dataset=toy_dataset,
        learner="act",
        params=params,
        error_matrix=toy_dataset.error_matrices.get(name="Uniform 100"),
    )


def test_stop_button_posts_a_stop_request(client, toy_dataset, model_admin):
    """A model admin's stop on a running ACT training flags it and returns to the page."""
    running = _act(toy_dataset, model_admin, r=8)
    TrainedModel.objects.filter(pk=running.pk).update(
        status=TrainedModel.RUNNING, started_at=timezone.now()
    )
    client.force_login(model_admin)
    page = client.get(reverse("model-detail", args=[running.pk])).content.decode()
    assert 'name="action" value="stop"' in page and 'id="anytime-live"' in page
    response = client.post(reverse("model-detail", args=[running.pk]), {"action": "stop"})
    assert response.status_code == 302
    running.refresh_from_db()
    assert running.stop_requested and running.status == TrainedModel.RUNNING


def test_clinicians_cannot_stop_a_training(client, toy_dataset, model_admin, clinician):
    """A clinician's stop request is refused and changes nothing: the page answers 404 (a
    training is a draft, which a clinician never sees) and the service refuses the clinician."""
    running = _act(toy_dataset, model_admin, r=8)
    TrainedModel.objects.filter(pk=running.pk).update(status=TrainedModel.RUNNING)
    client.force_login(clinician)
    response = client.post(reverse("model-detail", args=[running.pk]), {"action": "stop"})
    assert response.status_code == 404
    with pytest.raises(PermissionDenied):
        training.request_stop(user=clinician, trained_model=running)
    running.refresh_from_db()
    assert not running.stop_requested


def test_model_page_and_progress_show_the_model_in_use(client, toy_dataset, model_admin):
    """After an anytime run the page names r, the estimated cost and the time spent."""
    done = training.run_training(trained_model_id=_act(toy_dataset, model_admin, r=2).pk)
    client.force_login(model_admin)
    page = client.get(reverse("model-detail", args=[done.pk])).content.decode()
    assert 'id="anytime"' in page and done.anytime_round in page
    assert f"${done.metrics['anytime']['estimated_cost']:,.2f}" in page
    progress = client.get(reverse("model-progress", args=[done.pk])).json()
    assert progress["anytime"]["round"] == done.anytime_round
    assert [c["label"] for c in progress["checkpoints"]] == [
        c.label for c in done.checkpoints.all()
    ]
