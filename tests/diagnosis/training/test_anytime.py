"""Anytime training of ACT in the app: rounds, checkpoints, stop requests, time budget, crashes."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors.models import model_report, training_progress
from diagnosis.training.services import anytime, training
from learners import model_from_json


def _act(toy_dataset, model_admin, **params) -> TrainedModel:
    return training.create_training(
        user=model_admin,
        dataset=toy_dataset,
        learner="act",
        params=params,
        error_matrix=toy_dataset.error_matrices.get(name="Uniform 100"),
    )


@pytest.fixture
def rounds_evaluated(monkeypatch):
    """Records each round's held-out evaluation; ``hooks`` run after the n-th one (1-based)."""
    calls: list[float] = []
    hooks: dict[int, callable] = {}
    original = anytime.held_out_report

    def recording(*args, **kwargs):
        metrics = original(*args, **kwargs)
        calls.append(metrics["mean_total_cost"])
        hook = hooks.get(len(calls))
        if hook is not None:
            hook()
        return metrics

    monkeypatch.setattr(anytime, "held_out_report", recording)
    return calls, hooks


def test_round_schedule_doubles_up_to_the_requested_value():
    """r runs 1, 2, 4, ... and ends exactly at the requested r; r = 0 is one greedy round."""
    assert anytime.round_schedule(8) == [1, 2, 4, 8]
    assert anytime.round_schedule(5) == [1, 2, 4, 5]
    assert anytime.round_schedule(1) == [1]
    assert anytime.round_schedule(0) == [0]


@pytest.mark.slow
def test_anytime_run_keeps_the_best_round_as_the_model_in_use(
    toy_dataset, model_admin, rounds_evaluated
):
    """Checkpoints have non-increasing cost; the model in use is the cheapest round's model."""
    calls, _ = rounds_evaluated
    trained = training.run_training(trained_model_id=_act(toy_dataset, model_admin, r=4).pk)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    assert len(calls) == 3  # r = 1, 2, 4
    checkpoints = list(trained.checkpoints.order_by("elapsed_seconds"))
    assert checkpoints, "the first round always makes a checkpoint"
    costs = [c.estimated_cost for c in checkpoints]
    assert costs == sorted(costs, reverse=True) and len(set(costs)) == len(costs)
    assert costs[-1] == pytest.approx(min(calls))
    assert checkpoints[0].label == "r=1"
    best = checkpoints[-1]
    assert trained.model_json == best.model_json and trained.anytime_round == best.label
    assert json.loads(best.model_json)["params"]["r"] == int(best.label.removeprefix("r="))
    assert trained.metrics["mean_total_cost"] == pytest.approx(best.estimated_cost)
    info = trained.metrics["anytime"]
    assert info["round"] == best.label and info["ended"] == anytime.FINISHED
    assert info["estimated_cost"] == pytest.approx(best.estimated_cost)
    assert info["seconds_spent"] >= info["seconds_to_this_model"] > 0
    assert trained.fit_seconds == pytest.approx(info["seconds_spent"])
    assert info["training_estimated_cost"] is not None  # ACT's own estimate, kept beside
    assert set(info["derived_params"]) == {"w", "cf"}  # left empty: derived from the costs
    assert [row["label"] for row in info["rounds"]] == ["r=1", "r=2", "r=4"]
    assert [row["label"] for row in info["rounds"] if row["improved"]] == [
        c.label for c in checkpoints
    ]
    assert [row["estimated_cost"] for row in info["rounds"]] == pytest.approx(calls)
    model = model_from_json(trained.model_json)
    assert model.next_action({}).kind in {"extract", "classify", "reject"}


def test_model_report_and_progress_show_r_time_and_estimate(toy_dataset, model_admin, clinician):
    """The report says which r is in use, the time spent and its estimated cost."""
    trained = training.run_training(trained_model_id=_act(toy_dataset, model_admin, r=2).pk)
    report = model_report(user=clinician, trained_model=trained)
    info = report.anytime
    assert info["round"] == trained.anytime_round and info["requested"] == 2
    assert info["estimated_cost"] == pytest.approx(trained.checkpoints.last().estimated_cost)
    assert info["seconds_spent"] > 0 and info["can_stop"] is False
    assert report.checkpoints and report.n_referred == 0
    progress = training_progress(user=model_admin, trained_model=trained)
    assert progress["finished"] and progress["checkpoints"] == report.checkpoints
    assert {"elapsed_seconds", "estimated_cost", "label"} <= set(progress["checkpoints"][0])


def test_stop_request_between_rounds_keeps_the_best_model_so_far(
    toy_dataset, model_admin, rounds_evaluated
):
    """A stop requested during round r=1 ends the run after it, keeping r=1's model."""
    calls, hooks = rounds_evaluated
    trained = _act(toy_dataset, model_admin, r=8)
    hooks[1] = lambda: training.request_stop(user=model_admin, trained_model=trained)
    result = training.run_training(trained_model_id=trained.pk)
    assert result.status == TrainedModel.SUCCEEDED, result.error
    assert len(calls) == 1
    assert [c.label for c in result.checkpoints.all()] == ["r=1"]
    assert result.anytime_round == "r=1" and result.metrics["anytime"]["ended"] == anytime.STOPPED
    assert result.model_json == result.checkpoints.get().model_json


