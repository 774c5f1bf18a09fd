"""The demo data ships one finished experiment, computed by the workers' code path."""

from __future__ import annotations

import io
import time

import pytest
from django.core.management import call_command
from django.urls import reverse

from diagnosis.bench.models import Experiment, ExperimentTask
from diagnosis.management import demo_data
from diagnosis.management.commands.load_demo_data import DEMO_EXPERIMENT

pytestmark = pytest.mark.django_db


def test_demo_experiment_is_finished_small_and_made_once(client):
    """load_demo_data leaves one done experiment on heart; a second run adds none."""
    started = time.perf_counter()
    out = io.StringIO()
    call_command("load_demo_data", "--no-train", "--only", demo_data.HEART, stdout=out)
    seconds = time.perf_counter() - started
    experiment = Experiment.objects.get(name=DEMO_EXPERIMENT["name"])
    assert experiment.status == Experiment.DONE, experiment.status_reason
    assert experiment.dataset.name == demo_data.HEART
    # two learners and the two baselines (order nothing, order everything)
    assert experiment.n_done == experiment.n_tasks == (2 + 2) * 3 * 3
    assert not experiment.tasks.exclude(status=ExperimentTask.DONE).exists()
    assert len(experiment.results["table"]) == (2 + 2) * 3
    assert "36 of 36 tasks" in out.getvalue()
    print(f"demo data with its experiment: {seconds:.1f} s (shared machine)")
    call_command("load_demo_data", "--no-train", "--only", demo_data.HEART, stdout=io.StringIO())
    assert Experiment.objects.count() == 1
    # The pages are never empty: the list and the research page show it to a clinician.
    from django.contrib.auth.models import User

    client.force_login(User.objects.get(username="clinician"))
    for url in (reverse("experiment-list"), reverse("research")):
        assert (
            reverse("experiment-detail", args=[experiment.pk]) in client.get(url).content.decode()
        )
    page = client.get(reverse("experiment-detail", args=[experiment.pk])).content.decode()
    assert 'id="fig-normalized-cost"' in page and 'id="recommendation"' in page


def test_no_experiment_flag_skips_it():
    """--no-experiment leaves the experiment out (quick set-ups and tests)."""
    call_command(
        "load_demo_data",
        "--no-train",
        "--no-experiment",
        "--only",
        demo_data.HEART,
        stdout=io.StringIO(),
    )
    assert not Experiment.objects.exists()


def test_bin_runs_set_up_queues_the_experiment_for_the_worker():
    """--queue-experiment (bin/run) computes nothing in set-up: the experiment waits for the
    worker with none of its tasks done, and a second start queues no second one."""
    args = ("load_demo_data", "--no-train", "--queue-experiment", "--only", demo_data.HEART)
    out = io.StringIO()
    call_command(*args, stdout=out)
    experiment = Experiment.objects.get(name=DEMO_EXPERIMENT["name"])
    assert experiment.status in (Experiment.QUEUED, Experiment.RUNNING)
    assert experiment.n_done == 0 and experiment.n_tasks == (2 + 2) * 3 * 3  # and both baselines
    assert "queued: the worker computes its 36 tasks" in out.getvalue()
    again = io.StringIO()
    call_command(*args, stdout=again)
    assert Experiment.objects.count() == 1 and "already queued" in again.getvalue()
