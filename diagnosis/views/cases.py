"""The clinician's screen: the next recommended action, the tests so far, the cost so far.

Every POST calls one service and redirects (post/redirect/get), so a refresh
or a closed browser never repeats or loses a step: the case resumes from the
database where it was.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from .. import figures, model_cache, selectors
from ..forms import ClassifyForm, ResultForm, StartCaseForm
from ..models import DiagnosisCase, DiagnosisStep, TrainedModel
from ..services import cases as case_services
from .common import messages_of, page

ACTIONS = ("result", "unavailable", "classify", "refer")


@require_http_methods(["GET", "POST"])
def case_new(request: HttpRequest) -> HttpResponse:
    """Start a case with the model in ``?model=<id>`` (GET shows the form, POST starts it)."""
    model_id = request.GET.get("model") or request.POST.get("model")
    if not model_id or not str(model_id).isdigit():
        return page(request, "diagnosis/case_new.html", {"error": "Choose a model first."}, status=400)
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
        request, "diagnosis/case_new.html", {"trained": trained, "form": form, "errors": errors},
        status=status,
    )


def has_tree(trained: TrainedModel) -> bool:
    """Whether the model is a tree that can be drawn (some learners have no tree)."""
    if not trained.is_ready:
        return False
    try:
        return hasattr(model_cache.get_estimator(trained), "decision_path_nodes")
    except ValueError:
        return False


def _discount_partner(test, price: float, state, *, before_position: int | None = None) -> str | None:
    """The label of a done test of ``test``'s group when ``price`` is the discounted price."""
    if test is None or test.group_id is None or price <= 0 or price >= test.price - 1e-9:
        return None
    if abs(price - test.discounted_price) > 1e-6:
        return None
    for step in state.steps:
        if before_position is not None and step.position >= before_position:
            break
        other = step.test
        if (
            step.kind == DiagnosisStep.RESULT
            and other is not None
            and other.pk != test.pk
            and other.group_id == test.group_id
        ):
            return other.display_label
    return None


def _value_display(step) -> str:
    if step.value is None or step.test is None:
        return ""
    if step.test.is_nominal:
        return step.test.choice_label(step.value)
    unit = f" {step.test.unit}" if step.test.unit else ""
    return f"{step.value:g}{unit}"


_FEATURE = re.compile(r"\bfeature (\d+)\b")
_EXTRACT = re.compile(r"\bextract:(\d+)\b")
_CLASS_COUNTS = re.compile(r"\((\d+: [-\d.e]+(?:, \d+: [-\d.e]+)*)\)")


def readable_reason(reason: str, *, test_labels: dict[int, str], class_labels: list[str]) -> str:
    """The learner's reason with feature indices and class codes replaced by their names."""

    def feature(match: re.Match) -> str:
        return test_labels.get(int(match.group(1)), match.group(0))

    def counts(match: re.Match) -> str:
        parts = []
        for item in match.group(1).split(", "):
            code, _, count = item.partition(": ")
            index = int(code)
            name = class_labels[index] if 0 <= index < len(class_labels) else code
            parts.append(f"{name}: {count}")
        return "(" + ", ".join(parts) + ")"

    def extract(match: re.Match) -> str:
        index = int(match.group(1))
        return f"order {test_labels[index]}" if index in test_labels else match.group(0)

    text = _EXTRACT.sub(extract, _FEATURE.sub(feature, reason or ""))
    text = re.sub(r"\breject\b", "refer", text)
    return _CLASS_COUNTS.sub(counts, text)


def readable_risks(risks: list[dict], *, test_labels: dict[int, str]) -> list[dict]:
    """Risk rows with "extract:3" shown as "order <test>" and "reject" as "refer"."""
    rows = []
    for row in risks:
        action = str(row["action"])
        match = _EXTRACT.fullmatch(action)
        if match and int(match.group(1)) in test_labels:
            action = f"order {test_labels[int(match.group(1))]}"
        elif action == "reject":
            action = "refer"
        elif action == "classify":
            action = "conclude now"
        rows.append({"action": action, "risk": row["risk"]})
    return rows


def _advice_text(advice: dict | None) -> str:
    if not advice:
        return ""
    if advice.get("kind") == "extract":
        return f"order {advice.get('test_label') or advice.get('test_name')}"
    if advice.get("kind") == "classify":
        return f"conclude {advice.get('label')}"
    return "refer"


