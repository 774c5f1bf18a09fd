"""Experiments: set up, launch, cancel, resume, re-run, clone and deploy (model admins only).

An experiment compares learners on one dataset over the same stratified folds
(``learners.evaluation.make_folds``) and one or more error matrices.  It is split into
independent (learner, repeat, fold, matrix) tasks run by Celery workers on the "experiments"
queue (``services.experiment_runner``); each stores its result row as soon as it finishes and
the last one to land assembles the results.  Everything the tasks need is snapshotted here
(prices, matrices, the cases' ids), so editing the dataset later never changes an experiment.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from diagnosis.bench.models import Experiment, ExperimentTask
from diagnosis.catalog.models import Dataset, DiagnosticTest, ErrorMatrix
from diagnosis.catalog.selectors.costs import cost_snapshot
from diagnosis.permissions import require_model_admin
from diagnosis.shared import learner_names, learner_registry
from diagnosis.shared.baselines import BASELINES, ORDER_NOTHING, is_baseline
from diagnosis.shared.money import format_money
from diagnosis.shared.validation import clean_matrix, clean_reject_cost
from diagnosis.training.models import TrainedModel

__all__ = [
    "MAX_SWEEP",
    "cancel_experiment",
    "clone_experiment",
    "create_experiment",
    "deploy_recommended",
    "launch_experiment",
    "rerun_experiment",
    "resume_experiment",
]

MIN_CASES = 10
MAX_LEARNERS = 20
MAX_SWEEP = 50
MAX_REPEATS = 50
MAX_SEED = 2**31 - 1


def with_baselines(learners: Sequence[Mapping[str, Any]]) -> list[dict]:
    """The learners followed by the baselines they lack (experiments saved before the
    baselines existed get them when re-run)."""
    out = [dict(entry) for entry in learners]
    present = {entry["key"] for entry in out if is_baseline(entry)}
    out += [dict(b) for b in BASELINES if b["key"] not in present]
    return out


def _max_tasks() -> int:
    return int(getattr(settings, "EXPERIMENT_MAX_TASKS", 20000))


# ------------------------------------------------------------------ create
@transaction.atomic
def create_experiment(
    *,
    user,
    dataset: Dataset,
    learners: Sequence[Mapping[str, Any]],
    matrix_kind: str,
    error_matrix: ErrorMatrix | None = None,
    costs: Sequence[float] = (),
    ratios: Sequence[float] = (),
    ratio_base: float = 100.0,
    positive_class: int = 1,
    reject_cost: float | None = None,
    k: int | None = 10,
    repeats: int | None = 1,
    seed: int | None = 0,
    name: str = "",
    launch: bool = True,
    parent: Experiment | None = None,
) -> Experiment:
    """A validated experiment with one task row per (learner, repeat, fold, matrix).

    All or nothing: every problem found is raised together as one ``ValidationError`` whose
    ``message_dict`` is keyed by field ("learners", "matrices", "k", "repeats", "seed",
    "name", "dataset"), and nothing is saved.  With ``launch`` the tasks are queued when the
    transaction commits.
    """
    require_model_admin(user)
    errors: dict[str, list[str]] = {}

    def problem(field: str, message: str) -> None:
        errors.setdefault(field, []).append(message)

    name = (name or "").strip()
    if len(name) > 200:
        problem("name", f"The name is {len(name)} characters long; at most 200.")

    labels = list(dataset.class_labels or [])
    case_rows = list(dataset.cases.order_by("id").values_list("id", "label"))
    if len(case_rows) < MIN_CASES:
        problem(
            "dataset",
            f"Dataset {dataset.name!r} has {len(case_rows)} cases; at least {MIN_CASES} are "
            "needed.",
        )
    snapshot = None
    try:
        snapshot = cost_snapshot(dataset)
    except ValidationError as exc:
        errors.setdefault("dataset", []).extend(exc.messages)

    cleaned_learners = _clean_learners(learners, snapshot, problem)
    matrices = _materialize_matrices(
        dataset=dataset,
        labels=labels,
        matrix_kind=matrix_kind,
        error_matrix=error_matrix,
        costs=costs,
        ratios=ratios,
        ratio_base=ratio_base,
        positive_class=positive_class,
        reject_cost=reject_cost,
        problem=problem,
    )
    k = _clean_int(k, "k", "k", minimum=None, problem=problem)
    repeats = _clean_int(repeats, "repeats", "Repeats", minimum=1, problem=problem)
    seed = _clean_int(seed, "seed", "The seed", minimum=0, problem=problem)
    if repeats is not None and repeats > MAX_REPEATS:
        problem("repeats", f"Repeats must be at most {MAX_REPEATS} (got {repeats}).")
    if seed is not None and seed > MAX_SEED:
        problem("seed", f"The seed must be at most {MAX_SEED} (got {seed}).")
    if k is not None:
        if k < 2:
            problem("k", f"k must be at least 2 (got {k}): cross-validation needs two folds.")
        elif case_rows and labels:
            counts = Counter(label for _, label in case_rows)
            smallest = min(range(len(labels)), key=lambda c: (counts.get(c, 0), c))
            n_smallest = counts.get(smallest, 0)
            if k > n_smallest:
                problem(
                    "k",
                    f"k = {k} is more than the {n_smallest} cases of the smallest class "
                    f"({labels[smallest]}); every fold needs a case of every class, so choose "
                    f"k of at most {n_smallest}."
                    if n_smallest >= 2
                    else f"k = {k} is more than the {n_smallest} case(s) of class "
                    f"{labels[smallest]}; every fold needs a case of every class, so this "
                    "dataset cannot be cross-validated until that class has at least 2 cases.",
                )
    if not errors and cleaned_learners and matrices and k and repeats:
        n_rows = len(cleaned_learners) + len(BASELINES)
        n_tasks = n_rows * repeats * k * len(matrices)
        if n_tasks > _max_tasks():
            problem(
                "k",
                f"This would be {n_tasks} tasks ({len(cleaned_learners)} learners and "
                f"{len(BASELINES)} baselines x "
                f"{repeats} repeats x {k} folds x {len(matrices)} matrices); at most "
                f"{_max_tasks()}. Use fewer folds, repeats or matrices.",
            )
    if errors:
        raise ValidationError(errors)
    assert k is not None and repeats is not None and seed is not None  # else a problem above
    assert snapshot is not None  # else a problem with the dataset above

    categorical = list(
        dataset.tests.filter(kind=DiagnosticTest.NOMINAL)
        .order_by("index")
        .values_list("index", flat=True)
    )
    experiment = Experiment.objects.create(
        dataset=dataset,
        name=name or _default_name(dataset, cleaned_learners, matrices),
        created_by=user,
        learners=with_baselines(cleaned_learners),
        matrix_kind=matrix_kind,
        matrix_spec=_matrix_spec(
            matrix_kind, error_matrix, costs, ratios, ratio_base, positive_class, reject_cost
        ),
        matrices=matrices,
        k=k,
        repeats=repeats,
        seed=seed,
        cost_snapshot=snapshot.to_json(),
        case_ids=[pk for pk, _ in case_rows],
        categorical=categorical,
        parent=parent,
    )
    _create_tasks(experiment)
    if launch:
        _queue_on_commit(experiment)
    return experiment


def _clean_learners(learners, snapshot, problem) -> list[dict]:
    if learners is None or isinstance(learners, (str, bytes)) or not isinstance(learners, Sequence):
        problem("learners", "Learners must be a list of {key, params}.")
        return []
    if not learners:
        problem("learners", "Choose at least one learner.")
        return []
    if len(learners) > MAX_LEARNERS:
        problem("learners", f"At most {MAX_LEARNERS} learners (got {len(learners)}).")
        return []
    cost_model = None if snapshot is None else snapshot.prices
    cleaned: list[dict] = []
    for position, entry in enumerate(learners, start=1):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("key"), str):
            problem("learners", f"Learner {position}: give its key (e.g. 'eg2') and parameters.")
            continue
        key = entry["key"]
        try:
            spec = learner_registry.get_spec(key)
            params = entry.get("params") or {}
            if not isinstance(params, Mapping):
                raise ValidationError("its parameters must be a mapping of name to value")
            values = learner_registry.clean_params(key, params)
        except ValidationError as exc:
            for message in exc.messages:
                problem("learners", f"Learner {position} ({key}): {message}")
            continue
        if spec.check is not None and cost_model is not None:
            for message in spec.check(cost_model, values):
                problem("learners", f"Learner {position} ({spec.label}): {message}")
        label = str(entry.get("label") or "").strip()[:100] or learner_names.human_label(
            key, values
        )
        cleaned.append({"key": key, "params": values, "label": label})
    labels = [entry["label"] for entry in cleaned]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        problem(
            "learners",
            "The same learner with the same parameters is chosen twice: "
            + ", ".join(duplicates)
            + ". Change a parameter or remove one.",
        )
    return cleaned


def _clean_int(value, field: str, label: str, *, minimum, problem) -> int | None:
    if isinstance(value, bool):
        problem(field, f"{label} must be a whole number (got {value!r}).")
        return None
    try:
        number = int(value)
        if isinstance(value, float) and not value.is_integer():
            raise ValueError
    except (TypeError, ValueError):
        problem(field, f"{label} must be a whole number (got {value!r}).")
        return None
    if minimum is not None and number < minimum:
        problem(field, f"{label} must be at least {minimum} (got {number}).")
        return None
    return number


def _sweep_values(raw, field_label: str, problem) -> list[float]:
    if raw is None or isinstance(raw, (str, bytes)):
        raw = [] if not raw else [raw]
    values: list[float] = []
    for value in raw:
        try:
            number = float(value)
        except (TypeError, ValueError):
            problem("matrices", f"{field_label}: {value!r} is not a number.")
            continue
        if not math.isfinite(number) or number <= 0:
            problem("matrices", f"{field_label}: {value!r} must be a positive number.")
            continue
        values.append(number)
    if len(values) != len(set(values)):
        problem("matrices", f"{field_label}: each value may appear only once.")
    if len(values) > MAX_SWEEP:
        problem("matrices", f"{field_label}: at most {MAX_SWEEP} values (got {len(values)}).")
    return values


def _materialize_matrices(
    *,
    dataset,
    labels,
    matrix_kind,
    error_matrix,
    costs,
    ratios,
    ratio_base,
    positive_class,
    reject_cost,
    problem,
) -> list[dict]:
    k = len(labels)
    if k < 2:
        problem("dataset", f"Dataset {dataset.name!r} needs at least two classes.")
        return []
    if matrix_kind == Experiment.MATRIX_ONE:
        if error_matrix is None:
            problem("matrices", "Choose an error matrix.")
            return []
        if error_matrix.dataset_id != dataset.pk:
            problem(
                "matrices",
                f"Error matrix {error_matrix.name!r} belongs to another dataset than "
                f"{dataset.name!r}.",
            )
            return []
        try:
            matrix = clean_matrix(error_matrix.matrix, labels)
            refer = clean_reject_cost(error_matrix.reject_cost)
        except ValidationError as exc:
            for message in exc.messages:
                problem("matrices", f"Error matrix {error_matrix.name!r}: {message}")
            return []
        return [{"label": error_matrix.name, "x": None, "matrix": matrix, "reject_cost": refer}]
    try:
        refer = clean_reject_cost(reject_cost)
    except ValidationError as exc:
        for message in exc.messages:
            problem("matrices", message)
        return []
    if matrix_kind == Experiment.MATRIX_UNIFORM:
        values = _sweep_values(costs, "Error costs", problem)
        if not values:
            problem("matrices", "Enter at least one error cost for the sweep.")
            return []
        return [
            {
                "label": f"uniform {c:g}",
                "x": c,
                "matrix": [[0.0 if i == j else c for j in range(k)] for i in range(k)],
                "reject_cost": refer,
            }
            for c in values
        ]
    if matrix_kind == Experiment.MATRIX_RATIO:
        values = _sweep_values(ratios, "FP/FN ratios", problem)
        if k != 2:
            problem(
                "matrices",
                f"A sweep of FP/FN ratios needs two classes; {dataset.name!r} has {k}. "
                "Use a sweep of uniform error costs instead.",
            )
            return []
        if not values:
            problem("matrices", "Enter at least one FP/FN ratio for the sweep.")
            return []
        try:
            base = float(ratio_base)
            if not math.isfinite(base) or base <= 0:
                raise ValueError
        except (TypeError, ValueError):
            problem(
                "matrices", f"The false-negative cost must be a positive number ({ratio_base!r})."
            )
            return []
        if positive_class not in (0, 1) or isinstance(positive_class, bool):
            problem("matrices", f"The positive class must be 0 or 1 (got {positive_class!r}).")
            return []
        negative = 1 - positive_class
        out = []
        for ratio in values:
            matrix = [[0.0, 0.0], [0.0, 0.0]]
            matrix[positive_class][negative] = base  # a missed positive: false negative
            matrix[negative][positive_class] = base * ratio  # a false alarm: false positive
            out.append(
                {"label": f"FP/FN {ratio:g}", "x": ratio, "matrix": matrix, "reject_cost": refer}
            )
        return out
    problem(
        "matrices",
        f"Unknown kind of error matrices {matrix_kind!r}; choose one of: "
        + ", ".join(kind for kind, _ in Experiment.MATRIX_KINDS),
    )
    return []


def _matrix_spec(kind, error_matrix, costs, ratios, base, positive, reject_cost) -> dict:
    if kind == Experiment.MATRIX_ONE:
        return {"error_matrix_id": error_matrix.pk if error_matrix else None}
    if kind == Experiment.MATRIX_UNIFORM:
        return {"costs": [float(c) for c in costs], "reject_cost": reject_cost}
    return {
        "ratios": [float(r) for r in ratios],
        "base": float(base),
        "positive": int(positive),
        "reject_cost": reject_cost,
    }


def _default_name(dataset, learners, matrices) -> str:
    return (
        f"{dataset.name}: {'; '.join(e['label'] for e in learners)}"
        f" ({len(matrices)} matri{'x' if len(matrices) == 1 else 'ces'})"
    )[:200]


def _create_tasks(experiment: Experiment) -> None:
    """One row per (learner, repeat, fold, matrix); a shared fit's rows follow their lead."""
    leads = []
    followers_of: list[tuple[int, int, int]] = []
    for li, entry in enumerate(experiment.learners):
        # one fitted model serves every matrix (plain Boosting)
        shared = (
            len(experiment.matrices) > 1
            and not is_baseline(entry)
            and learner_registry.takes_matrix_at_prediction(entry["key"], entry["params"])
        )
        for repeat in range(experiment.repeats):
            for fold in range(experiment.k):
                for mi in range(len(experiment.matrices)):
                    if shared and mi > 0:
                        followers_of.append((li, repeat, fold))
                        continue
                    leads.append(
                        ExperimentTask(
                            experiment=experiment,
                            learner_index=li,
                            repeat=repeat,
                            fold=fold,
                            matrix_index=mi,
                        )
                    )
    created = ExperimentTask.objects.bulk_create(leads, batch_size=1000)
    if followers_of:
        lead_of = {
            (t.learner_index, t.repeat, t.fold): t.pk for t in created if t.matrix_index == 0
        }
        followers = [
            ExperimentTask(
                experiment=experiment,
                learner_index=li,
                repeat=repeat,
                fold=fold,
                matrix_index=mi,
                lead_id=lead_of[(li, repeat, fold)],
            )
            for li, repeat, fold in dict.fromkeys(followers_of)
            for mi in range(1, len(experiment.matrices))
        ]
        ExperimentTask.objects.bulk_create(followers, batch_size=1000)
    n_tasks = experiment.tasks.count()
    Experiment.objects.filter(pk=experiment.pk).update(n_tasks=n_tasks)
    experiment.n_tasks = n_tasks


