"""Experiments on REAL Celery workers, Redis and PostgreSQL: kill -9, no worker, cancel, resume.

Each test starts worker processes (``celery -A config worker``) against the test database and
Redis, exactly as bin/run's worker or a worker machine of a cluster would run.
"""

from __future__ import annotations

import time

import pytest
from celery_workers import (
    TIMEOUT,
    kill_worker,
    require_services,
    start_worker,
    stop_worker,
    worker_database_url,
    xor_dataset,
)

from diagnosis.bench.models import Experiment, ExperimentTask
from diagnosis.bench.selectors.experiments import experiment_progress
from diagnosis.bench.services.experiments import (
    cancel_experiment,
    create_experiment,
    resume_experiment,
)
from diagnosis.training.models import TrainedModel
from diagnosis.training.services.training import request_training

pytestmark = [pytest.mark.celery_worker, pytest.mark.slow]

# Short limits, for the workers and for this process's selectors, so the test takes seconds.
QUICK = {"EXPERIMENT_STALE_SECONDS": "3", "EXPERIMENT_RESEND_SECONDS": "2"}
#: Genetic search long enough that a task takes about a second on a warm worker.
SLOW_LEARNER = {"key": "icet", "params": {"population": 20, "generations": 40}}


@pytest.fixture
def quick(settings):
    settings.EXPERIMENT_STALE_SECONDS = 3
    settings.EXPERIMENT_RESEND_SECONDS = 2
    return settings


def _experiment(user, dataset, *, costs=(50, 100), k=5) -> Experiment:
    return create_experiment(
        user=user,
        dataset=dataset,
        learners=[SLOW_LEARNER, {"key": "eg2", "params": {}}],
        matrix_kind="uniform",
        costs=list(costs),
        k=k,
        seed=3,
    )


def _wait(condition, what: str, log, timeout: float = TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.3)
    pytest.fail(f"{what} did not happen within {timeout:g}s; worker log:\n" + _tail(log))


def _tail(log) -> str:
    try:
        return log.read_text(errors="replace")[-3000:]
    except OSError:
        return "(no log)"


def _finished_rows(experiment: Experiment) -> dict[int, tuple]:
    return {
        t.pk: (t.finished_at, t.attempts, t.claimed_by, t.normalized_cost)
        for t in experiment.tasks.filter(status=ExperimentTask.DONE)
    }


def _purge():
    from config.celery import app

    app.control.purge()


@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_loses_no_finished_task_and_its_task_is_retried(
    model_admin, clinician, quick, tmp_path
):
    """kill -9 mid-experiment: finished rows stay as they were, the experiment says no worker is
    alive, and a new worker retries the killed task (attempt 2) and finishes the experiment."""
    broker = require_services()
    _purge()
    url = worker_database_url()
    dataset = xor_dataset("XOR experiment to be killed")
    first_log = tmp_path / "first.log"
    first = start_worker(database_url=url, broker=broker, log=first_log, name="doomed", env=QUICK)
    try:
        experiment = _experiment(model_admin, dataset)

        def some_done_and_one_running():
            done = experiment.tasks.filter(status=ExperimentTask.DONE).count()
            running = experiment.tasks.filter(
                status=ExperimentTask.RUNNING, learner_index=0
            ).first()
            return running if done >= 2 and running else None

        running = _wait(
            some_done_and_one_running, "two tasks done and an ICET one running", first_log
        )
    finally:
        kill_worker(first)
    before = _finished_rows(experiment)
    assert before, "no task had finished before the kill"
    running.refresh_from_db()
    killed = running.pk
    if running.status == ExperimentTask.DONE:  # it landed in the instant before the kill
        pytest.fail("the ICET task finished before the worker could be killed; make it slower")
    time.sleep(4)  # longer than EXPERIMENT_STALE_SECONDS: nothing beats any more
    progress = experiment_progress(user=clinician, experiment_id=experiment.pk)
    assert progress.stalled and not progress.finished
    assert "Is a Celery worker consuming the 'experiments' queue running?" in progress.message
    assert "stopped reporting" in progress.message
    second_log = tmp_path / "second.log"
    second = start_worker(
        database_url=url, broker=broker, log=second_log, name="rescuer", env=QUICK
    )
    try:

        def finished():
            experiment.refresh_from_db()
            return experiment.is_finished

        _wait(finished, "the experiment finishing on the second worker", second_log)
    finally:
        stop_worker(second)
    assert experiment.status == Experiment.DONE, experiment.status_reason
    after = _finished_rows(experiment)
    assert {pk: after[pk] for pk in before} == before  # nothing finished was computed again
    retried = ExperimentTask.objects.get(pk=killed)
    assert retried.status == ExperimentTask.DONE and retried.attempts == 2
    assert "rescuer" in retried.claimed_by
    # two learners and the two baselines x 5 folds x 2 costs
    assert experiment.n_done == experiment.n_tasks == (2 + 2) * 5 * 2
    assert experiment.results["recommendations"]


