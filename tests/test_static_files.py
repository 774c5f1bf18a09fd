"""Static files: plotly.js from the plotly package, hashed names, compressed, cached for long."""

from __future__ import annotations

import gzip
from pathlib import Path

import plotly.offline
import pytest
from django.contrib.staticfiles import finders
from django.templatetags.static import static

from config.staticfinders import PLOTLY_STATIC_PATH, PlotlyFinder, plotly_js_path

REPO = Path(__file__).resolve().parent.parent


def test_plotly_js_is_not_kept_in_git():
    """No copy of plotly.js in static/: the locked plotly package supplies it."""
    assert not list((REPO / "static").rglob("plotly*.js"))


def test_the_finder_offers_only_the_packages_plotly_js():
    """The finder finds vendor/plotly.min.js in the plotly package and lists nothing else."""
    finder = PlotlyFinder()
    assert finder.check() == []
    assert [name for name, _ in finder.list([])] == ["plotly.min.js"]
    found = finders.find(PLOTLY_STATIC_PATH)
    assert Path(found) == plotly_js_path()
    assert finder.find("vendor/other.js") is None


def test_the_plotly_js_served_is_the_packages_own_version():
    """The file's banner names the plotly.js version the installed plotly package was built for."""
    head = plotly_js_path().read_text(encoding="utf-8")[:200]
    assert f"plotly.js v{plotly.offline.get_plotlyjs_version()}" in head


def test_static_urls_are_content_hashed(collected_static):
    """{% static %} gives a content-hashed name, and collectstatic wrote it with a gzip copy."""
    url = static(PLOTLY_STATIC_PATH)
    assert url.startswith("/static/vendor/plotly.min.") and url != "/static/" + PLOTLY_STATIC_PATH
    hashed = collected_static / url.removeprefix("/static/")
    assert hashed.read_bytes() == plotly_js_path().read_bytes()
    assert gzip.decompress(Path(f"{hashed}.gz").read_bytes()) == hashed.read_bytes()


@pytest.mark.django_db
def test_plotly_js_is_served_compressed_and_cached_for_a_year(client):
    """A browser accepting gzip gets the compressed file, marked immutable for a year."""
    response = client.get(static(PLOTLY_STATIC_PATH), HTTP_ACCEPT_ENCODING="gzip, deflate")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    assert "immutable" in response["Cache-Control"]
    assert "max-age=315360000" in response["Cache-Control"]
    body = b"".join(response.streaming_content)
    assert gzip.decompress(body) == plotly_js_path().read_bytes()
    assert len(body) < plotly_js_path().stat().st_size / 2


@pytest.mark.django_db
def test_every_asset_a_page_names_is_served(client, django_user_model):
    """The login page's stylesheet, at its hashed name, is answered (no 404 behind a hash)."""
    page = client.get("/accounts/login/").content.decode()
    css = static("css/app.css")
    assert css in page
    response = client.get(css)
    assert response.status_code == 200 and "immutable" in response["Cache-Control"]
