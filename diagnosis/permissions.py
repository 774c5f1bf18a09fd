"""Roles: clinicians diagnose patients, model administrators (staff) train models.

Checked in services and selectors, so no screen or API can skip them.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied

CLINICIANS = "clinicians"
MODEL_ADMINS = "model-admins"

__all__ = [
    "CLINICIANS",
    "MODEL_ADMINS",
    "can_act_on_case",
    "is_clinician",
    "is_model_admin",
    "require_case_access",
    "require_clinician",
    "require_model_admin",
]


def _in_group(user, name: str) -> bool:
    return bool(
        user is not None
        and user.is_authenticated
        and user.is_active
        and user.groups.filter(name=name).exists()
    )


def is_clinician(user) -> bool:
    """A clinician, or staff (who may try the clinician's screens)."""
    return _in_group(user, CLINICIANS) or bool(user and user.is_authenticated and user.is_staff)


def is_model_admin(user) -> bool:
    """A model administrator: a superuser, or staff in the ``model-admins`` group."""
    if user is None or not user.is_authenticated or not user.is_active:
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
    """The case's own clinician, or staff."""
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    return case.clinician_id == user.pk or user.is_staff


def require_case_access(user, case) -> None:
    """Raise PermissionDenied unless ``user`` may see and act on ``case``."""
    if not can_act_on_case(user, case):
        raise PermissionDenied("This case belongs to another clinician.")
