"""JSON step API for integrators: the same services and selectors as the clinician's screen.

``GET  /api/cases/<id>/step`` returns the case state: ``advice`` (the model's
action as numbers, ``action.to_dict()`` plus class and test names),
``explanation`` (the same advice in words, with the risk of each action for
models that weigh them, the error costs the model decides with as ``costs``,
and, for a patient split by an unavailable test, one phrase per branch as
``branches``), the steps and every test priced for this patient now.
``POST /api/cases/<id>/step`` with a JSON body takes one step and returns the new state::

    {"action": "result", "test": "chol", "value": 233}
    {"action": "unavailable", "test": "thal"}
    {"action": "classify", "label": 1}            # class index, or its name: "label": "sick"
    {"action": "refer"}
    {"action": "refer", "reason": "family history", "seen": 4}   # an overrule's reason
    {"action": "correct", "position": 0, "value": 240, "reason": "typed 24"}
    {"action": "undo", "reason": "wrong patient's sample"}
    {"action": "results", "results": {"age": 54, "sex": "male", "goitre": null}}
    {"action": "result", "test": "glucose", "value": 1, "confirm_implausible": true}

``results`` records several tests at once (the free questions, a derived test
with its inputs), each as its own step at its own price; ``null`` marks a test
unknown / not available.  All or nothing: on any bad value the 400 answer also
has ``"errors": {"<test name>": ["..."]}`` and nothing is saved.  A derived test
with a formula (thyroid FTI from TT4 and T4U) is computed when its inputs are
recorded; a typed value for it that contradicts them is refused.  Each test in ``tests``
names its inputs in ``derived_from`` (empty for a test of its own): advice to order a
derived test is followed by entering its inputs that are still missing (each such result
counts as following the advice).

A value inside a test's range but outside its plausible range (each test's
``plausible_min`` / ``plausible_max`` in ``tests``) is refused with 422, nothing saved::

    {"error": "Glucose ... of 1 mg/dl is outside the plausible range 40–400 mg/dl. ...",
     "implausible": [{"test": "glucose", "value": 1, "plausible_min": 40, ...}]}

(for ``results`` also ``errors`` by test name).  Send the same step again with
``"confirm_implausible": true`` to save it: the step then shows ``implausible_confirmed``
and the ``plausible_range`` confirmed against.  A test with ``integer_only`` refuses a
fraction (400).

``seen`` (optional) is the case ``version`` the client last read: when the
case changed since (another tab, another program, a repeated request), the step
is refused with 409 and a message saying what changed, by whom and when.
``correct`` replaces a recorded value (``position`` as in ``steps``, 0-based);
``undo`` marks the last step that still counts as undone.  Both keep the
original step in ``steps`` with its ``correction``, who, when and why; an undone
test's price stays paid, a corrected value costs nothing extra.

Authentication is the Django session (log in at ``/accounts/login/`` first);
POSTs need the CSRF token in the ``X-CSRFToken`` header, taken from the
``csrftoken`` cookie, exactly as for the web forms.  Errors are JSON
``{"error": "..."}``: 400 for bad input, 401 when not logged in, 404 for a case
that does not exist *or* is not yours (the same answer, word for word, so case
ids cannot be enumerated: only the case's own clinician may read or step it, and
a lead clinician of their team may read it), 403 for a step posted by such a
lead, 409 for a closed case or a stale ``seen``, 422 for an unconfirmed implausible
value.  Every answer naming a case is
written to the case access log.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_http_methods

from diagnosis.clinic import selectors
from diagnosis.clinic.models import CaseAccess
from diagnosis.clinic.permissions import CaseNotFound
from diagnosis.clinic.selectors import case_audit
from diagnosis.clinic.selectors.matrices import case_matrix
from diagnosis.clinic.services import step
from diagnosis.clinic.services.access_log import log_case_access
from diagnosis.shared.validation import BodyTooLarge, clean_step_body, parse_json_object

__all__ = ["case_step", "implausible_answer", "state_to_dict"]


def _error(message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def implausible_answer(exc: step.ImplausibleValue) -> dict[str, Any]:
    """The 422 body of values outside their plausible range: what, and how to confirm."""
    body: dict[str, Any] = {
        "error": " ".join(f.message for f in exc.found)
        + ' Nothing was saved; if it is right, send the step again with "confirm_implausible":'
        " true.",
        "implausible": [f.to_dict() for f in exc.found],
    }
    if hasattr(exc, "error_dict"):
        body["errors"] = exc.message_dict
    return body


def state_to_dict(state) -> dict[str, Any]:
    """The case state as plain JSON (what the screen shows, for a program)."""
    case = state.case
    labels = list(state.class_labels)
    return {
        "case": case.pk,
        "status": case.status,
        "is_open": state.is_open,
        "patient_reference": case.patient_reference,
        "model": case.trained_model_id,
        "final_label": (
            labels[case.final_label]
            if case.final_label is not None and case.final_label < len(labels)
            else None
        ),
        "version": case_audit.case_version(case, steps=state.steps),
        "accumulated_cost": state.accumulated_cost,
        "advice": state.advice.to_json() if state.advice is not None else None,
        "explanation": state.explanation.to_dict() if state.explanation else None,
        "class_labels": labels,
        # what the case is decided with: rows the actual class, columns the concluded one
        "error_matrix": case_matrix(case),
        "referral_cost": case.trained_model.reject_cost_snapshot,
        "steps": [
            {
                "position": s.position,
                "kind": s.kind,
                "test": s.test.name if s.test_id else None,
                "value": s.value,
                "price": s.price,
                "discount_from": state.step_discounts.get(s.position),
                "label": labels[s.label] if s.label is not None and s.label < len(labels) else None,
                "followed_advice": s.followed_advice,
                "overrule_reason": s.overrule_reason,
                # outside its test's plausible range, confirmed against the range kept here
                "implausible_confirmed": s.implausible_confirmed,
                "plausible_range": s.plausible_range,
                "created_by": s.created_by.get_username(),
                "created_at": s.created_at.isoformat(),
                "correction": s.correction or None,
                "corrected_by": s.corrected_by.get_username() if s.corrected_by_id else None,
                "corrected_at": s.corrected_at.isoformat() if s.corrected_at else None,
                "correction_reason": s.correction_reason,
                "replaced_by": (
                    next((r.position for r in state.steps if r.pk == s.superseded_by_id), None)
                    if s.superseded_by_id
                    else None
                ),
            }
            for s in state.steps
        ],
        "tests": [
            {
                "name": o.test.name,
                "label": o.test.display_label,
                "kind": o.test.kind,
                "unit": o.test.unit,
                "min_value": o.test.min_value,
                "max_value": o.test.max_value,
                "plausible_min": o.test.plausible_min,
                "plausible_max": o.test.plausible_max,
                "integer_only": o.test.integer_only,
                "choices": state.vocabulary.choices_for(o.test) if o.test.is_nominal else None,
                "price_now": o.price_now,
                "full_price": o.full_price,
                "discount_from": o.discount_from,
                # made by the automatic price generator (paper 000 §4.1), as trained with
                "price_generated": o.generated,
                "derived_from": list(o.derived_from),
                "done": o.done,
                "unavailable": o.unavailable,
                "recommended": o.recommended,
                "value": o.value,
            }
            for o in state.test_options
        ],
    }


@login_not_required  # answers 401 JSON itself instead of redirecting to the login page
@require_http_methods(["GET", "POST"])
def case_step(request: HttpRequest, pk: int) -> JsonResponse:
    if not request.user.is_authenticated:
        return _error("Log in first (session authentication).", 401)
    try:
        if request.method == "GET":  # a read is logged here
            case = selectors.case_for_user(user=request.user, pk=pk)
            log_case_access(user=request.user, case_id=case.pk, action=CaseAccess.API_READ)
            return JsonResponse(state_to_dict(selectors.case_state(user=request.user, case=case)))
        try:
            body = clean_step_body(parse_json_object(request.body))
            command = step.command_from_fields(
                body["action"],
                test=body["test"],
                value=body["value"],
                label=body["label"],
                position=body["position"],
                results=body["results"],
                reason=body["reason"],
                confirm_implausible=body["confirm_implausible"],
            )
        except ValidationError:
            # a case one may not read is not found, whatever the body (no log: nothing read)
            selectors.case_for_user(user=request.user, pk=pk)
            raise
        # The service reads and locks the case in one statement (not found, like a missing
        # case, for anyone who may not read it) and logs the step.
        taken = step.apply_step(user=request.user, case_id=pk, command=command, seen=body["seen"])
        return JsonResponse(state_to_dict(taken.state))
    except CaseNotFound as exc:  # missing, or not yours: the same answer
        return _error(str(exc), 404)
    except PermissionDenied as exc:  # a team lead reads the case but takes no step on it
        return _error(str(exc), 403)
    except (step.CaseClosed, step.StaleCase) as exc:
        return _error(" ".join(exc.messages), 409)
    except BodyTooLarge as exc:
        return _error(" ".join(exc.messages), 413)
    except step.ImplausibleValue as exc:
        return JsonResponse(implausible_answer(exc), status=422)
    except ValidationError as exc:
        if hasattr(exc, "error_dict"):  # several results: each test's messages by its name
            return JsonResponse(
                {"error": " ".join(exc.messages), "errors": exc.message_dict}, status=400
            )
        return _error(" ".join(exc.messages), 400)
