"""Headless Chromium (Debian's, not Playwright's download) against pytest-django's live server.

Data: ``load_demo_data --no-train`` plus a model loaded from tests/browser/models/ (trained
synchronously here when its fixture no longer fits), so no Celery worker is needed.  Sync
Playwright runs an event loop in the test thread, so Django's async-safety guard must be
relaxed for these tests.
"""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
from browser_helpers import ADMIN, approve_for_clinicians  # noqa: E402  (tests/browser is on sys.path under pytest)


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium for the session; fails (never skips) when it is missing."""
    from playwright.sync_api import sync_playwright

    if not shutil.which(CHROMIUM) and not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


#: The browser tests' models as validated fixtures (the conditioned-loss one took 6 minutes to
#: train in every session); rebuilt by ``manage.py export_demo_models --model ...``.
MODEL_FIXTURES = Path(__file__).resolve().parent / "models"


def _demo_model(dataset_name: str, learner: str, name: str):
    """Demo users and one demo dataset without training or the demo experiment, plus
    ``learner`` under "Uniform 100": from its fixture in tests/browser/models/, else trained
    in-process; approved for clinicians by the demo model admin."""
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from diagnosis.catalog.models import Dataset
    from diagnosis.management.demo_data import FIXTURE_FILES
    from diagnosis.management.demo_models import DemoFixtureError, load_model_fixture
    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services.training import create_training, run_training

    # Without the demo experiment (1.5 s of fitting per test); a test that reads the bench's
    # pages loads it, or makes its own.
    call_command(
        "load_demo_data",
        "--no-train",
        "--no-experiment",
        "--only",
        dataset_name,
        stdout=open(os.devnull, "w"),
    )
    dataset = Dataset.objects.get(name=dataset_name)
    trained = create_training(
        user=User.objects.get(username=ADMIN[0]),
        dataset=dataset,
        learner=learner,
        params={},
        error_matrix=dataset.error_matrices.filter(name="Uniform 100").first(),
        name=name,
    )
    fixture = MODEL_FIXTURES / f"{Path(FIXTURE_FILES[dataset_name]).stem}-{learner}.json"
    try:  # the model trained once and exported (export_demo_models --model ..., see README)
        return approve_for_clinicians(load_model_fixture(trained=trained, path=fixture))
    except DemoFixtureError as error:
        warnings.warn(f"{error}: training {name!r} here instead (minutes)", stacklevel=2)
    key = (dataset_name, learner)
    if key in _FITTED:  # same demo data, prices and matrix: reuse this session's first fit
        TrainedModel.objects.filter(pk=trained.pk).update(**_FITTED[key])
        trained.refresh_from_db()
        return approve_for_clinicians(trained)
    before = {f.attname: getattr(trained, f.attname) for f in TrainedModel._meta.concrete_fields}
    result = run_training(trained_model_id=trained.pk)
    assert result.status == TrainedModel.SUCCEEDED, result.error
    _FITTED[key] = {
        name: getattr(result, name)
        for name, value in before.items()
        if name != "id" and not name.endswith("_id") and getattr(result, name) != value
    }
    return approve_for_clinicians(result)


#: (dataset, learner) -> the fields a training filled in (a fit takes minutes on a busy machine)
_FITTED: dict[tuple[str, str], dict] = {}


@pytest.fixture
def heart_model(transactional_db):
    """Demo heart data and an EG2 model trained on it."""
    from diagnosis.management.demo_data import HEART

    return _demo_model(HEART, "eg2", "EG2 heart (browser test)")


@pytest.fixture
def thyroid_risk_model(transactional_db):
    """Demo thyroid data and its conditioned-loss model (advice with the risk of each action)."""
    from diagnosis.management.demo_data import THYROID

    return _demo_model(THYROID, "conditioned_loss", "Conditioned loss thyroid (browser test)")


@pytest.fixture
def thyroid_tree_model(transactional_db):
    """Demo thyroid data and an EG2 tree trained on it (a deep tree with many thresholds)."""
    from diagnosis.management.demo_data import THYROID

    return _demo_model(THYROID, "eg2", "EG2 thyroid (browser test)")
