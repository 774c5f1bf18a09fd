"""Experiments in-process: validation, running tasks, idempotency, results, permissions, exports."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError

from diagnosis.bench.models import Experiment, ExperimentTask
from diagnosis.bench.selectors import experiments as reads
from diagnosis.bench.services import runner as experiment_runner
from diagnosis.bench.services.experiments import (
    cancel_experiment,
    clone_experiment,
    create_experiment,
    deploy_recommended,
    rerun_experiment,
    resume_experiment,
)
from diagnosis.catalog.selectors.datasets import dataset_arrays
from learners.significance import paired_t_test

pytestmark = pytest.mark.django_db

TWO = [{"key": "eg2", "params": {}}, {"key": "c45", "params": {}}]


def _counts() -> tuple[int, int]:
    return Experiment.objects.count(), ExperimentTask.objects.count()


def _run_all(experiment: Experiment) -> Experiment:
    """Every lead task, in this process, as a worker would run them."""
    for pk in experiment.tasks.filter(lead__isnull=True).values_list("pk", flat=True):
        experiment_runner.run_task(task_id=pk, worker="test")
    experiment.refresh_from_db()
    return experiment


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"learners": []}, "learners", "at least one learner"),
        ({"k": 1}, "k", "at least 2"),
        ({"k": 200}, "k", "smallest class"),
        ({"matrix_kind": "uniform", "costs": []}, "matrices", "at least one error cost"),
        ({"matrix_kind": "ratio", "ratios": []}, "matrices", "at least one FP/FN ratio"),
        ({"learners": [{"key": "nope", "params": {}}]}, "learners", "Unknown learner"),
        ({"learners": [{"key": "eg2", "params": {"bogus": 1}}]}, "learners", "no parameter"),
        ({"learners": [{"key": "eg2", "params": {"w": -1}}]}, "learners", "at least 0"),
        ({"matrix_kind": "uniform", "costs": [-3]}, "matrices", "positive"),
        ({"repeats": 0}, "repeats", "at least 1"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message_and_nothing_saved(
    model_admin, toy_dataset, changes, field, words
):
    """Each bad setting raises ValidationError naming the field; no experiment or task is saved."""
    arguments = {
        "user": model_admin,
        "dataset": toy_dataset,
        "learners": TWO,
        "matrix_kind": "uniform",
        "costs": [50, 100],
        "k": 3,
        "launch": False,
    }
    arguments.update(changes)
    before = _counts()
    with pytest.raises(ValidationError) as caught:
        create_experiment(**arguments)
    messages = caught.value.message_dict
    assert field in messages, messages
    assert any(words in m for m in messages[field]), messages
    assert _counts() == before


def test_several_problems_are_reported_together(model_admin, toy_dataset):
    """Zero learners, k = 1 and an empty sweep at once: all three are said, nothing saved."""
    before = _counts()
    with pytest.raises(ValidationError) as caught:
        create_experiment(
            user=model_admin,
            dataset=toy_dataset,
            learners=[],
            matrix_kind="uniform",
            costs=[],
            k=1,
            launch=False,
        )
    assert {"learners", "k", "matrices"} <= set(caught.value.message_dict)
    assert _counts() == before


def test_only_model_admins_create_and_clinicians_read(model_admin, clinician, toy_dataset):
    """A clinician may not create (PermissionDenied) but may read; a plain user may not read."""
    with pytest.raises(PermissionDenied):
        create_experiment(
            user=clinician, dataset=toy_dataset, learners=TWO, matrix_kind="uniform", costs=[1]
        )
    experiment = create_experiment(
        user=model_admin,
        dataset=toy_dataset,
        learners=TWO,
        matrix_kind="uniform",
        costs=[100],
        k=2,
        launch=False,
    )
    detail = reads.experiment_detail(user=clinician, experiment_id=experiment.pk)
    assert detail.k == 2 and not detail.can_cancel  # a clinician reads but may not act
    assert detail.class_labels == ["healthy", "disease"]
    # Tests by the names clinicians read, never by their column codes (issue 27).
    assert detail.test_names == ["Glucose", "Insulin", "Sex"]
    assert reads.experiment_detail(user=model_admin, experiment_id=experiment.pk).can_cancel
    nobody = User.objects.create_user("nobody", password="x")
    with pytest.raises(PermissionDenied):
        reads.list_experiments(user=nobody)
    with pytest.raises(PermissionDenied):
        cancel_experiment(user=clinician, experiment=experiment)


def test_an_experiment_runs_over_the_same_folds_with_the_clinicians_evaluate(
    model_admin, clinician, toy_dataset
):
    """Tasks fill one row each; the figures equal learners.cross_validate on make_folds' folds."""
    from diagnosis.shared import learner_registry
    from learners.evaluation import cross_validate, make_folds

    experiment = create_experiment(
        user=model_admin,
        dataset=toy_dataset,
        learners=TWO,
        matrix_kind="matrix",
        error_matrix=toy_dataset.error_matrices.get(name="Uniform 100"),
        k=3,
        repeats=2,
        seed=7,
        launch=False,
    )
    assert experiment.n_tasks == (2 + 2) * 2 * 3 * 1  # two learners and the two baselines
    experiment = _run_all(experiment)
    assert experiment.status == Experiment.DONE, experiment.status_reason
    assert experiment.n_done == experiment.n_tasks
    X, y, categorical = dataset_arrays(toy_dataset)
    cost_model = experiment.snapshot.prices
    matrix = experiment.matrices[0]
    from learners.baselines import OrderNothing

    assert [e["key"] for e in experiment.learners[2:]] == ["order_nothing", "order_everything"]
    for li, entry in enumerate(experiment.learners[:3]):
        for repeat in range(2):
            if entry["key"] == "order_nothing":  # the baseline row, on the same folds
                estimator = OrderNothing(
                    test_costs=cost_model,
                    cost_matrix=np.asarray(matrix["matrix"]),
                    reject_cost=matrix["reject_cost"],
                )
            else:
                estimator = learner_registry.build_estimator(
                    entry["key"],
                    entry["params"],
                    cost_model=cost_model,
                    cost_matrix=matrix["matrix"],
                    reject_cost=matrix["reject_cost"],
                    categorical_features=categorical,
                    random_state=7 + repeat,
                )
            folds = make_folds(y, n_splits=3, random_state=7 + repeat)
            expected = cross_validate(
                estimator,
                X,
                y,
                folds=folds,
                test_costs=cost_model,
                cost_matrix=np.asarray(matrix["matrix"]),
                reject_cost=matrix["reject_cost"],
            )
            rows = experiment.tasks.filter(learner_index=li, repeat=repeat).order_by("fold")
            got = [r.normalized_cost for r in rows]
            want = [f.normalized_cost for f in expected.folds]
            assert got == pytest.approx(want)
            assert [r.n_cases for r in rows] == [len(test) for _, test in folds]
    table = reads.results_table(user=clinician, experiment_id=experiment.pk)
    assert len(table) == 4 and [r.baseline for r in table] == [False, False, True, True]
    eg2 = experiment.tasks.filter(learner_index=0).values_list("normalized_cost", flat=True)
    assert table[0].normalized_cost.mean == pytest.approx(np.mean(list(eg2)))
    assert table[0].normalized_cost.std == pytest.approx(np.std(list(eg2), ddof=1))
    comparisons = reads.significance(user=clinician, experiment_id=experiment.pk)
    assert len(comparisons) == 6  # every pair of the four rows, baselines included
    (comparison,) = [c for c in comparisons if (c.a_index, c.b_index) == (0, 1)]
    # over 3-fold CV the test is corrected for training sets that share half their cases
    by_learner = [
        experiment.tasks.filter(learner_index=li).order_by("repeat", "fold") for li in (0, 1)
    ]
    expected_test = paired_t_test(
        *[[r.normalized_cost for r in rows] for rows in by_learner], test_train_ratio=1 / 2
    )
    assert comparison.result.n == 6 and comparison.result.test == "corrected paired t-test"
    assert comparison.result.p_value == pytest.approx(expected_test.p_value)
    (recommendation,) = reads.recommendations(user=clinician, experiment_id=experiment.pk)
    assert recommendation.learner_index in (0, 1) and recommendation.sentence
    nothing = np.mean(experiment.tasks.filter(learner_index=2).values_list("mean_total_cost"))
    assert recommendation.nothing_cost == pytest.approx(nothing)
    assert recommendation.beats_nothing == (recommendation.mean_total_cost < nothing)


