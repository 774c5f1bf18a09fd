"""Matrices that change: plain Boosting follows an edited error matrix at once, new cases copy
the matrix in force, old cases keep theirs, and every other model is flagged with a retrain."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse
from login_helpers import login_request
from training_helpers import train

from diagnosis.clinic.models import DiagnosisCase
from diagnosis.clinic.selectors.cases import compute_case_state, estimator_for
from diagnosis.clinic.selectors.stale import catalog_changes
from diagnosis.clinic.services import cases as case_services
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors import stale
from diagnosis.training.selectors.matrices import follows_matrix_edits, matrix_status
from diagnosis.training.services.matrices import SELECTOR_LEARNER, retrain_with_current_values

PASSWORD = "pw-for-tests-123"  # the password tests/diagnosis/conftest.py gives every user
OLD = [[0.0, 100.0], [100.0, 0.0]]  # the toy dataset's "Uniform 100"
NEW = [[0.0, 100.0], [900.0, 0.0]]  # missing the disease now costs nine times more


def _train(dataset, admin, learner: str, params: dict) -> TrainedModel:
    return train(
        dataset, admin, learner, params, error_matrix=dataset.error_matrices.get(name="Uniform 100")
    )


def _edit_matrix(dataset, rows) -> None:
    """What the admin's matrix form does: save the ErrorMatrix row (history records it)."""
    matrix = dataset.error_matrices.get(name="Uniform 100")
    matrix.matrix = rows
    matrix.save()


@pytest.fixture
def boosting(toy_dataset, model_admin) -> TrainedModel:
    return _train(toy_dataset, model_admin, "boosting", {"n_trials": 3})


@pytest.fixture
def cost_boosting(toy_dataset, model_admin) -> TrainedModel:
    return _train(toy_dataset, model_admin, "boosting", {"n_trials": 3, "cost_sensitive": True})


def test_only_plain_boosting_follows_matrix_edits(boosting, cost_boosting, trained_model):
    """Plain Boosting follows edits; Cost-Boosting and an EG2 tree keep their training matrix."""
    assert follows_matrix_edits(boosting)
    assert not follows_matrix_edits(cost_boosting)
    assert not follows_matrix_edits(trained_model)


def test_plain_boosting_uses_the_edited_matrix_at_once(boosting, toy_dataset, clinician):
    """After an edit, the model page's matrix in force is the new one since the edit, and a
    new case is advised by the library's next_action with cost_matrix = the new matrix."""
    before = matrix_status(user=clinician, trained_model=boosting)
    assert before.in_force == OLD and before.since_training and not before.trained_with_different
    assert before.since == boosting.finished_at
    _edit_matrix(toy_dataset, NEW)
    edited_at = toy_dataset.error_matrices.get(name="Uniform 100").history.latest().history_date
    now = matrix_status(user=clinician, trained_model=boosting)
    assert now.in_force == NEW and not now.since_training and not now.trained_with_different
    assert now.since == edited_at
    case = case_services.start_case(user=clinician, trained_model=boosting)
    assert case.matrix_snapshot == NEW
    state = compute_case_state(case)
    expected = estimator_for(boosting).next_action({}, (), cost_matrix=NEW)
    assert state.advice.evidence.class_costs == pytest.approx(list(expected.evidence.class_costs))
    assert state.advice.evidence.class_costs != pytest.approx(
        list(estimator_for(boosting).next_action({}, (), cost_matrix=OLD).evidence.class_costs)
    )
    assert state.advice.costs.to_json()["matrix"] == NEW  # the grid the case screen shows
    # the cached model itself is not changed: it still holds the training matrix
    assert np.array_equal(estimator_for(boosting).cost_matrix_, OLD)
    # and plain Boosting is not "on old values" for the admin
    assert boosting.pk not in [
        s.trained.pk
        for s in stale.models_on_old_values(user=boosting.created_by, dataset=toy_dataset)
    ]


def test_a_case_keeps_the_matrix_it_started_with(boosting, toy_dataset, clinician):
    """A case started before an edit keeps its snapshot and is still decided with it; the case
    screen says the matrix changed since the case started."""
    case = case_services.start_case(user=clinician, trained_model=boosting)
    assert case.matrix_snapshot == OLD
    before = compute_case_state(case).advice
    _edit_matrix(toy_dataset, NEW)
    case = DiagnosisCase.objects.get(pk=case.pk)
    assert case.matrix_snapshot == OLD
    after = compute_case_state(case).advice
    assert after.evidence == before.evidence and after.costs.to_json()["matrix"] == OLD
    changes = catalog_changes(user=clinician, case=case)
    assert "error matrix 'Uniform 100' changed since this case started" in changes


