"""Least privilege, role by role and URL by URL: a generated access table checked against a policy.

Every URL pattern of the project is found by walking the resolver (so a new
URL without a declared policy fails this test), its parameters are filled with
real objects (the owner's case, the model, the dataset...), and each role GETs
it.  The answers must equal ``POLICY``; the table is written to
``var/access-table.md`` (and printed) so it can be quoted.

Roles: a patient's case is need-to-know.  Only its own clinician works on it,
and a lead clinician of a team the clinician belongs to reads it (read-only);
anyone else, superusers included, gets the same 404 as for a missing case.
Model administrators (staff in ``model-admins``, or superusers) manage
datasets, models and training; ``is_staff`` alone grants nothing.

The lead's column is ``POLICY``'s "other clinician" answer (a lead is a clinician
too) except where ``LEAD`` says otherwise: the lead reads the team's cases.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from diagnosis.bench.services.experiments import create_experiment
from diagnosis.clinic.models import CaseAccess, DiagnosisCase, Team
from diagnosis.clinic.services import cases as case_services
from diagnosis.integration.models import (
    ICD_10,
    CdsCard,
    CdsFeedback,
    ClassCode,
    SmartClient,
    TestCode,
)
from diagnosis.integration.services.api_tokens import issue_api_token
from diagnosis.integration.services.cds_clients import register_client
from diagnosis.permissions import CLINICIANS, LEAD_CLINICIANS, MODEL_ADMINS

ROLES = (
    "anonymous",
    "clinician (owner)",
    "other clinician",
    "lead of the owner's team",
    "model-admin (staff)",
    "staff, no group",
    "superuser",
)

OK = "200"
LOGIN = "302 → login"  # to the site's or the admin's login page
REDIRECT = "302"
FORBIDDEN = "403"
MISSING = "404"
NOT_ALLOWED = "405"
UNAUTHENTICATED = "401"

# One row per URL pattern (as the resolver spells it, with the values filled in by
# ``_fill``), one column per role, in the order of ROLES without the lead (see ``LEAD``).
CLINICAL_PAGE = (LOGIN, OK, OK, OK, FORBIDDEN, OK)  # clinicians and model admins
PATIENT_CASE = (LOGIN, OK, MISSING, MISSING, MISSING, MISSING)  # the owner only
TRAINING = (LOGIN, FORBIDDEN, FORBIDDEN, OK, FORBIDDEN, OK)  # model admins only
STAFF_ONLY = (LOGIN, LOGIN, LOGIN, OK, OK, OK)
MODEL_ADMIN_ADMIN = (LOGIN, LOGIN, LOGIN, OK, FORBIDDEN, OK)
USER_ADMIN = (LOGIN, LOGIN, LOGIN, FORBIDDEN, FORBIDDEN, OK)
# No staff member outside the clinicians group may read a case in the admin.
CASE_ADMIN = (LOGIN, LOGIN, LOGIN, FORBIDDEN, FORBIDDEN, FORBIDDEN)
PUBLIC = (OK,) * (len(ROLES) - 1)


def _admin_model(app_model: str, *, changelist, change, add, delete, history) -> dict:
    prefix = f"admin/{app_model}/"
    return {
        prefix: changelist,
        prefix + "add/": add,
        prefix + "<path:object_id>/": change_redirect(change),
        prefix + "<path:object_id>/change/": change,
        prefix + "<path:object_id>/delete/": delete,
        prefix + "<path:object_id>/history/": history,
    }


def change_redirect(change: tuple) -> tuple:
    """``<id>/`` redirects to ``<id>/change/`` for whoever passes the admin's staff check."""
    return tuple(REDIRECT if answer in (OK, FORBIDDEN) else answer for answer in change)


NO_ADD = (LOGIN, LOGIN, LOGIN, FORBIDDEN, FORBIDDEN, FORBIDDEN)

