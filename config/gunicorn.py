"""gunicorn settings for bin/run (``--config python:config.gunicorn``).

Each web worker loads the ready models into its estimator cache before it takes requests,
so no clinician's first case or tree page waits for a model to be parsed.
"""

from __future__ import annotations


def post_worker_init(worker) -> None:
    from django.db import connections

    from diagnosis.selectors.preload import preload_ready_models

    preload_ready_models()
    connections.close_all()
