"""Lead clinicians read (only read) their teams' cases: the screen, both APIs, the services."""

from __future__ import annotations

import json

import pytest
import step_helpers
from django.contrib.auth.models import Group, User
from django.core.exceptions import PermissionDenied
from django.test import Client

from diagnosis.clinic.models import DiagnosisStep, Team
from diagnosis.clinic.permissions import CaseNotFound
from diagnosis.clinic.selectors.cases import case_for_user, team_cases_for_user
from diagnosis.clinic.services import cases as case_services
from diagnosis.integration.services.api_tokens import issue_api_token
from diagnosis.permissions import CLINICIANS, LEAD_CLINICIANS


@pytest.fixture
def lead(db) -> User:
    user = User.objects.create_user("lead-doc", first_name="Lena", last_name="Lead")
    user.groups.add(
        Group.objects.get_or_create(name=CLINICIANS)[0],
        Group.objects.get_or_create(name=LEAD_CLINICIANS)[0],
    )
    return user


@pytest.fixture
def team(lead, clinician) -> Team:
    team = Team.objects.create(name="Ward 3")
    team.members.add(clinician, lead)
    team.leads.add(lead)
    return team


@pytest.fixture
def team_case(clinician, trained_model, team):
    """An open case of a team member with one result recorded."""
    case = case_services.start_case(
        user=clinician, trained_model=trained_model, patient_reference="MRN-77"
    )
    step_helpers.post_step(user=clinician, case=case, action="result", test="glucose", value=150)
    return case


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_lead_reads_a_team_members_case_read_only(lead, team_case):
    """The case page opens for the lead with the steps and a read-only note, and no step form."""
    response = _client(lead).get(f"/cases/{team_case.pk}/")
    text = response.content.decode()
    assert response.status_code == 200
    assert 'id="read-only"' in text and "Glucose" in text
    assert 'name="action"' not in text and "Resume the case" not in text
    owner_page = _client(team_case.clinician).get(f"/cases/{team_case.pk}/").content.decode()
    assert 'name="action"' in owner_page and 'id="read-only"' not in owner_page


def test_a_lead_posting_a_step_on_the_screen_is_refused_and_nothing_is_saved(lead, team_case):
    """Every step action posted by the lead answers 403, before any confirmation page."""
    before = DiagnosisStep.objects.filter(case=team_case).count()
    for action in ("result", "unavailable", "classify", "refer", "results", "undo", "correct"):
        response = _client(lead).post(
            f"/cases/{team_case.pk}/",
            {"action": action, "test": "insulin", "value": "120", "label": "0", "confirm": "yes"},
        )
        assert response.status_code == 403, action
    assert DiagnosisStep.objects.filter(case=team_case).count() == before


def test_a_lead_reads_through_the_session_api_but_may_not_post(lead, team_case):
    """GET /api/cases/<id>/step gives the state; a POST is a 403 JSON error, nothing saved."""
    client = _client(lead)
    got = client.get(f"/api/cases/{team_case.pk}/step")
    assert got.status_code == 200 and got.json()["case"] == team_case.pk
    refused = client.post(
        f"/api/cases/{team_case.pk}/step",
        data=json.dumps({"action": "refer"}),
        content_type="application/json",
    )
    assert refused.status_code == 403 and "only its own clinician" in refused.json()["error"]
    team_case.refresh_from_db()
    assert team_case.is_open and team_case.steps.count() == 1


def test_a_lead_reads_through_api_v1_but_may_not_post_a_step(lead, team_case):
    """With the lead's token: GET /api/v1/cases/<id> is 200, a POST of a step 403, nothing saved."""
    _, plain = issue_api_token(issuer=lead, owner=lead, name="ward EHR")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {plain}")
    got = client.get(f"/api/v1/cases/{team_case.pk}")
    assert got.status_code == 200 and got.json()["patient_reference"] == "MRN-77"
    for body in ({"action": "refer"}, {"action": "result", "test": "insulin", "value": 120}):
        refused = client.post(
            f"/api/v1/cases/{team_case.pk}/steps",
            data=json.dumps(body),
            content_type="application/json",
        )
        assert refused.status_code == 403, body
        assert "only its own clinician" in refused.json()["error"]
    assert team_case.steps.count() == 1


def test_the_services_refuse_a_leads_step_and_a_strangers_look_alike_missing(
    lead, other_clinician, team_case
):
    """A step by the lead is PermissionDenied; by a clinician outside the team, CaseNotFound."""
    with pytest.raises(PermissionDenied):
        step_helpers.post_step(user=lead, case=team_case, action="refer")
    with pytest.raises(CaseNotFound):
        step_helpers.post_step(user=other_clinician, case=team_case, action="refer")
    assert team_case.steps.count() == 1


def test_reading_ends_with_the_team_or_the_lead_role(lead, team, clinician, team_case):
    """No longer a lead of the member's team, or no longer in the group: 404 like a missing case."""
    assert case_for_user(user=lead, pk=team_case.pk) == team_case
    team.leads.remove(lead)
    with pytest.raises(CaseNotFound):
        case_for_user(user=lead, pk=team_case.pk)
    team.leads.add(lead)
    team.members.remove(clinician)
    assert _client(lead).get(f"/cases/{team_case.pk}/").status_code == 404
    team.members.add(clinician)
    lead.groups.remove(Group.objects.get(name=LEAD_CLINICIANS))
    assert _client(lead).get(f"/cases/{team_case.pk}/summary/").status_code == 404
    missing = _client(lead).get(f"/cases/{team_case.pk + 1000}/summary/")
    assert missing.status_code == 404


def test_leading_one_team_gives_no_other_teams_cases(lead, team, other_clinician, trained_model):
    """A lead of Ward 3 does not read the case of a clinician who is only in another team."""
    other_team = Team.objects.create(name="Ward 9")
    other_team.members.add(other_clinician)
    case = case_services.start_case(user=other_clinician, trained_model=trained_model)
    assert _client(lead).get(f"/cases/{case.pk}/").status_code == 404
    assert case not in team_cases_for_user(user=lead)


def test_the_team_list_shows_and_searches_the_members_cases(
    lead, team, clinician, other_clinician, trained_model, team_case
):
    """/team/ lists the members' cases with their clinician, searchable by patient reference."""
    other = case_services.start_case(
        user=other_clinician, trained_model=trained_model, patient_reference="MRN-77"
    )
    second = case_services.start_case(
        user=clinician, trained_model=trained_model, patient_reference="MRN-12"
    )
    page = _client(lead).get("/team/").content.decode()
    assert f"Read case #{team_case.pk}" in page and f"Read case #{second.pk}" in page
    assert f"#{other.pk}<" not in page and "doc" in page
    found = _client(lead).get("/team/", {"patient": "77"}).content.decode()
    assert f"Read case #{team_case.pk}" in found and f"Read case #{second.pk}" not in found
    assert _client(clinician).get("/team/").status_code == 403
    with pytest.raises(PermissionDenied):
        team_cases_for_user(user=clinician)


def test_the_lead_sees_a_team_cases_link_others_do_not(lead, team, clinician, trained_model):
    """The header offers "Team cases" to a lead only."""
    assert 'href="/team/"' in _client(lead).get("/").content.decode()
    assert 'href="/team/"' not in _client(clinician).get("/").content.decode()
