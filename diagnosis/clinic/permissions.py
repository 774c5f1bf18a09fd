"""Who may read or act on a patient's case (the roles themselves are in
:mod:`diagnosis.permissions`).

A case's own clinician reads it and takes its steps; a lead clinician of a :class:`Team` its
clinician is a member of only reads it.  A case the user may not read is answered exactly like
a case that does not exist (:class:`CaseNotFound`, a 404 on every page and the API), so case ids
cannot be enumerated.  :func:`require_case_read` guards reads (selectors),
:func:`require_case_access` guards steps (services).
"""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist, PermissionDenied

from diagnosis.permissions import is_active_user, is_clinician, is_lead

from .models import Team

__all__ = [
    "CaseNotFound",
    "can_act_on_case",
    "can_read_case",
    "require_case_access",
    "require_case_read",
]


class CaseNotFound(ObjectDoesNotExist):
    """No such case for this user: missing and forbidden cases get the same answer."""

    def __init__(self, pk) -> None:
        super().__init__(f"There is no case {pk}.")


def can_act_on_case(user, case) -> bool:
    """Only the case's own clinician, while still a clinician; no one else, whatever the flags."""
    return is_active_user(user) and case.clinician_id == user.pk and is_clinician(user)


def _leads_team_of(user, case) -> bool:
    """Whether ``user`` is a lead clinician leading a team the case's clinician belongs to."""
    return is_lead(user) and Team.objects.filter(leads=user.pk, members=case.clinician_id).exists()


def can_read_case(user, case) -> bool:
    """The case's own clinician, or a lead clinician of a team its clinician is a member of."""
    return can_act_on_case(user, case) or (is_active_user(user) and _leads_team_of(user, case))


def require_case_read(user, case) -> bool:
    """Raise :class:`CaseNotFound` unless ``user`` may read ``case``; True when they may also act.

    The owner is checked first, with the same one query as before: a lead's team is only
    looked up for someone who is not the case's clinician.
    """
    if can_act_on_case(user, case):
        return True
    if is_active_user(user) and _leads_team_of(user, case):
        return False
    raise CaseNotFound(case.pk)


def require_case_access(user, case) -> None:
    """Raise unless ``user`` may act on ``case``: :class:`CaseNotFound` for anyone who may not
    even read it (like a missing case), ``PermissionDenied`` for a lead who only reads it."""
    if can_act_on_case(user, case):
        return
    if is_active_user(user) and _leads_team_of(user, case):
        raise PermissionDenied(
            "You may read this case as its clinician's team lead, but only its own clinician "
            "takes steps on it."
        )
    raise CaseNotFound(case.pk)
