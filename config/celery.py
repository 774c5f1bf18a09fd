"""The Celery application; configuration comes from Django settings (``CELERY_*``)."""

import os
import threading

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("diagnosis")
app.config_from_object("django.conf:settings", namespace="CELERY")
# The tasks live in the app (diagnosis/tasks.py).
app.autodiscover_tasks(["diagnosis"])


@worker_process_init.connect
def warm_kernels_in_the_background(**_kwargs) -> threading.Thread:
    """Each pool process loads every learner's compiled kernels (from numba's disk cache, which
    bin/run's set-up step ``manage.py warm_kernels`` fills) on a background thread as it starts.

    The process takes tasks at once (Celery kills a pool process that is slow to start); a
    training that arrives meanwhile waits at most for the rest of the loading, never for a
    compilation from scratch.
    """
    from diagnosis.services.warmup import warm_kernels

    thread = threading.Thread(target=warm_kernels, name="warm-kernels", daemon=True)
    thread.start()
    return thread