def _queue_on_commit(experiment: Experiment) -> None:
    """Once committed, one message asks a worker to send the tasks (the request stays fast)."""
    from diagnosis.bench.services import runner as experiment_runner

    experiment_id = experiment.pk
    transaction.on_commit(lambda: experiment_runner.dispatch(experiment_id=experiment_id))


# ------------------------------------------------------------------ lifecycle
def _locked(experiment: Experiment) -> Experiment:
    return Experiment.objects.select_for_update().get(pk=experiment.pk)


@transaction.atomic
def launch_experiment(*, user, experiment: Experiment) -> Experiment:
    """Queue the pending tasks of an experiment created with ``launch=False``."""
    require_model_admin(user)
    locked = _locked(experiment)
    if locked.status != Experiment.QUEUED:
        raise ValidationError(
            "Only a queued experiment can be launched; this one is "
            f"{locked.get_status_display().lower()}."
        )
    _queue_on_commit(locked)
    return locked


@transaction.atomic
def cancel_experiment(*, user, experiment: Experiment) -> Experiment:
    """Stop an experiment: tasks not started are cancelled; results already in are kept.

    A task a worker is computing finishes and its row is kept, so a resumed experiment
    never computes it again.
    """
    require_model_admin(user)
    locked = _locked(experiment)
    if locked.status not in (Experiment.QUEUED, Experiment.RUNNING):
        raise ValidationError(
            "Only a queued or running experiment can be cancelled; this one is "
            f"{locked.get_status_display().lower()}."
        )
    now = timezone.now()
    locked.tasks.filter(status=ExperimentTask.PENDING).update(
        status=ExperimentTask.CANCELLED, finished_at=now
    )
    who = getattr(user, "get_username", lambda: "")() or "a model administrator"
    Experiment.objects.filter(pk=locked.pk).update(
        status=Experiment.CANCELLED,
        finished_at=now,
        status_reason=f"Cancelled by {who} at {now:%Y-%m-%d %H:%M} UTC.",
    )
    locked.refresh_from_db()
    return locked


