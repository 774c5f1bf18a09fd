"""A case on a model since retired names the model without a link that would answer 404 (issue
28's crawl found the case screen's model link a dead end for its clinician)."""

from __future__ import annotations

import pytest
from django.test import Client

from diagnosis.clinic.services import cases
from diagnosis.training.services.approval import retire_model

pytestmark = pytest.mark.django_db


def test_a_retired_models_cases_link_no_closed_page(clinician, model_admin, trained_model):
    """A retired model's case pages stay readable, name the model, and never link its 404 page."""
    case = cases.start_case(user=clinician, trained_model=trained_model)
    client = Client()
    client.force_login(clinician)
    model_page = f'href="/models/{trained_model.pk}/"'
    assert model_page in client.get(f"/cases/{case.pk}/").content.decode()  # approved: linked
    retire_model(user=model_admin, trained_model=trained_model, reason="replaced")
    assert client.get(f"/models/{trained_model.pk}/").status_code == 404
    for url in (
        f"/cases/{case.pk}/",
        f"/cases/{case.pk}/summary/",
        f"/models/{trained_model.pk}/tree/?case={case.pk}",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        page = response.content.decode()
        assert f'/models/{trained_model.pk}/"' not in page, url
        assert f"/models/{trained_model.pk}/#" not in page, url
        if "tree" not in url:
            assert str(trained_model) in page and "data-model-retired" in page, url
