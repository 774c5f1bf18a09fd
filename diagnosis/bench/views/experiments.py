"""The bench (issue 14): set up, watch, read and act on experiments at /experiments/.

Model administrators set experiments up and run them; clinicians and model
administrators read the results.  Every read goes through
``selectors.experiments`` and every write through ``services.experiments``
(which check the permissions); charts are drawn by ``experiment_figures``.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_http_methods

from diagnosis.bench import figures as experiment_figures
from diagnosis.bench.forms import ExperimentForm, initial_from_experiment
from diagnosis.bench.models import Experiment
from diagnosis.bench.selectors import experiments as selectors
from diagnosis.bench.services import experiments as services
from diagnosis.permissions import is_model_admin, require_model_admin
from diagnosis.shared import learner_registry
from diagnosis.views.common import messages_of, page

__all__ = [
    "experiment_compare",
    "experiment_detail",
    "experiment_export_csv",
    "experiment_export_json",
    "experiment_list",
    "experiment_new",
    "experiment_progress",
]


def _experiment(pk: int) -> Experiment:
    try:
        return Experiment.objects.select_related("dataset").get(pk=pk)
    except Experiment.DoesNotExist:
        raise Http404(f"There is no experiment {pk}.") from None


@require_GET
def experiment_list(request: HttpRequest) -> HttpResponse:
    """Every saved experiment, newest first, with its status and progress."""
    rows = selectors.list_experiments(user=request.user)
    return page(
        request,
        "bench/experiment_list.html",
        {"experiments": rows, "can_set_up": is_model_admin(request.user)},
    )


@require_http_methods(["GET", "POST"])
def experiment_new(request: HttpRequest) -> HttpResponse:
    """The set-up form; ``?from=<id>`` starts from a saved experiment (clone with changes)."""
    require_model_admin(request.user)
    source = None
    source_id = request.GET.get("from") or request.POST.get("from")
    if source_id:
        if not str(source_id).isdigit():
            raise Http404("from must be an experiment number.")
        source = _experiment(int(source_id))
    initial = initial_from_experiment(source) if source is not None else None
    form = ExperimentForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            if source is not None:
                experiment = services.clone_experiment(
                    user=request.user, experiment=source, **form.service_arguments()
                )
            else:
                experiment = services.create_experiment(
                    user=request.user, **form.service_arguments()
                )
        except ValidationError as exc:
            form.add_service_errors(exc)
        else:
            messages.success(
                request, f"Experiment {experiment.pk} is queued: {experiment.n_tasks} tasks."
            )
            return redirect("experiment-detail", pk=experiment.pk)
    status = 400 if request.method == "POST" else 200
    return page(
        request,
        "bench/experiment_new.html",
        {"form": form, "source": source},
        status=status,
    )


_ACTIONS = ("cancel", "resume", "rerun", "deploy")


@require_http_methods(["GET", "POST"])
def experiment_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Settings and progress; when tasks have landed, the results, charts and significance."""
    experiment = _experiment(pk)
    if request.method == "POST":
        return _act(request, experiment)
    detail = selectors.experiment_detail(user=request.user, experiment_id=pk)
    context: dict = {
        "detail": detail,
        "experiment": experiment,
        "learner_rows": _learner_rows(detail.learners),
    }
    landed = detail.summary.n_done > 0
    if landed:
        rows = selectors.results_table(user=request.user, experiment_id=pk)
        comparisons = selectors.significance(user=request.user, experiment_id=pk)
        charts = selectors.chart_series(user=request.user, experiment_id=pk)
        recommendations = selectors.recommendations(user=request.user, experiment_id=pk)
        chosen = _chosen_matrix(request, detail)
        context.update(
            experiment_figures.results_context(
                detail=detail,
                rows=rows,
                comparisons=comparisons,
                charts=charts,
                recommendations=recommendations,
                matrix_index=chosen,
            )
        )
        context["chosen_matrix"] = chosen
    context["landed"] = landed
    return page(request, "bench/experiment_detail.html", context)


def _shown(value) -> str:
    if value is None:
        return "default"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _learner_rows(learners: list[dict]) -> list[dict]:
    """Each learner with its parameters under the training form's labels."""
    rows = []
    for entry in learners:
        spec = learner_registry.LEARNERS.get(entry["key"])
        labels = {p.name: p.label for p in spec.params} if spec else {}
        rows.append(
            {
                "label": entry["label"],
                "learner": spec.label
                if spec
                else ("baseline, on the same folds" if entry.get("baseline") else entry["key"]),
                "params": [
                    (labels.get(name, name), _shown(value))
                    for name, value in (entry.get("params") or {}).items()
                ],
            }
        )
    return rows


