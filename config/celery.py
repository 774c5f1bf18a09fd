"""The Celery application; configuration comes from Django settings (``CELERY_*``)."""

import os
import threading

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("diagnosis")
app.config_from_object("django.conf:settings", namespace="CELERY")
# The tasks live in the apps (diagnosis/training/tasks.py, diagnosis/bench/tasks.py), under the
# names they were first queued with ("diagnosis.tasks.*").
app.autodiscover_tasks(["diagnosis.training", "diagnosis.bench"])


def _queues() -> None:
    """Two queues: the default one (trainings, sweeps) and the experiments' own.

    A worker started without ``-Q`` consumes both (so bin/run's and the tests' workers run
    experiments); a worker machine added for experiments runs ``-Q experiments`` only, and
    one kept for training ``-Q diagnosis``: many small experiment tasks never starve a
    training or the sweeps.
    """
    from django.conf import settings
    from kombu import Exchange, Queue

    from diagnosis.training.services import broker

    default = settings.CELERY_TASK_DEFAULT_QUEUE
    experiments = settings.EXPERIMENTS_QUEUE
    app.conf.task_queues = tuple(
        Queue(name, Exchange(name, type="direct"), routing_key=name)
        for name in dict.fromkeys((default, experiments))
    )
    app.conf.task_routes = {
        broker.RUN_EXPERIMENT_TASK: {"queue": experiments},
        broker.DISPATCH_EXPERIMENT: {"queue": experiments},
        broker.MEASURE_CANDIDATE: {"queue": experiments},
    }


_queues()


@worker_process_init.connect
def warm_kernels_in_the_background(**_kwargs) -> threading.Thread:
    """Each pool process loads every learner's compiled kernels (from numba's disk cache, which
    bin/run's set-up step ``manage.py warm_kernels`` fills) on a background thread as it starts.

    The process takes tasks at once (Celery kills a pool process that is slow to start); a
    training that arrives meanwhile waits at most for the rest of the loading, never for a
    compilation from scratch.
    """
    from diagnosis.training.services.warmup import warm_kernels

    thread = threading.Thread(target=warm_kernels, name="warm-kernels", daemon=True)
    thread.start()
    return thread