@transaction.atomic
def resume_experiment(*, user, experiment: Experiment) -> Experiment:
    """Run what a cancelled or failed experiment is missing; the results in are kept."""
    require_model_admin(user)
    locked = _locked(experiment)
    if locked.status not in (Experiment.CANCELLED, Experiment.FAILED):
        raise ValidationError(
            "Only a cancelled or failed experiment can be resumed; this one is "
            f"{locked.get_status_display().lower()}."
        )
    locked.tasks.filter(status__in=(ExperimentTask.CANCELLED, ExperimentTask.FAILED)).update(
        status=ExperimentTask.PENDING,
        attempts=0,
        error="",
        enqueued_at=None,
        finished_at=None,
        claimed_by="",
    )
    Experiment.objects.filter(pk=locked.pk).update(
        status=Experiment.RUNNING if locked.started_at else Experiment.QUEUED,
        finished_at=None,
        status_reason="",
        last_activity_at=timezone.now(),
        results={},
    )
    from diagnosis.bench.services import runner as experiment_runner

    experiment_runner.recount(locked.pk)
    _queue_on_commit(locked)
    locked.refresh_from_db()
    return locked


@transaction.atomic
def rerun_experiment(*, user, experiment: Experiment) -> Experiment:
    """A new experiment with the same settings, prices, matrices and cases, launched."""
    require_model_admin(user)
    source = Experiment.objects.get(pk=experiment.pk)
    if not source.is_finished:
        raise ValidationError("Only a finished experiment can be re-run; this one is still going.")
    copy = Experiment.objects.create(
        dataset=source.dataset,
        name=f"{source.name} (re-run)"[:200],
        created_by=user,
        learners=with_baselines(source.learners),
        matrix_kind=source.matrix_kind,
        matrix_spec=source.matrix_spec,
        matrices=source.matrices,
        k=source.k,
        repeats=source.repeats,
        seed=source.seed,
        cost_snapshot=source.cost_snapshot,
        case_ids=source.case_ids,
        categorical=source.categorical,
        parent=source,
    )
    _create_tasks(copy)
    _queue_on_commit(copy)
    return copy