POLICY: dict[str, tuple[str, ...]] = {
    "": CLINICAL_PAGE,
    "train/": TRAINING,
    "models/<int:pk>/": CLINICAL_PAGE,
    "models/<int:pk>/card/": CLINICAL_PAGE,  # an approved model's card (a draft's: admins only)
    "models/<int:pk>/tree/": CLINICAL_PAGE,
    "models/<int:pk>/tree/?case=<case>": PATIENT_CASE,
    "models/<int:pk>/trees/": CLINICAL_PAGE,  # a forest's or an ensemble's member trees
    "models/<int:pk>/trees/?case=<case>": PATIENT_CASE,
    "models/<int:pk>/decision/": CLINICAL_PAGE,  # how the conditioned-loss model decides
    "models/<int:pk>/decision/?case=<case>": PATIENT_CASE,
    "models/<int:pk>/progress.json": CLINICAL_PAGE,
    "research/": CLINICAL_PAGE,
    # The bench: clinicians and model admins read experiments; model admins set them up.
    "experiments/": CLINICAL_PAGE,
    "experiments/new/": TRAINING,
    # Needs ?ids=..&ids=..: without them a reader is told to tick two (400).
    "experiments/compare/": (LOGIN, "400", "400", "400", FORBIDDEN, "400"),
    "experiments/<int:pk>/": CLINICAL_PAGE,
    "experiments/<int:pk>/progress.json": CLINICAL_PAGE,
    "experiments/<int:pk>/export.csv": CLINICAL_PAGE,
    "experiments/<int:pk>/export.json": CLINICAL_PAGE,
    "cases/new/": (LOGIN, "400", "400", FORBIDDEN, FORBIDDEN, FORBIDDEN),  # "choose a model"
    "cases/new/?model=<model>": (LOGIN, OK, OK, FORBIDDEN, FORBIDDEN, FORBIDDEN),
    "cases/<int:pk>/": PATIENT_CASE,
    "cases/<int:pk>/summary/": PATIENT_CASE,
    # A closed case's confirmed diagnosis: its form, and the POST that records it.
    "cases/<int:pk>/confirmed-diagnosis/": PATIENT_CASE,
    # Confirmed diagnoses from a CSV of the clinician's own patients: clinicians only.
    "cases/confirmed-diagnoses/": (LOGIN, OK, OK, FORBIDDEN, FORBIDDEN, FORBIDDEN),
    # A lead clinician's teams' cases (the lead's OK is in LEAD); anyone else is refused.
    "team/": (LOGIN,) + (FORBIDDEN,) * 5,
    "api/cases/<int:pk>/step": (UNAUTHENTICATED,) + PATIENT_CASE[1:],
    # /api/v1 takes bearer tokens only, so a browser session gets 401 (tests/diagnosis/
    # integration/test_api_v1.py checks each role's token); its schema is open to any
    # signed-in user.
    "api/v1/": (MISSING,) * 6,  # no page at the root: the schema is below it
    "api/v1/openapi.json": (UNAUTHENTICATED,) + (OK,) * 5,
    "api/v1/docs": (UNAUTHENTICATED,) + (OK,) * 5,
    "api/v1/models": (UNAUTHENTICATED,) * 6,
    "api/v1/cases": (UNAUTHENTICATED,) * 6,
    "api/v1/cases/<case_id>": (UNAUTHENTICATED,) * 6,
    "api/v1/cases/<case_id>/steps": (NOT_ALLOWED,) * 6,  # POST only
    "api/v1/cases/<case_id>/confirmed-diagnosis": (NOT_ALLOWED,) * 6,  # POST only
    # the case as FHIR (GET) and a Bundle of Observations recorded (POST): tokens only
    "api/v1/cases/<case_id>/fhir": (UNAUTHENTICATED,) * 6,
    # CDS Hooks: the EHR's signed JWT on every call, never a session (tests/diagnosis/
    # integration/test_cds_security.py checks the tokens); a hook and its feedback are POSTs.
    "cds-services": (UNAUTHENTICATED,) * 6,
    "cds-services/<str:service_id>": (NOT_ALLOWED,) * 6,
    "cds-services/<str:service_id>/feedback": (NOT_ALLOWED,) * 6,
    # SMART EHR launch: clinicians (without iss and launch, or a pending launch: 400).
    "smart/launch": (LOGIN, "400", "400", FORBIDDEN, FORBIDDEN, FORBIDDEN),
    "smart/callback": (LOGIN, "400", "400", FORBIDDEN, FORBIDDEN, FORBIDDEN),
    "admin/": STAFF_ONLY,
    "admin/login/": (OK, OK, OK, REDIRECT, REDIRECT, REDIRECT),
    # Logging out takes a POST; a non-staff user is sent to the admin index (and so to log in).
    "admin/logout/": (LOGIN, REDIRECT, REDIRECT) + (NOT_ALLOWED,) * 3,
    "admin/password_change/": STAFF_ONLY,
    "admin/password_change/done/": STAFF_ONLY,
    "admin/autocomplete/": (LOGIN, LOGIN, LOGIN) + (FORBIDDEN,) * 3,  # no autocomplete fields
    "admin/jsi18n/": STAFF_ONLY,
    # The case has no page outside the admin; missing and forbidden look alike.
    "admin/r/<path:content_type_id>/<path:object_id>/": (LOGIN, LOGIN, LOGIN) + (MISSING,) * 3,
    "admin/^(?P<app_label>auth|axes|training|catalog|clinic|integration)/$": (LOGIN, LOGIN, LOGIN)
    + (OK, MISSING, OK),  # an app index with nothing the user may see is a 404
    "admin/(?P<url>.*)$": (LOGIN, LOGIN, LOGIN) + (MISSING,) * 3,
    "admin/catalog/dataset/import/": MODEL_ADMIN_ADMIN,
    **_admin_model(
        "auth/group",
        changelist=USER_ADMIN,
        change=USER_ADMIN,
        add=USER_ADMIN,
        delete=USER_ADMIN,
        history=USER_ADMIN,
    ),
    **_admin_model(
        "auth/user",
        changelist=USER_ADMIN,
        change=USER_ADMIN,
        add=USER_ADMIN,
        delete=USER_ADMIN,
        history=USER_ADMIN,
    ),
    "admin/auth/user/<id>/password/": USER_ADMIN,
    # API tokens act as their user: only superusers issue, list and revoke them.
    **_admin_model(
        "integration/apitoken",
        changelist=USER_ADMIN,
        change=USER_ADMIN,  # a read-only page: tokens are issued or revoked, never edited
        add=USER_ADMIN,
        delete=NO_ADD,  # revoked, never deleted
        history=USER_ADMIN,
    ),
    # The catalog's FHIR codes: model admins keep them, like the catalog itself.
    **{
        route: answers
        for model in ("testcode", "classcode")
        for route, answers in _admin_model(
            f"integration/{model}",
            changelist=MODEL_ADMIN_ADMIN,
            change=MODEL_ADMIN_ADMIN,
            add=MODEL_ADMIN_ADMIN,
            delete=MODEL_ADMIN_ADMIN,
            history=MODEL_ADMIN_ADMIN,
        ).items()
    },
    # A CDS Hooks client acts as its clinician: only superusers register one.
    **_admin_model(
        "integration/cdsclient",
        changelist=USER_ADMIN,
        change=USER_ADMIN,
        add=USER_ADMIN,
        delete=USER_ADMIN,
        history=USER_ADMIN,
    ),
    # An EHR launching the case screen (SMART): superusers register it.
    **_admin_model(
        "integration/smartclient",
        changelist=USER_ADMIN,
        change=USER_ADMIN,
        add=USER_ADMIN,
        delete=USER_ADMIN,
        history=USER_ADMIN,
    ),
    # What clinicians did with the cards: an audit record, read-only, superusers only.
    **_admin_model(
        "integration/cdsfeedback",
        changelist=USER_ADMIN,
        change=USER_ADMIN,  # a read-only page
        add=NO_ADD,
        delete=NO_ADD,
        history=USER_ADMIN,
    ),
    # django-axes' sign-in records (who was locked out, to unlock them): superusers only.
    **{
        route: answers
        for model in ("accessattempt", "accesslog", "accessfailurelog")
        for route, answers in _admin_model(
            f"axes/{model}",
            changelist=USER_ADMIN,
            change=USER_ADMIN,
            add=NO_ADD,  # records are made by sign-ins, never by hand
            delete=USER_ADMIN,
            history=USER_ADMIN,
        ).items()
    },
    **_admin_model(
        "catalog/dataset",
        changelist=MODEL_ADMIN_ADMIN,
        change=MODEL_ADMIN_ADMIN,
        add=MODEL_ADMIN_ADMIN,
        delete=MODEL_ADMIN_ADMIN,
        history=MODEL_ADMIN_ADMIN,
    ),
    **_admin_model(
        "training/trainedmodel",
        changelist=MODEL_ADMIN_ADMIN,
        change=MODEL_ADMIN_ADMIN,
        add=NO_ADD,  # trainings start from the Train page
        delete=MODEL_ADMIN_ADMIN,
        history=MODEL_ADMIN_ADMIN,
    ),
    # Teams decide who reads whose cases: superusers only.
    **_admin_model(
        "clinic/team",
        changelist=USER_ADMIN,
        change=USER_ADMIN,
        add=USER_ADMIN,
        delete=USER_ADMIN,
        history=USER_ADMIN,
    ),
    # Who read which patient's case: superusers (or a granted view_caseaccess), read-only;
    # model admins never.
    **_admin_model(
        "clinic/caseaccess",
        changelist=USER_ADMIN,
        change=USER_ADMIN,  # a read-only page
        add=NO_ADD,
        delete=NO_ADD,
        history=USER_ADMIN,
    ),
    **_admin_model(
        "clinic/diagnosiscase",
        changelist=CASE_ADMIN,
        change=CASE_ADMIN,
        add=NO_ADD,
        delete=CASE_ADMIN,
        # The history of a case the user may not see redirects exactly as for a missing case.
        history=(LOGIN, LOGIN, LOGIN, REDIRECT, REDIRECT, REDIRECT),
    ),
    "accounts/login/": PUBLIC,
    "accounts/logout/": (LOGIN,) + (NOT_ALLOWED,) * 5,  # logging out takes a POST
    "accounts/password_change/": (LOGIN,) + (OK,) * 5,
    "accounts/password_change/done/": (LOGIN,) + (OK,) * 5,
    "accounts/password_reset/": PUBLIC,
    "accounts/password_reset/done/": PUBLIC,
    "accounts/reset/<uidb64>/<token>/": PUBLIC,  # says the link is invalid
    "accounts/reset/done/": PUBLIC,
}

