"""The experiment pages (/experiments/): set-up form, progress, results, actions, exports."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnosis.bench.forms import split_values
from diagnosis.bench.models import Experiment, ExperimentTask
from diagnosis.bench.services import runner as experiment_runner
from diagnosis.bench.services.experiments import create_experiment
from diagnosis.training.models import TrainedModel

pytestmark = pytest.mark.django_db

TWO = [{"key": "eg2", "params": {}}, {"key": "c45", "params": {}}]


def _counts() -> tuple[int, int]:
    return Experiment.objects.count(), ExperimentTask.objects.count()


def _run_all(experiment: Experiment) -> Experiment:
    """Every lead task in this process, as a worker runs them (the engine's run_task)."""
    for pk in experiment.tasks.filter(lead__isnull=True).values_list("pk", flat=True):
        experiment_runner.run_task(task_id=pk, worker="test")
    experiment.refresh_from_db()
    return experiment


def _form(dataset, **changes) -> dict:
    data = {
        "name": "",
        "dataset": str(dataset.pk),
        "learners": ["eg2", "c45"],
        "matrix_kind": "uniform",
        "costs": "10, 100, 1000",
        "ratios": "",
        "ratio_base": "100",
        "positive_class": f"{dataset.pk}:1",
        "reject_cost": "",
        "error_matrix": "",
        "k": "3",
        "repeats": "1",
        "seed": "0",
    }
    data.update(changes)
    return data


@pytest.fixture
def finished(model_admin, toy_dataset):
    """A finished two-learner, two-cost experiment computed in-process."""
    experiment = create_experiment(
        user=model_admin,
        dataset=toy_dataset,
        learners=TWO,
        matrix_kind="uniform",
        costs=[10, 1000],
        k=3,
        launch=False,
        name="Toy bench",
    )
    experiment = _run_all(experiment)
    assert experiment.status == Experiment.DONE
    return experiment


def test_set_up_form_offers_every_registry_learner(client, model_admin, toy_dataset):
    """The form lists each learner with its parameter fields; clinicians may not set up."""
    from diagnosis.shared.learner_registry import LEARNERS

    client.force_login(model_admin)
    page = client.get(reverse("experiment-new"))
    assert page.status_code == 200
    text = page.content.decode()
    for key in LEARNERS:
        assert f'id="id_learner_{key}"' in text
    assert 'name="eg2__w"' in text and 'name="costs"' in text


def test_clinicians_read_but_do_not_set_up(client, clinician, finished):
    """A clinician opens the list and a result page but gets 403 on the set-up form, no buttons."""
    client.force_login(clinician)
    assert client.get(reverse("experiment-new")).status_code == 403
    listing = client.get(reverse("experiment-list"))
    assert b"Toy bench" in listing.content and b"Set up an experiment" not in listing.content
    detail = client.get(reverse("experiment-detail", args=[finished.pk]))
    assert detail.status_code == 200
    assert b"deploy-button" not in detail.content and b"rerun-experiment" not in detail.content
    refused = client.post(reverse("experiment-detail", args=[finished.pk]), {"action": "rerun"})
    assert refused.status_code == 403
    assert Experiment.objects.count() == 1


def test_a_valid_set_up_creates_the_experiment_and_shows_its_progress(
    client, model_admin, toy_dataset
):
    """Two learners and the two baselines, three uniform costs, k = 3: 36 tasks; the page shows
    the progress bar."""
    client.force_login(model_admin)
    response = client.post(reverse("experiment-new"), _form(toy_dataset, name="Three costs"))
    experiment = Experiment.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("experiment-detail", args=[experiment.pk])
    assert [e["key"] for e in experiment.learners] == [
        "eg2",
        "c45",
        "order_nothing",
        "order_everything",
    ]
    assert [m["x"] for m in experiment.matrices] == [10.0, 100.0, 1000.0]
    assert experiment.n_tasks == ExperimentTask.objects.count() == (2 + 2) * 3 * 3
    page = client.get(response["Location"])
    text = page.content.decode()
    assert 'id="experiment-progress"' in text and "0 of 36 tasks done" in text
    assert 'id="cancel-experiment"' in text
    progress = client.get(reverse("experiment-progress", args=[experiment.pk])).json()
    assert progress["n_tasks"] == 36 and progress["finished"] is False


def test_listed_values_make_one_learner_each(client, model_admin, toy_dataset):
    """EG2 with w "0.25, 1" becomes two learners of the experiment."""
    client.force_login(model_admin)
    client.post(
        reverse("experiment-new"),
        _form(toy_dataset, learners=["eg2"], **{"eg2__w": "0.25, 1"}),
    )
    experiment = Experiment.objects.get()
    assert [e["params"]["w"] for e in experiment.learners[:2]] == [0.25, 1.0]
    assert [e["label"] for e in experiment.learners[:2]] == ["EG2, cost weight 0.25", "EG2"]


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"learners": []}, "Choose at least one learner."),
        ({"k": "1"}, "k must be at least 2"),
        ({"k": "200"}, "smallest class"),
        ({"costs": ""}, "Enter at least one error cost"),
        ({"costs": "10, ten"}, "is not a number"),
        ({"matrix_kind": "ratio", "ratios": " "}, "at least one FP/FN ratio"),
        ({"learners": ["eg2"], "eg2__w": "-1"}, "at least 0"),
        ({"learners": ["eg2"], "eg2__w": "0.5, 0.5"}, "lists a value twice"),
        ({"matrix_kind": "matrix", "error_matrix": ""}, "Choose an error matrix."),
        ({"k": "three"}, "Enter a whole number."),
    ],
)
def test_bad_input_is_refused_on_the_page_with_nothing_saved(
    client, model_admin, toy_dataset, changes, words
):
    """Each bad setting answers 400 with the engine's or the form's message; nothing saved."""
    client.force_login(model_admin)
    before = _counts()
    response = client.post(reverse("experiment-new"), _form(toy_dataset, **changes))
    assert response.status_code == 400
    text = response.content.decode()
    assert "Nothing was saved." in text
    assert words in text, text[text.find("form-errors") :][:3000]
    assert _counts() == before


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    costs=st.text(max_size=40),
    k=st.text(max_size=6),
    w=st.text(max_size=12),
)
def test_any_typed_text_is_answered_without_a_server_error(
    client, model_admin, toy_dataset, costs, k, w
):
    """Whatever is typed in the sweep, k and a parameter: 302 (saved) or 400 (nothing saved)."""
    client.force_login(model_admin)
    before = _counts()
    response = client.post(
        reverse("experiment-new"),
        _form(toy_dataset, costs=costs, k=k, learners=["eg2"], **{"eg2__w": w}),
    )
    assert response.status_code in (302, 400)
    if response.status_code == 400:
        assert _counts() == before
    else:
        assert Experiment.objects.count() == before[0] + 1


