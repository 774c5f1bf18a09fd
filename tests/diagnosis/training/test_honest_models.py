"""Honest models: the comparison with ordering nothing / everything, the warnings, the defaults."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse
from login_helpers import login_request
from training_helpers import approve

from diagnosis.catalog.selectors.costs import cost_model_for
from diagnosis.catalog.selectors.datasets import default_error_matrix
from diagnosis.clinic.services.cases import start_case
from diagnosis.training.forms import TrainForm
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors.models import (
    THIN_SHARE,
    THIN_SUPPORT,
    model_comparison,
    model_warnings,
)
from diagnosis.training.services.training import create_training, run_training
from learners.baselines import class_rates

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-123"  # the password tests/diagnosis/conftest.py gives every user


def _text(response) -> str:
    return re.sub(r"\s+", " ", html.unescape(response.content.decode()))


def _login(client, user):
    assert client.login(request=login_request(), username=user.username, password=PASSWORD)
    return client


@pytest.fixture
def degenerate_model(toy_dataset, model_admin):
    """DTMC under 0/1 loss: an error costs $1, less than any test, so it orders nothing;
    approved for clinicians with a reason (it is flagged)."""
    trained = create_training(
        user=model_admin, dataset=toy_dataset, learner="dtmc", params={}, error_matrix=None
    )
    result = run_training(trained_model_id=trained.pk)
    assert result.status == TrainedModel.SUCCEEDED, result.error
    return approve(result, model_admin)


def test_training_stores_both_strategies_on_the_same_held_out_cases(trained_model):
    """Order nothing pays no test; order everything pays every test's marginal price."""
    metrics = trained_model.metrics
    nothing, everything = (metrics["baselines"][k] for k in ("order_nothing", "order_everything"))
    assert nothing["n_test_cases"] == everything["n_test_cases"] == metrics["n_test_cases"]
    assert nothing["mean_test_cost"] == 0.0
    prices = cost_model_for(trained_model.dataset)
    done: set[int] = set()
    all_tests = 0.0
    for test in range(prices.n_features):  # index order, as the strategy orders them
        all_tests += prices.marginal_cost(test, frozenset(done))
        done.add(test)
    assert everything["mean_test_cost"] == pytest.approx(all_tests)
    # One conclusion for every patient: one column of its confusion matrix holds everyone.
    columns = [sum(col) for col in zip(*nothing["confusion"], strict=True)]
    assert sorted(columns)[-1] == nothing["n_test_cases"]
    assert nothing["conclusion"]["kind"] == "classify"
    assert columns[nothing["conclusion"]["label"]] == nothing["n_test_cases"]


def test_sensitivity_and_specificity_agree_with_the_confusion_matrix(trained_model):
    """The stored per-class rates are the ones of the stored confusion matrix."""
    metrics = trained_model.metrics
    rates = class_rates(metrics["confusion"])
    assert metrics["sensitivity"] == rates["sensitivity"]
    assert metrics["specificity"] == rates["specificity"]
    confusion = metrics["confusion"]
    assert metrics["sensitivity"][1] == pytest.approx(confusion[1][1] / sum(confusion[1]))


def test_comparison_rows_carry_the_stored_figures(trained_model, clinician):
    """The selector shows the model, order nothing and order everything, each measured."""
    comparison = model_comparison(user=clinician, trained_model=trained_model)
    rows = {row.key: row for row in comparison.rows}
    assert list(rows) == ["model", "order_nothing", "order_everything"]
    assert all(row.measured for row in rows.values())
    baselines = trained_model.metrics["baselines"]
    assert rows["order_nothing"].mean_total_cost == baselines["order_nothing"]["mean_total_cost"]
    assert rows["model"].accuracy == trained_model.metrics["accuracy"]
    label = trained_model.dataset.class_labels[baselines["order_nothing"]["conclusion"]["label"]]
    assert label in rows["order_nothing"].conclusion
    assert [r.label for r in rows["model"].rates] == trained_model.dataset.class_labels


def test_a_model_that_beats_ordering_nothing_gets_no_warning(trained_model, clinician):
    """The toy EG2 model needs its blood tests and is cheaper than ordering nothing."""
    metrics = trained_model.metrics
    assert metrics["mean_total_cost"] < metrics["baselines"]["order_nothing"]["mean_total_cost"]
    assert model_warnings(user=clinician, trained_model=trained_model) == []