# The lead's answers where they differ from another clinician's: the team's case, read.
LEAD = {
    "cases/<int:pk>/": OK,  # the read-only page (no step forms)
    "cases/<int:pk>/summary/": OK,
    "cases/<int:pk>/confirmed-diagnosis/": FORBIDDEN,  # reads the case, records nothing
    "models/<int:pk>/tree/?case=<case>": OK,
    "models/<int:pk>/trees/?case=<case>": OK,
    "models/<int:pk>/decision/?case=<case>": OK,
    "api/cases/<int:pk>/step": OK,  # GET reads; a POST is refused (test_teams.py)
    "team/": OK,
}


def expected(route: str) -> tuple[str, ...]:
    """The policy's answers for ``route`` in the order of ROLES, the lead's column included."""
    row = POLICY[route]
    assert len(row) == len(ROLES) - 1, f"{route}: one answer per role except the lead's"
    return row[:3] + (LEAD.get(route, row[2]),) + row[3:]


# Query strings that open a patient's data on a URL that also works without them.
VARIANTS = {
    "models/<int:pk>/tree/": "?case=<case>",
    "models/<int:pk>/trees/": "?case=<case>",
    "models/<int:pk>/decision/": "?case=<case>",
    "cases/new/": "?model=<model>",
}


def _patterns(resolver: URLResolver | None = None, prefix: str = ""):
    """Every URL pattern of the project, as ``(route, pattern)`` with the full route."""
    for entry in (resolver or get_resolver()).url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _patterns(entry, route)
        else:
            assert isinstance(entry, URLPattern)
            yield route