@given(st.lists(st.decimals(min_value=0, max_value=10**6, places=3).map(str), max_size=8))
def test_split_values_reads_any_list_of_numbers(values):
    """Values joined by commas, semicolons or spaces come back as typed, in order."""
    for sep in (", ", ";", " ", ",\n"):
        assert split_values(sep.join(values)) == values


def test_results_page_shows_table_charts_significance_and_deploy(client, model_admin, finished):
    """A finished experiment: a results table per cost, the charts' data, pairwise tests, deploy."""
    client.force_login(model_admin)
    page = client.get(reverse("experiment-detail", args=[finished.pk]))
    text = page.content.decode()
    assert text.count('class="results-table"') == 2
    for chart in ("fig-normalized-cost", "fig-accuracy", "fig-roc", "fig-tests-paid"):
        assert f'id="{chart}"' in text  # the json_script holding the Plotly figure
    assert 'id="significance"' in text and 'EG2 <span class="muted">vs</span> C4.5' in text
    assert 'C4.5 <span class="muted">vs</span> Order nothing (no test)' in text
    assert 'id="recommendation"' in text
    assert "cheapest" in text
    # Deploy is offered only where the recommendation beats ordering nothing (issue 27).
    beats = [r["versus_nothing"]["cheaper"] for r in finished.results["recommendations"]]
    assert beats[1]  # at uniform 1000 the tree pays for its tests
    assert ('id="deploy-button"' in text) == beats[0]
    assert ('id="deploy-refused"' in text) == (not beats[0])
    # The second matrix's recommendation is one choice away.
    other = client.get(reverse("experiment-detail", args=[finished.pk]) + "?matrix=1")
    assert 'name="matrix_index" value="1"' in other.content.decode()
    assert 'id="deploy-button"' in other.content.decode()
    assert "uniform 1000" in other.content.decode()


