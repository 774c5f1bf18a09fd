"""The clinician's screen: the next recommended action, the tests so far, the cost so far.

Every POST calls one service and redirects (post/redirect/get), so a refresh
or a closed browser never repeats or loses a step: the case resumes from the
database where it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from diagnosis import figures
from diagnosis.clinic.services import step as step_service
from diagnosis.permissions import ModelNotFound, require_clinician
from diagnosis.training.selectors import models as model_selectors
from diagnosis.views.common import messages_of, page

from .. import selectors
from ..forms import ClassifyForm, ResultForm, ResultsForm, StartCaseForm
from ..models import CaseAccess, DiagnosisCase, DiagnosisStep
from ..permissions import CaseNotFound
from ..selectors import case_audit, decision, ensemble, stale
from ..selectors.entry_blocks import computed_formulas, entry_block
from ..services import cases as case_services
from ..services.access_log import log_case_access
from ..services.step import StaleCase, apply_step
from .case_post import StepPost, implausible_rows, parse_step_post


def _case_or_404(request: HttpRequest, pk: int, *, access: str | None) -> DiagnosisCase:
    """A case the user may read, or 404: a case not theirs looks exactly like a missing one.

    ``access`` is logged (``CaseAccess``); None when the step service logs the request.
    """
    try:
        case = selectors.case_for_user(user=request.user, pk=pk)
    except CaseNotFound as exc:
        raise Http404(str(exc)) from exc
    if access is not None:
        log_case_access(user=request.user, case_id=case.pk, action=access)
    return case


@require_http_methods(["GET", "POST"])
def case_new(request: HttpRequest) -> HttpResponse:
    """Start a case with the model in ``?model=<id>`` (GET shows the form, POST starts it)."""
    require_clinician(request.user)  # before anything else: even the empty form is a clinician's
    model_id = request.GET.get("model") or request.POST.get("model")
    if not model_id or not str(model_id).isdigit():
        return page(request, "clinic/case_new.html", {"error": "Choose a model first."}, status=400)
    try:  # a draft or retired model is answered like a missing one
        trained = model_selectors.startable_model(user=request.user, pk=int(model_id))
    except ModelNotFound as exc:
        raise Http404(str(exc)) from exc
    form = StartCaseForm(request.POST or None)
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        try:
            case = case_services.start_case(
                user=request.user,
                trained_model=trained,
                patient_reference=form.cleaned_data["patient_reference"],
            )
        except ValidationError as exc:
            errors = messages_of(exc)
        else:
            return redirect("case-detail", pk=case.pk)
    status = 400 if request.method == "POST" else 200
    return page(
        request,
        "clinic/case_new.html",
        {"trained": trained, "form": form, "errors": errors},
        status=status,
    )


def step_rows(state) -> list[dict[str, Any]]:
    """The steps of a case, ready to show: value, price, discount, advice followed."""
    rows = []
    audit = case_audit.step_audit(state.steps)
    computed = computed_formulas(state)
    replacements = {s.superseded_by_id for s in state.steps if s.superseded_by_id}
    for step in state.steps:
        shown = step.shown_advice
        rows.append(
            {
                "step": step,
                "audit": audit.get(step.position, {}),
                "value": case_audit.step_value_text(step, state.vocabulary),
                "discount_partner": state.step_discounts.get(step.position),
                "label": (
                    state.class_labels[step.label]
                    if step.label is not None and 0 <= step.label < len(state.class_labels)
                    else ""
                ),
                "advice_text": selectors.advice_headline(shown),
                # advice to order a derived test, followed by entering one of its inputs
                "followed_by_input": bool(
                    step.followed_advice
                    and step.test_id
                    and shown is not None
                    and shown.kind == "extract"
                    and shown.test_index != step.test.index
                ),
                "computed": computed.get(step.test.index) if step.test_id else None,
                "is_correction": step.pk in replacements,
                # a value outside its plausible range, confirmed: the range shown then
                "confirmed_range": case_audit.confirmed_range_text(step),
            }
        )
    return rows


def _case_context(
    request: HttpRequest,
    case: DiagnosisCase,
    state,
    *,
    result_form: ResultForm | None = None,
    classify_form: ClassifyForm | None = None,
    errors: list[str] | None = None,
    entry_name: str | None = None,
    correction: dict[str, Any] | None = None,
    results_form=None,
    implausible: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    advice = state.advice
    explanation = state.explanation
    options = list(state.test_options)
    open_options = [o for o in options if not o.done and not o.unavailable]
    by_name = {o.test.name: o for o in options}
    recommended = next((o for o in options if o.recommended), None)
    if entry_name is None:
        entry_name = request.GET.get("test") or None
    entry = by_name.get(entry_name) if entry_name else None
    if entry is None or entry.done or entry.unavailable:
        entry = recommended if (recommended and not recommended.done) else None
    if entry is not None and (result_form is None or result_form.test.pk != entry.test.pk):
        result_form = ResultForm(test=entry.test, choices=state.vocabulary.choices_for(entry.test))
    if classify_form is None:
        initial = {}
        if advice and advice.kind == "classify" and advice.label_index is not None:
            initial["label"] = str(advice.label_index)
        classify_form = ClassifyForm(class_labels=list(state.class_labels), initial=initial)
    risks = explanation.risks if explanation else []
    audit = _audit_context(request, case, state, correction)
    if audit["correct_form"] is not None and result_form is not None:
        result_form.fields["value"].widget.attrs.pop("autofocus", None)
    return {
        **audit,
        **_block_context(state, entry, bound=results_form),
        "catalog_changes": stale.catalog_changes(user=request.user, case=case),
        "case": case,
        "state": state,
        "trained": case.trained_model,
        "model_page_open": model_selectors.model_page_open(
            user=request.user, trained=case.trained_model
        ),
        "advice": advice,
        "explanation": explanation,
        "recommended": recommended,
        "entry": entry,
        "entry_is_recommended": bool(
            entry and recommended and entry.test.pk == recommended.test.pk
        ),
        "result_form": result_form,
        "classify_form": classify_form,
        "option_rows": [{"option": o} for o in open_options],
        "steps": step_rows(state),
        "errors": errors or [],
        # values outside their plausible range, asked about in the entry form
        "implausible": implausible or [],
        "risks": risks,
        "risks_figure": figures.risks_figure(risks) if risks else None,
        "proba": explanation.proba if explanation and advice and advice.kind != "extract" else [],
        "tree_url": reverse("model-tree", args=[case.trained_model_id]) + f"?case={case.pk}",
        "has_tree": selectors.model_has_tree(case.trained_model),
        "ensemble_url": reverse("model-ensemble", args=[case.trained_model_id])
        + f"?case={case.pk}",
        "is_ensemble": ensemble.model_is_ensemble(case.trained_model),
        "diagram_kind": decision.diagram_kind(case.trained_model),
        "decision_url": reverse("model-decision", args=[case.trained_model_id])
        + f"?case={case.pk}",
    }


def _block_context(state, entry, *, bound: ResultsForm | None = None) -> dict[str, Any]:
    """The entry block (several tests in one form, or None) and, for several tests, their
    ``results_form`` (the bound one posted, when it holds the same tests)."""
    block = entry_block(state, entry)
    form = None
    if block is not None and block.is_batch:
        tests = [o.test for o in block.options]
        if bound is not None and [t.pk for t in bound.tests] == [t.pk for t in tests]:
            form = bound
        else:
            form = ResultsForm(tests=tests, vocabulary=state.vocabulary)
    return {"entry_block": block, "results_form": form}


@require_http_methods(["GET", "POST"])
def case_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The clinician's screen; a POST is one step (``clinic.views.case_post.parse_step_post``).

    A team lead reading a member's open case gets it read-only (the summary's page: no step
    forms); a step posted by them is refused (403), as the services refuse it.
    """
    reading = request.method == "GET"
    case = _case_or_404(request, pk, access=CaseAccess.VIEW if reading else None)
    state = selectors.case_state(user=request.user, case=case)
    if state.read_only:
        if not reading:
            raise PermissionDenied("Only the case's own clinician takes steps on it.")
        return _summary_page(request, case, state)
    if reading:
        if not state.is_open:
            return redirect("case-summary", pk=case.pk)
        return page(request, "clinic/case_detail.html", _case_context(request, case, state))

    posted = parse_step_post(request.POST, state)
    if not state.is_open:  # a second press, or a stale tab, after the case was closed
        messages.error(request, _closed_message(request, case))
        return redirect("case-summary", pk=case.pk)
    if (
        posted.closes_case
        and request.POST.get("confirm") != "yes"
        and _seen_is_current(request, case)  # else the service refuses it, saying what changed
    ):
        # A closing action asks first: a real page, so it works without JavaScript.
        confirm = _confirmation(request, case, state, posted.action, posted.classify_form)
        if confirm is not None:
            return page(request, "clinic/case_confirm.html", confirm)
    refusal = Refusal(errors=list(posted.errors))
    if posted.command is not None:
        try:
            apply_step(
                user=request.user,
                case_id=case.pk,
                command=posted.command,
                seen=request.POST.get("seen"),
            )
        except CaseNotFound as exc:  # the clinician lost the case's access since the page loaded
            raise Http404(str(exc)) from exc
        except step_service.CaseClosed:
            messages.error(request, _closed_message(request, case))
            return redirect("case-summary", pk=case.pk)
        except (StaleCase, step_service.ImplausibleValue, ValidationError) as exc:
            refusal = _refusal(posted, exc)
        else:
            case.refresh_from_db()
            if posted.action == "correct":
                messages.success(request, "Value corrected; the advice below uses it.")
            elif posted.action == "undo":
                messages.success(request, "Step undone; the advice below is recomputed without it.")
            return redirect("case-detail" if case.is_open else "case-summary", pk=case.pk)
    step_service.refresh_case(case)
    state = selectors.case_state(user=request.user, case=case)
    if not state.is_open:
        messages.error(request, _closed_message(request, case))
        return redirect("case-summary", pk=case.pk)
    context = _case_context(
        request,
        case,
        state,
        result_form=posted.result_form,
        classify_form=posted.classify_form,
        errors=refusal.errors,
        entry_name=posted.entry_name,
        correction=posted.correction,
        results_form=posted.results_form,
        implausible=refusal.implausible,
    )
    return page(request, "clinic/case_detail.html", context, status=409 if refusal.stale else 400)