@pytest.mark.django_db(transaction=True)
def test_with_no_worker_on_the_experiments_queue_it_says_why_and_training_still_runs(
    model_admin, clinician, quick, toy_dataset, tmp_path
):
    """A worker taking only the training queue trains a model while the experiment waits, and
    the experiment says no worker consumes its queue instead of pretending to run."""
    broker = require_services()
    _purge()
    url = worker_database_url()
    log = tmp_path / "training-only.log"
    worker = start_worker(
        database_url=url, broker=broker, log=log, name="trainer", env=QUICK, queues="diagnosis"
    )
    try:
        experiment = _experiment(model_admin, toy_dataset, costs=(100,), k=2)
        trained = request_training(
            user=model_admin,
            dataset=toy_dataset,
            learner="eg2",
            params={},
            error_matrix=toy_dataset.error_matrices.get(name="Uniform 100"),
        )

        def trained_done():
            trained.refresh_from_db()
            return trained.is_finished

        _wait(trained_done, "the training finishing", log)
        assert trained.status == TrainedModel.SUCCEEDED, trained.error
        time.sleep(4)  # past EXPERIMENT_STALE_SECONDS
        experiment.refresh_from_db()
        assert experiment.status == Experiment.QUEUED and experiment.n_done == 0
        progress = experiment_progress(user=clinician, experiment_id=experiment.pk)
        assert progress.stalled
        assert "no worker has taken or reported on a task" in progress.message
        assert "celery -A config worker -Q experiments" in progress.message
    finally:
        stop_worker(worker)
    # a worker for the experiments queue, as on an added machine, then runs it
    log2 = tmp_path / "experiments-only.log"
    runner = start_worker(
        database_url=url, broker=broker, log=log2, name="bench", env=QUICK, queues="experiments"
    )
    try:

        def finished():
            experiment.refresh_from_db()
            return experiment.is_finished

        _wait(finished, "the experiment finishing on the experiments worker", log2)
    finally:
        stop_worker(runner)
    assert experiment.status == Experiment.DONE, experiment.status_reason
    assert not experiment_progress(user=clinician, experiment_id=experiment.pk).stalled


@pytest.mark.django_db(transaction=True)
def test_cancel_and_resume_with_a_real_worker(model_admin, quick, tmp_path):
    """Cancel stops what has not started and keeps what finished; resume runs only the rest."""
    broker = require_services()
    _purge()
    url = worker_database_url()
    dataset = xor_dataset("XOR experiment to cancel")
    log = tmp_path / "worker.log"
    worker = start_worker(database_url=url, broker=broker, log=log, name="bench", env=QUICK)
    try:
        experiment = _experiment(model_admin, dataset)
        _wait(
            lambda: experiment.tasks.filter(status=ExperimentTask.DONE).count() >= 2,
            "two tasks finishing",
            log,
        )
        experiment = cancel_experiment(user=model_admin, experiment=experiment)
        assert experiment.status == Experiment.CANCELLED
        # the task being computed at the cancel lands; nothing else starts
        _wait(
            lambda: not experiment.tasks.filter(status=ExperimentTask.RUNNING).exists(),
            "the running task landing",
            log,
        )
        kept = _finished_rows(experiment)
        time.sleep(3)
        assert _finished_rows(experiment) == kept
        cancelled = experiment.tasks.filter(status=ExperimentTask.CANCELLED).count()
        assert cancelled > 0 and len(kept) + cancelled == experiment.n_tasks
        experiment.refresh_from_db()
        assert experiment.status == Experiment.CANCELLED and not experiment.results
        experiment = resume_experiment(user=model_admin, experiment=experiment)

        def finished():
            experiment.refresh_from_db()
            return experiment.is_finished

        _wait(finished, "the resumed experiment finishing", log)
    finally:
        stop_worker(worker)
    assert experiment.status == Experiment.DONE, experiment.status_reason
    after = _finished_rows(experiment)
    assert {pk: after[pk] for pk in kept} == kept  # kept rows were not computed again
    assert len(after) == experiment.n_tasks