def test_a_task_run_twice_is_computed_once(model_admin, toy_dataset):
    """A redelivered task (run_task again on a done row) is skipped and its row unchanged."""
    experiment = create_experiment(
        user=model_admin,
        dataset=toy_dataset,
        learners=TWO[:1],
        matrix_kind="uniform",
        costs=[100],
        k=2,
        launch=False,
    )
    task = experiment.tasks.order_by("pk").first()
    assert experiment_runner.run_task(task_id=task.pk, worker="first") == "done"
    task.refresh_from_db()
    before = (task.finished_at, task.fit_seconds, task.attempts, task.claimed_by)
    assert experiment_runner.run_task(task_id=task.pk, worker="second") == "skipped"
    task.refresh_from_db()
    assert (task.finished_at, task.fit_seconds, task.attempts, task.claimed_by) == before


def test_plain_boosting_fits_once_per_fold_for_every_matrix(model_admin, toy_dataset):
    """Plain Boosting's matrices follow one lead task per fold; Cost-Boosting trains per matrix."""
    experiment = create_experiment(
        user=model_admin,
        dataset=toy_dataset,
        learners=[
            {"key": "boosting", "params": {"n_trials": 3}},
            {"key": "boosting", "params": {"n_trials": 3, "cost_sensitive": True}},
        ],
        matrix_kind="uniform",
        costs=[10, 100, 1000],
        k=2,
        launch=False,
    )
    plain = experiment.tasks.filter(learner_index=0)
    assert plain.filter(lead__isnull=True).count() == 2
    assert plain.filter(lead__isnull=False).count() == 4
    assert experiment.tasks.filter(learner_index=1, lead__isnull=False).count() == 0
    experiment = _run_all(experiment)
    assert experiment.status == Experiment.DONE, experiment.status_reason
    for fold in range(2):
        seconds = set(plain.filter(fold=fold).values_list("fit_seconds", flat=True))
        assert len(seconds) == 1  # one fit served the three matrices