@pytest.fixture
def world(clinician, other_clinician, trained_model):
    """The six roles' clients and the real objects the URL parameters name."""
    case = case_services.start_case(user=clinician, trained_model=trained_model)
    admins = Group.objects.get(name=MODEL_ADMINS)  # its permissions come from migrate
    model_admin = User.objects.create_user("model-admin", is_staff=True)
    model_admin.groups.add(admins)
    lead = User.objects.create_user("lead")
    lead.groups.add(Group.objects.get(name=CLINICIANS), Group.objects.get(name=LEAD_CLINICIANS))
    team = Team.objects.create(name="Cardiology A")
    team.members.add(clinician, lead)
    team.leads.add(lead)
    access = CaseAccess.objects.create(
        case=case, user=clinician, username=clinician.username, action=CaseAccess.VIEW
    )
    users = {
        "clinician (owner)": clinician,
        "other clinician": other_clinician,
        "lead of the owner's team": lead,
        "model-admin (staff)": model_admin,
        "staff, no group": User.objects.create_user("staff-only", is_staff=True),
        "superuser": User.objects.create_superuser("root"),
    }
    seen = {"user_agent": "test", "ip_address": "10.0.0.1", "username": "doc", "path_info": "/"}
    axes_records = {
        "admin/axes/accessattempt/": AccessAttempt.objects.create(
            **seen, get_data="", post_data="", failures_since_start=1
        ),
        "admin/axes/accesslog/": AccessLog.objects.create(**seen),
        "admin/axes/accessfailurelog/": AccessFailureLog.objects.create(**seen),
    }
    token, _ = issue_api_token(issuer=None, owner=clinician, name="EHR")
    cds_client = register_client(
        name="EHR",
        issuer="https://ehr.example",
        clinician=clinician,
        jwks_url="https://ehr.example/jwks",
    )
    card = CdsCard.objects.create(
        uuid=uuid.uuid4(),
        client=cds_client,
        case=case,
        service_id="s",
        hook="patient-view",
        hook_instance="h",
        summary="s",
        version=0,
    )
    feedback = CdsFeedback.objects.create(
        card=card, case=case, outcome="overridden", outcome_timestamp=timezone.now()
    )
    smart = SmartClient.objects.create(
        name="EHR", iss="https://ehr.example/fhir", client_id="app", trained_model=trained_model
    )
    test = trained_model.dataset.tests.get(name="glucose")
    test_code = TestCode.objects.create(test=test, code="2345-7", unit="mg/dL")
    class_code = ClassCode.objects.create(
        dataset=trained_model.dataset, label_index=1, system=ICD_10, code="E14"
    )
    experiment = create_experiment(
        user=users["superuser"],
        dataset=trained_model.dataset,
        learners=[{"key": "eg2", "params": {}}],
        matrix_kind="uniform",
        costs=[100],
        k=2,
        launch=False,
    )
    clients = {"anonymous": Client()}
    for role, user in users.items():
        clients[role] = Client()
        clients[role].force_login(user)
    ids = {
        "admin/auth/group/": Group.objects.get(name=CLINICIANS).pk,
        "admin/auth/user/": clinician.pk,
        "admin/catalog/dataset/": trained_model.dataset_id,
        "admin/training/trainedmodel/": trained_model.pk,
        "admin/clinic/diagnosiscase/": case.pk,
        "admin/r/": f"{ContentType.objects.get_for_model(DiagnosisCase).pk}/{case.pk}",
        "models/": trained_model.pk,
        "cases/": case.pk,
        "api/cases/": case.pk,
        "api/v1/cases/": case.pk,
        **{prefix: record.pk for prefix, record in axes_records.items()},
        "admin/integration/apitoken/": token.pk,
        "admin/integration/cdsclient/": cds_client.pk,
        "admin/integration/cdsfeedback/": feedback.pk,
        "admin/integration/smartclient/": smart.pk,
        "admin/integration/testcode/": test_code.pk,
        "admin/integration/classcode/": class_code.pk,
        "cds-services/": f"cost-aware-model-{trained_model.pk}",
        "admin/clinic/team/": team.pk,
        "admin/clinic/caseaccess/": access.pk,
        "experiments/": experiment.pk,
    }
    return {"clients": clients, "ids": ids, "case": case, "model": trained_model}


