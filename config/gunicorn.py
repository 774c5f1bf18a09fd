"""gunicorn settings for bin/run (``--config python:config.gunicorn``).

Each web worker loads the ready models into its estimator cache as it starts, so no
clinician's first case or tree page waits for a model to be parsed.  It does so on a
background thread: loading a model may run numba-compiled code, and on a fresh clone (no
kernel cache yet) compiling it took minutes in every worker while bin/run's first page,
which needs no model, waited.  A page that needs a model meanwhile loads it itself.

Each worker serves ``WEB_THREADS`` requests at once (gunicorn's ``gthread`` workers; 8 unless
set).  A sign-in spends about half a second hashing its password: with one request per worker
(the ``sync`` class) 100 sign-ins at once held all three workers and 58 of them waited past
30 s while steps queued behind them.  With threads, and the sign-in limit in
``diagnosis.middleware.SignInLimitMiddleware`` keeping sign-ins to a few threads per worker,
steps always find a free thread.  Set ``WEB_THREADS=1`` for one request per worker.
"""

from __future__ import annotations

import os
import threading

worker_class = "gthread"
threads = max(int(os.environ.get("WEB_THREADS", "8")), 1)
# Django and every view (with the learners they import) load once, in the master, before the
# workers fork and share them: three workers importing the same modules side by side on two
# cores made bin/run's second start wait about 14 s for its first page.
preload_app = True


def when_ready(server) -> None:
    """In the master, once the app is loaded: import the URLconf and so every view module,
    which Django otherwise imports in each worker on its first request."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018  (the import is the point)


def _preload() -> None:
    from django.db import connections

    from diagnosis.training.selectors.preload import preload_ready_models

    try:
        preload_ready_models()
    finally:
        connections.close_all()  # this thread's connections


def post_worker_init(worker) -> threading.Thread:
    thread = threading.Thread(target=_preload, name="preload-models", daemon=True)
    thread.start()
    return thread
