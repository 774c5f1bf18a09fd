"""The role groups' Django permissions, kept in step with the models after every migrate.

Django creates model permissions after migrations run (``post_migrate``), so a
data migration cannot grant them on a fresh database.  This handler does,
every time: the ``model-admins`` group gets every permission of the domain apps
except those on patient cases and their steps, the case access log and the
teams (patient data is need-to-know: case access is decided by
:mod:`diagnosis.clinic.permissions`, never by a Django permission, and team
membership decides it, so only superusers edit teams).  The catalog's change
history (django-simple-history) is theirs to see.  ``clinicians`` and
``lead-clinicians`` get no Django permission at all: their access is to cases.
"""

from __future__ import annotations

from .permissions import CLINICIANS, LEAD_CLINICIANS, MODEL_ADMINS

__all__ = ["PATIENT_MODELS", "grant_role_permissions"]

#: Models holding patient data or deciding who reads it: no group gets Django permissions on
#: them (a superuser may grant ``view_caseaccess`` to an auditor by hand).
PATIENT_MODELS = (
    "diagnosiscase",
    "diagnosisstep",
    "caseaccess",
    "team",
    "confirmeddiagnosis",  # a patient's confirmed diagnosis, entered on the case
    # an EHR patient's case, the cards shown for it and the clinician's answers to them
    "cdspatientcase",
    "cdscard",
    "cdsfeedback",
)

#: The apps whose models the roles are about: every domain app (the diagnosis app itself has no
#: model since its migration 0022).
APP_LABELS = ("catalog", "training", "clinic", "bench", "integration")


def grant_role_permissions(*, using: str = "default", **_) -> None:
    """Create the role groups if missing; give model-admins the apps' non-patient permissions."""
    from django.contrib.auth.models import Group, Permission

    Group.objects.using(using).get_or_create(name=CLINICIANS)
    Group.objects.using(using).get_or_create(name=LEAD_CLINICIANS)
    admins, _created = Group.objects.using(using).get_or_create(name=MODEL_ADMINS)
    admins.permissions.set(
        Permission.objects.using(using)
        .filter(content_type__app_label__in=APP_LABELS)
        .exclude(content_type__model__in=PATIENT_MODELS)
    )
