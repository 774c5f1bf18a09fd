"""The clinician's screen: the next recommended action, the tests so far, the cost so far.

Every POST calls one service and redirects (post/redirect/get), so a refresh
or a closed browser never repeats or loses a step: the case resumes from the
database where it was.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from .. import figures, selectors
from ..forms import ClassifyForm, ResultForm, StartCaseForm
from ..models import DiagnosisCase, DiagnosisStep, TrainedModel
from ..permissions import CaseNotFound, require_clinician
from ..services import cases as case_services
from .common import messages_of, page


def _case_or_404(request: HttpRequest, pk: int) -> DiagnosisCase:
    """The user's own case, or 404: another clinician's case looks exactly like a missing one."""
    try:
        return selectors.case_for_user(user=request.user, pk=pk)
    except CaseNotFound as exc:
        raise Http404(str(exc)) from exc


@require_http_methods(["GET", "POST"])
def case_new(request: HttpRequest) -> HttpResponse:
    """Start a case with the model in ``?model=<id>`` (GET shows the form, POST starts it)."""
    require_clinician(request.user)  # before anything else: even the empty form is a clinician's
    model_id = request.GET.get("model") or request.POST.get("model")
    if not model_id or not str(model_id).isdigit():
        return page(
            request, "diagnosis/case_new.html", {"error": "Choose a model first."}, status=400
        )
    trained = get_object_or_404(TrainedModel.objects.select_related("dataset"), pk=int(model_id))
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
        "diagnosis/case_new.html",
        {"trained": trained, "form": form, "errors": errors},
        status=status,
    )


def _value_display(step) -> str:
    if step.value is None or step.test is None:
        return ""
    if step.test.is_nominal:
        return step.test.choice_label(step.value)
    unit = f" {step.test.unit}" if step.test.unit else ""
    return f"{step.value:g}{unit}"


def step_rows(state) -> list[dict[str, Any]]:
    """The steps of a case, ready to show: value, price, discount, advice followed."""
    rows = []
    for step in state.steps:
        rows.append(
            {
                "step": step,
                "value": _value_display(step),
                "discount_partner": state.step_discounts.get(step.position),
                "label": (
                    state.class_labels[step.label]
                    if step.label is not None and 0 <= step.label < len(state.class_labels)
                    else ""
                ),
                "advice_text": selectors.advice_headline(step.advice),
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
        result_form = ResultForm(test=entry.test)
    if classify_form is None:
        initial = {}
        if advice and advice.get("kind") == "classify" and advice.get("label_index") is not None:
            initial["label"] = str(advice["label_index"])
        classify_form = ClassifyForm(class_labels=list(state.class_labels), initial=initial)
    risks = explanation.risks if explanation else []
    return {
        "case": case,
        "state": state,
        "trained": case.trained_model,
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
        "risks": risks,
        "risks_figure": figures.risks_figure(risks) if risks else None,
        "proba": explanation.proba if explanation and advice["kind"] != "extract" else [],
        "tree_url": reverse("model-tree", args=[case.trained_model_id]) + f"?case={case.pk}",
        "has_tree": selectors.model_has_tree(case.trained_model),
    }


@require_http_methods(["GET", "POST"])
def case_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The clinician's screen; POST ``action`` = result | unavailable | classify | refer."""
    case = _case_or_404(request, pk)
    state = selectors.case_state(user=request.user, case=case)
    if request.method == "GET":
        if not state.is_open:
            return redirect("case-summary", pk=case.pk)
        return page(request, "diagnosis/case_detail.html", _case_context(request, case, state))

    action = request.POST.get("action", "")
    entry_name = request.POST.get("test") or None
    result_form = classify_form = None
    fields: dict[str, Any] = {}
    # The forms only turn the posted text into typed values; the service checks everything.
    if action == "result":
        entry = next((o.test for o in state.test_options if o.test.name == entry_name), None)
        if entry is not None:
            result_form = ResultForm(request.POST, test=entry)
            fields["value"] = request.POST.get("value")
    elif action == "classify":
        classify_form = ClassifyForm(request.POST, class_labels=list(state.class_labels))
        fields["label"] = request.POST.get("label")
    errors: list[str] = []
    if (result_form is None or result_form.is_valid()) and (
        classify_form is None or classify_form.is_valid()
    ):
        try:
            case_services.take_step(
                user=request.user, case=case, action=action, test=entry_name, **fields
            )
        except CaseNotFound as exc:  # the clinician lost the case's access since the page loaded
            raise Http404(str(exc)) from exc
        except case_services.CaseClosed:
            messages.error(request, "This case is already closed; nothing was changed.")
            return redirect("case-summary", pk=case.pk)
        except ValidationError as exc:
            errors = messages_of(exc)
            if result_form is not None:
                # The service's message is about the value entered: show it next to the input.
                for message in errors:
                    result_form.add_error("value", message)
                errors = []
        else:
            case.refresh_from_db()
            return redirect("case-detail" if case.is_open else "case-summary", pk=case.pk)
    case.refresh_from_db()
    state = selectors.case_state(user=request.user, case=case)
    context = _case_context(
        request,
        case,
        state,
        result_form=result_form,
        classify_form=classify_form,
        errors=errors,
        entry_name=entry_name,
    )
    return page(request, "diagnosis/case_detail.html", context, status=400)


@require_GET
def case_summary(request: HttpRequest, pk: int) -> HttpResponse:
    """What was decided, by whom and when, every step with its price, and the total cost."""
    case = _case_or_404(request, pk)
    state = selectors.case_state(user=request.user, case=case)
    rows = step_rows(state)
    decision = next(
        (
            r
            for r in reversed(rows)
            if r["step"].kind in (DiagnosisStep.CLASSIFY, DiagnosisStep.REFER)
        ),
        None,
    )
    followed = [r for r in rows if r["step"].advice]
    return page(
        request,
        "diagnosis/case_summary.html",
        {
            "case": case,
            "state": state,
            "trained": case.trained_model,
            "steps": rows,
            "decision": decision,
            "n_followed": sum(1 for r in followed if r["step"].followed_advice),
            "n_advised": len(followed),
        },
    )
