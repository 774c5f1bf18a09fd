"""The app's layers, read from the source: selectors never import services, shared no app."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

DIAGNOSIS = Path(__file__).resolve().parents[2] / "diagnosis"


def imported_modules(source: str, package: str) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every module ``source`` imports, anywhere in it (functions and
    ``if TYPE_CHECKING:`` blocks too), relative imports resolved against ``package``; a
    ``from x import y`` also yields ``x.y``, since ``y`` may be a module."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            if node.module:
                yield node.lineno, module
            for alias in node.names:
                yield node.lineno, f"{module}.{alias.name}"


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _modules(folder: str) -> list[Path]:
    return sorted((DIAGNOSIS / folder).glob("*.py"))


def _violations(folder: str, forbidden) -> list[str]:
    package = f"diagnosis.{folder}"
    found = []
    for path in _modules(folder):
        for line, name in imported_modules(path.read_text(encoding="utf-8"), package):
            if forbidden(name):
                found.append(f"diagnosis/{folder}/{path.name}:{line} imports {name}")
    return found


def _service(name: str) -> bool:
    return _within(name, "diagnosis.services")


def _app_module(name: str) -> bool:
    return _within(name, "diagnosis") and not _within(name, "diagnosis.shared")


def test_selectors_never_import_services():
    """No module in diagnosis/selectors imports diagnosis.services, lazily or for types."""
    assert _modules("selectors")
    assert _violations("selectors", _service) == []


def test_shared_imports_no_app_module():
    """diagnosis/shared imports nothing of diagnosis but itself (no models, services, selectors)."""
    assert _modules("shared")
    assert _violations("shared", _app_module) == []


@pytest.mark.parametrize(
    "source",
    [
        "from ..services.access_log import log_case_access",
        "from ..services import approval",
        "from .. import services",
        "import diagnosis.services.costs",
        "from diagnosis.services import cases",
        "def f():\n    from ..services import training\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..services.x import Y\n",
    ],
)
def test_a_service_import_is_seen_in_every_spelling(source):
    """The check above would catch a selector importing a service however it is written."""
    names = [name for _, name in imported_modules(source, "diagnosis.selectors")]
    assert any(_service(name) for name in names)


@pytest.mark.parametrize(
    "source, is_app",
    [
        ("from . import learner_registry", False),
        ("from .vocabulary import vocabulary_snapshot", False),
        ("from learners import CostModel", False),
        ("from django.core.exceptions import ValidationError", False),
        ("from ..models import TrainedModel", True),
        ("from .. import selectors", True),
        ("import diagnosis.permissions", True),
    ],
)
def test_an_app_import_from_shared_is_seen(source, is_app):
    """Shared's own modules, the library and Django pass; any other diagnosis module does not."""
    names = [name for _, name in imported_modules(source, "diagnosis.shared")]
    assert any(_app_module(name) for name in names) is is_app
