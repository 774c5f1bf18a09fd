"""The case screen's posted form, read once: the forms it fills and the step command it asks for.

The screen has five forms (one result, several results, a conclusion, a correction, undo) that
all post to the case's page. :func:`parse_step_post` turns whichever was posted into one
:class:`StepPost`: the bound forms (to show back with their messages) and the command for
``services.step.apply_step``. It checks nothing itself: the forms only carry the text, and the
service decides (the same function both JSON APIs reach).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.http import QueryDict

from ..forms import ClassifyForm, ResultForm, ResultsForm
from ..services.step import RecordResults, StepCommand, command_from_fields

__all__ = ["StepPost", "confirmed_tests", "implausible_rows", "parse_step_post"]


@dataclass
class StepPost:
    """One posted step: its forms as bound, the values as typed, and the command (None when a
    form refused the text or the post asked for no known action: ``errors`` or the form's
    own messages say why)."""

    action: str
    entry_name: str | None
    command: StepCommand | None
    #: test name -> the value as typed (the implausible-value box posts them back)
    raw: dict[str, Any] = field(default_factory=dict)
    result_form: ResultForm | None = None
    classify_form: ClassifyForm | None = None
    results_form: ResultsForm | None = None
    #: a correction or undo: what the screen shows back (position, value, errors, the box)
    correction: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def closes_case(self) -> bool:
        """A conclusion or a referral: the screen asks before it is taken."""
        return self.action in ("classify", "refer")


def confirmed_tests(post: QueryDict, raw_by_test: dict[str, Any]) -> set[str]:
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


def parse_step_post(post: QueryDict, state) -> StepPost:
    """The step the case screen's ``post`` asks for, on the case as ``state`` shows it."""
    action = post.get("action", "")
    entry_name = post.get("test") or None
    reason = post.get("reason", "")
    if action == "results":  # several tests in one form (free questions, a derived test)
        return _several_results(post, state, entry_name, reason)
    if action in ("correct", "undo"):
        return _correction(post, state, action, reason)
    parsed = StepPost(action=action, entry_name=entry_name, command=None)
    fields: dict[str, Any] = {"test": entry_name}
    form_valid = True
    if action == "result":
        entry = next((o.test for o in state.test_options if o.test.name == entry_name), None)
        if entry is not None:  # an unknown test has no form: the service names the problem
            parsed.result_form = ResultForm(
                post, test=entry, choices=state.vocabulary.choices_for(entry)
            )
            form_valid = parsed.result_form.is_valid()
            fields["value"] = post.get("value")
            parsed.raw = {entry.name: fields["value"]}
            fields["confirm_implausible"] = confirmed_tests(post, parsed.raw)
    elif action == "classify":
        parsed.classify_form = ClassifyForm(post, class_labels=list(state.class_labels))
        form_valid = parsed.classify_form.is_valid()
        fields["label"] = post.get("label")
    if form_valid:
        parsed.command = _command(parsed, action, reason, fields)
    return parsed


def _command(parsed: StepPost, action: str, reason: str, fields: dict[str, Any]):
    try:
        return command_from_fields(action, reason=reason, **fields)
    except ValidationError as exc:  # no such action: said on the page, nothing taken
        parsed.errors = [str(m) for m in exc.messages]
        return None


def _several_results(post: QueryDict, state, entry_name: str | None, reason: str) -> StepPost:
    options = {o.test.name: o for o in state.test_options}
    tests = [options[n].test for n in post.getlist("tests") if n in options]
    if not tests:
        message = "The form named no test of this model; reload the page."
        return StepPost(action="results", entry_name=entry_name, command=None, errors=[message])
    form = ResultsForm(post, tests=tests, vocabulary=state.vocabulary)
    form.is_valid()  # the fields only carry text; the service checks every value
    results = form.results()
    command = RecordResults(
        results=results, confirm_implausible=confirmed_tests(post, results), reason=reason
    )
    return StepPost(
        action="results",
        entry_name=entry_name,
        command=command,
        raw=results,
        results_form=form,
    )


def _correction(post: QueryDict, state, action: str, reason: str) -> StepPost:
    correction: dict[str, Any] = {
        "action": action,
        "position": post.get("position"),
        "value": post.get("correct-value", post.get("value")),
        "reason": reason,
    }
    parsed = StepPost(action=action, entry_name=None, command=None, correction=correction)
    fields: dict[str, Any] = {}
    if action == "correct":
        target = next(
            (s for s in state.steps if str(s.position) == str(correction["position"])), None
        )
        if target is not None and target.test is not None:
            parsed.raw = {target.test.name: correction["value"]}
        fields.update(
            position=correction["position"],
            value=correction["value"],
            confirm_implausible=bool(confirmed_tests(post, parsed.raw)),
        )
    parsed.command = _command(parsed, action, reason, fields)
    return parsed
