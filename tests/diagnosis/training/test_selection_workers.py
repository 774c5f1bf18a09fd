"""A "let the data choose" training on REAL Celery workers: candidates spread over the queue.

One worker takes trainings only (``-Q diagnosis``), a second only the experiments queue, as a
worker machine added for experiments would.  Both run against the test database and Redis.
"""

from __future__ import annotations

import numpy as np
import pytest
from celery_workers import (
    require_services,
    start_worker,
    stop_worker,
    wait_until_finished,
    worker_database_url,
    xor_dataset,
)
from django.conf import settings

from diagnosis.training.models import CandidateMeasurement, TrainedModel
from diagnosis.training.services.selection_fanout import COORDINATOR
from diagnosis.training.services.training import request_training
from learners import model_from_json
from learners.selection import FoldCosts

pytestmark = [pytest.mark.celery_worker, pytest.mark.slow]


def _purge():
    from config.celery import app

    app.control.purge()


@pytest.mark.django_db(transaction=True)
def test_candidates_are_measured_by_a_second_worker_and_the_choice_uses_them(model_admin, tmp_path):
    """With a worker on the experiments queue beside the training's own, some candidates are
    measured there; every candidate is measured once, and the stored model's report and
    winner are the ones those measurements give."""
    broker = require_services()
    _purge()
    url = worker_database_url()
    dataset = xor_dataset("XOR for a spread selection", n=240, d=4)
    trainer_log, measurer_log = tmp_path / "trainer.log", tmp_path / "measurer.log"
    measurer = start_worker(
        database_url=url,
        broker=broker,
        log=measurer_log,
        name="measurer",
        queues=settings.EXPERIMENTS_QUEUE,
    )
    trainer = start_worker(
        database_url=url,
        broker=broker,
        log=trainer_log,
        name="trainer",
        queues=settings.CELERY_TASK_DEFAULT_QUEUE,
    )
    try:
        trained = request_training(
            user=model_admin,
            dataset=dataset,
            learner="cost_selected",
            params={},
            error_matrix=dataset.error_matrices.get(),
        )
        # sixteen candidates on five folds, three times: longer than one learner's training
        trained = wait_until_finished(trained, trainer_log, timeout=600)
    finally:
        stop_worker(trainer)
        stop_worker(measurer)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    rows = list(CandidateMeasurement.objects.filter(trained_model=trained))
    assert rows and all(row.status == CandidateMeasurement.DONE for row in rows)
    assert all(row.attempts == 1 for row in rows), [
        (r.candidate, r.attempts, r.claimed_by, r.finished_at) for r in rows
    ]
    elsewhere = [row.candidate for row in rows if row.claimed_by != COORDINATOR]
    assert elsewhere, "the experiments worker measured no candidate"
    assert all("measurer" in row.claimed_by for row in rows if row.candidate in elsewhere)
    assert "measured" in measurer_log.read_text(errors="replace")

    model = model_from_json(trained.model_json)
    report = {line.name: line for line in model.selection_report_}
    for row in rows:
        folds = FoldCosts.from_dict(row.folds)
        line = report[row.candidate]
        if folds.refused:
            assert not line.measured
            continue
        # the report's mean is the measured folds' total over every held-out patient: the
        # 168 training patients (70% of 240) once per repeat, 3 repeats at this size
        assert line.mean_cost > 0
        assert np.isclose(sum(folds.totals) / line.mean_cost, 3 * 168)
        assert np.isclose(line.fit_seconds, np.mean(folds.seconds))
    measured = [line for line in report.values() if line.measured]
    assert model.winner_ == min(measured, key=lambda line: line.mean_cost)
    assert type(model).__name__ == "CostSelectedClassifier"
