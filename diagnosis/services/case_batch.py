"""Several results posted at once by the screen or the API, guarded like every other step.

:func:`take_results` locks the case, refuses a form made from an older version
of it (:func:`~diagnosis.services.case_actions.check_seen`), then records the
results through :func:`~diagnosis.services.cases.record_results`, all or nothing.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from ..models import DiagnosisCase, DiagnosisStep
from ..permissions import require_case_access
from . import case_actions
from . import cases as case_steps

__all__ = ["take_results"]


@transaction.atomic
def take_results(
    *, user, case: DiagnosisCase, results: Any, seen: Any = None
) -> list[DiagnosisStep]:
    """Record ``results`` (test name -> value, None = unknown) if the poster saw this version.

    Raises
    ------
    CaseNotFound, CaseClosed
        As :func:`~diagnosis.services.cases.take_step`.
    StaleCase
        The case changed since version ``seen``; nothing is saved.
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
    steps = case_steps.record_results(user=user, case=locked, results=results)
    case.refresh_from_db()
    return steps