def test_stop_request_inside_a_round_ends_it_early(
    toy_dataset, model_admin, rounds_evaluated, monkeypatch
):
    """A stop seen by the progress callback during r=2 ends that round; r=1's model stays."""
    calls, _ = rounds_evaluated
    monkeypatch.setattr(anytime, "STOP_CHECK_INTERVAL", 0.0)
    trained = _act(toy_dataset, model_admin, r=8)
    original = anytime._round_progress
    interrupted = []

    def stopping(writer, watch, label, *args):
        progress = original(writer, watch, label, *args)

        def wrapped(fraction, message=""):
            if label == "r=2":
                TrainedModel.objects.filter(pk=trained.pk).update(stop_requested=True)
                interrupted.append(fraction)
            progress(fraction, message)

        return wrapped

    monkeypatch.setattr(anytime, "_round_progress", stopping)
    result = training.run_training(trained_model_id=trained.pk)
    assert result.status == TrainedModel.SUCCEEDED, result.error
    assert len(interrupted) == 1, "the round ends at the first progress call after the stop"
    assert len(calls) == 1  # r=2 was never evaluated
    assert result.anytime_round == "r=1" and result.metrics["anytime"]["ended"] == anytime.STOPPED


def test_time_budget_ends_the_run_with_the_best_model(toy_dataset, model_admin, rounds_evaluated):
    """Once the budget has passed no further round runs, and the run still succeeds."""
    calls, hooks = rounds_evaluated
    hooks[1] = lambda: time.sleep(1.1)  # round r=1 outlasts the 1 s budget
    trained = _act(toy_dataset, model_admin, r=8, time_budget_seconds=1)
    result = training.run_training(trained_model_id=trained.pk)
    assert result.status == TrainedModel.SUCCEEDED, result.error
    assert len(calls) == 1
    assert result.metrics["anytime"]["ended"] == anytime.BUDGET
    assert result.metrics["anytime"]["time_budget_seconds"] == 1.0
    assert result.anytime_round == "r=1"


def test_an_error_in_a_later_round_keeps_the_best_model(toy_dataset, model_admin, rounds_evaluated):
    """A round that crashes after r=1 succeeded leaves r=1 in use, with the error recorded."""
    _, hooks = rounds_evaluated

    def crash():
        raise RuntimeError("disk full")

    hooks[2] = crash
    result = training.run_training(trained_model_id=_act(toy_dataset, model_admin, r=4).pk)
    assert result.status == TrainedModel.SUCCEEDED
    assert "disk full" in result.error and result.anytime_round == "r=1"
    assert "failed" in result.metrics["anytime"]["ended"]


def test_the_worker_time_limit_keeps_the_best_model(toy_dataset, model_admin, rounds_evaluated):
    """Celery's soft time limit during a later round ends the run like a budget, not an error."""
    from celery.exceptions import SoftTimeLimitExceeded

    _, hooks = rounds_evaluated

    def limit():
        raise SoftTimeLimitExceeded()

    hooks[2] = limit
    result = training.run_training(trained_model_id=_act(toy_dataset, model_admin, r=4).pk)
    assert result.status == TrainedModel.SUCCEEDED and result.error == ""
    assert result.metrics["anytime"]["ended"] == anytime.WORKER_LIMIT
    assert result.anytime_round == "r=1"


def test_an_error_in_the_first_round_fails_the_training(toy_dataset, model_admin, rounds_evaluated):
    """With no model yet, a crash fails the training as for any learner."""
    _, hooks = rounds_evaluated

    def crash():
        raise RuntimeError("disk full")

    hooks[1] = crash
    result = training.run_training(trained_model_id=_act(toy_dataset, model_admin, r=4).pk)
    assert result.status == TrainedModel.FAILED and "disk full" in result.error
    assert not result.is_ready


def test_a_redelivered_run_goes_on_after_the_stored_best_model(
    toy_dataset, model_admin, rounds_evaluated
):
    """A task run again after a worker died keeps the stored model and runs only later rounds."""
    calls, _ = rounds_evaluated
    trained = _act(toy_dataset, model_admin, r=1)
    first = training.run_training(trained_model_id=trained.pk)
    kept = first.checkpoints.get()
    # As if the worker had died after storing r=1 of an r=4 run and the task came back
    # once its heartbeat was stale.
    silent = timezone.now() - timedelta(seconds=settings.TRAINING_STALE_SECONDS + 1)
    TrainedModel.objects.filter(pk=trained.pk).update(
        status=TrainedModel.RUNNING, params={**first.params, "r": 4}, heartbeat_at=silent
    )
    again = training.run_training(trained_model_id=trained.pk)
    assert again.status == TrainedModel.SUCCEEDED, again.error
    assert len(calls) == 3  # r=1 once, then only r=2 and r=4
    checkpoints = list(again.checkpoints.order_by("elapsed_seconds", "id"))
    assert checkpoints[0].pk == kept.pk
    assert all(c.elapsed_seconds > kept.elapsed_seconds for c in checkpoints[1:])
    costs = [c.estimated_cost for c in checkpoints]
    assert costs == sorted(costs, reverse=True)
    assert again.model_json == checkpoints[-1].model_json
    assert again.metrics["anytime"]["rounds_run"] == 2