@pytest.mark.parametrize("which", ["trained_model", "cost_boosting"])
def test_other_models_are_flagged_and_keep_their_matrix(which, request, toy_dataset, clinician):
    """A model that cannot follow the edit is flagged "trained with a different matrix", keeps
    deciding with its training matrix, and new cases copy that matrix."""
    trained = request.getfixturevalue(which)
    assert not matrix_status(user=clinician, trained_model=trained).trained_with_different
    _edit_matrix(toy_dataset, NEW)
    status = matrix_status(user=clinician, trained_model=trained)
    assert status.trained_with_different and status.in_force == OLD and status.live == NEW
    assert case_services.start_case(user=clinician, trained_model=trained).matrix_snapshot == OLD
    old = stale.models_on_old_values(user=trained.created_by, dataset=toy_dataset)
    assert trained.pk in [s.trained.pk for s in old]


def test_an_edit_plain_boosting_cannot_take_flags_it(boosting, toy_dataset, clinician):
    """A matrix edited to the wrong size for the model's classes is not taken: flagged, with why."""
    _edit_matrix(toy_dataset, [[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    status = matrix_status(user=clinician, trained_model=boosting)
    assert status.trained_with_different and status.in_force == OLD
    assert "no longer a 2 x 2 matrix" in status.problem


def test_model_page_says_which_matrix_is_in_force_and_since_when(
    client, boosting, toy_dataset, clinician
):
    """The plain Boosting model page names the matrix in force, as edited, with the edit's time."""
    _edit_matrix(toy_dataset, NEW)
    edited_at = toy_dataset.error_matrices.get(name="Uniform 100").history.latest().history_date
    assert client.login(request=login_request(), username=clinician.username, password=PASSWORD)
    html = client.get(reverse("model-detail", args=[boosting.pk])).content.decode()
    assert "Error matrix in force" in html and "as edited on" in html
    from django.utils import timezone

    assert timezone.localtime(edited_at).strftime("%Y-%m-%d %H:%M") in html
    assert 'id="matrix-now"' in html and "900.00" in html
    assert "Retrain with the current matrix" not in html


def test_flagged_model_page_retrains_in_one_click(
    client, trained_model, toy_dataset, model_admin, clinician
):
    """A flagged model's page offers model admins a retrain that queues the same learner,
    parameters and matrix; a clinician sees the flag without the button and may not retrain."""
    _edit_matrix(toy_dataset, NEW)
    url = reverse("model-detail", args=[trained_model.pk])
    assert client.login(request=login_request(), username=clinician.username, password=PASSWORD)
    html = client.get(url).content.decode()
    assert "Trained with a different matrix" in html
    assert "Retrain with the current matrix" not in html
    assert client.post(url, {"action": "retrain"}).status_code == 403
    client.logout()
    assert client.login(request=login_request(), username=model_admin.username, password=PASSWORD)
    html = client.get(url).content.decode()
    assert "Trained with a different matrix" in html and "Retrain with the current matrix" in html
    count = TrainedModel.objects.count()
    response = client.post(url, {"action": "retrain"})
    assert response.status_code == 302
    new = TrainedModel.objects.latest("id")
    assert TrainedModel.objects.count() == count + 1
    assert response["Location"] == reverse("model-detail", args=[new.pk])
    # the selector (issue 27: a retrain never guesses a learner), as a draft replacing the model
    assert (new.learner, new.error_matrix_id, new.replaces_id) == (
        SELECTOR_LEARNER,
        trained_model.error_matrix_id,
        trained_model.pk,
    )
    assert new.matrix_snapshot == NEW and new.status == TrainedModel.QUEUED


def test_home_cards_flag_only_the_models_left_behind(
    client, boosting, trained_model, toy_dataset, clinician
):
    """After an edit, the EG2 model's card on the home page carries the flag with a link to its
    retrain; the plain Boosting card does not."""
    _edit_matrix(toy_dataset, NEW)
    assert client.login(request=login_request(), username=clinician.username, password=PASSWORD)
    html = client.get(reverse("home")).content.decode()
    cards = {
        pk: html.split(f'id="model-{pk}"')[1].split("</article>")[0]
        for pk in (boosting.pk, trained_model.pk)
    }
    flag_link = reverse("model-detail", args=[trained_model.pk]) + "#matrix-in-force"
    assert "Trained with a different matrix" in cards[trained_model.pk]
    assert flag_link in cards[trained_model.pk]
    assert "Trained with a different matrix" not in cards[boosting.pk]


def test_retrain_service_needs_a_model_admin(trained_model, clinician):
    """The retrain service refuses a clinician."""
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        retrain_with_current_values(user=clinician, trained_model=trained_model)
