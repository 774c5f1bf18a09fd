"""Steps posted the way the front doors post them: an action's fields made into a command by
``step.command_from_fields`` and taken by ``step.apply_step``, the one entry point."""

from __future__ import annotations

from typing import Any

from diagnosis.clinic.services import step

StaleCase = step.StaleCase


def post_step(
    *, user, action: str, case=None, case_id: Any = None, seen: Any = None, **fields: Any
) -> step.StepTaken:
    """``action`` with ``fields`` (test, value, label, position, results, reason,
    confirm_implausible) on ``case`` or ``case_id``; ``case``, when given, is read again
    afterwards, as the screen reads it again after a step."""
    taken = step.apply_step(
        user=user,
        case_id=case.pk if case_id is None else case_id,
        command=step.command_from_fields(action, **fields),
        seen=seen,
    )
    if case is not None:
        case.refresh_from_db()
    return taken


def post_results(*, user, case, results: Any, **fields: Any) -> list:
    """Several results in one form; the steps it wrote."""
    return list(post_step(user=user, case=case, action="results", results=results, **fields).steps)


def post_correction(*, user, case, position: Any, value: Any, reason: str, **fields: Any):
    """A recorded value corrected; the replacement step."""
    return post_step(
        user=user,
        case=case,
        action="correct",
        position=position,
        value=value,
        reason=reason,
        **fields,
    ).step


def post_undo(*, user, case, reason: str, **fields: Any):
    """The last step that still counts undone; that step."""
    return post_step(user=user, case=case, action="undo", reason=reason, **fields).step
