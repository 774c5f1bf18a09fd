"""Roles, on the principle of least privilege.  Checked in services and selectors.

* **Clinicians** (group ``clinicians``) diagnose patients: they start cases and
  see and work only their own cases.
* **Model administrators** (group ``model-admins`` with ``is_staff``, or a
  superuser) manage datasets, prices, error matrices and trainings.  They have
  no access to patient cases unless they are also in the clinicians group.
* ``is_staff`` alone grants nothing: not patients, not models, not training.
* A **superuser** is a model administrator, but patient data is need-to-know:
  a superuser sees cases only when also in the clinicians group, and then only
  their own, like any clinician.
* A lead clinician reading a team's cases needs a team model; there is none yet.

A case the user may not open is answered exactly like a case that does not
exist (:class:`CaseNotFound`, a 404 on every page and the API), so case ids
cannot be enumerated.
"""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist, PermissionDenied

CLINICIANS = "clinicians"
MODEL_ADMINS = "model-admins"

__all__ = [
    "CLINICIANS",
    "MODEL_ADMINS",
    "CaseNotFound",
    "can_act_on_case",
    "is_clinician",
    "is_model_admin",
    "require_case_access",
    "require_clinician",
    "require_model_admin",
]


class CaseNotFound(ObjectDoesNotExist):
    """No such case for this user: missing and forbidden cases get the same answer."""

    def __init__(self, pk) -> None:
        super().__init__(f"There is no case {pk}.")


def _active(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active)


def _in_group(user, name: str) -> bool:
    return _active(user) and user.groups.filter(name=name).exists()


def is_clinician(user) -> bool:
    """A member of the ``clinicians`` group (staff and superusers included only as members)."""
    return _in_group(user, CLINICIANS)


def is_model_admin(user) -> bool:
    """A model administrator: a superuser, or staff in the ``model-admins`` group."""
    if not _active(user):
        return False
    return user.is_superuser or (user.is_staff and _in_group(user, MODEL_ADMINS))


def require_clinician(user) -> None:
    """Raise PermissionDenied unless ``user`` may diagnose patients."""
    if not is_clinician(user):
        raise PermissionDenied("Only clinicians may diagnose patients.")


def require_model_admin(user) -> None:
    """Raise PermissionDenied unless ``user`` may manage datasets and train models."""
    if not is_model_admin(user):
        raise PermissionDenied("Only model administrators may do this.")


def can_act_on_case(user, case) -> bool:
    """Only the case's own clinician, while still a clinician; no one else, whatever the flags."""
    return _active(user) and case.clinician_id == user.pk and is_clinician(user)


def require_case_access(user, case) -> None:
    """Raise :class:`CaseNotFound` unless ``user`` may see and act on ``case``."""
    if not can_act_on_case(user, case):
        raise CaseNotFound(case.pk)
