"""The audit: one access-log row per request that reads or changes a case, and the catalog's
change history (old and new values, who, when) in the admin, for the right people only."""

from __future__ import annotations

import html
import json

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from test_admin import _form_data, _grid, _matrix_field, _post

from diagnosis.clinic.models import CaseAccess
from diagnosis.clinic.services import cases as case_services
from diagnosis.integration.services.api_tokens import issue_api_token
from diagnosis.permissions import MODEL_ADMINS


@pytest.fixture
def case(clinician, trained_model):
    return case_services.start_case(user=clinician, trained_model=trained_model)


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _log(case) -> list[tuple[str, str, str]]:
    return list(
        CaseAccess.objects.filter(case_id=case.pk)
        .order_by("id")
        .values_list("username", "action", "detail")
    )


def _access_sql(queries) -> list[str]:
    return [q["sql"] for q in queries if "diagnosis_caseaccess" in q["sql"]]


def test_every_read_and_step_writes_one_row_saying_who_what_and_which_case(clinician, case):
    """Case page, summary, tree path, both APIs' reads and steps: exactly one row per request."""
    web = _client(clinician)
    _, token = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    ehr = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert web.get(f"/cases/{case.pk}/").status_code == 200
    assert web.get(f"/cases/{case.pk}/summary/").status_code == 200
    assert web.get(f"/models/{case.trained_model_id}/tree/?case={case.pk}").status_code == 200
    assert web.get(f"/api/cases/{case.pk}/step").status_code == 200
    assert ehr.get(f"/api/v1/cases/{case.pk}").status_code == 200
    posted = web.post(f"/cases/{case.pk}/", {"action": "result", "test": "glucose", "value": "150"})
    assert posted.status_code == 302
    stepped = ehr.post(
        f"/api/v1/cases/{case.pk}/steps",
        data=json.dumps({"action": "result", "test": "insulin", "value": 120}),
        content_type="application/json",
    )
    assert stepped.status_code == 200
    undo = web.post(
        f"/api/cases/{case.pk}/step",
        data=json.dumps({"action": "undo", "reason": "wrong sample"}),
        content_type="application/json",
    )
    assert undo.status_code == 200
    assert _log(case) == [
        ("doc", "view", ""),
        ("doc", "summary", ""),
        ("doc", "tree", ""),
        ("doc", "api-read", ""),
        ("doc", "api-read", ""),
        ("doc", "step", "result"),
        ("doc", "step", "result"),
        ("doc", "undo", ""),
    ]


def test_a_step_request_pays_one_insert_and_no_read_of_the_log(clinician, case):
    """The step endpoint's audit cost is a single INSERT; nothing in the log is read."""
    ehr_token = issue_api_token(issuer=clinician, owner=clinician, name="EHR")[1]
    ehr = Client(HTTP_AUTHORIZATION=f"Bearer {ehr_token}")
    with CaptureQueriesContext(connection) as queries:
        response = ehr.post(
            f"/api/v1/cases/{case.pk}/steps",
            data=json.dumps({"action": "result", "test": "glucose", "value": 150}),
            content_type="application/json",
        )
    assert response.status_code == 200
    statements = _access_sql(queries.captured_queries)
    assert len(statements) == 1 and statements[0].lstrip().upper().startswith("INSERT")


def test_refused_and_missing_cases_write_nothing(other_clinician, case):
    """A request answered 404 (not yours or missing) leaves no row: nothing was read."""
    web = _client(other_clinician)
    assert web.get(f"/cases/{case.pk}/").status_code == 404
    assert web.get(f"/cases/{case.pk + 999}/").status_code == 404
    assert not CaseAccess.objects.exists()


