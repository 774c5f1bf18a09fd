"""The hot path's raw-cursor reads (selectors.raw_rows) give the same instances as the ORM."""

from __future__ import annotations

import pytest
import step_helpers
from django.contrib.auth import get_user_model
from django.db import transaction

from diagnosis.catalog.models import DiagnosticTest
from diagnosis.clinic.models import DiagnosisCase
from diagnosis.clinic.permissions import CaseNotFound
from diagnosis.clinic.selectors.case_audit import case_steps
from diagnosis.clinic.selectors.cases import dataset_tests_of
from diagnosis.clinic.services import cases
from diagnosis.clinic.services import step as step_service
from diagnosis.integration.models import ApiToken
from diagnosis.integration.services.api_tokens import (
    authenticate_token,
    issue_api_token,
    revoke_api_token,
)
from diagnosis.selectors import raw_rows

pytestmark = pytest.mark.django_db


def _values(instance) -> dict:
    deferred = instance.get_deferred_fields()
    return {
        f.attname: getattr(instance, f.attname)
        for f in type(instance)._meta.concrete_fields
        if f.attname not in deferred
    }


def test_the_locked_case_row_equals_the_orm_read(clinician, trained_model):
    """The case (touched), its model (JSON deferred) and dataset equal the ORM's rows."""
    case = cases.start_case(user=clinician, trained_model=trained_model, patient_reference="x")
    with transaction.atomic():
        locked = step_service.touched_case_row(case.pk)
    orm = DiagnosisCase.objects.select_related("trained_model__dataset").get(pk=case.pk)
    assert _values(locked) == _values(orm) and locked.updated_at > case.updated_at
    assert locked.trained_model.get_deferred_fields() == {"model_json"}
    assert _values(locked.trained_model) == {
        k: v for k, v in _values(orm.trained_model).items() if k != "model_json"
    }
    assert _values(locked.trained_model.dataset) == _values(orm.trained_model.dataset)
    assert locked._state.adding is False and locked._state.db == "default"
    assert (
        step_service.touched_case_row(case.pk + 1000) is None
        and step_service.touched_case_row("x") is None
    )


def test_tests_and_steps_equal_the_orm_read(clinician, trained_model):
    """A dataset's tests and a case's steps (advice JSON decoded) equal the ORM's, in order."""
    case = cases.start_case(user=clinician, trained_model=trained_model)
    step_helpers.post_step(user=clinician, case=case, action="unavailable", test="sex")
    step_helpers.post_step(user=clinician, case=case, action="result", test="glucose", value=9)
    tests = dataset_tests_of(case)
    expected = DiagnosticTest.objects.filter(dataset=trained_model.dataset).order_by("index")
    assert [_values(t) for t in tests] == [_values(t) for t in expected]
    steps = case_steps(case, tests=tests)
    orm = list(case.steps.order_by("position"))
    assert [_values(s) for s in steps] == [_values(s) for s in orm]
    assert isinstance(steps[0].advice, dict) and steps[0].advice == orm[0].advice
    assert all(s.case is case and s.test in tests for s in steps)


def test_a_token_reads_its_user_and_groups_and_refuses_a_revoked_one(clinician):
    """authenticate_token's one raw query gives the token's user with its groups; revoked: None."""
    token, plain = issue_api_token(issuer=None, owner=clinician, name="EHR")
    user = authenticate_token(presented=plain)
    assert _values(user) == _values(clinician)
    assert user._diagnosis_groups[1] == frozenset(clinician.groups.values_list("name", flat=True))
    revoke_api_token(user=clinician, token=ApiToken.objects.get(pk=token.pk))
    assert authenticate_token(presented=plain) is None


def test_a_step_by_id_on_someone_elses_case_is_not_found(clinician, other_clinician, trained_model):
    """apply_step answers another clinician's case exactly like a missing one."""
    case = cases.start_case(user=clinician, trained_model=trained_model)
    with pytest.raises(CaseNotFound) as theirs:
        step_helpers.post_step(user=other_clinician, case_id=case.pk, action="refer")
    with pytest.raises(CaseNotFound) as missing:
        step_helpers.post_step(user=other_clinician, case_id=case.pk + 1000, action="refer")
    assert str(theirs.value).replace(str(case.pk), "N") == str(missing.value).replace(
        str(case.pk + 1000), "N"
    )
    assert not case.steps.exists()


def test_a_visible_model_equals_the_orm_read(clinician, model_admin, trained_model):
    """visible_model's one raw query: the model (JSON deferred) and dataset as the ORM reads
    them, ready; a clinician gets no unfinished model, an admin does."""
    from diagnosis.training.models import TrainedModel
    from diagnosis.training.selectors.models import visible_model

    found = visible_model(user=clinician, pk=trained_model.pk)
    orm = TrainedModel.objects.select_related("dataset").get(pk=trained_model.pk)
    assert found.get_deferred_fields() == {"model_json"}
    assert _values(found) == {k: v for k, v in _values(orm).items() if k != "model_json"}
    assert _values(found.dataset) == _values(orm.dataset) and found.is_ready
    TrainedModel.objects.filter(pk=trained_model.pk).update(status=TrainedModel.RUNNING)
    assert visible_model(user=clinician, pk=trained_model.pk) is None
    assert not visible_model(user=model_admin, pk=trained_model.pk).is_ready
    assert visible_model(user=clinician, pk="nope") is None


def test_a_refused_step_leaves_the_case_untouched(clinician, trained_model):
    """The lock's touch of updated_at is undone with a refused step; a taken step keeps it."""
    from django.core.exceptions import ValidationError

    case = cases.start_case(user=clinician, trained_model=trained_model)
    before = DiagnosisCase.objects.get(pk=case.pk).updated_at
    with pytest.raises(ValidationError):
        step_helpers.post_step(
            user=clinician, case_id=case.pk, action="result", test="glucose", value="abc"
        )
    assert DiagnosisCase.objects.get(pk=case.pk).updated_at == before
    taken = step_helpers.post_step(
        user=clinician, case_id=case.pk, action="result", test="glucose", value=9
    )
    after = DiagnosisCase.objects.get(pk=case.pk).updated_at
    assert after > before and taken.case.updated_at == after


def test_column_name_is_the_fields_own_column():
    """A foreign key's column is its ``_id`` column, also in an auto-created through table."""
    assert raw_rows.column_name(DiagnosisCase, "trained_model") == "trained_model_id"
    assert raw_rows.column_name(DiagnosticTest, "name") == "name"
    assert raw_rows.column_name(get_user_model().groups.through, "group") == "group_id"