def test_cancel_resume_rerun_clone_and_exports(model_admin, clinician, toy_dataset):
    """Cancel keeps finished rows; resume computes only the rest; re-run and clone make new ones."""
    experiment = create_experiment(
        user=model_admin,
        dataset=toy_dataset,
        learners=TWO,
        matrix_kind="uniform",
        costs=[50, 500],
        k=2,
        launch=False,
    )
    first = experiment.tasks.order_by("pk").first()
    experiment_runner.run_task(task_id=first.pk, worker="w")
    experiment = cancel_experiment(user=model_admin, experiment=experiment)
    assert experiment.status == Experiment.CANCELLED and "Cancelled by" in experiment.status_reason
    # two learners and the two baselines x 2 costs x 2 folds, one task done
    assert experiment.tasks.filter(status=ExperimentTask.CANCELLED).count() == 15
    first.refresh_from_db()
    finished = first.finished_at
    assert experiment_runner.run_task(task_id=experiment.tasks.order_by("pk")[1].pk) == "skipped"
    experiment = resume_experiment(user=model_admin, experiment=experiment)
    assert experiment.tasks.filter(status=ExperimentTask.PENDING).count() == 15
    experiment = _run_all(experiment)
    assert experiment.status == Experiment.DONE
    first.refresh_from_db()
    assert first.finished_at == finished  # not computed again
    charts = reads.chart_series(user=clinician, experiment_id=experiment.pk)
    assert [s.x for s in charts.normalized_cost] == [[50.0, 500.0]] * 4
    assert charts.roc and charts.tests_paid
    for series in charts.roc:  # the folds' mean curve rises and runs from (0, *) to (1, 1)
        assert series.x[0] == 0.0 and series.x[-1] == 1.0 and series.y[-1] == pytest.approx(1.0)
        assert np.all(np.diff(series.y) >= -1e-12) and len(series.error) == len(series.x)
    text = reads.export_csv(user=clinician, experiment_id=experiment.pk)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 16 and {r["status"] for r in rows} == {"done"}
    document = reads.export_json(user=clinician, experiment_id=experiment.pk)
    assert json.loads(json.dumps(document))["results"]["table"]
    again = rerun_experiment(user=model_admin, experiment=experiment)
    assert again.parent_id == experiment.pk and again.cost_snapshot == experiment.cost_snapshot
    assert again.n_tasks == 16
    clone = clone_experiment(user=model_admin, experiment=experiment, k=3, launch=False)
    assert clone.k == 3 and clone.n_tasks == 24 and clone.matrices == experiment.matrices
    assert [e["key"] for e in clone.learners] == [e["key"] for e in experiment.learners]
    trained = deploy_recommended(user=model_admin, experiment=experiment, matrix_index=1)
    chosen = experiment.results["recommendations"][1]["learner_index"]
    assert trained.learner == experiment.learners[chosen]["key"]
    assert trained.matrix_snapshot == experiment.matrices[1]["matrix"]


