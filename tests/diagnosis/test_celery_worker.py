"""Training through a REAL Celery worker process, REAL Redis and the machine's PostgreSQL.

Run with ``bin/test tests/diagnosis/test_celery_worker.py`` (it sets
DATABASE_URL and REDIS_URL).  Never skipped: a missing service fails loudly
with the command that starts it.
"""

from __future__ import annotations

import time

import pytest
from celery_workers import (
    TIMEOUT,
    require_services,
    start_worker,
    stop_worker,
    wait_until_finished,
    worker_database_url,
    xor_dataset,
)
from django.db import transaction

from diagnosis.training.models import TrainedModel
from diagnosis.training.services.training import request_training

pytestmark = [pytest.mark.celery_worker, pytest.mark.slow]


@pytest.fixture(scope="module")
def celery_worker(django_db_setup, django_db_blocker, tmp_path_factory):
    """A `celery -A config worker` subprocess using the test database and the test Redis."""
    with django_db_blocker.unblock():
        broker = require_services()
        database_url = worker_database_url()
    from config.celery import app

    app.control.purge()  # leftovers from earlier runs would refer to rows that no longer exist
    log = tmp_path_factory.mktemp("celery") / "worker.log"
    process = start_worker(database_url=database_url, broker=broker, log=log, name="test")
    yield process, log
    stop_worker(process)


@pytest.mark.django_db(transaction=True)
def test_worker_trains_a_queued_model(celery_worker, toy_dataset, model_admin):
    """A model requested via the service is fitted by the worker, ends succeeded with metrics."""
    _, log = celery_worker
    trained = request_training(
        user=model_admin,
        dataset=toy_dataset,
        learner="eg2",
        params={"w": 1.0},
        error_matrix=toy_dataset.error_matrices.get(name="Uniform 100"),
    )
    trained = wait_until_finished(trained, log)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    assert (
        trained.progress == 1.0
        and trained.model_json
        and trained.started_at
        and trained.heartbeat_at
    )
    assert trained.metrics["n_test_cases"] == 36
    assert trained.celery_task_id in log.read_text(errors="replace")


@pytest.mark.django_db(transaction=True)
def test_worker_reports_why_a_training_failed(celery_worker, toy_dataset, model_admin):
    """A training that cannot fit ends failed with the reason stored on the model."""
    _, log = celery_worker
    with transaction.atomic():
        trained = request_training(user=model_admin, dataset=toy_dataset, learner="eg2", params={})
        # Prices for 2 tests on a 3-test dataset: the estimator refuses to fit.
        broken = dict(
            trained.cost_snapshot,
            costs=[1.0, 1.0],
            discounted=[1.0, 1.0],
            groups=[None, None],
            delayed=[False, False],
            free=[],
        )
        TrainedModel.objects.filter(pk=trained.pk).update(cost_snapshot=broken)
    trained = wait_until_finished(trained, log)
    assert trained.status == TrainedModel.FAILED
    assert "2 tests but X has 3 features" in trained.error


def _checkpoint_costs(trained: TrainedModel) -> list[float]:
    return [c.estimated_cost for c in trained.checkpoints.order_by("elapsed_seconds", "id")]


@pytest.mark.django_db(transaction=True)
def test_worker_runs_anytime_act_round_by_round(celery_worker, toy_dataset, model_admin):
    """ACT through the worker: checkpoints of falling cost, the last one is the model in use."""
    _, log = celery_worker
    trained = request_training(
        user=model_admin,
        dataset=toy_dataset,
        learner="act",
        params={"r": 4},
        error_matrix=toy_dataset.error_matrices.get(name="Uniform 100"),
    )
    trained = wait_until_finished(trained, log)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    costs = _checkpoint_costs(trained)
    assert costs and costs == sorted(costs, reverse=True)
    last = trained.checkpoints.order_by("elapsed_seconds", "id").last()
    assert trained.model_json == last.model_json and trained.anytime_round == last.label
    assert trained.metrics["anytime"]["ended"] == "finished"


@pytest.mark.django_db(transaction=True)
def test_worker_stops_anytime_act_on_request_and_keeps_the_best(celery_worker, model_admin):
    """A stop requested after the first checkpoint ends the worker's run with that best model."""
    from diagnosis.training.services.training import request_stop

    _, log = celery_worker
    dataset = xor_dataset("XOR for stopping")
    trained = request_training(
        user=model_admin,
        dataset=dataset,
        learner="act",
        params={"r": 64},
        error_matrix=dataset.error_matrices.get(),
    )
    deadline = time.monotonic() + TIMEOUT
    while not trained.checkpoints.exists():
        trained.refresh_from_db()
        if trained.is_finished or time.monotonic() > deadline:
            pytest.fail(f"no checkpoint before the run ended: {trained.status} {trained.error}")
        time.sleep(0.2)
    request_stop(user=model_admin, trained_model=trained)
    trained = wait_until_finished(trained, log)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    assert trained.metrics["anytime"]["ended"] == "stopped on request"
    assert trained.anytime_round != "r=64", "the run stopped before its last round"
    last = trained.checkpoints.order_by("elapsed_seconds", "id").last()
    assert trained.model_json == last.model_json
    assert _checkpoint_costs(trained) == sorted(_checkpoint_costs(trained), reverse=True)


@pytest.mark.django_db(transaction=True)
def test_worker_ends_anytime_act_at_its_time_budget(celery_worker, model_admin):
    """With a 2 s budget the worker ends a long ACT run early and keeps its best model."""
    _, log = celery_worker
    dataset = xor_dataset("XOR for a budget")
    trained = request_training(
        user=model_admin,
        dataset=dataset,
        learner="act",
        params={"r": 64, "time_budget_seconds": 2},
        error_matrix=dataset.error_matrices.get(),
    )
    trained = wait_until_finished(trained, log)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    info = trained.metrics["anytime"]
    assert info["ended"] == "time budget reached" and info["round"] != "r=64"
    assert trained.checkpoints.exists() and trained.model_json
