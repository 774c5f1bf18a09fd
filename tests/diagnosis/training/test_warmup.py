"""Warming the compiled kernels: what bin/run's set-up and the worker's start do."""

from __future__ import annotations

import sys

import pytest
from celery.signals import worker_process_init
from django.core.management import call_command
from numba.core.registry import CPUDispatcher

from diagnosis.shared import learner_registry
from diagnosis.training.services.training import create_training, run_training
from diagnosis.training.services.warmup import warm_kernels


def _compiled_signatures() -> dict[str, int]:
    """How many type signatures each numba kernel of the library has compiled in this process."""
    counts = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("learners") or module is None:
            continue
        for attr, value in vars(module).items():
            if isinstance(value, CPUDispatcher):
                counts[f"{name}.{attr}"] = len(value.signatures)
    return counts


def test_every_registered_learner_is_warmed():
    """warm_kernels fits each learner of the training form's registry."""
    assert set(warm_kernels()) == set(learner_registry.LEARNERS)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("learner", "matrix_name", "params"),
    [
        ("act", "Uniform 100", {"r": 1}),
        ("icet", "Refer at 30", {"population": 4, "generations": 2}),
        ("budget_rf", "Uniform 100", {"budget": 1000, "max_trees": 3}),
    ],
)
def test_a_training_after_the_warm_up_compiles_nothing(
    toy_dataset, model_admin, learner, matrix_name, params
):
    """After warming, a real training (with or without referral, BudgetRF under a budget)
    needs no new compiled kernel."""
    warm_kernels()
    before = _compiled_signatures()
    assert sum(before.values()) > 0, "the warm-up compiled the library's kernels"
    trained = create_training(
        user=model_admin,
        dataset=toy_dataset,
        learner=learner,
        params=params,
        error_matrix=toy_dataset.error_matrices.get(name=matrix_name),
    )
    result = run_training(trained_model_id=trained.pk)
    assert result.status == "succeeded", result.error
    after = _compiled_signatures()
    grown = {k: (before.get(k, 0), n) for k, n in after.items() if n > before.get(k, 0)}
    assert grown == {}


def test_the_command_reports_each_learner(capsys):
    """manage.py warm_kernels (bin/run's set-up step) says how long each learner took."""
    call_command("warm_kernels")
    out = capsys.readouterr().out
    assert out.startswith("Warmed the learners' kernels in")
    assert all(f"{key} " in out for key in learner_registry.LEARNERS)


def test_the_command_warms_only_the_learners_asked_for_or_all_but_those_skipped(capsys):
    """--learners and --skip split the warm-up between processes; an unknown key is refused."""
    from django.core.management.base import CommandError

    call_command("warm_kernels", "--learners", "eg2,c45")
    out = capsys.readouterr().out
    assert "eg2 " in out and "c45 " in out and "act " not in out
    call_command("warm_kernels", "--skip", "act,lsid3,icet,cost_selected,budget_rf")
    out = capsys.readouterr().out
    assert "eg2 " in out and "act " not in out and "budget_rf " not in out
    with pytest.raises(CommandError, match="unknown learner nope; known: "):
        call_command("warm_kernels", "--learners", "eg2,nope")


def test_each_worker_process_warms_on_a_background_thread(monkeypatch):
    """A starting pool process returns at once and loads the kernels on a thread of its own."""
    import threading

    from config import celery as celery_config
    from diagnosis.training.services import warmup

    assert any(
        getattr(ref(), "__name__", "") == "warm_kernels_in_the_background"
        for _, ref in worker_process_init.receivers
        if callable(ref)
    )
    release = threading.Event()
    calls = []

    def slow_warm_up():
        release.wait(10)
        calls.append(threading.current_thread().name)

    monkeypatch.setattr(warmup, "warm_kernels", slow_warm_up)
    thread = celery_config.warm_kernels_in_the_background()
    assert thread.is_alive() and calls == []  # the process did not wait for it
    release.set()
    thread.join(10)
    assert calls == ["warm-kernels"]
