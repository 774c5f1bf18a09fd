"""Queueing Celery tasks by name, so that services never import ``diagnosis.tasks``.

The tasks are thin wrappers that call services, and services queue them: importing the
task functions here would tie the two layers into a circle.  Each task is registered
under a name defined below (``diagnosis/tasks.py`` registers them, ``config/celery.py``
routes by them) and sent through the project's Celery app.  The task's own options (time
limits, retries, late acknowledgement) belong to the task the worker registered; the
queue comes from the app's routes.
"""

from __future__ import annotations

import json

__all__ = [
    "DISPATCH_EXPERIMENT",
    "MEASURE_CANDIDATE",
    "RUN_EXPERIMENT_TASK",
    "TRAIN_MODEL",
    "held_task_ids",
    "queue_of",
    "send",
]

TRAIN_MODEL = "diagnosis.tasks.train_model"
RUN_EXPERIMENT_TASK = "diagnosis.tasks.run_experiment_task"
DISPATCH_EXPERIMENT = "diagnosis.tasks.dispatch_experiment"
MEASURE_CANDIDATE = "diagnosis.tasks.measure_selection_candidate"


def send(name: str, *, args: list, task_id: str | None = None) -> None:
    """Send task ``name`` with ``args`` to the broker (``task_id``: the id to give it).

    Raises whatever the broker connection raises when it cannot be reached; the callers
    keep the work in the database for the sweep to send later.
    """
    from celery import current_app

    current_app.send_task(name, args=args, task_id=task_id)


def queue_of(name: str) -> str:
    """The queue task ``name`` is routed to (the app's routes, else its default queue)."""
    from celery import current_app

    route = (current_app.conf.task_routes or {}).get(name) or {}
    return route.get("queue") or current_app.conf.task_default_queue


def held_task_ids(queue: str) -> frozenset[str] | None:
    """Ids of the tasks the broker holds for ``queue``: waiting in it, or delivered to a worker
    and not yet acknowledged (late acknowledgement: a running training stays there).

    Read from the broker's own state, so a message it lost (a restart that emptied it) is
    seen missing at once. ``None`` when this broker's state cannot be read this way (only
    Redis's is: kombu keeps a queue as one list per priority step, named as its Redis
    channel names them, and every unacknowledged message in one hash). Raises whatever the
    connection raises when the broker is down.
    """
    import redis
    from celery import current_app
    from kombu.transport.redis import Channel

    url = str(current_app.conf.broker_url or "")
    if not url.startswith(("redis://", "rediss://")):
        return None
    lists = [queue] + [f"{queue}{Channel.sep}{step}" for step in Channel.priority_steps if step]
    client = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)
    try:
        ids = {_task_id(json.loads(raw)) for name in lists for raw in client.lrange(name, 0, -1)}
        # the hash's values are [message, exchange, routing key]
        ids |= {_task_id(json.loads(raw)[0]) for raw in client.hvals(Channel.unacked_key)}
    finally:
        client.close()
    ids.discard("")
    return frozenset(ids)


def _task_id(message: dict) -> str:
    """A kombu message's Celery task id (protocol 2 headers, else its correlation id)."""
    headers = message.get("headers") or {}
    properties = message.get("properties") or {}
    return str(headers.get("id") or properties.get("correlation_id") or "")