def _fill(route: str, world, *, ids: dict | None = None) -> str:
    """The route with each parameter replaced by a real object's id (or a harmless value)."""
    if "(?P<app_label>" in route:
        return "/admin/catalog/"
    if "(?P<url>" in route:
        return "/admin/no-such-page/"
    ids = ids or world["ids"]
    owner = next((ids[p] for p in sorted(ids, key=len, reverse=True) if route.startswith(p)), None)
    fixed = {
        "uidb64": "MQ",
        "token": "not-a-token",
        "case": ids["cases/"],
        "model": world["model"].pk,
    }

    def value(match: re.Match) -> str:
        name = match.group("name")
        if name in fixed:
            return str(fixed[name])
        assert owner is not None, f"no object declared for {name} in {route}"
        return str(owner)

    path = re.sub(r"<(?:\w+:)?(?P<name>\w+)>", value, route)
    if route.startswith("admin/r/"):
        path = "admin/r/" + str(ids["admin/r/"]) + "/"
    return "/" + path


def _answer(response) -> str:
    if response.status_code == 302:
        location = response["Location"]
        if location.startswith((reverse("admin:login"), settings.LOGIN_URL)):
            return LOGIN
        return REDIRECT
    return str(response.status_code)


def _table(rows: list[tuple[str, list[str]]]) -> str:
    head = "| URL | " + " | ".join(ROLES) + " |\n|---" + "|---" * len(ROLES) + "|\n"
    body = "".join(
        "| `" + route.replace("|", "\\|") + "` | " + " | ".join(cells) + " |\n"
        for route, cells in rows
    )
    return head + body


