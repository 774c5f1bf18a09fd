"""Several results posted at once by the screen or the API, guarded like every other step.

:func:`take_results` locks the case, refuses a form made from an older version
of it (:func:`~diagnosis.services.case_actions.check_seen`), then records the
results through :func:`~diagnosis.services.cases.record_results`, all or nothing.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from ..models import CaseAccess, DiagnosisCase, DiagnosisStep
from ..permissions import require_case_access
from . import case_actions
from . import cases as case_steps
from .access_log import log_case_access

__all__ = ["take_results"]


@transaction.atomic
def take_results(
    *,
    user,
    case: DiagnosisCase,
    results: Any,
    seen: Any = None,
    reason: str = "",
    confirm_implausible: bool | Collection[str] = False,
) -> list[DiagnosisStep]:
    """Record ``results`` (test name -> value, None = unknown) if the poster saw this version.

    ``reason`` (optional) is why the clinician overrules the advice: it is stored
    with every step of the form that does not follow the advice of its moment.
    ``confirm_implausible``: True, or the names of the tests whose values outside their
    plausible range the poster confirmed (``cases.record_results``).

    Raises
    ------
    CaseNotFound, CaseClosed
        As :func:`~diagnosis.services.cases.take_step`.
    StaleCase
        The case changed since version ``seen``; nothing is saved.
    ImplausibleValue
        Values outside their plausible range, not confirmed; nothing is saved.
    ValidationError
        Any bad value; ``message_dict`` maps each test name to its messages.
    """
    require_case_access(user, case)
    if not case.is_open:
        raise case_steps.CaseClosed(
            f"This case is closed ({case.status}); it accepts no more steps."
        )
    locked = case_steps._lock_open_case(user, case)
    case_actions.check_seen(user=user, case=locked, seen=case_actions._seen(seen))
    why = case_actions._reason(reason, what="advice is overruled", required=False)
    steps = case_steps.record_results(
        user=user, case=locked, results=results, confirm_implausible=confirm_implausible
    )
    if why:
        overruled = [s for s in steps if not s.followed_advice]
        if not overruled:
            raise ValidationError(
                "These steps follow the advice; a reason is only recorded when you overrule it."
            )
        for step in overruled:
            step.overrule_reason = why
            step.save(update_fields=["overrule_reason"])
    log_case_access(
        user=user, case_id=case.pk, action=CaseAccess.RESULTS, detail=f"{len(steps)} steps"
    )
    case_steps.refresh_case(case)
    return steps
