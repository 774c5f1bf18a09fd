"""How experiments scale over Celery workers: wall time with 1 and 2 workers, task overhead.

    .venv/bin/python -m benchmarks.experiments_scale            # full run (a few minutes)
    .venv/bin/python -m benchmarks.experiments_scale --quick    # smaller experiment, 10/100 tasks

Needs PostgreSQL and Redis (like bin/test): ``BENCH_DATABASE_URL`` (default
postgresql://postgres@127.0.0.1:5432/bench_experiments, created and migrated if missing) and
``BENCH_REDIS_URL`` (default redis://127.0.0.1:6379/2).  Worker processes are real
``celery -A config worker -Q experiments --concurrency=1`` processes, each as a worker machine
of a cluster would run it; they are started and warmed (numba kernels loaded, one warm-up
experiment) before anything is timed.

1. **Speed-up**: one experiment (UCI heart, 4 learners x 5 folds x 3 error costs) timed from
   its creation to its assembly, with 1 and with 2 worker processes.
2. **Task overhead**: experiments of 10, 100 and 1000 tasks of a fast learner (EG2) on one
   worker; the overhead per task is the wall time per task minus the same fits and
   ``evaluate`` calls run in this process without Celery or the database.
3. **Result volume**: bytes per task row in PostgreSQL (``pg_column_size``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from benchmarks._server import ROOT, manage

if TYPE_CHECKING:  # Django is set up only once the benchmark's database is ready
    from diagnosis.bench.models import Experiment

DEFAULT_DB = "postgresql://postgres@127.0.0.1:5432/bench_experiments"
DEFAULT_REDIS = "redis://127.0.0.1:6379/2"
HEART = "heart-disease"
SLOW = [
    {"key": "eg2", "params": {}},
    {"key": "c45", "params": {}},
    {"key": "icet", "params": {"population": 20, "generations": 20}},
    {"key": "boosting", "params": {"n_trials": 5}},
]


def _environment() -> dict[str, str]:
    env = {
        **os.environ,
        "DATABASE_URL": os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB),
        "REDIS_URL": os.environ.get("BENCH_REDIS_URL", DEFAULT_REDIS),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY", "benchmark-only-secret-key"),
        "DJANGO_HTTPS": "false",
        "LOG_LEVEL": "WARNING",
    }
    env["CELERY_BROKER_URL"] = env["REDIS_URL"]
    return env


def _create_database(url: str) -> None:
    from urllib.parse import urlparse

    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    admin = url[: -len(name)] + "postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (name,)
        ).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{name}"')
            print(f"  created database {name}")


def _start_workers(n: int, env: dict, folder: Path) -> list[subprocess.Popen]:
    workers = []
    for i in range(n):
        log = folder / f"worker-{n}-{i}.log"
        with open(log, "wb") as out:
            workers.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "config",
                        "worker",
                        "-Q",
                        "experiments",
                        "--concurrency=1",
                        "--without-mingle",
                        "--without-gossip",
                        "-l",
                        "info",
                        "-n",
                        f"bench{i}-{os.getpid()}@%h",
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        deadline = time.monotonic() + 120
        while "ready." not in log.read_text(errors="replace"):
            if workers[-1].poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"worker did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.3)
    return workers


def _stop_workers(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        worker.terminate()
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, 9)
            worker.wait()


class _Run(NamedTuple):
    """An experiment ``_run`` waited for, and its times in seconds."""

    seconds: float  # from its creation to its assembly
    experiment: Experiment
    launch_seconds: float  # creating its rows and the dispatch message (the web request's part)
    sent_seconds: float  # from its creation until a worker had sent every task


def _run(user, dataset, *, learners, costs, k, repeats=1, seed=0) -> _Run:
    """Create an experiment (queued on commit) and wait for its assembly."""
    from diagnosis.bench.models import Experiment
    from diagnosis.bench.services.experiments import create_experiment

    started = time.perf_counter()
    experiment = create_experiment(
        user=user,
        dataset=dataset,
        learners=learners,
        matrix_kind="uniform",
        costs=costs,
        k=k,
        repeats=repeats,
        seed=seed,
    )
    launch_seconds = time.perf_counter() - started
    deadline = time.monotonic() + 3600
    while True:
        status = Experiment.objects.filter(pk=experiment.pk).values_list("status", flat=True)[0]
        if status in Experiment.FINISHED:
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"experiment {experiment.pk} still {status} after an hour")
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    experiment.refresh_from_db()
    if experiment.status != Experiment.DONE:
        raise SystemExit(
            f"experiment {experiment.pk} {experiment.status}: {experiment.status_reason}"
        )
    # every task of a finished experiment was sent (enqueued_at set)
    last_sent = max(
        t.enqueued_at
        for t in experiment.tasks.filter(lead__isnull=True)
        if t.enqueued_at is not None
    )
    sent_seconds = (last_sent - experiment.created_at).total_seconds()
    return _Run(seconds, experiment, launch_seconds, sent_seconds)


def _in_process_seconds(experiment) -> float:
    """The same fits and evaluate calls as the experiment's tasks, here, without Celery or DB."""
    import numpy as np

    from diagnosis.catalog.selectors.datasets import dataset_arrays
    from diagnosis.shared import learner_registry
    from learners import evaluate
    from learners.evaluation import make_folds

    X, y, categorical = dataset_arrays(experiment.dataset)
    cost_model = experiment.snapshot.prices
    started = time.perf_counter()
    for entry in experiment.learners:
        for repeat in range(experiment.repeats):
            folds = make_folds(y, n_splits=experiment.k, random_state=experiment.seed + repeat)
            for train, test in folds:
                for matrix in experiment.matrices:
                    model = learner_registry.build_estimator(
                        entry["key"],
                        entry["params"],
                        cost_model=cost_model,
                        cost_matrix=matrix["matrix"],
                        reject_cost=matrix["reject_cost"],
                        categorical_features=categorical,
                        random_state=experiment.seed + repeat,
                    ).fit(X[train], y[train])
                    evaluate(
                        model,
                        X[test],
                        y[test],
                        test_costs=cost_model,
                        cost_matrix=np.asarray(matrix["matrix"], dtype=float),
                        reject_cost=matrix["reject_cost"],
                    )
    return time.perf_counter() - started