def test_every_url_answers_every_role_as_the_policy_says(world):
    """Each role's GET of every URL pattern gets the declared status; the table is saved."""
    routes = []
    for route in _patterns():
        routes.append(route)
        if route in VARIANTS:
            routes.append(route + VARIANTS[route])
    undeclared = [r for r in routes if r not in POLICY]
    assert not undeclared, f"declare who may open these URLs in POLICY: {undeclared}"
    stale = sorted(set(POLICY) - set(routes))
    assert not stale, f"POLICY names URLs the project no longer has: {stale}"

    rows, wrong = [], []
    for route in routes:
        url = _fill(route, world)
        cells = []
        for role, wanted in zip(ROLES, expected(route), strict=True):
            got = _answer(world["clients"][role].get(url))
            cells.append(got if got == wanted else f"**{got}** (policy {wanted})")
            if got != wanted:
                wrong.append(f"{role} GET {url}: {got}, policy {wanted}")
        rows.append((route, cells))

    table = _table(rows)
    out = Path(settings.BASE_DIR) / "var" / "access-table.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        "# Who may open what: every URL pattern, every role (GET)\n\n"
        "Generated by `tests/diagnosis/test_access.py`. "
        "`302 → login`: sent to log in; 404 for a case is the same answer as for a missing one.\n\n"
        + table,
        encoding="utf-8",
    )
    print("\n" + table)
    assert not wrong, "\n".join(wrong)


READERS = ("clinician (owner)", "lead of the owner's team")


def test_no_role_but_the_owner_and_the_team_lead_reads_a_case_anywhere():
    """The patient-case rows grant the owner and the lead of the owner's team alone."""
    case_rows = [r for r in POLICY if r.startswith(("cases/<", "api/cases/")) or "case=" in r]
    assert len(case_rows) >= 4
    for route in case_rows:
        answers = dict(zip(ROLES, expected(route), strict=True))
        assert answers["clinician (owner)"] == OK
        assert all(a != OK for role, a in answers.items() if role not in READERS)


def test_a_case_one_may_not_open_answers_like_a_missing_case(world):
    """Every URL naming a case answers non-owners as it answers a missing id: no enumeration."""
    case = world["case"]
    missing = case.pk + 1_000_000
    content_type = ContentType.objects.get_for_model(DiagnosisCase).pk
    ids = {**world["ids"], "admin/r/": f"{content_type}/{missing}"}
    ids["admin/clinic/diagnosiscase/"] = ids["cases/"] = ids["api/cases/"] = missing
    case_routes = [
        r
        for r in POLICY
        if r.startswith(("cases/<", "api/cases/", "admin/clinic/diagnosiscase/<", "admin/r/"))
        or "case=" in r
    ]
    assert len(case_routes) == 12
    for route in case_routes:
        real, gone = _fill(route, world), _fill(route, world, ids=ids)
        assert real != gone
        for role in (r for r in ROLES[2:] if r not in READERS):
            client = world["clients"][role]
            assert _answer(client.get(real)) == _answer(client.get(gone)), (role, real, gone)
