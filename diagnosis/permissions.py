"""Roles, on the principle of least privilege.  Checked in services and selectors.

The roles live here; who may read or act on a *case* (its clinician, a team's lead) is the
clinic's (:mod:`diagnosis.clinic.permissions`).

* **Clinicians** (group ``clinicians``) diagnose patients: they start cases and
  see and work only their own cases.
* **Model administrators** (group ``model-admins`` with ``is_staff``, or a
  superuser) manage datasets, prices, error matrices and trainings.  They have
  no access to patient cases unless they are also in the clinicians group.
* ``is_staff`` alone grants nothing: not patients, not models, not training.
* A **superuser** is a model administrator, but patient data is need-to-know:
  a superuser sees cases only when also in the clinicians group, and then only
  their own, like any clinician.
* A **lead clinician** (group ``lead-clinicians``, and a lead of a
  :class:`~diagnosis.clinic.models.Team`) *reads* the cases of the team's members:
  the case page (read-only), the summary, the tree path, both APIs' GET.  A
  lead never takes a step on another clinician's case: a step is refused with
  ``PermissionDenied`` (403: the lead knows the case exists), on the screen and
  both APIs.  Teams are edited by superusers only.

A case the user may not read is answered exactly like a case that does not
exist (the clinic's ``CaseNotFound``, a 404 on every page and the API), so case ids
cannot be enumerated.
"""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.db.models.signals import m2m_changed, post_delete, post_save

CLINICIANS = "clinicians"
MODEL_ADMINS = "model-admins"
LEAD_CLINICIANS = "lead-clinicians"

__all__ = [
    "CLINICIANS",
    "LEAD_CLINICIANS",
    "MODEL_ADMINS",
    "ModelNotFound",
    "is_active_user",
    "is_clinician",
    "is_lead",
    "is_model_admin",
    "remember_groups",
    "require_lead",
    "roles_of",
    "require_clinician",
    "require_model_admin",
]


class ModelNotFound(ObjectDoesNotExist):
    """No such model for this user: a clinician asking for a draft or retired model gets the
    answer a missing model gets (404)."""

    def __init__(self, pk) -> None:
        super().__init__(f"There is no model {pk}.")


def is_active_user(user) -> bool:
    """Signed in with an active account (every role check starts here)."""
    return bool(user is not None and user.is_authenticated and user.is_active)


def _groups_changed(sender, **kwargs) -> None:
    """Any change of group membership or of a group makes every user's remembered groups stale."""
    global _groups_version
    _groups_version += 1


#: Bumped by every membership change (either side of ``User.groups``) and every group saved or
#: deleted in this process: a user's groups remembered under an older number are read again.
_groups_version = 0
m2m_changed.connect(_groups_changed, dispatch_uid="diagnosis.permissions.m2m")
post_save.connect(_groups_changed, sender="auth.Group", dispatch_uid="diagnosis.permissions.save")
post_delete.connect(_groups_changed, sender="auth.Group", dispatch_uid="diagnosis.permissions.del")


def _group_names(user) -> frozenset[str]:
    """The names of ``user``'s groups: one query per user object (a request's user is read
    afresh for each request), again after any membership change in this process."""
    remembered = getattr(user, "_diagnosis_groups", None)
    if remembered is not None and remembered[0] == _groups_version:
        return remembered[1]
    names = frozenset(user.groups.values_list("name", flat=True))
    user._diagnosis_groups = (_groups_version, names)
    return names


def remember_groups(user, names) -> None:
    """Keep ``names`` as ``user``'s groups for this user object, read by the caller together
    with the user (the API token's query): no query of their own. Forgotten, like any
    remembered groups, after a membership or group change in this process."""
    user._diagnosis_groups = (_groups_version, frozenset(names))


def _in_group(user, name: str) -> bool:
    return is_active_user(user) and name in _group_names(user)


def is_clinician(user) -> bool:
    """A member of the ``clinicians`` group (staff and superusers included only as members)."""
    return _in_group(user, CLINICIANS)


def is_model_admin(user) -> bool:
    """A model administrator: a superuser, or staff in the ``model-admins`` group."""
    if not is_active_user(user):
        return False
    return user.is_superuser or (user.is_staff and _in_group(user, MODEL_ADMINS))


def roles_of(user) -> dict[str, bool]:
    """The user's roles from one query (for a page header): clinician, model_admin, lead."""
    # The three checks share the user's remembered groups: one query in all.
    return {
        "clinician": is_clinician(user),
        "model_admin": is_model_admin(user),
        "lead": is_lead(user),
    }


def require_clinician(user) -> None:
    """Raise PermissionDenied unless ``user`` may diagnose patients."""
    if not is_clinician(user):
        raise PermissionDenied("Only clinicians may diagnose patients.")


def require_model_admin(user) -> None:
    """Raise PermissionDenied unless ``user`` may manage datasets and train models."""
    if not is_model_admin(user):
        raise PermissionDenied("Only model administrators may do this.")


def is_lead(user) -> bool:
    """A member of the ``lead-clinicians`` group (reads the cases of the teams they lead)."""
    return _in_group(user, LEAD_CLINICIANS)


def require_lead(user) -> None:
    """Raise PermissionDenied unless ``user`` is a lead clinician."""
    if not is_lead(user):
        raise PermissionDenied("Only lead clinicians read their teams' cases.")
