"""Every demo model is worth offering: it beats ordering nothing and carries no warning.

The demo models come from their validated fixtures (fixtures/demo_models); one test trains the
cheapest of them afresh and finds the fixture's model and figures, so the fixtures are what
``export_demo_models`` makes from the demo data.
"""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from diagnosis.catalog.models import Dataset
from diagnosis.management import demo_data
from diagnosis.management.commands.load_demo_data import DEMO_LEARNERS, DEMO_MATRICES, DEMO_MATRIX
from diagnosis.management.demo_models import (
    DemoFixtureError,
    build_demo_fixture,
    comparable,
    demo_models_of,
    fixture_path,
    read_fixture,
)
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors import model_cache
from diagnosis.training.selectors.models import model_warnings
from diagnosis.training.services.approval import DEMO_REASON
from diagnosis.training.services.training import create_training


@pytest.mark.django_db
def test_every_demo_model_beats_ordering_nothing():
    """Each demo model, loaded from its fixture (or trained, announced, when it has none yet)
    under the clinical matrix, costs less per held-out patient than ordering nothing, orders
    tests, and carries no model warning."""
    out = io.StringIO()
    call_command("load_demo_data", "--no-experiment", stdout=out)
    clinician = User.objects.get(username="clinician")
    models = list(TrainedModel.objects.select_related("dataset", "error_matrix"))
    assert len(models) == sum(len(DEMO_LEARNERS[name]) for name in demo_data.BUILDERS)
    for model in models:
        assert model.status == TrainedModel.SUCCEEDED, (model.name, model.error)
        # From the fixture, not trained as a fallback (a stale fixture would say why here).
        assert f"loaded {model.name!r}" in out.getvalue(), out.getvalue()
        fixture = json.loads(
            fixture_path(dataset_name=model.dataset.name, learner=model.learner).read_text()
        )
        assert json.loads(model.model_json) == fixture["model"], model.name
        assert type(model_cache.get_estimator(model)).__name__ == fixture["model"]["learner"]
        # approved by the set-up, with its reason, so the demo clinician sees it
        assert (model.approval, model.approval_reason) == (TrainedModel.APPROVED, DEMO_REASON)
        assert model.error_matrix is not None
        assert model.error_matrix.name == DEMO_MATRICES.get(model.dataset.name, DEMO_MATRIX)
        # Not 0/1 or uniform loss: errors differ in price, as they do for a clinician.
        matrix = model.matrix_snapshot
        errors = {v for i, row in enumerate(matrix) for j, v in enumerate(row) if i != j}
        assert len(errors) > 1, (model.name, matrix)
        metrics = model.metrics
        nothing = metrics["baselines"]["order_nothing"]["mean_total_cost"]
        assert metrics["mean_total_cost"] < nothing, (
            model.name,
            metrics["mean_total_cost"],
            nothing,
        )
        assert metrics["test_order_frequency"], f"{model.name} orders no test"
        assert model_warnings(user=clinician, trained_model=model) == [], model.name
        if model.dataset.name == demo_data.PIMA:  # its diagnostic test, once never ordered
            assert "glucose" in metrics["test_order_frequency"]


@pytest.mark.django_db
def test_the_fixture_is_what_the_generator_trains():
    """Pima's DTMC (the cheapest demo model) trained afresh equals its fixture: same model
    document, same held-out figures and baselines, only the seconds differ."""
    call_command("load_demo_data", "--no-train", "--only", demo_data.PIMA, stdout=io.StringIO())
    ((learner, label, params),) = demo_models_of(demo_data.PIMA)
    document = build_demo_fixture(
        user=User.objects.get(username="admin"),
        dataset=Dataset.objects.get(name=demo_data.PIMA),
        learner=learner,
        label=label,
        params=params,
        say=lambda line: None,
    )
    stored = json.loads(fixture_path(dataset_name=demo_data.PIMA, learner=learner).read_text())
    assert comparable(document) == comparable(stored)
    assert not TrainedModel.objects.exists()  # the scratch training is gone


def _queued_demo_training(dataset_name: str, learner: str) -> TrainedModel:
    call_command("load_demo_data", "--no-train", "--only", dataset_name, stdout=io.StringIO())
    dataset = Dataset.objects.get(name=dataset_name)
    _, label, params = next(m for m in demo_models_of(dataset_name) if m[0] == learner)
    return create_training(
        user=User.objects.get(username="admin"),
        dataset=dataset,
        learner=learner,
        params=params,
        error_matrix=dataset.error_matrices.get(name=DEMO_MATRICES.get(dataset_name, DEMO_MATRIX)),
        name=f"{label} demo: {dataset_name}",
    )


@pytest.mark.django_db
def test_a_fixture_for_other_prices_or_a_broken_model_is_refused(tmp_path):
    """A fixture trained under other prices, or whose model document does not validate, is
    refused with the file and the reason; the shipped one is accepted."""
    trained = _queued_demo_training(demo_data.PIMA, "dtmc")
    path = fixture_path(dataset_name=demo_data.PIMA, learner="dtmc")
    assert read_fixture(path, trained=trained)["model_json"]
    document = json.loads(path.read_text())

    repriced = json.loads(json.dumps(document))
    repriced["trained_on"]["cost_snapshot"]["costs"][1] += 1.0
    (tmp_path / "repriced.json").write_text(json.dumps(repriced))
    with pytest.raises(DemoFixtureError, match="repriced.json: trained with other prices"):
        read_fixture(tmp_path / "repriced.json", trained=trained)

    broken = json.loads(json.dumps(document))
    broken["model"]["fitted"] = {"nonsense": 1}
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    with pytest.raises(DemoFixtureError, match="broken.json: model: "):
        read_fixture(tmp_path / "broken.json", trained=trained)

    with pytest.raises(DemoFixtureError, match="no fixture missing.json"):
        read_fixture(tmp_path / "missing.json", trained=trained)


@pytest.mark.django_db
def test_a_renamed_group_keeps_the_fixture():
    """Renaming a price group (words on the screen) leaves the fit's prices as they were: the
    fixture still loads; a changed price does not (previous test)."""
    trained = _queued_demo_training(demo_data.PIMA, "dtmc")
    snapshot = trained.cost_snapshot
    snapshot["groups"] = [None if g is None else f"Renamed {g}" for g in snapshot["groups"]]
    TrainedModel.objects.filter(pk=trained.pk).update(cost_snapshot=snapshot)
    trained.refresh_from_db()
    path = fixture_path(dataset_name=demo_data.PIMA, learner="dtmc")
    assert read_fixture(path, trained=trained)["model_json"]