def test_exports_are_files_with_every_task(client, clinician, finished):
    """CSV: one row per task with a header; JSON: settings, tasks and results."""
    client.force_login(clinician)
    response = client.get(reverse("experiment-export-csv", args=[finished.pk]))
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == finished.n_tasks
    assert {r["learner"] for r in rows} == {
        "EG2",
        "C4.5",
        "Order nothing (no test)",
        "Order every test, then a C4.5 tree",
    }
    data = json.loads(
        client.get(reverse("experiment-export-json", args=[finished.pk])).content.decode()
    )
    assert data["id"] == finished.pk and len(data["tasks"]) == finished.n_tasks
    assert data["results"]["table"]


def test_deploy_trains_the_recommended_learner_on_all_data(client, model_admin, finished):
    """One click queues a training of the recommended learner and opens its model page."""
    client.force_login(model_admin)
    response = client.post(
        reverse("experiment-detail", args=[finished.pk]), {"action": "deploy", "matrix_index": "1"}
    )
    trained = TrainedModel.objects.get()
    assert response["Location"] == reverse("model-detail", args=[trained.pk])
    recommended = finished.results["recommendations"][1]["learner_index"]
    assert trained.learner == finished.learners[recommended]["key"]
    assert trained.matrix_snapshot == finished.matrices[1]["matrix"]


def test_cancel_resume_and_rerun_from_the_page(client, model_admin, toy_dataset, finished):
    """Cancel stops a queued experiment, Resume queues it again, Re-run makes a new one."""
    client.force_login(model_admin)
    queued = create_experiment(
        user=model_admin,
        dataset=toy_dataset,
        learners=TWO,
        matrix_kind="uniform",
        costs=[10],
        k=2,
        launch=False,
    )
    url = reverse("experiment-detail", args=[queued.pk])
    client.post(url, {"action": "cancel"})
    queued.refresh_from_db()
    assert queued.status == Experiment.CANCELLED
    page = client.get(url).content.decode()
    assert 'id="resume-experiment"' in page and "Cancelled." in page
    client.post(url, {"action": "resume"})
    queued.refresh_from_db()
    assert queued.status in (Experiment.QUEUED, Experiment.RUNNING)
    # Cancelling twice is said, not a crash.
    client.post(url, {"action": "cancel"})
    again = client.post(url, {"action": "cancel"}, follow=True)
    assert b"can be cancelled" in again.content
    response = client.post(reverse("experiment-detail", args=[finished.pk]), {"action": "rerun"})
    copy = Experiment.objects.latest("pk")
    assert copy.parent_id == finished.pk
    assert response["Location"] == reverse("experiment-detail", args=[copy.pk])
    assert client.post(url, {"action": "explode"}).status_code == 400


def test_clone_with_changes_starts_from_the_saved_settings(client, model_admin, finished):
    """?from= fills the form with the experiment's settings; the posted copy keeps its parent."""
    client.force_login(model_admin)
    url = reverse("experiment-new") + f"?from={finished.pk}"
    page = client.get(url).content.decode()
    assert 'value="10, 1000"' in page
    assert 'id="id_learner_eg2" checked' in page and 'id="id_learner_c45" checked' in page
    response = client.post(url, _form(finished.dataset, costs="10, 1000, 5000", name="Wider"))
    copy = Experiment.objects.get(name="Wider")
    assert response.status_code == 302
    assert copy.parent_id == finished.pk and len(copy.matrices) == 3
    assert client.get(reverse("experiment-new") + "?from=999999").status_code == 404


def test_research_page_lists_saved_experiments(client, clinician, finished):
    """The research page's experiments section links each saved experiment."""
    client.force_login(clinician)
    page = client.get(reverse("research")).content.decode()
    assert 'id="research-experiments"' in page
    assert reverse("experiment-detail", args=[finished.pk]) in page


