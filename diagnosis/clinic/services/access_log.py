"""The case access log: one row per request that read or changed a patient's case.

Written by the views and APIs that read a case through ``selectors.case_for_user`` (the case
page, the summary, the tree path, API reads; a selector writes nothing) and by the step
services (changes), as :class:`~diagnosis.clinic.models.CaseAccess` rows: a single
INSERT from what the caller already holds (the user and the case id), nothing read first,
so the step endpoint pays one cheap statement per request and no loop writes more than one.
"""

from __future__ import annotations

from ..models import CaseAccess

__all__ = ["log_case_access"]


def log_case_access(*, user, case_id: int, action: str, detail: str = "") -> None:
    """Record that ``user`` did ``action`` (a :class:`CaseAccess` action) on case ``case_id``."""
    CaseAccess.objects.create(
        case_id=case_id,
        user_id=user.pk,
        username=user.get_username()[:150],
        action=action,
        detail=detail[:40],
    )
