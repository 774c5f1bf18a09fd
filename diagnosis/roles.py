"""The role groups' Django permissions, kept in step with the models after every migrate.

Django creates model permissions after migrations run (``post_migrate``), so a
data migration cannot grant them on a fresh database.  This handler does,
every time: the ``model-admins`` group gets every permission of this app
except those on patient cases and their steps (patient data is need-to-know:
case access is decided by :mod:`diagnosis.permissions`, never by a Django
permission).
"""

from __future__ import annotations

from .permissions import CLINICIANS, MODEL_ADMINS

__all__ = ["PATIENT_MODELS", "grant_role_permissions"]

#: Models holding patient data: no group gets Django permissions on them.
PATIENT_MODELS = ("diagnosiscase", "diagnosisstep")


def grant_role_permissions(*, using: str = "default", **_) -> None:
    """Create the role groups if missing; give model-admins this app's non-patient permissions."""
    from django.contrib.auth.models import Group, Permission

    Group.objects.using(using).get_or_create(name=CLINICIANS)
    admins, _ = Group.objects.using(using).get_or_create(name=MODEL_ADMINS)
    admins.permissions.set(
        Permission.objects.using(using)
        .filter(content_type__app_label="diagnosis")
        .exclude(content_type__model__in=PATIENT_MODELS)
    )