def test_a_model_that_orders_nothing_is_warned(degenerate_model, clinician):
    """No test at all and no better than ordering nothing: both warnings."""
    assert degenerate_model.metrics["test_order_frequency"] == {}
    codes = [w.code for w in model_warnings(user=clinician, trained_model=degenerate_model)]
    assert codes == ["no_gain", "no_tests"]


def test_thin_support_warns_from_the_threshold_share(trained_model, clinician):
    """THIN_SHARE of conclusions on fewer than THIN_SUPPORT patients warns; one fewer does not."""
    metrics = dict(trained_model.metrics)
    measured = 200
    at_share = int(THIN_SHARE * measured)
    for thin, warned in ((at_share, True), (at_share - 1, False)):
        metrics["support"] = {"threshold": THIN_SUPPORT, "n_measured": measured, "n_thin": thin}
        TrainedModel.objects.filter(pk=trained_model.pk).update(metrics=metrics)
        trained_model.refresh_from_db()
        codes = [w.code for w in model_warnings(user=clinician, trained_model=trained_model)]
        assert ("thin_support" in codes) is warned


def test_training_counts_conclusions_on_few_patients(trained_model):
    """The stored support count is consistent: thin conclusions are among those measured."""
    support = trained_model.metrics["support"]
    assert support["threshold"] == THIN_SUPPORT
    assert support["n_measured"] == trained_model.metrics["n_test_cases"]
    assert 0 <= support["n_thin"] <= support["n_measured"]
    assert (support["min"] < THIN_SUPPORT) is (support["n_thin"] > 0)


def test_warning_shown_on_card_page_and_case(client, degenerate_model, clinician):
    """The same warning on the home card, the model page and a case using the model."""
    _login(client, clinician)
    home = _text(client.get(reverse("home")))
    assert "No better than ordering no test" in home
    page = _text(client.get(reverse("model-detail", args=[degenerate_model.pk])))
    assert "No better than ordering no test" in page and "Orders no test at all" in page
    case = start_case(user=clinician, trained_model=degenerate_model)
    screen = _text(client.get(reverse("case-detail", args=[case.pk])))
    assert "No better than ordering no test" in screen


def test_old_model_without_the_comparison_still_renders(client, trained_model, clinician):
    """A model trained before the comparison existed says "not measured" and gives no warning."""
    metrics = {
        k: v
        for k, v in trained_model.metrics.items()
        if k not in ("baselines", "support", "sensitivity", "specificity")
    }
    TrainedModel.objects.filter(pk=trained_model.pk).update(metrics=metrics)
    _login(client, clinician)
    response = client.get(reverse("model-detail", args=[trained_model.pk]))
    assert response.status_code == 200
    page = _text(response)
    assert "not measured" in page and "Compared with two simple strategies" in page
    assert "Sensitivity" in page  # the model's own rates come from its stored confusion matrix
    assert "Use with caution" not in page


def test_training_form_proposes_letting_the_data_choose(toy_dataset, model_admin):
    """The learner the form starts with is the selector; the single learners stay offered."""
    form = TrainForm(initial={"dataset": toy_dataset.pk})
    rendered = str(form["learner"])
    selected = re.search(r'<option value="([^"]+)"[^>]*selected', rendered).group(1)
    assert selected == "cost_selected"
    assert "Let the data choose" in rendered
    assert all(f'value="{key}"' in rendered for key in ("eg2", "act", "boosting"))


def test_training_form_defaults_to_the_datasets_own_matrix(toy_dataset, model_admin):
    """The form starts with the dataset's first named matrix, marked as its default."""
    form = TrainForm(initial={"dataset": toy_dataset.pk})
    default = default_error_matrix(dataset=toy_dataset)
    assert default is not None and default.name == "Uniform 100"  # the first in the file
    assert form.initial["error_matrix"] == default.pk
    rendered = str(form["error_matrix"])
    option = re.search(rf'<option value="{default.pk}"[^>]*>', rendered).group(0)
    assert "data-default" in option and "selected" in option
    other = toy_dataset.error_matrices.exclude(pk=default.pk).get()
    other_option = re.search(rf'<option value="{other.pk}"[^>]*>', rendered).group(0)
    assert "data-default" not in other_option
