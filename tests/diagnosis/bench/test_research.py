"""The research page shows the Plotly figures the benchmark scripts save."""

import json

import pytest
from django.templatetags.static import static
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.fixture
def figures_dir(tmp_path, settings):
    settings.RESEARCH_FIGURES_DIR = tmp_path
    return tmp_path


def test_saved_plotly_figure_is_drawn_with_its_title(figures_dir, clinician, client):
    """A saved figure's data and title reach the page, drawn by the local plotly.js."""
    figure = {
        "data": [{"type": "scatter", "x": [500, 10000], "y": [82.3, 49.3]}],
        "layout": {"title": {"text": "Test-cost reduction against PENALTY"}},
    }
    (figures_dir / "paper003_conditioned_loss_penalty.json").write_text(json.dumps(figure))
    client.force_login(clinician)
    page = client.get(reverse("research")).content.decode()
    assert "Test-cost reduction against PENALTY" in page
    assert 'data-figure="paper003_conditioned_loss_penalty.json"' in page
    assert "82.3" in page and static("vendor/plotly.min.js") in page


def test_a_file_that_is_not_a_figure_is_named_with_the_reason(figures_dir, clinician, client):
    """Broken or non-figure JSON is listed with why, and the page still renders."""
    (figures_dir / "broken.json").write_text("{not json")
    (figures_dir / "summary.json").write_text(json.dumps({"rows": []}))
    client.force_login(clinician)
    response = client.get(reverse("research"))
    page = response.content.decode()
    assert response.status_code == 200
    assert "broken.json cannot be shown: not readable JSON" in page
    assert "summary.json cannot be shown: not a Plotly figure" in page


def test_research_page_needs_a_login(figures_dir, client):
    """Anonymous visitors are sent to the login page."""
    response = client.get(reverse("research"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_user_without_a_role_is_refused(figures_dir, client, django_user_model):
    """A logged-in user who is neither clinician nor model admin gets 403."""
    user = django_user_model.objects.create_user("visitor", password="x")
    client.force_login(user)
    assert client.get(reverse("research")).status_code == 403
