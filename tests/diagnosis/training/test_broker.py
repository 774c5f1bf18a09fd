"""Tasks queued by name (services.broker): each name is a task the worker registers, routed
to its queue, and a send puts that task on the real Redis queue."""

from __future__ import annotations

import base64
import json

import pytest
import redis
from django.conf import settings

from diagnosis.training.services import broker


def test_every_name_services_send_is_a_registered_task_on_its_queue():
    """The worker knows each name (its start imports every app's tasks module:
    diagnosis/training/tasks.py and diagnosis/bench/tasks.py register them); experiment tasks
    go to the experiments queue and trainings to the default one."""
    from config import celery_app

    celery_app.loader.import_default_modules()  # what a starting worker does: autodiscovery
    names = {broker.TRAIN_MODEL, broker.RUN_EXPERIMENT_TASK, broker.DISPATCH_EXPERIMENT}
    assert names <= set(celery_app.tasks)
    from diagnosis.bench import tasks as bench_tasks
    from diagnosis.training import tasks

    assert tasks.train_model.name == broker.TRAIN_MODEL
    assert tasks.measure_selection_candidate.name == broker.MEASURE_CANDIDATE
    assert tasks.recover_trainings.name == "diagnosis.tasks.recover_trainings"  # beat's name
    assert bench_tasks.run_experiment_task.name == broker.RUN_EXPERIMENT_TASK
    assert bench_tasks.dispatch_experiment.name == broker.DISPATCH_EXPERIMENT
    routes = celery_app.conf.task_routes
    assert routes[broker.RUN_EXPERIMENT_TASK]["queue"] == settings.EXPERIMENTS_QUEUE
    assert routes[broker.DISPATCH_EXPERIMENT]["queue"] == settings.EXPERIMENTS_QUEUE
    assert broker.TRAIN_MODEL not in routes  # the default queue


@pytest.fixture
def redis_client():
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    queues = (settings.CELERY_TASK_DEFAULT_QUEUE, settings.EXPERIMENTS_QUEUE)
    client.delete(*queues)
    yield client
    client.delete(*queues)


@pytest.mark.parametrize(
    ("name", "queue_setting"),
    [
        (broker.TRAIN_MODEL, "CELERY_TASK_DEFAULT_QUEUE"),
        (broker.RUN_EXPERIMENT_TASK, "EXPERIMENTS_QUEUE"),
    ],
)
def test_send_puts_the_named_task_with_its_args_on_its_redis_queue(
    redis_client, name, queue_setting
):
    """A message lands on the task's queue carrying the task name, the id and the args."""
    queue = getattr(settings, queue_setting)
    broker.send(name, args=[12345], task_id="broker-test-id")
    assert redis_client.llen(queue) == 1
    message = json.loads(redis_client.lindex(queue, 0))
    assert message["headers"]["task"] == name
    assert message["headers"]["id"] == "broker-test-id"
    args, _, _ = json.loads(base64.b64decode(message["body"]))
    assert args == [12345]
