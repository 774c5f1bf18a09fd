"""Loading the ready models into a web worker's estimator cache before it serves anyone.

Loading a fitted model from its JSON can take seconds (the conditioned-loss model rebuilds
its state classifiers' leaf tables), and each web worker process has its own cache, so
without this the first visit of each model's case or tree page on each worker waits for it.
``config/gunicorn.py`` calls :func:`preload_ready_models` as each worker starts.
"""

from __future__ import annotations

import logging
import time

from ..models import TrainedModel
from . import model_cache

__all__ = ["preload_ready_models"]

logger = logging.getLogger(__name__)


def preload_ready_models(*, limit: int = model_cache.MAX_MODELS) -> int:
    """Load the ``limit`` most recent ready models into the cache; how many were loaded.

    A model that fails to load is logged and skipped: its pages report the problem as before.
    """
    started = time.perf_counter()
    loaded = 0
    ready = TrainedModel.objects.filter(status=TrainedModel.SUCCEEDED).exclude(model_json="")
    for trained in ready.order_by("-finished_at", "-id")[:limit]:
        try:
            model_cache.get_estimator(trained)
        except Exception:  # a broken model must not keep the worker from starting
            logger.exception("could not preload model %s", trained.pk)
        else:
            loaded += 1
    logger.info("preloaded %d models in %.1f s", loaded, time.perf_counter() - started)
    return loaded
