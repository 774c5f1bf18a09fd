"""Model pages: the trust page, live progress and the tree diagram (the training form is the
training app's, ``diagnosis/training/views.py``)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from diagnosis import figures
from diagnosis.permissions import ModelNotFound
from diagnosis.shared import learner_registry
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors import matrices as matrix_selectors
from diagnosis.training.selectors import model_card as model_card_selectors
from diagnosis.training.selectors import models as model_selectors
from diagnosis.training.services import approval as approval_services
from diagnosis.training.services import matrices as matrix_services
from diagnosis.training.services import training
from diagnosis.views.common import messages_of, page

from .. import selectors
from ..models import CaseAccess
from ..permissions import CaseNotFound
from ..selectors import decision as decision_selectors
from ..selectors import ensemble as ensemble_selectors
from ..selectors.models import case_outcomes, model_for_page
from ..services.access_log import log_case_access


def _elapsed_seconds(trained: TrainedModel) -> float | None:
    if trained.started_at is None:
        return None
    end = trained.finished_at or timezone.now()
    return max(0.0, (end - trained.started_at).total_seconds())


def _param_display(value) -> str:
    if value is None:
        return "from the costs"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _rows(labels: list, matrix: list) -> list[dict]:
    return [{"label": label, "values": row} for label, row in zip(labels, matrix, strict=False)]


def _model_or_404(request: HttpRequest, pk: int, *, case_id: str | None = None) -> TrainedModel:
    """The model for its pages: a draft or retired one is missing for a clinician (except the
    model of a case they read, ``case_id``)."""
    try:
        return model_for_page(
            user=request.user,
            pk=pk,
            case_id=int(case_id) if case_id and case_id.isdigit() else None,
        )
    except ModelNotFound as exc:
        raise Http404(str(exc)) from exc


#: The card's one-click decisions: each a service taking the user, the model and a reason.
_DECISIONS = {
    "approve": (approval_services.approve_model, "Approved {model}: clinicians can use it now."),
    "retire": (approval_services.retire_model, "Retired {model}: clinicians no longer see it."),
    "roll-back": (approval_services.roll_back, "Rolled back: {model} is approved again."),
    "keep-old": (
        approval_services.keep_replaced_model,
        "Kept {model} in use; the retrain is retired.",
    ),
}


@require_http_methods(["GET", "POST"])
def model_card(request: HttpRequest, pk: int) -> HttpResponse:
    """The model card: the basis of its advice, and a model admin's approval decisions."""
    trained = _model_or_404(request, pk)
    if request.method == "POST":
        action = request.POST.get("action")
        if action not in _DECISIONS:
            return JsonResponse({"error": "Unknown action."}, status=400)
        service, done = _DECISIONS[action]
        try:
            result = service(
                user=request.user, trained_model=trained, reason=request.POST.get("reason", "")
            )
        except ValidationError as exc:
            card = model_card_selectors.model_card(user=request.user, trained_model=trained)
            context = {"trained": trained, "card": card, "errors": messages_of(exc)}
            context["reason"] = request.POST.get("reason", "")
            return page(request, "clinic/model_card.html", context, status=400)
        messages.success(request, done.format(model=result))
        return redirect("model-card", pk=result.pk)
    card = model_card_selectors.model_card(user=request.user, trained_model=trained)
    return page(request, "clinic/model_card.html", {"trained": trained, "card": card})


