"""Web workers load the ready models before serving (config/gunicorn.py's worker hook)."""

from __future__ import annotations

import pytest

from config import gunicorn as gunicorn_config
from diagnosis.training.selectors import model_cache
from diagnosis.training.selectors.preload import preload_ready_models

pytestmark = pytest.mark.django_db


def test_ready_models_are_in_the_cache_after_preloading(trained_model, monkeypatch):
    """After the preload, the case screen's estimator lookup does not parse the JSON again."""
    assert preload_ready_models() == 1
    parsed = []
    monkeypatch.setattr(model_cache, "model_from_json", lambda text: parsed.append(text))
    assert model_cache.get_estimator(trained_model) is not None
    assert parsed == []


def test_a_broken_model_does_not_stop_the_preload(trained_model):
    """A model whose JSON no longer loads is skipped, the others still load."""
    from diagnosis.training.models import TrainedModel

    broken = TrainedModel.objects.create(
        dataset=trained_model.dataset,
        learner="eg2",
        status=TrainedModel.SUCCEEDED,
        model_json='{"not": "a model"}',
    )
    assert broken.is_ready
    assert preload_ready_models() == 1


@pytest.mark.django_db(transaction=True)  # the preload thread reads with its own connection
def test_gunicorn_workers_preload_as_they_start(trained_model):
    """bin/run's gunicorn config preloads in each worker's post_worker_init hook (on a thread,
    so the worker serves pages that need no model at once)."""
    model_cache.clear()
    gunicorn_config.post_worker_init(worker=None).join(timeout=300)
    parsed = []
    original = model_cache.model_from_json
    try:
        model_cache.model_from_json = lambda text: parsed.append(text)
        model_cache.get_estimator(trained_model)
    finally:
        model_cache.model_from_json = original
    assert parsed == []
