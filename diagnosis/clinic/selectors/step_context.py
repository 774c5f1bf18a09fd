"""What one step read under its case's row lock, handed explicitly to what needs it.

:func:`~diagnosis.clinic.services.step.apply_step` locks the case row, reads its steps and
its dataset's tests once (:func:`~diagnosis.clinic.services.step.hold_steps`), and passes the
:class:`StepContext` down: to the ``seen`` check, to the step service (which takes the step on
that locked row, without locking it again or opening a savepoint of its own), to the advice and
price of the step, and back to the caller, whose answer is computed from it instead of reading
the case again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction

from diagnosis.catalog.models import DiagnosticTest

from ..models import DiagnosisCase, DiagnosisStep

__all__ = ["StepContext"]


@dataclass(frozen=True)
class StepContext:
    """A case row locked by the current transaction, with its steps and tests as read under it.

    ``steps`` is every step of the case in position order, each with its test and authors;
    the step services append each step they write in the same transaction (the list is the
    one mutable part: the case as the transaction leaves it).  ``tests`` is the case's
    dataset's tests in index order.  ``case``'s fields are kept current by the services as
    they write them (``updated_at``, ``status``, ``final_label``, ``closed_at``).

    Valid only in the transaction that locked the row, and as the answer of that step.
    """

    case: DiagnosisCase
    steps: list[DiagnosisStep]
    tests: list[DiagnosticTest]
    #: the lock set the row's ``updated_at`` already (``step.apply_step``, through
    #: ``step.touched_case_row``): the steps written in this transaction do not update it again
    touched: bool = False
    #: the innermost ``transaction.atomic`` block open when the row was locked and read
    block: object = field(default_factory=lambda: _innermost_block(), repr=False, compare=False)

    def for_case(self, case: DiagnosisCase) -> StepContext:
        """``self``, checked to be ``case``'s (a context of another case is a bug)."""
        if case.pk != self.case.pk:
            raise ValueError(f"A step context of case {self.case.pk} given for case {case.pk}.")
        return self

    def check_locked(self) -> None:
        """Raise unless the atomic block it was read in is still open (else it is stale)."""
        if not any(b is self.block for b in transaction.get_connection().atomic_blocks):
            raise RuntimeError("A StepContext used outside the transaction that locked its case.")


def _innermost_block() -> object:
    blocks = transaction.get_connection().atomic_blocks
    if not blocks:
        raise RuntimeError("A StepContext is made in the transaction that locks its case.")
    return blocks[-1]
