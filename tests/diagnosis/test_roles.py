"""The role groups' Django permissions come from migrate itself, not from the demo data."""

from __future__ import annotations

from django.contrib.auth.models import Group

from diagnosis.permissions import CLINICIANS, MODEL_ADMINS
from diagnosis.roles import PATIENT_MODELS, grant_role_permissions


def _codenames(group: Group) -> set[str]:
    return set(group.permissions.values_list("codename", flat=True))


def test_migrate_gives_model_admins_the_catalog_permissions_and_no_patient_ones(db):
    """After migrate, model-admins may edit datasets and models, and hold nothing on cases."""
    granted = _codenames(Group.objects.get(name=MODEL_ADMINS))
    assert {"change_dataset", "change_diagnostictest", "change_errormatrix"} <= granted
    assert not {c for c in granted if c.rsplit("_", 1)[-1] in PATIENT_MODELS}
    assert Group.objects.get(name=CLINICIANS).permissions.count() == 0


def test_granting_again_restores_a_removed_permission(db):
    """The handler is idempotent and repairs a group whose permissions were cleared."""
    admins = Group.objects.get(name=MODEL_ADMINS)
    before = _codenames(admins)
    admins.permissions.clear()
    grant_role_permissions()
    assert _codenames(admins) == before