def _settings_of(experiment: Experiment) -> dict[str, Any]:
    spec = experiment.matrix_spec or {}
    settings_: dict[str, Any] = {
        "dataset": experiment.dataset,
        "learners": [
            {"key": e["key"], "params": e["params"]}
            for e in experiment.learners
            if not is_baseline(e)
        ],
        "matrix_kind": experiment.matrix_kind,
        "k": experiment.k,
        "repeats": experiment.repeats,
        "seed": experiment.seed,
    }
    if experiment.matrix_kind == Experiment.MATRIX_ONE:
        # pk=None (no matrix) is Django's IS NULL: no row; django-stubs' lookup type omits None
        settings_["error_matrix"] = ErrorMatrix.objects.filter(
            pk=spec.get("error_matrix_id"),  # type: ignore[misc]
            dataset=experiment.dataset,
        ).first()
    elif experiment.matrix_kind == Experiment.MATRIX_UNIFORM:
        settings_["costs"] = spec.get("costs", [])
        settings_["reject_cost"] = spec.get("reject_cost")
    else:
        settings_["ratios"] = spec.get("ratios", [])
        settings_["ratio_base"] = spec.get("base", 100.0)
        settings_["positive_class"] = spec.get("positive", 1)
        settings_["reject_cost"] = spec.get("reject_cost")
    return settings_