@require_http_methods(["GET", "POST"])
def model_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The trust page: how the model was trained and how it did on held-out patients."""
    trained = _model_or_404(request, pk)
    if request.method == "POST":
        action = request.POST.get("action")
        if action not in ("cancel", "stop", "retrain"):
            return JsonResponse({"error": "Unknown action."}, status=400)
        try:
            if action == "retrain":  # "trained with a different matrix": one click
                new = matrix_services.retrain_with_current_values(
                    user=request.user, trained_model=trained
                )
                messages.success(
                    request,
                    f"Queued a retrain of {trained} with the dataset's current matrix and prices: "
                    "this is the new model's page. It is a draft: once trained, its model card "
                    "compares it with the model in use, which stays in use until you approve it.",
                )
                return redirect("model-detail", pk=new.pk)
            if action == "stop":
                training.request_stop(user=request.user, trained_model=trained)
            else:
                training.cancel_training(user=request.user, trained_model=trained)
        except ValidationError as exc:
            for m in messages_of(exc):
                messages.error(request, m)
        return redirect("model-detail", pk=trained.pk)
    report = model_selectors.model_report(user=request.user, trained_model=trained)
    metrics = report.metrics
    names_to_labels = {row.name: row.label or row.name for row in report.prices}
    frequency = metrics.get("test_order_frequency") or {}
    matrix_status = (
        matrix_selectors.matrix_status(user=request.user, trained_model=trained)
        if trained.is_ready
        else None
    )
    class_labels = report.class_labels
    checkpoints = report.checkpoints
    context = {
        "trained": trained,
        "report": report,
        "case_outcomes": case_outcomes(trained),
        "metrics": metrics,
        "spec": learner_registry.LEARNERS.get(trained.learner),
        "frequency_figure": figures.test_frequency_figure(frequency, names_to_labels)
        if frequency
        else None,
        "checkpoints_figure": (
            figures.checkpoints_figure(checkpoints)
            if any(c.get("estimated_cost") is not None for c in checkpoints)
            else None
        ),
        "param_rows": [
            (report.param_labels.get(name, name), _param_display(value))
            for name, value in (report.params or {}).items()
        ],
        "matrix_rows": [
            {"label": label, "values": row}
            for label, row in zip(report.class_labels, report.matrix or [], strict=False)
        ],
        "elapsed": _elapsed_seconds(trained),
        "has_tree": selectors.model_has_tree(trained),
        "is_ensemble": ensemble_selectors.model_is_ensemble(trained),
        "diagram_kind": decision_selectors.diagram_kind(trained),
        "matrix_status": matrix_status,
        "matrix_in_force_rows": _rows(
            class_labels, matrix_status.in_force if matrix_status else []
        ),
        "matrix_live_rows": _rows(
            class_labels, (matrix_status.live or []) if matrix_status else []
        ),
        "comparison": model_selectors.model_comparison(user=request.user, trained_model=trained),
    }
    return page(request, "clinic/model_detail.html", context)


@require_GET
def model_progress(request: HttpRequest, pk: int) -> JsonResponse:
    """Status and progress of a training, polled every second by the model page."""
    trained = _model_or_404(request, pk)
    progress = model_selectors.training_progress(user=request.user, trained_model=trained)
    return JsonResponse(progress)


def _case_of_model(request: HttpRequest, trained: TrainedModel):
    """The ``?case=<id>`` of a diagram page: a case of this model the user may read, None
    without one, a 400 answer for a malformed id; 404 for any other (forbidden looks like
    missing)."""
    case_id = request.GET.get("case")
    if not case_id:
        return None
    if not case_id.isdigit():
        return JsonResponse({"error": "case must be a case number."}, status=400)
    try:
        case = selectors.case_for_user(user=request.user, pk=int(case_id))
    except CaseNotFound as exc:
        raise Http404(str(exc)) from exc
    log_case_access(user=request.user, case_id=case.pk, action=CaseAccess.TREE)
    if case.trained_model_id != trained.pk:
        raise Http404(f"There is no case {case_id}.")
    return case


@require_GET
def model_tree(request: HttpRequest, pk: int) -> HttpResponse:
    """The tree as a diagram; ``?case=<id>`` highlights that patient's path so far."""
    trained = _model_or_404(request, pk, case_id=request.GET.get("case"))
    case = _case_of_model(request, trained)
    if isinstance(case, HttpResponse):
        return case
    layout = selectors.tree_layout(user=request.user, trained_model=trained, case=case)
    drawing = figures.tree_drawing(layout) if layout else None
    if request.GET.get("format") == "json":
        if layout is None:
            return JsonResponse({"error": "This model is not a tree."}, status=404)
        return JsonResponse(
            {"layout": layout, "drawing": drawing, "highlight": layout.get("highlight") or []}
        )
    return page(
        request,
        "clinic/model_tree.html",
        {
            "trained": trained,
            "layout": layout,
            "drawing": drawing,
            "tree_svg": figures.tree_svg(drawing) if drawing else None,
            "case": case,
            "diagram_kind": decision_selectors.diagram_kind(trained),
        },
    )


