"""The Celery application; configuration comes from Django settings (``CELERY_*``)."""

import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("diagnosis")
app.config_from_object("django.conf:settings", namespace="CELERY")
# The tasks live in the app (diagnosis/tasks.py).
app.autodiscover_tasks(["diagnosis"])


@worker_init.connect
def warm_kernels_before_the_pool_starts(**_kwargs) -> None:
    """Compile (or load from numba's disk cache) every learner's kernels in the worker's main
    process before it forks its pool, so the first training fits at once (bin/run's set-up,
    ``manage.py warm_kernels``, has filled the disk cache)."""
    from diagnosis.services.warmup import warm_kernels

    warm_kernels()
