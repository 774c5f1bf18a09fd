"""Read-only user fields in the admin link to the user's page only for whoever may open it
(issue 28's crawl: a model admin following a training's "created by" got 403)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from diagnosis.clinic.services import cases

pytestmark = pytest.mark.django_db

USER_PAGE = 'href="/admin/auth/user/'


def _page(user, url: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def test_a_training_names_its_author_without_a_link_a_model_admin_cannot_follow(trained_model):
    """A model admin reads a training's "created by" as a name; a superuser gets the link."""
    from django.contrib.auth.models import Group

    from diagnosis.permissions import MODEL_ADMINS

    lab_admin = User.objects.create_user("lab-admin", is_staff=True)
    lab_admin.groups.add(Group.objects.get(name=MODEL_ADMINS))  # its permissions from migrate
    assert not lab_admin.has_perm("auth.view_user")
    author = trained_model.created_by
    url = f"/admin/training/trainedmodel/{trained_model.pk}/change/"
    page = _page(lab_admin, url)
    assert USER_PAGE not in page
    assert author.get_username() in page
    root = User.objects.create_superuser("root-links")
    assert f'{USER_PAGE}{author.pk}/change/"' in _page(root, url)


def test_a_clinicians_own_case_in_the_admin_names_users_without_links(clinician, trained_model):
    """A staff clinician reading their own case in the admin sees user names, not links."""
    case = cases.start_case(user=clinician, trained_model=trained_model)
    clinician.is_staff = True
    clinician.save(update_fields=["is_staff"])
    page = _page(clinician, f"/admin/clinic/diagnosiscase/{case.pk}/change/")
    assert USER_PAGE not in page
    assert clinician.get_username() in page
