"""A "let the data choose" model is drawn as its winner: tree page, case path, diagram kind."""

from __future__ import annotations

import pytest
from training_helpers import approve

from diagnosis.catalog.selectors.datasets import dataset_arrays
from diagnosis.clinic.selectors.decision import diagram_kind
from diagnosis.clinic.selectors.tree import model_has_tree, tree_layout
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors.model_cache import deciding_model, get_estimator
from diagnosis.training.services.training import create_training
from diagnosis.training.services.training_data import RANDOM_STATE, split_indices
from learners.selection import CostSelectedClassifier

pytestmark = pytest.mark.django_db


def _selector_model(dataset, admin, candidates):
    """A cost_selected training whose selector chose among ``candidates`` (the app's own
    training would measure all sixteen; the diagram only depends on the winner)."""
    matrix = dataset.error_matrices.get(name="Uniform 100")
    trained = create_training(
        user=admin, dataset=dataset, learner="cost_selected", params={}, error_matrix=matrix
    )
    X, y, categorical = dataset_arrays(dataset)
    train, _ = split_indices(y, test_size=0.3, random_state=RANDOM_STATE)
    selector = CostSelectedClassifier(
        test_costs=trained.snapshot.prices,
        cost_matrix=trained.matrix_snapshot,
        categorical_features=categorical or None,
        random_state=RANDOM_STATE,
        candidates=candidates,
        n_splits=3,
        n_repeats=1,
    ).fit(X[train], y[train])
    TrainedModel.objects.filter(pk=trained.pk).update(
        status=TrainedModel.SUCCEEDED, progress=1.0, model_json=selector.to_json(), metrics={}
    )
    trained.refresh_from_db()
    return trained, selector


def test_a_selector_that_chose_a_tree_is_drawn_as_that_tree(toy_dataset, model_admin, clinician):
    """The tree page draws the winner's tree, and the diagram kind is the winner's."""
    trained, selector = _selector_model(toy_dataset, model_admin, ("eg2",))
    assert selector.winner_.name == "eg2"  # glucose and insulin tell the classes apart
    assert diagram_kind(trained) == "tree"
    assert model_has_tree(trained)
    assert deciding_model(get_estimator(trained)) is get_estimator(trained).best_estimator_
    layout = tree_layout(user=model_admin, trained_model=trained)
    assert layout is not None and len(layout["nodes"]) == selector.best_estimator_.tree_.n_nodes


def test_a_selector_that_chose_an_ensemble_opens_the_members_page(
    toy_dataset, model_admin, clinician, client
):
    """Winner Boosting (10 voting trees): the kind is "ensemble", and the model and members
    pages answer 200 for a clinician once the model is approved."""
    trained, selector = _selector_model(toy_dataset, model_admin, ("boosting",))
    if selector.winner_.name != "boosting":
        pytest.fail(f"expected Boosting to beat ordering nothing here, got {selector.winner_}")
    approve(trained, model_admin)
    assert diagram_kind(trained) == "ensemble"
    assert not model_has_tree(trained)
    client.force_login(clinician)
    page = client.get(f"/models/{trained.pk}/")
    assert page.status_code == 200
    trees = client.get(f"/models/{trained.pk}/trees/")
    assert trees.status_code == 200, trees.content[:500]


def test_a_selector_that_chose_ordering_nothing_has_no_diagram(toy_dataset, model_admin):
    """A simple strategy that won has no tree to draw, and says so rather than failing."""
    trained, selector = _selector_model(toy_dataset, model_admin, ())
    assert selector.winner_.name == "order-nothing"
    assert not model_has_tree(trained)
    assert tree_layout(user=model_admin, trained_model=trained) is None
