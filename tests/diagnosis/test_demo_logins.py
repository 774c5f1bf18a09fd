"""Demo users keep a changed password across runs of load_demo_data, and logins say so."""

from __future__ import annotations

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import call_command
from login_helpers import login_request

from diagnosis.management import demo_data


def _load_users():
    call_command("load_demo_data", "--no-train", "--only", demo_data.PIMA)


@pytest.mark.django_db
def test_a_changed_password_survives_a_second_load():
    """load_demo_data run again (a second bin/run start) keeps a password someone changed."""
    _load_users()
    admin = User.objects.get(username="admin")
    admin.set_password("changed-by-the-admin-7")
    admin.save()
    _load_users()
    assert authenticate(login_request(), username="admin", password="changed-by-the-admin-7")
    assert not authenticate(login_request(), username="admin", password="admin-demo")


@pytest.mark.django_db
def test_a_second_load_keeps_roles_as_they_were_changed():
    """A demoted demo admin stays demoted: roles too are set only when the user is created."""
    _load_users()
    User.objects.filter(username="admin").update(is_superuser=False)
    _load_users()
    assert not User.objects.get(username="admin").is_superuser


@pytest.mark.django_db
def test_logins_show_the_first_password_until_it_is_changed(capsys):
    """demo_logins prints a working first password, and 'password as set' once it was changed."""
    _load_users()
    capsys.readouterr()
    call_command("demo_logins")
    assert capsys.readouterr().out.splitlines() == [
        "clinician / clinician-demo",
        "lead / lead-demo",
        "admin / admin-demo",
    ]
    clinician = User.objects.get(username="clinician")
    clinician.set_password("changed-by-the-clinician-7")
    clinician.save()
    before = User.objects.get(username="clinician").password
    call_command("demo_logins")
    assert capsys.readouterr().out.splitlines() == [
        "clinician / (password as set)",
        "lead / lead-demo",
        "admin / admin-demo",
    ]
    # Printing the logins never rewrites a stored password.
    assert User.objects.get(username="clinician").password == before


@pytest.mark.django_db
def test_the_demo_lead_reads_the_demo_clinicians_cases_and_nothing_more(trained_model):
    """The demo team lets "lead" read "clinician"'s case (read-only), once made, left as edited."""
    from django.test import Client

    from diagnosis.clinic.models import Team
    from diagnosis.clinic.services import cases as case_services

    _load_users()
    clinician, lead = User.objects.get(username="clinician"), User.objects.get(username="lead")
    case = case_services.start_case(user=clinician, trained_model=trained_model)
    client = Client()
    client.force_login(lead)
    page = client.get(f"/cases/{case.pk}/")
    assert page.status_code == 200 and 'id="read-only"' in page.content.decode()
    assert client.post(f"/cases/{case.pk}/", {"action": "refer"}).status_code == 403
    team = Team.objects.get(name="Demo ward")
    team.members.remove(clinician)
    _load_users()  # a second start does not put the clinician back
    assert client.get(f"/cases/{case.pk}/").status_code == 404
