"""Reads of experiments: lists, progress, results, chart series, significance, exports.

Clinicians and model administrators may read every experiment (they hold no patient
cases: only the training data's figures).  A missing experiment raises
``Experiment.DoesNotExist`` (a 404).  The statistics were computed by
``selectors.experiment_results`` (scipy.stats, through ``learners.significance``) when the
experiment's last task landed; an experiment still running is summarized from the tasks in
so far, with the same functions.
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from diagnosis.bench.models import Experiment, ExperimentTask
from diagnosis.bench.selectors.results import METRICS, assemble_results
from diagnosis.permissions import is_clinician, is_model_admin
from diagnosis.shared.learner_names import display_label
from diagnosis.shared.money import format_money
from learners.significance import ALPHA, PairedComparison, wilcoxon_test

__all__ = [
    "Bar",
    "Charts",
    "Comparison",
    "ExperimentDetail",
    "ExperimentSummary",
    "Progress",
    "Recommendation",
    "ResultRow",
    "Series",
    "Stat",
    "chart_series",
    "cross_dataset_significance",
    "experiment_detail",
    "experiment_progress",
    "export_csv",
    "export_json",
    "list_experiments",
    "recommendations",
    "results_table",
    "significance",
]


def _require_reader(user) -> None:
    if not (is_clinician(user) or is_model_admin(user)):
        raise PermissionDenied("Only clinicians and model administrators may see experiments.")


def _get(experiment_id: int) -> Experiment:
    return Experiment.objects.select_related("dataset", "created_by").get(pk=experiment_id)


# ------------------------------------------------------------------ lists and progress
@dataclass(frozen=True)
class ExperimentSummary:
    id: int
    name: str
    dataset_id: int
    dataset_name: str
    status: str
    status_label: str
    n_tasks: int
    n_done: int
    n_failed: int
    progress: float
    created_at: datetime
    created_by: str
    n_learners: int
    n_matrices: int
    matrix_kind: str
    finished_at: datetime | None


def _summary(e: Experiment) -> ExperimentSummary:
    return ExperimentSummary(
        id=e.pk,
        name=e.name,
        dataset_id=e.dataset_id,
        dataset_name=e.dataset.name,
        status=e.status,
        status_label=e.get_status_display(),
        n_tasks=e.n_tasks,
        n_done=e.n_done,
        n_failed=e.n_failed,
        progress=(e.n_done + e.n_failed) / e.n_tasks if e.n_tasks else 0.0,
        created_at=e.created_at,
        created_by=e.created_by.get_username() if e.created_by is not None else "",
        n_learners=sum(1 for entry in e.learners if not entry.get("baseline")),
        n_matrices=len(e.matrices),
        matrix_kind=e.matrix_kind,
        finished_at=e.finished_at,
    )


def list_experiments(*, user, dataset_id: int | None = None) -> list[ExperimentSummary]:
    """Every saved experiment, newest first (optionally of one dataset)."""
    _require_reader(user)
    rows = Experiment.objects.select_related("dataset", "created_by").defer(
        "results", "case_ids", "cost_snapshot"
    )
    if dataset_id is not None:
        rows = rows.filter(dataset_id=dataset_id)
    return [_summary(e) for e in rows]


@dataclass(frozen=True)
class Progress:
    status: str
    status_label: str
    n_tasks: int
    n_done: int
    n_failed: int
    n_running: int
    progress: float
    message: str
    stalled: bool
    finished: bool


def _progress(e: Experiment) -> Progress:
    running = ExperimentTask.objects.filter(
        experiment_id=e.pk, status=ExperimentTask.RUNNING
    ).count()
    stale = float(settings.EXPERIMENT_STALE_SECONDS)
    now = timezone.now()
    stalled = False
    landed = e.n_done + e.n_failed
    if e.status in (Experiment.QUEUED, Experiment.RUNNING):
        last = e.last_activity_at or e.created_at
        quiet = (now - last).total_seconds()
        if quiet > stale:
            stalled = True
            message = (
                f"Nothing has happened for {_duration(quiet)}: no worker has taken or reported "
                f"on a task of this experiment since {timezone.localtime(last):%H:%M:%S}. "
                f"Is a Celery worker consuming the '{settings.EXPERIMENTS_QUEUE}' queue running? "
                "(bin/run starts one; on another machine run: celery -A config worker -Q "
                f"{settings.EXPERIMENTS_QUEUE}.)"
            )
            dead = ExperimentTask.objects.filter(
                experiment_id=e.pk,
                status=ExperimentTask.RUNNING,
                heartbeat_at__lt=now - timedelta(seconds=stale),
            ).first()
            if dead is not None:
                message += (
                    f" The worker {dead.claimed_by or ''} computing a task stopped reporting "
                    f"at {timezone.localtime(dead.heartbeat_at):%H:%M:%S} (killed or "
                    "restarted?); its task is queued again when a worker starts."
                )
        elif e.status == Experiment.QUEUED:
            message = f"Waiting for a worker ({e.n_tasks} tasks queued)."
        else:
            message = f"{landed} of {e.n_tasks} tasks finished, {running} running."
    elif e.status == Experiment.DONE:
        message = f"Finished: {e.n_done} tasks."
    else:
        message = e.status_reason or e.get_status_display()
    return Progress(
        status=e.status,
        status_label=e.get_status_display(),
        n_tasks=e.n_tasks,
        n_done=e.n_done,
        n_failed=e.n_failed,
        n_running=running,
        progress=landed / e.n_tasks if e.n_tasks else 0.0,
        message=message,
        stalled=stalled,
        finished=e.is_finished,
    )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} seconds"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"


def experiment_progress(*, user, experiment_id: int) -> Progress:
    """Progress for polling; ``message`` says why an experiment is not moving."""
    _require_reader(user)
    return _progress(_get(experiment_id))


@dataclass(frozen=True)
class ExperimentDetail:
    summary: ExperimentSummary
    learners: list[dict]
    matrices: list[dict]
    k: int
    repeats: int
    seed: int
    status_reason: str
    progress: Progress
    can_cancel: bool
    can_resume: bool
    can_rerun: bool
    parent_id: int | None
    test_names: list[str]
    class_labels: list[str]


def experiment_detail(*, user, experiment_id: int) -> ExperimentDetail:
    """Settings, progress and what the user may do with it."""
    _require_reader(user)
    e = _get(experiment_id)
    admin = is_model_admin(user)
    return ExperimentDetail(
        summary=_summary(e),
        learners=[
            {
                "index": i,
                **entry,
                "label": display_label(entry),
                "baseline": bool(entry.get("baseline")),
            }
            for i, entry in enumerate(e.learners)
        ],
        matrices=[{"index": i, **m} for i, m in enumerate(e.matrices)],
        k=e.k,
        repeats=e.repeats,
        seed=e.seed,
        status_reason=e.status_reason,
        progress=_progress(e),
        can_cancel=admin and e.status in (Experiment.QUEUED, Experiment.RUNNING),
        can_resume=admin and e.status in (Experiment.CANCELLED, Experiment.FAILED),
        can_rerun=admin and e.is_finished,
        parent_id=e.parent_id,
        test_names=_test_names(e),
        class_labels=_class_labels(e),
    )


def _test_names(e: Experiment) -> list[str]:
    """The experiment's tests by the names clinicians read (the dataset's labels), never by
    their column codes; a code stays only for a test without a label or since deleted."""
    shown = dict(e.dataset.tests.exclude(label="").values_list("name", "label"))
    return [shown.get(name) or name for name in e.snapshot.names]


def _class_labels(e: Experiment) -> list[str]:
    """The class names the experiment ran with (today's for one saved before they were kept)."""
    vocabulary = e.snapshot.vocabulary
    return list(vocabulary.class_labels if vocabulary else []) or list(e.dataset.class_labels)


# ------------------------------------------------------------------ results
def _results(e: Experiment) -> dict:
    """The assembled results; computed on the fly while the experiment runs."""
    if e.results and e.status in (Experiment.DONE, Experiment.FAILED):
        return e.results
    return assemble_results(e)


@dataclass(frozen=True)
class Stat:
    mean: float | None
    std: float | None


@dataclass(frozen=True)
class ResultRow:
    learner_index: int
    learner_label: str
    matrix_index: int
    matrix_label: str
    x: float | None
    n: int
    normalized_cost: Stat
    accuracy: Stat
    mean_test_cost: Stat
    mean_total_cost: Stat
    misclassification_cost: Stat
    reject_rate: Stat
    fit_seconds: Stat
    auc: Stat | None
    #: One of the two strategies every experiment runs beside its learners.
    baseline: bool = False


def results_table(*, user, experiment_id: int) -> list[ResultRow]:
    """Mean and standard deviation over folds x repeats, per (matrix, learner)."""
    _require_reader(user)
    e = _get(experiment_id)
    rows = []
    for entry in _results(e)["table"]:
        li, mi = entry["learner_index"], entry["matrix_index"]
        auc = entry.get("auc") or {}
        rows.append(
            ResultRow(
                learner_index=li,
                learner_label=display_label(e.learners[li]),
                matrix_index=mi,
                matrix_label=e.matrices[mi]["label"],
                x=e.matrices[mi]["x"],
                n=entry["n"],
                baseline=bool(e.learners[li].get("baseline")),
                auc=Stat(auc["mean"], auc["std"]) if auc.get("n") else None,
                **{m: Stat(entry[m]["mean"], entry[m]["std"]) for m in METRICS},
            )
        )
    return rows


@dataclass(frozen=True)
class Series:
    name: str
    x: list
    y: list
    error: list | None = None
    learner_index: int | None = None
    matrix_index: int | None = None


@dataclass(frozen=True)
class Bar:
    learner_label: str
    matrix_label: str
    test_names: list[str]
    frequency: list[float]
    paid: list[float]


@dataclass(frozen=True)
class Charts:
    x_title: str
    log_x: bool
    normalized_cost: list[Series] = field(default_factory=list)
    accuracy: list[Series] = field(default_factory=list)
    anytime: list[Series] = field(default_factory=list)
    budget: list[Series] = field(default_factory=list)
    roc: list[Series] = field(default_factory=list)
    tests_paid: list[Bar] = field(default_factory=list)


#: False-positive rates at which the folds' ROC curves are averaged.
ROC_GRID_POINTS = 51


def _roc_on_grid(roc: Mapping[str, Any], grid: np.ndarray) -> np.ndarray:
    """One fold's ROC curve (points joined by straight lines) read at the grid's
    false-positive rates; on a vertical stretch (several points at one rate) the top counts.
    """
    fpr = np.asarray(roc["fpr"], dtype=float)
    tpr = np.asarray(roc["tpr"], dtype=float)
    order = np.lexsort((tpr, fpr))
    fpr, tpr = fpr[order], tpr[order]
    rates, first = np.unique(fpr, return_index=True)
    entry = tpr[first]  # the lowest tpr at each rate: where the curve arrives
    exit_ = np.r_[tpr[first[1:] - 1], tpr[-1]]  # the highest: where it leaves
    i = np.clip(np.searchsorted(rates, grid, side="right") - 1, 0, len(rates) - 1)
    nxt = np.minimum(i + 1, len(rates) - 1)
    span = rates[nxt] - rates[i]
    share = np.where(span > 0, (grid - rates[i]) / np.where(span > 0, span, 1.0), 0.0)
    share = np.clip(share, 0.0, 1.0)
    return exit_[i] + share * (entry[nxt] - exit_[i])


def chart_series(*, user, experiment_id: int) -> Charts:
    """The series of every chart of the results page (plain lists, ready for Plotly)."""
    _require_reader(user)
    e = _get(experiment_id)
    results = _results(e)
    by = {(r["learner_index"], r["matrix_index"]): r for r in results["table"]}
    xs = [m["x"] if m["x"] is not None else 0.0 for m in e.matrices]
    order = sorted(range(len(e.matrices)), key=lambda mi: xs[mi])
    charts = Charts(
        x_title={
            Experiment.MATRIX_UNIFORM: "Error cost",
            Experiment.MATRIX_RATIO: "FP/FN cost ratio",
        }.get(e.matrix_kind, "Error matrix"),
        log_x=e.matrix_kind == Experiment.MATRIX_RATIO,
    )
    for li, entry in enumerate(e.learners):
        for target, metric in (
            (charts.normalized_cost, "normalized_cost"),
            (charts.accuracy, "accuracy"),
        ):
            points = [(xs[mi], by[(li, mi)][metric]) for mi in order if by[(li, mi)]["n"]]
            target.append(
                Series(
                    name=display_label(entry),
                    x=[x for x, _ in points],
                    y=[s["mean"] for _, s in points],
                    error=[s["std"] for _, s in points],
                    learner_index=li,
                )
            )
    tasks = list(
        e.tasks.filter(status=ExperimentTask.DONE).values(
            "learner_index", "matrix_index", "anytime", "roc", "test_frequency", "test_paid"
        )
    )
    # ACT-like learners: mean normalized cost per round against mean fit time per round.
    rounds: dict[int, dict[int, list]] = defaultdict(lambda: defaultdict(list))
    for t in tasks:
        for point in t["anytime"] or []:
            rounds[t["learner_index"]][point["r"]].append(point)
    for li, per_r in sorted(rounds.items()):
        rs = sorted(per_r)
        charts.anytime.append(
            Series(
                name=display_label(e.learners[li]),
                x=[float(np.mean([p["fit_seconds"] for p in per_r[r]])) for r in rs],
                y=[_mean(p["normalized_cost"] for p in per_r[r]) for r in rs],
                error=None,
                learner_index=li,
                matrix_index=0,
            )
        )
    # Budgeted learners: one curve per matrix through the budgets chosen.
    budgeted = [
        (li, entry["params"].get("budget"))
        for li, entry in enumerate(e.learners)
        if "budget" in entry["params"] and entry["params"].get("budget") is not None
    ]
    if budgeted:
        budgeted.sort(key=lambda item: item[1])
        for mi in order:
            charts.budget.append(
                Series(
                    name=f"normalized cost, {e.matrices[mi]['label']}",
                    x=[b for _, b in budgeted],
                    y=[by[(li, mi)]["normalized_cost"]["mean"] for li, _ in budgeted],
                    error=[by[(li, mi)]["normalized_cost"]["std"] for li, _ in budgeted],
                    matrix_index=mi,
                )
            )
        charts.budget.append(
            Series(
                name="mean test cost per patient",
                x=[b for _, b in budgeted],
                y=[by[(li, order[0])]["mean_test_cost"]["mean"] for li, _ in budgeted],
                error=[by[(li, order[0])]["mean_test_cost"]["std"] for li, _ in budgeted],
                matrix_index=order[0],
            )
        )
    # ROC (two classes), first matrix: the folds' curves averaged vertically (Fawcett 2006):
    # each fold's true-positive rate read off at the same false-positive rates, then the mean
    # and standard deviation over the folds at each of them.
    if len(e.matrices) and any(t["roc"] for t in tasks):
        grid = np.linspace(0.0, 1.0, ROC_GRID_POINTS)
        for li, entry in enumerate(e.learners):
            curves = [
                _roc_on_grid(t["roc"], grid)
                for t in tasks
                if t["learner_index"] == li and t["matrix_index"] == 0 and t["roc"]
            ]
            if curves:
                stacked = np.vstack(curves)
                charts.roc.append(
                    Series(
                        name=display_label(entry),
                        x=[float(v) for v in grid],
                        y=[float(v) for v in stacked.mean(axis=0)],
                        error=[float(v) for v in stacked.std(axis=0)],
                        learner_index=li,
                        matrix_index=0,
                    )
                )
    names = _test_names(e)
    for mi in order:
        for li, entry in enumerate(e.learners):
            mine = [t for t in tasks if t["learner_index"] == li and t["matrix_index"] == mi]
            if not mine:
                continue
            charts.tests_paid.append(
                Bar(
                    learner_label=display_label(entry),
                    matrix_label=e.matrices[mi]["label"],
                    test_names=names,
                    frequency=np.mean([t["test_frequency"] for t in mine], axis=0).tolist(),
                    paid=np.mean([t["test_paid"] for t in mine], axis=0).tolist(),
                )
            )
    return charts


def _mean(values) -> float | None:
    x = [v for v in values if v is not None and math.isfinite(v)]
    return float(np.mean(x)) if x else None


# ------------------------------------------------------------------ significance
@dataclass(frozen=True)
class Comparison:
    """Which learners (and at which matrix) ``result`` compares; the statistics are its own."""

    matrix_index: int | None
    matrix_label: str
    a_index: int
    b_index: int
    learner_a: str
    learner_b: str
    metric: str
    result: PairedComparison

    @property
    def significant(self) -> bool:
        return self.result.significant


def _comparison(e: Experiment, data: dict) -> Comparison:
    mi = data.get("matrix_index")
    return Comparison(
        matrix_index=mi,
        matrix_label=e.matrices[mi]["label"] if mi is not None else "",
        a_index=data["a"],
        b_index=data["b"],
        learner_a=display_label(e.learners[data["a"]]),
        learner_b=display_label(e.learners[data["b"]]),
        metric=data["metric"],
        result=PairedComparison.from_dict(data),
    )


def significance(*, user, experiment_id: int) -> list[Comparison]:
    """Paired t-tests over the shared folds, per matrix and pair of learners (normalized cost)."""
    _require_reader(user)
    e = _get(experiment_id)
    return [_comparison(e, c) for c in _results(e)["significance"]]


def cross_dataset_significance(*, user, experiment_ids: Sequence[int]) -> list[Comparison]:
    """Wilcoxon signed-rank tests across datasets: one mean normalized cost per experiment.

    Learners are matched by label and matrices by label (e.g. "uniform 100") across the
    experiments; a pair is tested over the experiments where both have a result.  The
    comparisons carry ``matrix_index`` None and the matrix's label.
    """
    _require_reader(user)
    experiments = [_get(pk) for pk in experiment_ids]
    means: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    learner_order: list[str] = []
    matrix_order: list[str] = []
    for e in experiments:
        for entry in _results(e)["table"]:
            mean = entry["normalized_cost"]["mean"]
            if mean is None:
                continue
            label = display_label(e.learners[entry["learner_index"]])
            matrix = e.matrices[entry["matrix_index"]]["label"]
            means[(label, matrix)][e.pk] = mean
            if label not in learner_order:
                learner_order.append(label)
            if matrix not in matrix_order:
                matrix_order.append(matrix)
    out = []
    for matrix in matrix_order:
        for ia in range(len(learner_order)):
            for ib in range(ia + 1, len(learner_order)):
                a, b = learner_order[ia], learner_order[ib]
                left, right = means.get((a, matrix), {}), means.get((b, matrix), {})
                common = [pk for pk in experiment_ids if pk in left and pk in right]
                if not common:
                    continue
                result = wilcoxon_test([left[pk] for pk in common], [right[pk] for pk in common])
                out.append(
                    Comparison(
                        matrix_index=None,
                        matrix_label=matrix,
                        a_index=ia,
                        b_index=ib,
                        learner_a=a,
                        learner_b=b,
                        metric="normalized_cost",
                        result=result,
                    )
                )
    return out


@dataclass(frozen=True)
class Recommendation:
    matrix_index: int
    matrix_label: str
    learner_index: int | None
    learner_label: str
    mean_total_cost: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    runner_up_index: int | None
    runner_up_label: str
    runner_up_cost: float | None
    p_value: float | None
    significant: bool
    sentence: str
    test: str = ""  # the test against the runner-up (e.g. "corrected paired t-test")
    #: Ordering nothing's mean total cost on the same folds (None: the experiment ran before
    #: the baselines), whether the learner is cheaper, and that test's p-value.
    nothing_cost: float | None = None
    beats_nothing: bool | None = None
    nothing_p: float | None = None
    nothing_significant: bool = False


def recommendations(*, user, experiment_id: int) -> list[Recommendation]:
    """Per matrix: the learner with the lowest expected total cost per patient, its
    confidence interval, and whether it is significantly cheaper than the runner-up."""
    _require_reader(user)
    e = _get(experiment_id)
    out = []
    for r in _results(e)["recommendations"]:
        mi = r["matrix_index"]
        li = r.get("learner_index")
        if li is None:
            out.append(
                Recommendation(
                    matrix_index=mi,
                    matrix_label=e.matrices[mi]["label"],
                    learner_index=None,
                    learner_label="",
                    mean_total_cost=None,
                    ci_low=None,
                    ci_high=None,
                    confidence=0.95,
                    runner_up_index=None,
                    runner_up_label="",
                    runner_up_cost=None,
                    p_value=None,
                    significant=False,
                    sentence="No results yet for this matrix.",
                )
            )
            continue
        label = display_label(e.learners[li])
        runner = r.get("runner_up_index")
        comparison = r.get("comparison") or {}
        p = comparison.get("p_value")
        test = comparison.get("test", "")
        interval = (
            f" ({r['confidence']:.0%} CI {format_money(r['ci_low'])} to "
            f"{format_money(r['ci_high'])})"
            if r.get("ci_low") is not None
            else ""
        )
        sentence = (
            f"{label}: expected total cost {format_money(r['mean_total_cost'])} per patient"
            f"{interval}."
        )
        if runner is not None:
            runner_label = display_label(e.learners[runner])
            if p is None:
                verdict = "no test possible" + (
                    f": {comparison['note']}" if comparison.get("note") else ""
                )
            elif r["significant"]:
                verdict = f"significantly cheaper ({test} p = {p:.3g} < {ALPHA:g})"
            else:
                verdict = f"the difference is not significant ({test} p = {p:.3g})"
            sentence += (
                f" Runner-up {runner_label} at {format_money(r['runner_up_cost'])}; {verdict}."
            )
        out.append(
            Recommendation(
                matrix_index=mi,
                matrix_label=e.matrices[mi]["label"],
                learner_index=li,
                learner_label=label,
                mean_total_cost=r["mean_total_cost"],
                ci_low=r.get("ci_low"),
                ci_high=r.get("ci_high"),
                confidence=r.get("confidence", 0.95),
                runner_up_index=runner,
                runner_up_label=display_label(e.learners[runner]) if runner is not None else "",
                runner_up_cost=r.get("runner_up_cost"),
                p_value=p,
                significant=bool(r["significant"]),
                sentence=sentence,
                test=test,
                **_versus_nothing(r.get("versus_nothing")),
            )
        )
    return out


def _versus_nothing(data: Mapping[str, Any] | None) -> dict[str, Any]:
    if not data:
        return {}
    comparison = data.get("comparison") or {}
    return {
        "nothing_cost": data["nothing_cost"],
        "beats_nothing": bool(data["cheaper"]),
        "nothing_p": comparison.get("p_value"),
        "nothing_significant": bool(comparison.get("significant")),
    }


# ------------------------------------------------------------------ exports
CSV_COLUMNS = (
    "experiment",
    "dataset",
    "learner",
    "learner_key",
    "matrix",
    "matrix_x",
    "repeat",
    "fold",
    "status",
    "n_cases",
    *METRICS,
    "auc",
    "error",
)


def export_csv(*, user, experiment_id: int) -> str:
    """One row per task (learner, matrix, repeat, fold) with its figures."""
    _require_reader(user)
    e = _get(experiment_id)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for t in e.tasks.order_by("learner_index", "matrix_index", "repeat", "fold"):
        learner, matrix = e.learners[t.learner_index], e.matrices[t.matrix_index]
        writer.writerow(
            [
                e.pk,
                e.dataset.name,
                _cell(display_label(learner)),
                learner["key"],
                _cell(matrix["label"]),
                "" if matrix["x"] is None else matrix["x"],
                t.repeat + 1,
                t.fold + 1,
                t.status,
                "" if t.n_cases is None else t.n_cases,
                *["" if getattr(t, m) is None else getattr(t, m) for m in METRICS],
                (t.roc or {}).get("auc", ""),
                _cell(t.error),
            ]
        )
    return out.getvalue()


def _cell(text: str) -> str:
    """A spreadsheet must not run a cell as a formula (CSV injection)."""
    text = str(text or "")
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def export_json(*, user, experiment_id: int) -> dict:
    """Settings, snapshots, every task's result and the assembled results, as plain JSON."""
    _require_reader(user)
    e = _get(experiment_id)
    fields = (
        "learner_index",
        "repeat",
        "fold",
        "matrix_index",
        "status",
        "attempts",
        "error",
        "n_cases",
        *METRICS,
        "test_frequency",
        "test_paid",
        "roc",
        "anytime",
    )
    return {
        "id": e.pk,
        "name": e.name,
        "dataset": {"id": e.dataset_id, "name": e.dataset.name},
        "status": e.status,
        "status_reason": e.status_reason,
        "created_at": e.created_at.isoformat(),
        "finished_at": e.finished_at.isoformat() if e.finished_at else None,
        "learners": e.learners,
        "matrix_kind": e.matrix_kind,
        "matrix_spec": e.matrix_spec,
        "matrices": e.matrices,
        "k": e.k,
        "repeats": e.repeats,
        "seed": e.seed,
        "cost_snapshot": e.cost_snapshot,
        "n_cases": len(e.case_ids),
        "tasks": list(
            e.tasks.order_by("learner_index", "matrix_index", "repeat", "fold").values(*fields)
        ),
        "results": _results(e),
    }