@require_GET
def model_decision(request: HttpRequest, pk: int) -> HttpResponse:
    """How the conditioned-loss model decides: its trees, one per set of bought tests;
    ``?case=<id>`` adds that patient's risks and marks the trees it consults; ``?tree=<k>``
    draws tree k."""
    trained = _model_or_404(request, pk, case_id=request.GET.get("case"))
    case = _case_of_model(request, trained)
    if isinstance(case, HttpResponse):
        return case
    tree_arg = request.GET.get("tree")
    if tree_arg is not None and not tree_arg.isdigit():
        return JsonResponse({"error": "tree must be a tree number."}, status=400)
    try:
        view = decision_selectors.decision_view(
            user=request.user,
            trained_model=trained,
            case=case,
            tree_number=int(tree_arg) if tree_arg else None,
        )
    except ValueError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    chosen = view.chosen if view else None
    drawing = figures.tree_drawing(chosen.layout) if chosen and chosen.layout else None
    risks = view.risks if view else []
    return page(
        request,
        "clinic/model_decision.html",
        {
            "trained": trained,
            "view": view,
            "case": case,
            "chosen": chosen,
            "drawing": drawing,
            "tree_svg": figures.tree_svg(drawing) if drawing else None,
            "risks": risks,
            "risks_figure": figures.risks_figure(risks) if risks else None,
            "query": f"case={case.pk}&" if case else "",
            "diagram_kind": decision_selectors.diagram_kind(trained),
        },
    )


@require_GET
def model_ensemble(request: HttpRequest, pk: int) -> HttpResponse:
    """A forest's or an ensemble's member trees as small multiples; ``?case=<id>`` says which
    trees that patient has finished and which wait on which test; ``?tree=<k>`` opens tree k."""
    trained = _model_or_404(request, pk, case_id=request.GET.get("case"))
    case = _case_of_model(request, trained)
    if isinstance(case, HttpResponse):
        return case
    view = ensemble_selectors.ensemble_view(user=request.user, trained_model=trained, case=case)
    chosen = None
    tree_arg = request.GET.get("tree")
    if view is not None and tree_arg:
        most = min(view.n_members, ensemble_selectors.MAX_DRAWN)  # the trees drawn
        if not tree_arg.isdigit() or not 1 <= int(tree_arg) <= most:
            return JsonResponse(
                {"error": f"tree must be a tree number from 1 to {most}."}, status=400
            )
        chosen = view.members[int(tree_arg) - 1]
    cards = []
    for member in view.members if view else []:
        thumb = None
        if member.layout is not None:
            member_drawing = figures.tree_drawing(member.layout)
            thumb = figures.tree_thumbnail_svg(
                member_drawing, label=f"Tree {member.index + 1}: {member.n_nodes} nodes"
            )
        cards.append({"member": member, "thumb": thumb})
    drawing = figures.tree_drawing(chosen.layout) if chosen and chosen.layout else None
    query = f"case={case.pk}&" if case else ""
    return page(
        request,
        "clinic/model_ensemble.html",
        {
            "trained": trained,
            "view": view,
            "cards": cards,
            "case": case,
            "chosen": chosen,
            "drawing": drawing,
            "tree_svg": figures.tree_svg(drawing) if drawing else None,
            "query": query,
            "diagram_kind": decision_selectors.diagram_kind(trained),
        },
    )