def test_a_missing_experiment_is_404_everywhere(client, model_admin):
    """The page, its progress and its exports answer 404 for an unknown id."""
    client.force_login(model_admin)
    for name in (
        "experiment-detail",
        "experiment-progress",
        "experiment-export-csv",
        "experiment-export-json",
    ):
        assert client.get(reverse(name, args=[424242])).status_code == 404


def test_a_ratio_sweep_with_its_positive_class(client, model_admin, toy_dataset, make_toy_dataset):
    """FP/FN ratios: one matrix per ratio, the chosen positive class's misses cost the base."""
    client.force_login(model_admin)
    response = client.post(
        reverse("experiment-new"),
        _form(
            toy_dataset,
            matrix_kind="ratio",
            ratios="0.5; 2",
            ratio_base="200",
            positive_class=f"{toy_dataset.pk}:0",
        ),
    )
    assert response.status_code == 302
    experiment = Experiment.objects.get()
    assert [m["x"] for m in experiment.matrices] == [0.5, 2.0]
    # positive class 0: a missed 0 (actual 0, concluded 1) costs the base, a false alarm 0.5x.
    assert experiment.matrices[0]["matrix"] == [[0.0, 200.0], [100.0, 0.0]]
    elsewhere = make_toy_dataset("Other toy")  # a class of another dataset is refused
    other = client.post(
        reverse("experiment-new"),
        _form(toy_dataset, matrix_kind="ratio", ratios="1", positive_class=f"{elsewhere.pk}:1"),
    )
    assert other.status_code == 400
    assert b"Choose a class of Toy diabetes as the positive class." in other.content
    assert Experiment.objects.count() == 1


def test_one_matrix_draws_bars(client, model_admin, toy_dataset):
    """A single error matrix: the experiment uses it; the chart is bars, one per learner."""
    client.force_login(model_admin)
    matrix = toy_dataset.error_matrices.get(name="Refer at 30")
    client.post(
        reverse("experiment-new"),
        _form(toy_dataset, matrix_kind="matrix", error_matrix=str(matrix.pk), k="2"),
    )
    experiment = _run_all(Experiment.objects.get())
    assert experiment.matrices[0]["label"] == "Refer at 30"
    page = client.get(reverse("experiment-detail", args=[experiment.pk])).content.decode()
    start = page.index('id="fig-normalized-cost"')
    figure = json.loads(page[page.index(">", start) + 1 : page.index("</script>", start)])
    assert figure["data"][0]["type"] == "bar"
    assert figure["data"][0]["x"] == [
        "EG2",
        "C4.5",
        "Order nothing (no test)",
        "Order every test, then a C4.5 tree",
    ]
    assert "Referred" in page  # a referral price: the referral rate is a column


def test_budget_and_anytime_learners_get_their_curves(client, model_admin, toy_dataset):
    """Listed budgets make a budget curve; ACT's rounds make the anytime chart."""
    experiment = create_experiment(
        user=model_admin,
        dataset=toy_dataset,
        learners=[
            {"key": "budget_rf", "params": {"budget": 12, "max_trees": 3}},
            {"key": "budget_rf", "params": {"budget": 30, "max_trees": 3}},
            {"key": "act", "params": {"r": 2}},
        ],
        matrix_kind="uniform",
        costs=[100],
        k=2,
        launch=False,
    )
    experiment = _run_all(experiment)
    assert experiment.status == Experiment.DONE, experiment.status_reason
    client.force_login(model_admin)
    page = client.get(reverse("experiment-detail", args=[experiment.pk])).content.decode()
    assert 'id="fig-budget"' in page and 'id="fig-anytime"' in page
    start = page.index('id="fig-budget"')
    figure = json.loads(page[page.index(">", start) + 1 : page.index("</script>", start)])
    assert figure["data"][0]["x"] == [12, 30]


