"""Users with roles, a small priced dataset and a trained model, shared by the app tests."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from toy_data import PASSWORD, TOY_TESTS, toy_rows

from diagnosis.catalog.services.datasets import create_dataset
from diagnosis.permissions import CLINICIANS, MODEL_ADMINS
from diagnosis.training.services.training import run_training


def _user(username: str, *groups: str, staff: bool = False) -> User:
    user = User.objects.create_user(username, password=PASSWORD, is_staff=staff)
    for name in groups:
        user.groups.add(Group.objects.get_or_create(name=name)[0])
    return user


@pytest.fixture
def clinician(db) -> User:
    return _user("doc", CLINICIANS)


@pytest.fixture
def other_clinician(db) -> User:
    return _user("other-doc", CLINICIANS)


@pytest.fixture
def model_admin(db) -> User:
    user = _user("boss", MODEL_ADMINS, staff=True)
    user.is_superuser = True
    user.save()
    return user


@pytest.fixture
def toy_dataset(db):
    rows, labels = toy_rows()
    return create_dataset(
        name="Toy diabetes",
        class_labels=["healthy", "disease"],
        tests=TOY_TESTS,
        rows=rows,
        labels=labels,
        error_matrices=[
            {"name": "Uniform 100", "matrix": [[0, 100], [100, 0]]},
            {"name": "Refer at 30", "matrix": [[0, 100], [400, 0]], "reject_cost": 30},
        ],
    )


_FITTED: dict[str, dict] = {}


@pytest.fixture
def trained_model(toy_dataset, model_admin):
    """An EG2 model on the toy data, trained synchronously with run_training once per session,
    and approved for clinicians by the model admin.

    Later tests reuse the stored fit (same data, same prices), which keeps them fast.
    """
    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services.training import create_training

    matrix = toy_dataset.error_matrices.get(name="Uniform 100")
    trained = create_training(
        user=model_admin, dataset=toy_dataset, learner="eg2", params={}, error_matrix=matrix
    )
    from training_helpers import approve

    if "eg2" not in _FITTED:
        result = run_training(trained_model_id=trained.pk)
        assert result.status == "succeeded", result.error
        _FITTED["eg2"] = {f: getattr(result, f) for f in ("model_json", "metrics", "fit_seconds")}
        return approve(result, model_admin)
    TrainedModel.objects.filter(pk=trained.pk).update(
        status="succeeded", progress=1.0, **_FITTED["eg2"]
    )
    trained.refresh_from_db()
    return approve(trained, model_admin)


@pytest.fixture
def make_toy_dataset(db):
    """Factory of more toy datasets: ``make_toy_dataset(name, n_rows=120, **create_dataset kw)``."""

    def make(name: str, n_rows: int = 120, **kwargs):
        rows, labels = toy_rows(n_rows)
        return create_dataset(
            name=name,
            class_labels=kwargs.pop("class_labels", ["healthy", "disease"]),
            tests=kwargs.pop("tests", TOY_TESTS),
            rows=rows,
            labels=labels,
            **kwargs,
        )

    return make


@pytest.fixture
def thyroid_model(db, model_admin):
    """A conditioned-loss model trained by the service on thyroid-like data (advice with risks),
    approved for clinicians.

    Trained with run_training once per test process; later uses store that fit's results (as
    ``trained_model`` does): the fit took seconds for each of the tests using it."""
    from thyroid_like import CLASSES, THYROID_TESTS, thyroid_like_rows

    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services import training

    rows, labels = thyroid_like_rows()
    dataset = create_dataset(
        name="Thyroid-like",
        class_labels=CLASSES,
        tests=THYROID_TESTS,
        rows=rows,
        labels=labels,
        error_matrices=[
            {
                "name": "Uniform 1000",
                "matrix": [[0 if i == j else 1000 for j in range(3)] for i in range(3)],
            }
        ],
    )
    requested = training.create_training(
        user=model_admin,
        dataset=dataset,
        learner="conditioned_loss",
        params={"reward": 100, "penalty": 10000},
        error_matrix=dataset.error_matrices.get(),
    )
    if "conditioned_loss" in _FITTED:  # same data, prices, parameters and seed: the same fit
        TrainedModel.objects.filter(pk=requested.pk).update(**_FITTED["conditioned_loss"])
        requested.refresh_from_db()
        trained = requested
    else:
        before = {
            f.attname: getattr(requested, f.attname) for f in TrainedModel._meta.concrete_fields
        }
        trained = training.run_training(trained_model_id=requested.pk)
        assert trained.status == TrainedModel.SUCCEEDED, trained.error
        # what the training stored (not the row's id or the rows it points to)
        _FITTED["conditioned_loss"] = {
            name: getattr(trained, name)
            for name, value in before.items()
            if name != "id" and not name.endswith("_id") and getattr(trained, name) != value
        }
    from training_helpers import approve

    return approve(trained, model_admin)
