"""Training services: request/queue, in-process run, failure, cancel, stale runs, registry."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError

from diagnosis.shared import learner_registry
from diagnosis.training.models import TrainedModel
from diagnosis.training.services import broker, training, training_queue
from learners import model_from_json


@pytest.fixture
def queued(monkeypatch):
    """Records what request_training sends to Celery instead of sending it."""
    sent = []

    def send(name, *, args, task_id=None):
        assert name == broker.TRAIN_MODEL
        sent.append((args, task_id))

    monkeypatch.setattr(broker, "send", send)
    return sent


def test_request_training_snapshots_and_queues_after_commit(
    toy_dataset, model_admin, queued, django_capture_on_commit_callbacks
):
    """The model is saved queued with price/matrix snapshots, and queued only on commit."""
    matrix = toy_dataset.error_matrices.get(name="Refer at 30")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        trained = training.request_training(
            user=model_admin,
            dataset=toy_dataset,
            learner="eg2",
            params={"w": "0.5"},
            error_matrix=matrix,
        )
        assert queued == []
    assert len(callbacks) == 1
    assert queued == [([trained.pk], trained.celery_task_id)]
    assert trained.status == TrainedModel.QUEUED
    assert trained.params == {
        "w": 0.5,
        "cf": 0.25,
        "min_samples_leaf": 2.0,
        "pruning": "error",
        "probability": "laplace",
    }
    assert trained.cost_snapshot["names"] == ["glucose", "insulin", "sex"]
    assert trained.cost_snapshot["discounted"] == [2.0, 3.0, 1.0]
    assert trained.cost_snapshot["groups"] == ["blood", "blood", None]
    assert trained.matrix_snapshot == [[0.0, 100.0], [400.0, 0.0]]
    assert trained.reject_cost_snapshot == 30.0


def test_broker_failure_leaves_the_training_queued_saying_why(
    toy_dataset, model_admin, monkeypatch, django_capture_on_commit_callbacks
):
    """Queue unreachable: the model stays queued (the sweep re-sends it) and says so."""

    def broken(name, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(broker, "send", broken)
    with django_capture_on_commit_callbacks(execute=True):
        trained = training.request_training(
            user=model_admin, dataset=toy_dataset, learner="c45", params={}
        )
    trained.refresh_from_db()
    assert trained.status == TrainedModel.QUEUED and trained.enqueued_at is None
    assert trained.progress_message == training_queue.UNREACHABLE


@pytest.mark.parametrize(
    ("learner", "params", "message"),
    [
        ("nope", {}, "Unknown learner 'nope'"),
        ("eg2", {"w": -1}, "at least 0"),
        ("eg2", {"w": "x"}, "not a valid float"),
        ("eg2", {"depth": 3}, "has no parameter 'depth'"),
        ("c45", {"cf": 1.5}, "must be below 1"),
    ],
)
def test_request_training_validates_learner_and_params(
    toy_dataset, model_admin, learner, params, message
):
    """Unknown learners, bad values and unknown parameter names give clear errors; nothing saved."""
    with pytest.raises(ValidationError, match=message):
        training.request_training(
            user=model_admin, dataset=toy_dataset, learner=learner, params=params
        )
    assert TrainedModel.objects.count() == 0


def test_request_training_rejects_a_matrix_of_another_dataset(
    toy_dataset, model_admin, make_toy_dataset
):
    """The error matrix must belong to the dataset being trained on."""
    other = make_toy_dataset("Other", error_matrices=[{"name": "m", "matrix": [[0, 1], [1, 0]]}])
    with pytest.raises(ValidationError, match="belongs to another dataset"):
        training.request_training(
            user=model_admin,
            dataset=toy_dataset,
            learner="eg2",
            params={},
            error_matrix=other.error_matrices.get(),
        )


def test_only_model_admins_may_train(toy_dataset, clinician):
    """A clinician cannot start a training."""
    with pytest.raises(PermissionDenied):
        training.request_training(user=clinician, dataset=toy_dataset, learner="eg2", params={})


def test_run_training_stores_a_loadable_model_and_held_out_metrics(toy_dataset, model_admin):
    """A run fits on 70%, reports on the held-out 30% and stores JSON that loads."""
    trained = training.create_training(
        user=model_admin, dataset=toy_dataset, learner="c45", params={}
    )
    seen = []
    result = training.run_training(
        trained_model_id=trained.pk, progress=lambda f, m: seen.append(f)
    )
    assert result.status == TrainedModel.SUCCEEDED, result.error
    assert result.progress == 1.0 and result.finished_at and result.fit_seconds >= 0
    assert seen == sorted(seen) and seen[-1] < 1.0
    metrics = result.metrics
    assert metrics["n_test_cases"] == 36 and metrics["n_training_cases"] == 84
    assert 0.0 <= metrics["accuracy"] <= 1.0 and 0.0 <= metrics["reject_rate"] <= 1.0
    assert set(metrics["test_order_frequency"]) <= {"glucose", "insulin", "sex"}
    assert metrics["normalized_cost"] == pytest.approx(
        metrics["mean_total_cost"] / metrics["standard_cost"]
    )
    model = model_from_json(result.model_json)
    assert model.next_action({}, ()).kind in {"extract", "classify", "reject"}


def test_failed_training_stores_its_reason(toy_dataset, model_admin):
    """An exception during fitting leaves status failed with the error text."""
    trained = training.create_training(
        user=model_admin, dataset=toy_dataset, learner="eg2", params={}
    )
    snapshot = dict(
        trained.cost_snapshot,
        costs=[1.0, 1.0],
        discounted=[1.0, 1.0],
        groups=[None, None],
        delayed=[False, False],
        free=[],
    )
    TrainedModel.objects.filter(pk=trained.pk).update(cost_snapshot=snapshot)
    result = training.run_training(trained_model_id=trained.pk)
    assert result.status == TrainedModel.FAILED
    assert "2 tests but X has 3 features" in result.error
    assert result.model_json == ""


def test_cancelled_training_is_not_run(toy_dataset, model_admin):
    """A cancelled training stays cancelled when a worker picks it up."""
    trained = training.create_training(
        user=model_admin, dataset=toy_dataset, learner="eg2", params={}
    )
    training.cancel_training(user=model_admin, trained_model=trained)
    result = training.run_training(trained_model_id=trained.pk)
    assert result.status == TrainedModel.CANCELLED and result.model_json == ""
    with pytest.raises(ValidationError, match="nothing to cancel"):
        training.cancel_training(user=model_admin, trained_model=trained)


def test_run_training_of_a_missing_model_does_nothing(db):
    """A task for a deleted model returns quietly."""
    assert training.run_training(trained_model_id=987654) is None


def test_request_training_needs_enough_cases(model_admin, make_toy_dataset):
    """A dataset with too few cases cannot be trained."""
    tiny = make_toy_dataset("Tiny", n_rows=6)
    with pytest.raises(ValidationError, match="at least 10 are needed"):
        training.request_training(user=model_admin, dataset=tiny, learner="eg2", params={})


@pytest.mark.parametrize("key", sorted(learner_registry.LEARNERS))
def test_every_registered_learner_builds_with_its_defaults(key):
    """Each registry entry's defaults are accepted by its estimator class."""
    estimator = learner_registry.build_estimator(
        key,
        {},
        cost_model=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=[1],
        random_state=0,
    )
    params = estimator.get_params()
    for spec in learner_registry.LEARNERS[key].params:
        if spec.estimator_param:
            assert params[spec.name] == spec.default
        else:  # a setting of the training run (a time budget), never an estimator argument
            assert spec.name not in params


def test_plain_user_is_no_model_admin(db):
    """Staff without the model-admins group may not train."""
    from diagnosis.permissions import is_model_admin

    staff = User.objects.create_user("staff", password="x-123456789", is_staff=True)
    assert not is_model_admin(staff)
