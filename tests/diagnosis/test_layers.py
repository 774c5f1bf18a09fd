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


#: The domain apps under ``diagnosis``, lowest first: each may import those before it, never
#: one after it.  The core (``diagnosis`` itself: the roles, middleware, error pages,
#: ``selectors/raw_rows``) sits below every app and imports none; the management commands (the
#: demo data, which spans them all) sit above them all.
APPS_LOWEST_FIRST = ("catalog", "training", "clinic", "bench", "integration")


def _layer(module: str) -> str:
    """The part of the house a module of ``diagnosis`` belongs to."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in APPS_LOWEST_FIRST:
        return parts[1]
    if len(parts) > 1 and parts[1] in ("shared", "management", "migrations"):
        return parts[1]
    return "core"


def _may_import(importer: str, imported: str) -> bool:
    if importer in ("management", "migrations") or imported in ("shared", "core"):
        return True
    if importer in ("core", "shared"):
        return False
    return APPS_LOWEST_FIRST.index(imported) <= APPS_LOWEST_FIRST.index(importer)


def _every_module() -> Iterator[tuple[Path, str]]:
    for path in sorted(DIAGNOSIS.rglob("*.py")):
        relative = path.relative_to(DIAGNOSIS.parent).with_suffix("")
        parts = list(relative.parts)
        package = ".".join(parts if parts[-1] == "__init__" else parts[:-1])
        yield path, package.removesuffix(".__init__")


def test_no_selectors_import_services_in_any_app():
    """A selectors package anywhere (the core's or an app's) imports no services package."""
    found = []
    for path, package in _every_module():
        if "selectors" not in package.split("."):
            continue
        for line, name in imported_modules(path.read_text(encoding="utf-8"), package):
            if _within(name, "diagnosis") and "services" in name.split("."):
                found.append(f"{path.relative_to(DIAGNOSIS.parent)}:{line} imports {name}")
    assert found == []


def test_the_apps_depend_one_way():
    """Every import between parts of the house points down: an app imports only the apps
    below it, the core and shared; the core imports no app."""
    found = []
    for path, package in _every_module():
        importer = _layer(package if path.name == "__init__.py" else f"{package}.{path.stem}")
        for line, name in imported_modules(path.read_text(encoding="utf-8"), package):
            if not _within(name, "diagnosis"):
                continue
            imported = _layer(name)
            if imported != importer and not _may_import(importer, imported):
                found.append(
                    f"{path.relative_to(DIAGNOSIS.parent)}:{line} ({importer}) imports {name}"
                )
    assert found == []


@pytest.mark.parametrize(
    ("importer", "imported", "allowed"),
    [
        ("bench", "core", True),
        ("core", "bench", False),
        ("management", "bench", True),
        ("integration", "bench", True),
        ("bench", "integration", False),
        ("core", "integration", False),
        ("clinic", "core", True),
        ("core", "clinic", False),
        ("bench", "clinic", True),
        ("integration", "clinic", True),
        ("clinic", "bench", False),
        ("clinic", "training", True),
        ("training", "clinic", False),
        ("core", "training", False),
        ("training", "catalog", True),
        ("catalog", "training", False),
        ("core", "catalog", False),
    ],
)
def test_the_one_way_rule_reads_each_direction(importer, imported, allowed):
    """The rule itself: an app over the core or a lower app is allowed, the core or a lower
    app over a higher app is not."""
    assert _may_import(importer, imported) is allowed