def test_stop_before_the_first_model_cancels(toy_dataset, model_admin):
    """A run told to stop before any round finished ends cancelled, with nothing kept."""
    trained = _act(toy_dataset, model_admin, r=2)
    TrainedModel.objects.filter(pk=trained.pk).update(stop_requested=True)
    result = training.run_training(trained_model_id=trained.pk)
    assert result.status == TrainedModel.CANCELLED
    assert "before the first model" in result.progress_message
    assert not result.checkpoints.exists() and not result.is_ready


def test_request_stop_rules(toy_dataset, model_admin, clinician):
    """Only admins stop; only anytime learners; a queued run is cancelled; finished ones refuse."""
    queued = _act(toy_dataset, model_admin, r=2)
    with pytest.raises(PermissionDenied):
        training.request_stop(user=clinician, trained_model=queued)
    stopped = training.request_stop(user=model_admin, trained_model=queued)
    assert stopped.status == TrainedModel.CANCELLED and stopped.stop_requested
    with pytest.raises(ValidationError, match="nothing to stop"):
        training.request_stop(user=model_admin, trained_model=queued)
    greedy = training.create_training(
        user=model_admin, dataset=toy_dataset, learner="eg2", params={}
    )
    with pytest.raises(ValidationError, match="cancel the training instead"):
        training.request_stop(user=model_admin, trained_model=greedy)
    running = _act(toy_dataset, model_admin, r=2)
    TrainedModel.objects.filter(pk=running.pk).update(status=TrainedModel.RUNNING)
    flagged = training.request_stop(user=model_admin, trained_model=running)
    assert flagged.status == TrainedModel.RUNNING and flagged.stop_requested


def test_anytime_partial_shows_the_model_in_use_and_a_stop_button(
    toy_dataset, model_admin, clinician
):
    """The model page partial names r, cost and time; a running run offers admins a stop button."""
    from django.template.loader import render_to_string

    done = training.run_training(trained_model_id=_act(toy_dataset, model_admin, r=2).pk)
    report = model_report(user=model_admin, trained_model=done)
    html = render_to_string(
        "clinic/_anytime_controls.html", {"trained": done, "report": report, "can_train": True}
    )
    assert done.anytime_round in html and f"${report.anytime['estimated_cost']:,.2f}" in html
    assert "Time spent" in html and 'name="action" value="stop"' not in html
    assert 'id="anytime-rounds"' in html and html.count("<td>in use</td>") == 1
    running = _act(toy_dataset, model_admin, r=2)
    TrainedModel.objects.filter(pk=running.pk).update(
        status=TrainedModel.RUNNING, started_at=timezone.now()
    )
    running.refresh_from_db()
    context = {"report": model_report(user=model_admin, trained_model=running)}
    html = render_to_string(
        "clinic/_anytime_controls.html", {"trained": running, "can_train": True, **context}
    )
    assert 'name="action" value="stop"' in html and 'id="anytime-live"' in html
    html = render_to_string(
        "clinic/_anytime_controls.html", {"trained": running, "can_train": False, **context}
    )
    assert 'value="stop"' not in html
    greedy = training.create_training(
        user=model_admin, dataset=toy_dataset, learner="eg2", params={}
    )
    report = model_report(user=clinician, trained_model=greedy)
    assert report.anytime is None
    assert "Anytime" not in render_to_string(
        "clinic/_anytime_controls.html", {"trained": greedy, "report": report}
    )


def test_train_form_queues_act_with_optional_params_and_budget(
    client, model_admin, toy_dataset, django_capture_on_commit_callbacks
):
    """The generic train form takes ACT's r, empty w/cf, stop rule, the one-vs-rest box (a
    browser sends "on" for the box checked by default) and time budget."""
    from django.urls import reverse

    client.force_login(model_admin)
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(
            reverse("train"),
            {
                "dataset": toy_dataset.pk,
                "learner": "act",
                "act__r": "4",
                "act__w": "",
                "act__cf": "",
                "act__stop_rule": "prune",
                "act__one_vs_rest": "on",
                "act__time_budget_seconds": "30",
                "name": "Anytime ACT",
            },
        )
    assert response.status_code == 302, response.content.decode()[:2000]
    trained = TrainedModel.objects.get(name="Anytime ACT")
    assert trained.params == {
        "r": 4,
        "w": None,
        "cf": None,
        "stop_rule": "prune",
        "one_vs_rest": True,
        "time_budget_seconds": 30.0,
    }