def _through_run_task(user, experiment) -> float:
    """The same experiment's tasks through ``experiment_runner.run_task`` in this process:
    the work plus the database bookkeeping (claim, result row, landing), without Celery."""
    from diagnosis.bench.services import runner as experiment_runner
    from diagnosis.bench.services.experiments import create_experiment

    copy = create_experiment(
        user=user,
        dataset=experiment.dataset,
        learners=[{"key": e["key"], "params": e["params"]} for e in experiment.learners],
        matrix_kind="uniform",
        costs=[m["x"] for m in experiment.matrices],
        k=experiment.k,
        repeats=experiment.repeats,
        seed=experiment.seed,
        launch=False,
    )
    ids = list(copy.tasks.filter(lead__isnull=True).order_by("pk").values_list("pk", flat=True))
    started = time.perf_counter()
    for pk in ids:
        experiment_runner.run_task(task_id=pk, worker="benchmark")
    return time.perf_counter() - started


def _row_bytes(experiment) -> float:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT avg(pg_column_size(t.*)) FROM diagnosis_experimenttask t "
            "WHERE experiment_id = %s",
            [experiment.pk],
        )
        return float(cursor.fetchone()[0])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller experiment; 10/100 tasks")
    parser.add_argument(
        "--rounds", type=int, default=3, help="timed runs per worker count (the median is kept)"
    )
    args = parser.parse_args(argv)
    env = _environment()
    os.environ.update(env)
    print(
        "Setting up (shared 2-core machine: other sessions' load shows in every figure; load "
        f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
    )
    _create_database(env["DATABASE_URL"])
    manage(["migrate", "--noinput"], env, "migrate")

    import django

    django.setup()
    from django.contrib.auth.models import User

    from config.celery import app
    from diagnosis.catalog.models import Dataset
    from diagnosis.catalog.selectors.datasets import dataset_arrays
    from diagnosis.catalog.services.datasets import import_uci_folder

    user, _ = User.objects.get_or_create(
        username="bench-admin", defaults={"is_staff": True, "is_superuser": True}
    )
    dataset = Dataset.objects.filter(name="bench heart").first()
    if dataset is None:
        from datasets.known import default_shared_dir

        dataset = import_uci_folder(
            user=user, name="bench heart", path=default_shared_dir() / "data" / "uci" / HEART
        )
    X, y, _ = dataset_arrays(dataset)
    print(f"  dataset: UCI heart, {X.shape[0]} cases, {X.shape[1]} tests, {len(set(y))} classes")
    app.control.purge()

    costs = [10.0, 100.0, 1000.0]
    learners = SLOW[:3] if args.quick else SLOW
    k = 3 if args.quick else 5
    folder = Path(tempfile.mkdtemp(prefix="experiments-scale-"))
    times: dict[int, list[float]] = {1: [], 2: []}
    # 1, 2, 1, 2 ...: a burst of load from other sessions hits both counts alike
    for _ in range(max(args.rounds, 1)):
        for n_workers in (1, 2):
            workers = _start_workers(n_workers, env, folder)
            try:
                _run(user, dataset, learners=learners, costs=costs, k=2 * n_workers, seed=99)
                seconds, experiment, _, _ = _run(user, dataset, learners=learners, costs=costs, k=k)
            finally:
                _stop_workers(workers)
            jobs = experiment.tasks.filter(lead__isnull=True).count()
            times[n_workers].append(seconds)
            print(
                f"  {n_workers} worker process(es): {seconds:.1f} s for {experiment.n_tasks} "
                f"result rows ({jobs} jobs: {len(learners)} learners x {k} folds x "
                f"{len(costs)} costs)",
                flush=True,
            )
    median = {n: statistics.median(values) for n, values in times.items()}
    ratios = [one / two for one, two in zip(times[1], times[2], strict=True)]
    print(
        f"Speed-up with 2 worker processes (medians): {median[1]:.1f} s / {median[2]:.1f} s = "
        f"{median[1] / median[2]:.2f}x (round by round: "
        + ", ".join(f"{r:.2f}x" for r in ratios)
        + f"); load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs",
        flush=True,
    )

    print("Task overhead (EG2 on heart, 1 worker process):", flush=True)
    sizes = [(10, 1, 1), (100, 10, 1)] + ([] if args.quick else [(1000, 10, 10)])
    workers = _start_workers(1, env, folder)
    try:
        warm = _run(user, dataset, learners=SLOW[:1], costs=[5.0], k=3, seed=98).experiment
        _in_process_seconds(warm)  # this process's first fits and evaluate calls, untimed
        _through_run_task(user, warm)
        for n, n_costs, repeats in sizes:
            seconds, experiment, launch_seconds, sent_seconds = _run(
                user,
                dataset,
                learners=SLOW[:1],
                costs=[float(c) for c in range(1, n_costs + 1)],
                k=10,
                repeats=repeats,
            )
            assert experiment.n_tasks == n, experiment.n_tasks
            compute = _in_process_seconds(experiment)
            direct = _through_run_task(user, experiment)
            print(
                f"  {n:5d} tasks: {seconds:7.2f} s wall = {1000 * seconds / n:6.1f} ms/task; "
                f"same work in-process {1000 * compute / n:6.1f} ms/task; overhead "
                f"{1000 * (seconds - compute) / n:6.1f} ms/task, of which database bookkeeping "
                f"{1000 * (direct - compute) / n:5.1f} (run_task here, no Celery) and Celery "
                f"{1000 * (seconds - direct) / n:5.1f}; launch: rows "
                f"{launch_seconds:.2f} s in the request, all sent by a worker "
                f"{sent_seconds:.2f} s after; "
                f"{_row_bytes(experiment):.0f} bytes per result row",
                flush=True,
            )
    finally:
        _stop_workers(workers)
    print(f"(worker logs in {folder})")


if __name__ == "__main__":
    main()
