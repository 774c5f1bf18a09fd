"""Models, roles, the learner registry's parameter checks and the estimator cache."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction

from diagnosis.catalog.models import DiagnosticTest
from diagnosis.permissions import require_clinician, require_model_admin
from diagnosis.shared.learner_registry import ParamSpec, clean_params
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors import model_cache


def test_role_groups_exist_after_migrations(db):
    """The migrations create the clinicians and model-admins groups."""
    assert set(Group.objects.values_list("name", flat=True)) >= {"clinicians", "model-admins"}


def test_require_clinician_and_model_admin(clinician, model_admin):
    """Clinicians may diagnose but not administer; model admins administer but do not diagnose."""
    require_clinician(clinician)
    require_model_admin(model_admin)
    with pytest.raises(PermissionDenied):
        require_model_admin(clinician)
    with pytest.raises(PermissionDenied):
        require_clinician(model_admin)
    with pytest.raises(PermissionDenied):
        require_clinician(User.objects.create_user("x", password="x-123456789"))


def test_test_names_and_indices_are_unique_per_dataset(toy_dataset):
    """The database refuses a second test with the same name or index in one dataset."""
    with pytest.raises(IntegrityError), transaction.atomic():
        DiagnosticTest.objects.create(dataset=toy_dataset, index=9, name="glucose")
    with pytest.raises(IntegrityError), transaction.atomic():
        DiagnosticTest.objects.create(dataset=toy_dataset, index=0, name="new")


def test_choice_label_falls_back_to_the_code(toy_dataset):
    """A nominal code shows its label, an unknown code shows itself."""
    sex = toy_dataset.tests.get(name="sex")
    assert sex.choice_label(1.0) == "male" and sex.choice_label(5.0) == "5"


@pytest.mark.parametrize(
    ("spec", "raw", "expected"),
    [
        (ParamSpec("n", "N", "int", 3, min=1, max=9), "4", 4),
        (ParamSpec("n", "N", "int", 3, min=1, max=9), "", 3),
        (ParamSpec("b", "B", "bool", True), "false", False),
        (ParamSpec("c", "C", "choice", "a", choices=(("a", "A"), ("b", "B"))), "b", "b"),
    ],
)
def test_param_spec_converts_form_values(spec, raw, expected):
    """Form strings become typed values; empty means the default."""
    assert spec.clean(raw) == expected


@pytest.mark.parametrize(
    ("spec", "raw", "message"),
    [
        (ParamSpec("n", "N", "int", 3, min=1, max=9), "2.5", "not a valid int"),
        (ParamSpec("n", "N", "int", 3, min=1, max=9), "10", "at most 9"),
        (ParamSpec("x", "X", "float", 1.0), "nan", "not a valid float"),
        (ParamSpec("b", "B", "bool", True), "maybe", "not a valid bool"),
        (ParamSpec("c", "C", "choice", "a", choices=(("a", "A"),)), "z", "not one of a"),
    ],
)
def test_param_spec_rejects_bad_values(spec, raw, message):
    """Out-of-range or malformed values raise ValidationError naming the parameter."""
    with pytest.raises(ValidationError, match=message):
        spec.clean(raw)


def test_clean_params_collects_every_error():
    """All bad parameters are reported at once."""
    with pytest.raises(ValidationError) as info:
        clean_params("eg2", {"w": "-1", "cf": "2"})
    assert len(info.value.messages) == 2


def test_model_cache_reuses_and_refreshes(trained_model):
    """The same stored model is loaded once; new JSON for the same id loads afresh."""
    first = model_cache.get_estimator(trained_model)
    assert model_cache.get_estimator(TrainedModel.objects.get(pk=trained_model.pk)) is first
    trained_model.model_json = trained_model.model_json + " "
    assert model_cache.get_estimator(trained_model) is not first


def test_model_cache_refuses_an_unfitted_model(toy_dataset):
    """A model without JSON gives a clear error."""
    with pytest.raises(ValueError, match="has no fitted model"):
        model_cache.get_estimator(TrainedModel(dataset=toy_dataset, learner="eg2", status="queued"))