def test_roc_is_drawn_as_steps_or_as_a_mean_with_its_band():
    """Pooled ROC points draw as steps; a fold-averaged ROC (with spread) gets a shaded band."""
    from types import SimpleNamespace

    from diagnosis.bench.figures import _figures
    from diagnosis.bench.selectors.experiments import Charts, Series

    detail = SimpleNamespace(matrices=[{"index": 0, "label": "uniform 100", "x": 100.0}])
    pooled = Charts(
        x_title="Error cost",
        log_x=False,
        roc=[Series(name="eg2", x=[0, 0.5, 1], y=[0, 0.8, 1], learner_index=0)],
    )
    card = next(f for f in _figures(detail, pooled, 0) if f["id"] == "fig-roc")
    roc = card["figure"]
    assert roc["data"][0]["line"]["shape"] == "hv" and "error_y" not in roc["data"][0]
    assert "every fold's curve" in card["caption"]
    averaged = Charts(
        x_title="Error cost",
        log_x=False,
        roc=[Series(name="eg2", x=[0, 0.5, 1], y=[0, 0.8, 1], error=[0, 0.3, 0], learner_index=0)],
    )
    card = next(f for f in _figures(detail, averaged, 0) if f["id"] == "fig-roc")
    roc = card["figure"]
    assert "vertical averaging" in card["caption"]
    low, high, mean = roc["data"][:3]
    assert low["y"] == [0, 0.5, 1] and high["y"] == [0, 1.0, 1] and high["fill"] == "tonexty"
    assert mean["name"] == "eg2" and "error_y" not in mean


def test_compare_experiments_across_datasets(
    client, clinician, model_admin, finished, make_toy_dataset
):
    """Two finished experiments on two datasets: a Wilcoxon row per learner pair and cost."""
    other = _run_all(
        create_experiment(
            user=model_admin,
            dataset=make_toy_dataset("Toy two", n_rows=90),
            learners=TWO,
            matrix_kind="uniform",
            costs=[10, 1000],
            k=3,
            launch=False,
        )
    )
    client.force_login(clinician)
    listing = client.get(reverse("experiment-list")).content.decode()
    assert f'id="compare-{finished.pk}"' in listing and 'id="compare-experiments"' in listing
    url = reverse("experiment-compare")
    page = client.get(url, {"ids": [finished.pk, other.pk]})
    assert page.status_code == 200
    text = page.content.decode()
    # every pair of the 2 learners and 2 baselines (6) per cost: uniform 10, uniform 1000
    assert text.count("<tr>") - 1 == 6 * 2
    assert "Wilcoxon signed-rank" in text and "Toy diabetes, Toy two" in text
    for bad, words in (
        ({"ids": [finished.pk]}, "Tick at least two experiments"),
        ({"ids": [finished.pk, 987654]}, "There is no experiment 987654."),
        ({"ids": [finished.pk, "x"]}, "is not an experiment number"),
    ):
        refused = client.get(url, bad)
        assert refused.status_code == 400 and words in refused.content.decode()


def test_deploy_is_refused_with_the_reason_when_prices_changed(client, model_admin, finished):
    """A price edited since the experiment: Deploy says why on the page and trains nothing."""
    test = finished.dataset.tests.get(name="glucose")
    test.price += 5
    test.save()
    client.force_login(model_admin)
    url = reverse("experiment-detail", args=[finished.pk])
    page = client.post(url, {"action": "deploy", "matrix_index": "0"}, follow=True)
    assert page.redirect_chain[-1][0] == url
    assert "prices changed since this experiment ran" in page.content.decode()
    assert not TrainedModel.objects.exists()


def test_deploy_of_an_experiment_saved_before_generated_marks_existed(
    client, model_admin, finished
):
    """An older snapshot without the "generated" key is not taken for a price change."""
    snapshot = dict(finished.cost_snapshot)
    assert "generated" in snapshot  # the key a newer snapshot carries
    del snapshot["generated"]
    type(finished).objects.filter(pk=finished.pk).update(cost_snapshot=snapshot)
    client.force_login(model_admin)
    url = reverse("experiment-detail", args=[finished.pk])
    # uniform 1000: the recommended learner beats ordering nothing there (at uniform 10 no
    # test pays for itself, and deploying is refused for that reason instead)
    assert finished.results["recommendations"][1]["versus_nothing"]["cheaper"]
    page = client.post(url, {"action": "deploy", "matrix_index": "1"}, follow=True)
    assert "prices changed since this experiment ran" not in page.content.decode()
    assert TrainedModel.objects.filter(dataset=finished.dataset).count() == 1
