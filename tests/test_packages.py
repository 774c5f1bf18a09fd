"""What importing each top-level package pulls in: the libraries stay free of Django and Celery."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _modules_loaded_by(statement: str) -> set[str]:
    """Top-level module names in ``sys.modules`` after ``statement`` runs in a fresh interpreter."""
    # A fresh interpreter, since this test process already has Django and Celery loaded.
    report = "import sys\nprint('\\n'.join(sorted({m.split('.')[0] for m in sys.modules})))"
    code = f"{statement}\n{report}"
    # A secret key, since the settings refuse to load without one when DEBUG is off.
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "DJANGO_SECRET_KEY": "test-only"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return set(result.stdout.split())


@pytest.mark.parametrize("package", ["datasets", "learners"])
def test_library_imports_without_django_or_celery(package):
    """The dataset readers and the learners import without loading Django or Celery."""
    loaded = _modules_loaded_by(f"import {package}")
    assert package in loaded
    assert not loaded & {"django", "celery", "kombu", "config", "diagnosis"}


def test_importing_the_app_package_has_no_side_effects():
    """`import diagnosis` neither configures Django nor creates the Celery app."""
    loaded = _modules_loaded_by("import diagnosis")
    assert not loaded & {"django", "celery", "config"}


def test_config_exposes_the_celery_app_with_the_app_tasks():
    """`celery -A config` finds `config.celery_app`, and it knows the app's task names."""
    loaded = _modules_loaded_by(
        "import os\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings')\n"
        "import django\ndjango.setup()\n"
        "import config\nconfig.celery_app.loader.import_default_modules()\n"
        "assert 'diagnosis.tasks.recover_trainings' in config.celery_app.tasks, "
        "sorted(config.celery_app.tasks)"
    )
    assert {"celery", "config", "diagnosis"} <= loaded
