"""Queueing Celery tasks by name, so that services never import a tasks module.

The tasks are thin wrappers that call services, and services queue them: importing the
task functions here would tie the two layers into a circle.  Each task is registered
under a name defined below (``diagnosis/training/tasks.py`` and ``diagnosis/bench/tasks.py``
register them, ``config/celery.py`` routes by them) and sent through the project's Celery
app.  The task's own options (time limits, retries, late acknowledgement) belong to the task
the worker registered; the queue comes from the app's routes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

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
    """Ids of the tasks the broker holds for ``queue``: waiting in it, or (Redis) delivered to a
    worker and not yet acknowledged (late acknowledgement: a running training stays there).

    Read from the broker's own state, so a message it lost (a restart that emptied it, a
    deleted queue file) is seen missing at once:

    * Redis: kombu keeps a queue as one list per priority step, named as its Redis channel
      names them, and every unacknowledged message in one hash;
    * the filesystem queue (``bin/run`` without Redis): one file per waiting message in the
      queue folder, named ``<time>_<uuid>.<queue>.msg`` and holding the message as JSON; a
      worker takes the file out of the folder as it receives the message.

    ``None`` when this broker's state cannot be read this way. Raises whatever the connection
    raises when the broker is down.
    """
    from celery import current_app

    url = str(current_app.conf.broker_url or "")
    if url.startswith(("redis://", "rediss://")):
        return _held_in_redis(url, queue)
    if url.startswith("filesystem://"):
        options = current_app.conf.broker_transport_options or {}
        return _held_in_folder(Path(options.get("data_folder_in", "data_in")), queue)
    return None


def _held_in_redis(url: str, queue: str) -> frozenset[str]:
    import redis
    from kombu.transport.redis import Channel

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


def _held_in_folder(folder: Path, queue: str) -> frozenset[str]:
    """The task ids of the message files waiting for ``queue`` in kombu's filesystem folder.

    A file a worker is taking away as this reads it, or one still being written (empty or
    half-written JSON), is skipped: the first is in the worker's hands (the sweep's grace after
    a send covers that moment), and the second is a send of this very moment, whose row is
    younger than the grace or, if it is re-sent meanwhile, gets one harmless duplicate (only one
    copy of a training can claim it).
    """
    suffix = f".{queue}.msg"
    ids = set()
    for name in os.listdir(folder):  # the folder missing is the broker missing: raise
        if name.partition(".")[2] != suffix[1:]:
            continue
        try:
            ids.add(_task_id(json.loads((folder / name).read_bytes())))
        except (OSError, ValueError, AttributeError, TypeError):
            continue
    ids.discard("")
    return frozenset(ids)


def _task_id(message: dict) -> str:
    """A kombu message's Celery task id (protocol 2 headers, else its correlation id)."""
    headers = message.get("headers") or {}
    properties = message.get("properties") or {}
    return str(headers.get("id") or properties.get("correlation_id") or "")
