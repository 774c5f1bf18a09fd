"""Queueing Celery tasks by name, so that services never import ``diagnosis.tasks``.

The tasks are thin wrappers that call services, and services queue them: importing the
task functions here would tie the two layers into a circle.  Each task is registered
under a name defined below (``diagnosis/tasks.py`` registers them, ``config/celery.py``
routes by them) and sent through the project's Celery app.  The task's own options (time
limits, retries, late acknowledgement) belong to the task the worker registered; the
queue comes from the app's routes.
"""

from __future__ import annotations

__all__ = ["DISPATCH_EXPERIMENT", "RUN_EXPERIMENT_TASK", "TRAIN_MODEL", "send"]

TRAIN_MODEL = "diagnosis.tasks.train_model"
RUN_EXPERIMENT_TASK = "diagnosis.tasks.run_experiment_task"
DISPATCH_EXPERIMENT = "diagnosis.tasks.dispatch_experiment"


def send(name: str, *, args: list, task_id: str | None = None) -> None:
    """Send task ``name`` with ``args`` to the broker (``task_id``: the id to give it).

    Raises whatever the broker connection raises when it cannot be reached; the callers
    keep the work in the database for the sweep to send later.
    """
    from celery import current_app

    current_app.send_task(name, args=args, task_id=task_id)