CLONE_FIELDS = frozenset(
    {
        "dataset",
        "learners",
        "matrix_kind",
        "error_matrix",
        "costs",
        "ratios",
        "ratio_base",
        "positive_class",
        "reject_cost",
        "k",
        "repeats",
        "seed",
        "name",
        "launch",
    }
)


def clone_experiment(*, user, experiment: Experiment, **changes: Any) -> Experiment:
    """A new experiment with this one's settings and ``changes`` (any ``create_experiment``
    keyword), validated as a new one and run with the dataset's current prices."""
    require_model_admin(user)
    unknown = sorted(set(changes) - CLONE_FIELDS)
    if unknown:
        raise ValidationError(f"Cannot change {', '.join(unknown)} when cloning an experiment.")
    source = Experiment.objects.get(pk=experiment.pk)
    arguments = _settings_of(source)
    arguments.update(changes)
    arguments.setdefault("name", f"{source.name} (copy)"[:200])
    if "matrix_kind" in changes and changes["matrix_kind"] != source.matrix_kind:
        # the old kind's values do not apply to the new kind
        for stale in ("error_matrix", "costs", "ratios"):
            if stale not in changes:
                arguments.pop(stale, None)
    return create_experiment(user=user, parent=source, **arguments)


# ------------------------------------------------------------------ deploy
@transaction.atomic
def deploy_recommended(
    *,
    user,
    experiment: Experiment,
    matrix_index: int = 0,
    learner_index: int | None = None,
    name: str = "",
) -> TrainedModel:
    """Train the recommended learner for matrix ``matrix_index`` on all the data.

    Goes through ``services.training.request_training`` (the normal training: the model page,
    its held-out report and its warnings).  The matrix is the dataset's identical error matrix
    when there is one, else a new one named after the experiment.  Refused when the dataset's
    prices changed since the experiment (the recommendation was made at the old prices).
    """
    from diagnosis.training.services import training

    require_model_admin(user)
    source = Experiment.objects.select_related("dataset").get(pk=experiment.pk)
    if source.status != Experiment.DONE:
        raise ValidationError("Only a finished experiment (status done) can be deployed from.")
    if not 0 <= matrix_index < len(source.matrices):
        raise ValidationError(f"This experiment has no matrix {matrix_index}.")
    if learner_index is None:
        chosen = next(
            (
                r
                for r in source.results.get("recommendations", [])
                if r.get("matrix_index") == matrix_index
            ),
            None,
        )
        if chosen is None or chosen.get("learner_index") is None:
            raise ValidationError("There is no recommendation for this matrix.")
        learner_index = int(chosen["learner_index"])
    if not 0 <= learner_index < len(source.learners):
        raise ValidationError(f"This experiment has no learner {learner_index}.")
    if not cost_snapshot(source.dataset).same_prices(source.snapshot):
        raise ValidationError(
            "The dataset's prices changed since this experiment ran, so its recommendation may "
            "no longer hold. Clone the experiment to run it at today's prices first."
        )
    _refuse_unless_cheaper_than_nothing(source, learner_index, matrix_index)
    entry = source.learners[learner_index]
    target = source.matrices[matrix_index]
    error_matrix = _error_matrix_for(source, target)
    return training.request_training(
        user=user,
        dataset=source.dataset,
        learner=entry["key"],
        params=entry["params"],
        error_matrix=error_matrix,
        name=name
        or (
            f"{learner_names.display_label(entry)} from experiment {source.pk} ({target['label']})"
        )[:200],
    )


