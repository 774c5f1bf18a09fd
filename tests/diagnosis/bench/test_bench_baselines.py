"""The bench never recommends worse than nothing (issue 27): baseline rows, the refused deploy,
learners in words, and experiments stored before the baselines still render."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from diagnosis.bench.models import Experiment
from diagnosis.bench.selectors import experiments as reads
from diagnosis.bench.services import runner as experiment_runner
from diagnosis.bench.services.experiments import create_experiment, deploy_recommended
from diagnosis.shared.learner_names import display_label, human_label
from diagnosis.training.models import TrainedModel


def _run_all(experiment: Experiment) -> Experiment:
    for pk in experiment.tasks.filter(lead__isnull=True).values_list("pk", flat=True):
        experiment_runner.run_task(task_id=pk, worker="test")
    experiment.refresh_from_db()
    return experiment


@pytest.fixture
def cheap_errors(model_admin, toy_dataset):
    """C4.5 (ignores prices) at an error cost of $1, below every test's price: it orders
    tests that cannot pay for themselves, so ordering nothing is cheaper."""
    return _run_all(
        create_experiment(
            user=model_admin,
            dataset=toy_dataset,
            learners=[{"key": "c45", "params": {"min_samples_leaf": 10}}],
            matrix_kind="uniform",
            costs=[1],
            k=3,
            launch=False,
        )
    )


def test_learners_are_named_in_words_and_old_labels_are_translated():
    """Parameter names never reach a table: "EG2, leaves of at least 10 patients"."""
    assert human_label("eg2", {"min_samples_leaf": 10.0}) == "EG2, leaves of at least 10 patients"
    assert human_label("eg2", {"min_samples_leaf": 2.0, "w": 1.0}) == "EG2"
    assert human_label("boosting", {"cost_sensitive": True}) == "Cost-Boosting"
    legacy = {
        "key": "eg2",
        "params": {"min_samples_leaf": 10.0},
        "label": "eg2 (min_samples_leaf=10)",
    }
    assert display_label(legacy) == "EG2, leaves of at least 10 patients"
    typed = {"key": "eg2", "params": {}, "label": "Our ward's tree"}
    assert display_label(typed) == "Our ward's tree"


def test_baselines_are_rows_and_deploy_refuses_a_learner_no_cheaper_than_nothing(
    model_admin, clinician, cheap_errors
):
    """Both baselines are rows with the same tests; Deploy is refused, saying why and what to
    do; no model is trained."""
    rows = reads.results_table(user=clinician, experiment_id=cheap_errors.pk)
    assert [(r.learner_label, r.baseline) for r in rows] == [
        ("C4.5, leaves of at least 10 patients", False),
        ("Order nothing (no test)", True),
        ("Order every test, then a C4.5 tree", True),
    ]
    assert len(reads.significance(user=clinician, experiment_id=cheap_errors.pk)) == 3
    (recommendation,) = reads.recommendations(user=clinician, experiment_id=cheap_errors.pk)
    assert recommendation.learner_index == 0 and recommendation.beats_nothing is False
    assert recommendation.nothing_cost < recommendation.mean_total_cost
    with pytest.raises(ValidationError) as refused:
        deploy_recommended(user=model_admin, experiment=cheap_errors, matrix_index=0)
    assert "ordering no test at all costs" in refused.value.messages[0]
    with pytest.raises(ValidationError, match="is a baseline"):
        deploy_recommended(user=model_admin, experiment=cheap_errors, learner_index=1)
    web = Client()
    web.force_login(model_admin)
    page = web.get(f"/experiments/{cheap_errors.pk}/").content.decode()
    assert 'id="deploy-refused"' in page and 'id="deploy-button"' not in page
    assert "What to do instead" in page
    answer = web.post(
        f"/experiments/{cheap_errors.pk}/", {"action": "deploy", "matrix_index": "0"}, follow=True
    )
    assert "Not deployed" in answer.content.decode()
    assert not TrainedModel.objects.exists()


def test_an_experiment_stored_before_the_baselines_still_renders(
    model_admin, clinician, toy_dataset
):
    """Stored results without baseline rows and with parameter-name labels: the page renders
    them in words, says why it cannot deploy, and Deploy asks for a re-run."""
    experiment = _run_all(
        create_experiment(
            user=model_admin,
            dataset=toy_dataset,
            learners=[{"key": "eg2", "params": {"min_samples_leaf": 10}}],
            matrix_kind="uniform",
            costs=[100],
            k=2,
            launch=False,
        )
    )
    # As an older version stored it: one learner, its label in parameter names, no baselines.
    experiment.tasks.exclude(learner_index=0).delete()
    results = experiment.results
    results["table"] = [r for r in results["table"] if r["learner_index"] == 0]
    results["significance"] = []
    for r in results["recommendations"]:
        r.pop("versus_nothing", None)
    Experiment.objects.filter(pk=experiment.pk).update(
        learners=[
            {
                "key": "eg2",
                "params": {"min_samples_leaf": 10.0},
                "label": "eg2 (min_samples_leaf=10)",
            }
        ],
        results=results,
        n_tasks=2,
        n_done=2,
    )
    web = Client()
    web.force_login(clinician)
    page = web.get(f"/experiments/{experiment.pk}/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "EG2, leaves of at least 10 patients" in text and "min_samples_leaf" not in text
    assert 'id="nothing-unknown"' in text
    experiment.refresh_from_db()
    with pytest.raises(ValidationError, match="Re-run it"):
        deploy_recommended(user=model_admin, experiment=experiment, matrix_index=0)