def test_a_task_whose_worker_died_is_queued_again_then_given_up_with_a_reason(
    model_admin, clinician, toy_dataset
):
    """The sweep re-queues a task whose worker stopped beating, and after the last attempt fails
    it: the experiment ends "failed" saying which task and why, with the other results kept."""
    from datetime import timedelta

    from django.utils import timezone

    experiment = create_experiment(
        user=model_admin,
        dataset=toy_dataset,
        learners=TWO[:1],
        matrix_kind="uniform",
        costs=[100],
        k=2,
        launch=False,
    )
    lost, finished = experiment.tasks.filter(learner_index=0).order_by("pk")
    assert experiment_runner.run_task(task_id=finished.pk, worker="alive") == "done"
    for baseline in experiment.tasks.exclude(learner_index=0):
        assert experiment_runner.run_task(task_id=baseline.pk, worker="alive") == "done"
    long_ago = timezone.now() - timedelta(minutes=10)

    def dies(attempts: int) -> None:
        ExperimentTask.objects.filter(pk=lost.pk).update(
            status=ExperimentTask.RUNNING,
            attempts=attempts,
            heartbeat_at=long_ago,
            claimed_by="gone@host",
        )
        Experiment.objects.filter(pk=experiment.pk).update(
            status=Experiment.RUNNING, last_activity_at=long_ago
        )

    dies(1)
    progress = reads.experiment_progress(user=clinician, experiment_id=experiment.pk)
    assert progress.stalled and "gone@host" in progress.message
    recovered = experiment_runner.recover_experiments(
        stale_seconds=60, resend_after_seconds=60, max_attempts=2
    )
    assert (recovered.requeued, recovered.failed) == (1, 0)
    lost.refresh_from_db()
    assert lost.status == ExperimentTask.PENDING and "attempt 2 of 2" in lost.error
    dies(2)
    recovered = experiment_runner.recover_experiments(
        stale_seconds=60, resend_after_seconds=60, max_attempts=2
    )
    assert recovered.failed == 1
    experiment.refresh_from_db()
    assert experiment.status == Experiment.FAILED
    assert "1 of 6 tasks failed" in experiment.status_reason
    assert "Started 2 times" in experiment.status_reason
    (row,) = [
        r
        for r in reads.results_table(user=clinician, experiment_id=experiment.pk)
        if r.learner_index == 0
    ]
    assert row.n == 1 and row.normalized_cost.mean == pytest.approx(
        ExperimentTask.objects.get(pk=finished.pk).normalized_cost
    )


def test_ratio_sweep_matrices_and_its_refusal_without_two_classes(model_admin, toy_dataset):
    """FP/FN ratios price a false alarm at ratio x base and a miss at base; 3 classes refused."""
    experiment = create_experiment(
        user=model_admin,
        dataset=toy_dataset,
        learners=TWO[:1],
        matrix_kind="ratio",
        ratios=[0.5, 4],
        ratio_base=100,
        positive_class=1,
        k=2,
        launch=False,
    )
    assert [m["matrix"] for m in experiment.matrices] == [
        [[0.0, 50.0], [100.0, 0.0]],
        [[0.0, 400.0], [100.0, 0.0]],
    ]
    assert [m["x"] for m in experiment.matrices] == [0.5, 4.0]
    from diagnosis.catalog.services.datasets import create_dataset

    rows = [[float(i), float(i % 7), float(i % 2)] for i in range(30)]
    three = create_dataset(
        name="Three classes",
        class_labels=["a", "b", "c"],
        tests=[{"name": n, "price": 1.0, "discounted_price": 1.0} for n in ("p", "q", "r")],
        rows=rows,
        labels=[i % 3 for i in range(30)],
    )
    before = _counts()
    with pytest.raises(ValidationError) as caught:
        create_experiment(
            user=model_admin,
            dataset=three,
            learners=TWO[:1],
            matrix_kind="ratio",
            ratios=[1],
            k=2,
        )
    assert "needs two classes" in " ".join(caught.value.message_dict["matrices"])
    assert _counts() == before