@dataclass
class Refusal:
    """Why a posted step was not taken, as the screen shows it: messages above the forms,
    the values to confirm, or a form made from an older version of the case (409)."""

    errors: list[str] = field(default_factory=list)
    implausible: list[dict[str, Any]] = field(default_factory=list)
    stale: bool = False


def _refusal(posted: StepPost, exc: ValidationError) -> Refusal:
    """Where the service's refusal goes: next to the field it is about where there is one."""
    if isinstance(exc, step_service.ImplausibleValue):
        # asked, not refused: the form again, with the question and a button to confirm
        rows = implausible_rows(exc.found, posted.raw)
        if posted.correction is not None:
            posted.correction["implausible"] = rows
            return Refusal()
        return Refusal(implausible=rows)
    errors = messages_of(exc)
    if isinstance(exc, StaleCase):
        return Refusal(errors=errors, stale=True)
    if posted.correction is not None:
        posted.correction["errors"] = errors
        return Refusal()
    if posted.results_form is not None and hasattr(exc, "error_dict"):
        return Refusal(errors=posted.results_form.add_test_errors(exc.message_dict))
    if posted.result_form is not None:
        # The service's message is about the value entered: show it next to the input.
        for message in errors:
            posted.result_form.add_error("value", message)
        return Refusal()
    return Refusal(errors=errors)