def step_rows(state) -> list[dict[str, Any]]:
    """The steps of a case, ready to show: value, price, discount, advice followed."""
    rows = []
    for step in state.steps:
        rows.append(
            {
                "step": step,
                "value": _value_display(step),
                "discount_partner": _discount_partner(
                    step.test, step.price, state, before_position=step.position
                ),
                "label": (
                    state.class_labels[step.label]
                    if step.label is not None and 0 <= step.label < len(state.class_labels)
                    else ""
                ),
                "advice_text": _advice_text(step.advice),
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
    advice = dict(state.advice) if state.advice else None
    options = list(state.test_options)
    if advice and advice.get("reason"):
        advice["reason"] = readable_reason(
            advice["reason"],
            test_labels={o.test.index: o.test.display_label for o in options},
            class_labels=list(state.class_labels),
        )
    open_options = [o for o in options if not o.done and not o.unavailable]
    by_name = {o.test.name: o for o in options}
    recommended = next((o for o in options if o.recommended), None)
    if recommended is None and advice and advice.get("kind") == "extract":
        recommended = by_name.get(advice.get("test_name"))
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
    option_rows = [
        {
            "option": o,
            "discount_partner": _discount_partner(o.test, o.price_now, state),
        }
        for o in open_options
    ]
    risks = (advice or {}).get("risks") or None
    if risks:
        risks = readable_risks(risks, test_labels={o.test.index: o.test.display_label for o in options})
    return {
        "case": case,
        "state": state,
        "trained": case.trained_model,
        "advice": advice,
        "recommended": recommended,
        "recommended_discount": (
            _discount_partner(recommended.test, recommended.price_now, state) if recommended else None
        ),
        "entry": entry,
        "entry_is_recommended": bool(entry and recommended and entry.test.pk == recommended.test.pk),
        "entry_discount": _discount_partner(entry.test, entry.price_now, state) if entry else None,
        "result_form": result_form,
        "classify_form": classify_form,
        "option_rows": option_rows,
        "steps": step_rows(state),
        "errors": errors or [],
        "risks_figure": figures.risks_figure(risks) if risks else None,
        "proba": [
            {"label": p["label"], "p": p["p"], "percent": round(100.0 * float(p["p"]), 1)}
            for p in (advice or {}).get("proba") or []
        ],
        "tree_url": reverse("model-tree", args=[case.trained_model_id]) + f"?case={case.pk}",
        "has_tree": has_tree(case.trained_model),
    }


@require_http_methods(["GET", "POST"])
def case_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The clinician's screen; POST ``action`` = result | unavailable | classify | refer."""
    case = get_object_or_404(
        DiagnosisCase.objects.select_related("trained_model", "trained_model__dataset", "clinician"),
        pk=pk,
    )
    state = selectors.case_state(user=request.user, case=case)  # raises PermissionDenied
    if request.method == "GET":
        if not state.is_open:
            return redirect("case-summary", pk=case.pk)
        return page(request, "diagnosis/case_detail.html", _case_context(request, case, state))

    if not state.is_open:
        messages.error(request, "This case is already closed; nothing was changed.")
        return redirect("case-summary", pk=case.pk)
    action = request.POST.get("action", "")
    if action not in ACTIONS:
        context = _case_context(request, case, state, errors=[f"Unknown action {action!r}."])
        return page(request, "diagnosis/case_detail.html", context, status=400)

    tests = {o.test.name: o.test for o in state.test_options}
    result_form = classify_form = None
    errors: list[str] = []
    entry_name = request.POST.get("test") or None
    try:
        if action in ("result", "unavailable"):
            test = tests.get(request.POST.get("test", ""))
            if test is None:
                raise ValidationError("Choose one of this model's tests.")
            if action == "result":
                result_form = ResultForm(request.POST, test=test)
                if result_form.is_valid():
                    case_services.record_result(
                        user=request.user, case=case, test=test, value=result_form.cleaned_data["value"]
                    )
                    return redirect("case-detail", pk=case.pk)
            else:
                case_services.mark_unavailable(user=request.user, case=case, test=test)
                return redirect("case-detail", pk=case.pk)
        elif action == "classify":
            classify_form = ClassifyForm(request.POST, class_labels=list(state.class_labels))
            if classify_form.is_valid():
                case_services.classify(user=request.user, case=case, label=classify_form.cleaned_data["label"])
                return redirect("case-summary", pk=case.pk)
        else:
            case_services.refer(user=request.user, case=case)
            return redirect("case-summary", pk=case.pk)
    except ValidationError as exc:
        errors = messages_of(exc)
        if result_form is not None:
            # The service's message is about the value entered: show it next to the input.
            for message in errors:
                result_form.add_error("value", message)
            errors = []
    case.refresh_from_db()
    state = selectors.case_state(user=request.user, case=case)
    context = _case_context(
        request, case, state, result_form=result_form, classify_form=classify_form,
        errors=errors, entry_name=entry_name,
    )
    return page(request, "diagnosis/case_detail.html", context, status=400)


@require_GET
def case_summary(request: HttpRequest, pk: int) -> HttpResponse:
    """What was decided, by whom and when, every step with its price, and the total cost."""
    case = get_object_or_404(
        DiagnosisCase.objects.select_related("trained_model", "trained_model__dataset", "clinician"),
        pk=pk,
    )
    state = selectors.case_state(user=request.user, case=case)
    rows = step_rows(state)
    decision = next(
        (r for r in reversed(rows) if r["step"].kind in (DiagnosisStep.CLASSIFY, DiagnosisStep.REFER)),
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
