"""A static-files finder for plotly.js from the installed plotly package (nothing vendored in git).

The pinned ``plotly`` Python package ships the matching ``plotly.min.js`` in its package data;
this finder offers that one file, and only it, as ``vendor/plotly.min.js``, so templates say
``{% static 'vendor/plotly.min.js' %}`` and ``collectstatic`` hashes and compresses it like any
other asset.  The package's other data (datasets, widget bundle) is never collected.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import Error
from django.core.files.storage import FileSystemStorage

__all__ = ["PLOTLY_STATIC_PATH", "PlotlyFinder", "plotly_js_path"]

PLOTLY_STATIC_PATH = "vendor/plotly.min.js"


def plotly_js_path() -> Path:
    """Where the installed plotly package keeps its ``plotly.min.js``."""
    return Path(str(files("plotly") / "package_data" / "plotly.min.js"))


class PlotlyFinder(BaseFinder):
    """Finds ``vendor/plotly.min.js`` in the installed plotly package."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.source = plotly_js_path()
        prefix, _, self.name = PLOTLY_STATIC_PATH.rpartition("/")
        self.storage = FileSystemStorage(location=str(self.source.parent))
        # collectstatic writes it under vendor/ (an optional attribute it reads, as Django's
        # FileSystemFinder sets it; django-stubs do not declare it)
        self.storage.prefix = prefix  # type: ignore[attr-defined]

    def check(self, **kwargs):
        if not self.source.is_file():
            return [
                Error(
                    f"plotly.min.js is missing from the plotly package ({self.source}).",
                    hint="Reinstall the locked requirements (bin/run or bin/test does it).",
                    id="config.E001",
                )
            ]
        return []

    def find(self, path: str, find_all: bool = False, **kwargs):
        if path == PLOTLY_STATIC_PATH and self.source.is_file():
            return [str(self.source)] if find_all or kwargs.get("all") else str(self.source)
        return [] if find_all or kwargs.get("all") else None

    def list(self, ignore_patterns):
        if self.source.is_file():
            yield self.name, self.storage