def test_a_failed_step_is_not_logged_as_a_change(clinician, case):
    """A refused value saves nothing and logs no step (the transaction rolls the row back)."""
    response = _client(clinician).post(
        f"/api/cases/{case.pk}/step",
        data=json.dumps({"action": "result", "test": "glucose", "value": 9999}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert not CaseAccess.objects.filter(action__in=CaseAccess.CHANGES).exists()


def test_the_log_outlives_its_user_and_keeps_the_name(clinician, other_clinician, case):
    """A deleted user's rows stay, with their username."""
    CaseAccess.objects.create(
        case=case, user=other_clinician, username="other-doc", action=CaseAccess.VIEW
    )
    other_clinician.delete()
    row = CaseAccess.objects.get()
    assert row.user_id is None and row.username == "other-doc" and row.case_id == case.pk


def test_only_superusers_or_a_granted_auditor_read_the_access_log(clinician, case):
    """The admin's access log: superuser 200; model-admin 403; a staff user granted
    view_caseaccess 200; nobody may add, change or delete a row."""
    from django.contrib.auth.models import Permission

    _client(clinician).get(f"/cases/{case.pk}/")
    row = CaseAccess.objects.get()
    root = User.objects.create_superuser("root")
    model_admin = User.objects.create_user("catalog", is_staff=True)
    model_admin.groups.add(Group.objects.get(name=MODEL_ADMINS))
    auditor = User.objects.create_user("auditor", is_staff=True)
    auditor.user_permissions.add(Permission.objects.get(codename="view_caseaccess"))
    listing = "/admin/clinic/caseaccess/"
    page = _client(root).get(listing)
    assert page.status_code == 200 and "doc" in page.content.decode()
    assert _client(model_admin).get(listing).status_code == 403
    assert _client(auditor).get(listing).status_code == 200
    assert _client(root).get(f"{listing}{row.pk}/delete/").status_code == 403
    assert _client(root).post(f"{listing}{row.pk}/change/", {"action": "undo"}).status_code == 403
    assert CaseAccess.objects.get().action == "view"


def test_catalog_edits_are_kept_with_old_and_new_values_who_and_when(model_admin, toy_dataset):
    """Editing a price, a group, the error matrix, the class labels and choices in the admin
    lists each change (old → new, by whom) on the dataset's History page."""
    web = _client(model_admin)
    data = _form_data(toy_dataset)
    data["tests-0-price"] = "11.5"
    data["tests-2-group"] = data["tests-0-group"]  # sex joins the blood group
    data["tests-2-choices"] = "0: F\n1: M"
    data["class_labels"] = "well\nill"
    data.update(_grid(_matrix_field(toy_dataset), [[0, 50], [200, 0]]))
    response, _ = _post(web, toy_dataset, data)
    assert response.status_code == 302
    page = web.get(f"/admin/catalog/dataset/{toy_dataset.pk}/history/").content.decode()
    history = html.unescape(page).split('id="catalog-history"')[1]
    for field, old, new in (
        ("price", "10.0", "11.5"),
        ("group", "—", "blood"),
        ("class labels", '["healthy", "disease"]', '["well", "ill"]'),
        ("matrix", "[[0.0, 100.0], [100.0, 0.0]]", "[[0.0, 50.0], [200.0, 0.0]]"),
        (
            "choices",
            '[{"code": 0, "label": "female"}, {"code": 1, "label": "male"}]',
            '[{"code": 0, "label": "F"}, {"code": 1, "label": "M"}]',
        ),
    ):
        expected = f"<strong>{field}</strong>: <del>{old}</del> → <ins>{new}</ins>"
        assert expected in history, field
    assert history.count(">boss<") >= 4  # every change says who made it


def test_the_catalog_history_is_for_model_admins_not_clinicians(
    model_admin, clinician, toy_dataset
):
    """A model administrator (not a superuser) reads the catalog's history; a clinician cannot."""
    editor = User.objects.create_user("catalog", is_staff=True)
    editor.groups.add(Group.objects.get(name=MODEL_ADMINS))
    test = toy_dataset.tests.get(name="insulin")
    test.price = 13.0
    test.save()
    url = f"/admin/catalog/dataset/{toy_dataset.pk}/history/"
    page = _client(editor).get(url)
    assert page.status_code == 200
    assert "<strong>price</strong>: <del>12.0</del> → <ins>13.0</ins>" in page.content.decode()
    assert _client(clinician).get(url).status_code == 302  # to the admin's login
