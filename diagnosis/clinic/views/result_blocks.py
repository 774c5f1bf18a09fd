"""The case screen's several-tests form: free questions together, a derived test with its inputs.

Which tests go together is the selector's (``selectors.entry_blocks``); saving them is the
step's (``services.step.apply_step`` with a ``RecordResults`` command).  This module only
builds the form and turns the post into that command.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.http import HttpRequest

from diagnosis.clinic.services.step import ImplausibleValue
from diagnosis.views.common import messages_of

from ..forms import ResultsForm
from ..selectors.entry_blocks import computed_formulas, entry_block
from ..services.step import RecordResults, StaleCase, apply_step

__all__ = [
    "Posted",
    "block_context",
    "computed_formulas",
    "confirmed_tests",
    "implausible_rows",
    "post_results",
]


def confirmed_tests(post, raw_by_test: dict[str, Any]) -> set[str]:
    """The tests whose value the clinician confirmed although outside its plausible range.

    The confirmation box (``_implausible_confirm.html``) posts ``confirm_implausible=yes``
    and, per value it asked about, ``confirmed-<test>`` = the value as typed then: a value
    changed since is not confirmed (it is checked, and asked about, afresh).
    """
    if post.get("confirm_implausible") != "yes":
        return set()
    return {
        name
        for name, raw in raw_by_test.items()
        if raw is not None and post.get(f"confirmed-{name}") == str(raw)
    }


def implausible_rows(found, raw_by_test: dict[str, Any]) -> list[dict[str, Any]]:
    """What the confirmation box shows and posts back, per value outside its plausible range."""
    return [
        {"test": f.test, "message": f.message, "raw": raw_by_test.get(f.test, "")} for f in found
    ]


def block_context(state, entry, *, bound: ResultsForm | None = None) -> dict[str, Any]:
    """``entry_block`` (or None) and, for several tests, their ``results_form``."""
    block = entry_block(state, entry)
    form = None
    if block is not None and block.is_batch:
        tests = [o.test for o in block.options]
        if bound is not None and [t.pk for t in bound.tests] == [t.pk for t in tests]:
            form = bound
        else:
            form = ResultsForm(tests=tests, vocabulary=state.vocabulary)
    return {"entry_block": block, "results_form": form}


@dataclass
class Posted:
    """What became of a posted several-tests form."""

    saved: bool
    form: ResultsForm | None = None
    errors: list[str] = field(default_factory=list)
    stale: bool = False
    implausible: list[dict[str, Any]] = field(default_factory=list)


def post_results(request: HttpRequest, case, state) -> Posted:
    """Save the posted form through the service; on refusal, the form with its messages."""
    names = request.POST.getlist("tests")
    options = {o.test.name: o for o in state.test_options}
    tests = [options[n].test for n in names if n in options]
    if not tests:
        message = "The form named no test of this model; reload the page."
        return Posted(saved=False, errors=[message])
    form = ResultsForm(request.POST, tests=tests, vocabulary=state.vocabulary)
    form.is_valid()  # the fields only carry text; the service checks every value
    results = form.results()
    try:
        command = RecordResults(
            results=results,
            confirm_implausible=confirmed_tests(request.POST, results),
            reason=request.POST.get("reason", ""),
        )
        apply_step(
            user=request.user, case_id=case.pk, command=command, seen=request.POST.get("seen")
        )
    except StaleCase as exc:
        return Posted(saved=False, form=form, errors=messages_of(exc), stale=True)
    except ImplausibleValue as exc:
        return Posted(saved=False, form=form, implausible=implausible_rows(exc.found, results))
    except ValidationError as exc:
        if hasattr(exc, "error_dict"):
            return Posted(saved=False, form=form, errors=form.add_test_errors(exc.message_dict))
        return Posted(saved=False, form=form, errors=messages_of(exc))
    return Posted(saved=True)