def _seen_is_current(request: HttpRequest, case: DiagnosisCase) -> bool:
    """Whether the posted form was made from the case as it is now (no version posted: yes)."""
    raw = request.POST.get("seen", "")
    return raw == "" or (raw.isdigit() and int(raw) == case_audit.case_version(case))


def _closed_message(request: HttpRequest, case: DiagnosisCase) -> str:
    """Why nothing was saved on a closed case: who closed it and when."""
    closing = (
        case.steps.filter(kind__in=(DiagnosisStep.CLASSIFY, DiagnosisStep.REFER))
        .select_related("created_by")
        .order_by("-position")
        .first()
    )
    if closing is None:
        return "This case is already closed; nothing was changed."
    who = closing.created_by.get_username()
    if closing.created_by_id == request.user.pk:
        who = f"you ({who})"
    return (
        f"This case was already closed ({case.get_status_display().lower()}) by {who} at "
        f"{closing.created_at:%Y-%m-%d %H:%M:%S} UTC; nothing was changed."
    )


def _confirmation(
    request: HttpRequest, case: DiagnosisCase, state, action: str, classify_form
) -> dict[str, Any] | None:
    """The confirmation page's context, or None when the posted class is not valid."""
    label = None
    if action == "classify":
        if classify_form is None or not classify_form.is_valid():
            return None  # the service's message about the class is shown on the case screen
        index = classify_form.cleaned_data["label"]
        label = state.class_labels[index]
    advice = state.advice
    follows = advice is not None and (
        (action == "refer" and advice.kind == "reject")
        or (
            action == "classify"
            and advice.kind == "classify"
            and advice.label_index == classify_form.cleaned_data["label"]
        )
    )
    return {
        "case": case,
        "state": state,
        "trained": case.trained_model,
        "action": action,
        "label": label,
        "label_index": classify_form.cleaned_data["label"] if label is not None else None,
        "follows": follows,
        "advice_text": selectors.advice_headline(state.advice),
        "seen": request.POST.get("seen", ""),
        "reason": request.POST.get("reason", ""),
    }