def _mean_total_cost(experiment: Experiment, learner_index: int, matrix_index: int):
    for row in experiment.results.get("table", []):
        if row["learner_index"] == learner_index and row["matrix_index"] == matrix_index:
            return (row.get("mean_total_cost") or {}).get("mean")
    return None


def _refuse_unless_cheaper_than_nothing(
    experiment: Experiment, learner_index: int, matrix_index: int
) -> None:
    """ValidationError, saying why and what to do instead, unless the learner's mean total
    cost per patient on the experiment's folds is below ordering nothing's on the same folds.

    A baseline is never deployed (ordering nothing needs no model), and an experiment that ran
    before the baselines were added cannot say, so it is re-run first.
    """
    entry = experiment.learners[learner_index]
    if is_baseline(entry):
        raise ValidationError(
            f"{entry['label']} is a baseline, not a model: there is nothing to train. "
            "To work without a model, conclude without tests as the baseline does."
        )
    nothing = next(
        (i for i, e in enumerate(experiment.learners) if e.get("key") == ORDER_NOTHING), None
    )
    if nothing is None or not is_baseline(experiment.learners[nothing]):
        raise ValidationError(
            "This experiment ran before every experiment was compared with ordering nothing, "
            "so it cannot show that the learner is better than no model. Re-run it (the re-run "
            "adds the baselines), then deploy from the re-run."
        )
    mine = _mean_total_cost(experiment, learner_index, matrix_index)
    floor = _mean_total_cost(experiment, nothing, matrix_index)
    if mine is None or floor is None:
        raise ValidationError(
            "This learner or ordering nothing has no finished fold at these error costs, so "
            "they cannot be compared; resume or re-run the experiment."
        )
    if mine >= floor:
        label = learner_names.display_label(entry)
        raise ValidationError(
            f"Not deployed: {label} costs {format_money(mine)} per patient on this experiment's "
            f"held-out folds, and ordering no test at all costs {format_money(floor)}. A model no "
            "cheaper than ordering nothing would make patients pay for tests that do not "
            "pay for themselves. Instead: at these error costs keep concluding without tests "
            "(no model), or clone the experiment with other learners or parameters, or check "
            "the error matrix (with cheap errors no test is worth its price)."
        )


def _error_matrix_for(experiment: Experiment, target: Mapping[str, Any]) -> ErrorMatrix:
    for candidate in experiment.dataset.error_matrices.all():
        try:
            same = (
                clean_matrix(candidate.matrix, experiment.dataset.class_labels) == target["matrix"]
                and clean_reject_cost(candidate.reject_cost) == target["reject_cost"]
            )
        except ValidationError:
            continue
        if same:
            return candidate
    base = f"{target['label']} (experiment {experiment.pk})"[:100]
    name, n = base, 1
    while experiment.dataset.error_matrices.filter(name=name).exists():
        n += 1
        name = f"{base[:90]} #{n}"
    return ErrorMatrix.objects.create(
        dataset=experiment.dataset,
        name=name,
        matrix=target["matrix"],
        reject_cost=target["reject_cost"],
    )