def _chosen_matrix(request: HttpRequest, detail) -> int:
    raw = request.GET.get("matrix", "")
    n = len(detail.matrices)
    if raw.isdigit() and int(raw) < n:
        return int(raw)
    return 0


def _act(request: HttpRequest, experiment: Experiment) -> HttpResponse:
    """Cancel, resume, re-run or deploy; the outcome is said on the page it returns to."""
    action = request.POST.get("action")
    if action not in _ACTIONS:
        return JsonResponse({"error": "Unknown action."}, status=400)
    back = redirect("experiment-detail", pk=experiment.pk)
    try:
        if action == "cancel":
            services.cancel_experiment(user=request.user, experiment=experiment)
            messages.success(request, "Cancelled. Finished tasks are kept; Resume runs the rest.")
        elif action == "resume":
            services.resume_experiment(user=request.user, experiment=experiment)
            messages.success(request, "Resumed: the missing tasks are queued again.")
        elif action == "rerun":
            copy = services.rerun_experiment(user=request.user, experiment=experiment)
            messages.success(
                request,
                f"Experiment {copy.pk} re-runs this one with the same settings, prices and "
                "patients.",
            )
            return redirect("experiment-detail", pk=copy.pk)
        else:
            matrix = request.POST.get("matrix_index", "0")
            learner = request.POST.get("learner_index", "")
            if not matrix.isdigit() or (learner and not learner.isdigit()):
                messages.error(request, "Choose the matrix (and learner) to deploy by number.")
                return back
            trained = services.deploy_recommended(
                user=request.user,
                experiment=experiment,
                matrix_index=int(matrix),
                learner_index=int(learner) if learner else None,
            )
            messages.success(
                request, f"Training {trained} on all of {experiment.dataset.name}'s patients."
            )
            return redirect("model-detail", pk=trained.pk)
    except PermissionDenied:
        raise
    except ValidationError as exc:
        for message in messages_of(exc):
            messages.error(request, message)
    return back


#: Most experiments one cross-dataset comparison reads.
MAX_COMPARED = 50


@require_GET
def experiment_compare(request: HttpRequest) -> HttpResponse:
    """Wilcoxon signed-rank tests across datasets: ``?ids=1&ids=2...`` (saved experiments)."""
    saved = {s.id: s for s in selectors.list_experiments(user=request.user)}
    problems = []
    ids: list[int] = []
    for value in request.GET.getlist("ids"):
        if not value.isdigit():
            problems.append(f"{value!r} is not an experiment number.")
        elif int(value) not in ids:
            ids.append(int(value))
    if len(ids) > MAX_COMPARED:
        problems.append(f"Compare at most {MAX_COMPARED} experiments at once.")
    problems += [f"There is no experiment {pk}." for pk in ids if pk not in saved]
    if len(ids) < 2:
        problems.append("Tick at least two experiments (on different datasets) to compare.")
    comparisons = []
    if not problems:
        comparisons = selectors.cross_dataset_significance(user=request.user, experiment_ids=ids)
    chosen = [saved[pk] for pk in ids if pk in saved]
    context = {
        "problems": problems,
        "experiments": chosen,
        "rows": experiment_figures.cross_dataset_rows(comparisons),
        "datasets": sorted({e.dataset_name for e in chosen}),
    }
    return page(request, "bench/experiment_compare.html", context, status=400 if problems else 200)


@require_GET
def experiment_progress(request: HttpRequest, pk: int) -> JsonResponse:
    """Status and progress, polled every second by the experiment page."""
    _experiment(pk)
    progress = selectors.experiment_progress(user=request.user, experiment_id=pk)
    return JsonResponse(asdict(progress))


@require_GET
def experiment_export_csv(request: HttpRequest, pk: int) -> HttpResponse:
    """One row per task (learner, matrix, repeat, fold) with its figures, as a CSV file."""
    _experiment(pk)
    text = selectors.export_csv(user=request.user, experiment_id=pk)
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="experiment-{pk}.csv"'
    return response


def _finite(value):
    """Strict JSON has no NaN or infinity: they are written as null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


@require_GET
def experiment_export_json(request: HttpRequest, pk: int) -> HttpResponse:
    """Settings, price and matrix snapshots, every task and the assembled results, as JSON."""
    _experiment(pk)
    data = _finite(selectors.export_json(user=request.user, experiment_id=pk))
    response = HttpResponse(
        json.dumps(data, cls=DjangoJSONEncoder, indent=1, allow_nan=False),
        content_type="application/json",
    )
    response["Content-Disposition"] = f'attachment; filename="experiment-{pk}.json"'
    return response