def _audit_context(
    request: HttpRequest, case: DiagnosisCase, state, correction: dict[str, Any] | None
) -> dict[str, Any]:
    """What the case screen needs for corrections, the audit and the patient's history."""
    correction = dict(correction or {})
    if not correction and request.GET.get("correct", "").isdigit():
        correction = {"action": "correct", "position": request.GET["correct"]}
    target = None
    if correction.get("action") == "correct" and str(correction.get("position", "")).isdigit():
        position = int(correction["position"])
        target = next(
            (
                s
                for s in state.steps
                if s.position == position and s.kind == DiagnosisStep.RESULT and s.is_active
            ),
            None,
        )
    correct_form = None
    if target is not None:
        data = {"correct-value": correction["value"]} if "value" in correction else None
        correct_form = ResultForm(
            data,
            test=target.test,
            choices=state.vocabulary.choices_for(target.test),
            prefix="correct",
        )
        correct_form.fields["value"].label = f"Correct value of {target.test.display_label}"
        if data is not None:
            correct_form.is_valid()  # only to show the value typed back; the service checks it
            correct_form.errors.clear()
        for message in correction.get("errors", []):
            correct_form.add_error("value", message)
    undo_step = next((s for s in reversed(state.steps) if s.is_active), None)
    return {
        "seen": case_audit.case_version(case, steps=state.steps),
        "correct_step": target,
        "correct_value": case_audit.step_value_text(target) if target else "",
        "correct_form": correct_form,
        "correction": correction,
        "undo_step": undo_step,
        "undo_restores": next(
            (s for s in state.steps if undo_step and s.superseded_by_id == undo_step.pk), None
        ),
        "undo_errors": correction.get("errors", []) if correction.get("action") == "undo" else [],
        "others": [
            case_audit.describe_event(e, viewer=request.user)
            for e in case_audit.events_by_others(case)
        ],
        "history": case_audit.earlier_cases_of_patient(user=request.user, case=case),
    }


@require_GET
def case_summary(request: HttpRequest, pk: int) -> HttpResponse:
    """What was decided, by whom and when, every step with its price, and the total cost."""
    case = _case_or_404(request, pk, access=CaseAccess.SUMMARY)
    state = selectors.case_state(user=request.user, case=case)
    return _summary_page(request, case, state)


def _summary_page(request: HttpRequest, case: DiagnosisCase, state) -> HttpResponse:
    """The summary (also a lead's read-only view of an open case: the advice now, no forms)."""
    rows = step_rows(state)
    decision = next(
        (
            r
            for r in reversed(rows)
            if r["step"].kind in (DiagnosisStep.CLASSIFY, DiagnosisStep.REFER)
        ),
        None,
    )
    return page(
        request,
        "clinic/case_summary.html",
        {
            "case": case,
            "state": state,
            "trained": case.trained_model,
            "model_page_open": model_selectors.model_page_open(
                user=request.user, trained=case.trained_model
            ),
            "steps": rows,
            "decision": decision,
            "adherence": case_audit.adherence(state.steps),
            "read_only": state.read_only,
            "advice_now": selectors.advice_headline(state.advice) if state.advice else "",
        },
    )