def test_anytime_and_budget_curves_come_from_the_tasks(model_admin, clinician, toy_dataset):
    """ACT records one point per round r = 1, 2; two budgets of BudgetRF give a budget curve."""
    experiment = create_experiment(
        user=model_admin,
        dataset=toy_dataset,
        learners=[
            {"key": "act", "params": {"r": 2}},
            {"key": "budget_rf", "params": {"budget": 5, "max_trees": 5}},
            {"key": "budget_rf", "params": {"budget": 20, "max_trees": 5}},
        ],
        matrix_kind="uniform",
        costs=[100],
        k=2,
        launch=False,
    )
    experiment = _run_all(experiment)
    assert experiment.status == Experiment.DONE, experiment.status_reason
    act_rows = experiment.tasks.filter(learner_index=0)
    assert all([p["r"] for p in t.anytime] == [1, 2] for t in act_rows)
    final = [t.anytime[-1]["normalized_cost"] for t in act_rows]
    assert final == pytest.approx([t.normalized_cost for t in act_rows])
    charts = reads.chart_series(user=clinician, experiment_id=experiment.pk)
    (anytime,) = charts.anytime
    assert anytime.learner_index == 0 and len(anytime.x) == 2
    assert [s.x for s in charts.budget] == [[5, 20], [5, 20]]
    spent = [
        np.mean(experiment.tasks.filter(learner_index=li).values_list("mean_test_cost", flat=True))
        for li in (1, 2)
    ]
    assert charts.budget[-1].y == pytest.approx(spent)


def test_wilcoxon_across_datasets_matches_scipy(model_admin, clinician, make_toy_dataset):
    """One mean normalized cost per dataset and learner; the test is scipy.stats.wilcoxon's."""
    from scipy import stats

    experiments = []
    for n, name in enumerate(("Toy A", "Toy B", "Toy C")):
        dataset = make_toy_dataset(name, n_rows=60 + 30 * n)
        experiments.append(
            _run_all(
                create_experiment(
                    user=model_admin,
                    dataset=dataset,
                    learners=[
                        {"key": "eg2", "params": {}},
                        # large leaves: cannot isolate the disease corner as well
                        {"key": "eg2", "params": {"min_samples_leaf": 20}},
                    ],
                    matrix_kind="uniform",
                    costs=[100],
                    k=2,
                    launch=False,
                )
            )
        )
    (comparison,) = [
        c
        for c in reads.cross_dataset_significance(
            user=clinician, experiment_ids=[e.pk for e in experiments]
        )
        if {c.learner_a, c.learner_b} == {"EG2", "EG2, leaves of at least 20 patients"}
    ]
    means = [
        [
            np.mean(e.tasks.filter(learner_index=li).values_list("normalized_cost", flat=True))
            for e in experiments
        ]
        for li in (0, 1)
    ]
    assert comparison.result.test == "Wilcoxon signed-rank" and comparison.result.n == 3
    assert comparison.result.mean_a == pytest.approx(np.mean(means[0]))
    assert np.count_nonzero(np.subtract(*means)) == 3  # the two learners differ everywhere
    reference = stats.wilcoxon(means[0], means[1])
    assert comparison.result.p_value == pytest.approx(reference.pvalue)
    assert comparison.result.statistic == pytest.approx(reference.statistic)


def test_roc_curves_are_averaged_vertically_by_hand():
    """Two folds' ROC curves read at common false-positive rates: worked by hand."""
    grid = np.array([0.0, 0.25, 0.5, 1.0])
    fold_a = {"fpr": [0.0, 0.0, 0.5, 1.0], "tpr": [0.0, 0.6, 0.8, 1.0]}
    fold_b = {"fpr": [0.0, 0.5, 0.5, 1.0], "tpr": [0.0, 0.2, 0.9, 1.0]}
    # a: vertical at 0 (top 0.6), then straight to (0.5, 0.8) and (1, 1)
    assert reads._roc_on_grid(fold_a, grid) == pytest.approx([0.6, 0.7, 0.8, 1.0])
    # b: straight to (0.5, 0.2), vertical there (top 0.9), then straight to (1, 1)
    assert reads._roc_on_grid(fold_b, grid) == pytest.approx([0.0, 0.1, 0.9, 1.0])
