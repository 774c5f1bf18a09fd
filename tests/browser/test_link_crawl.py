"""No dead ends (issue 28): every same-site link of every screen, crawled breadth-first from the
home page (and the admin's) for each role, with a model of every learner family (a single
tree, ACT, DTMC, the conditioned-loss model, a forest, a boosted ensemble, the selector), an
open and a closed case on each, an experiment, a draft, a retired, a queued and a failed model.

After the crawl, one screen of each kind that the clinician, the lead and the model admin
reached (each model's own pages kept apart: families draw differently) is drawn in Chromium at
1366x768 and 820x1180 and checked with tests/browser/overflow.js: nothing wider than its
container.  Those three roles are crawled and drawn by one test, the other roles by another, each
on a world of its own, so parallel test workers can share them out.

The pages are fetched through Playwright's request context (the links are all built by the
server: no script makes one), following each redirect itself; a GET form is submitted with its
default values.  Every 5xx, and every 403 or 404 a screen links to (a dead end: a link its
reader cannot use), is collected with its referrer and role and reported together.
Logout links are not followed; no GET may change anything (POST actions are forms): the rows
of the app are compared before and after.
Django admin pages are many near-copies (a change page per row, a filter per value): at most
``ADMIN_PER_PATTERN`` of each kind (a changelist, its filtered or sorted lists, a row's change,
history or delete page) are fetched, and ``APP_PER_PATTERN`` of each app URL that differs only
in its query (``?tree=k``, ``?case=``, ``?test=``) per model, case or experiment.  The log of
every fetch is written to var/link-crawl/<role>.tsv.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections import Counter, deque
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import pytest
from browser_helpers import ADMIN, CLINICIAN, approve_for_clinicians

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Links never followed: signing out ends the crawl's session; static files are not screens.
SKIP = re.compile(r"^/(accounts/logout|admin/logout|static/)")
ADMIN_PER_PATTERN = 2
APP_PER_PATTERN = 4
MAX_PAGES_PER_ROLE = 700
#: Every URL fetched (or left out by the sampling) with its answer, role and referrer.
LOG: list[str] = []
#: One log file per role (two tests share the roles out and may run at the same time).
CRAWL_LOGS = Path(__file__).resolve().parents[2] / "var" / "link-crawl"
#: Where each role starts: the home page, and the admin's (a staff member's home).
START = ("/", "/admin/")
#: HTML pages answered 200, per role: the screens the fit pass draws at both widths.
SCREENS: dict[str, list[str]] = {}
#: Every role crawled (the keys of the ``world`` fixture's answer).
ROLES = (
    "anonymous",
    "clinician",
    "lead clinician",
    "other clinician",
    "model admin (staff)",
    "superuser (demo admin)",
    "staff, no group",
)
#: The roles whose screens are drawn (between them, every app screen the crawl reaches).
DRAWN_ROLES = ("clinician", "lead clinician", "model admin (staff)")
#: The others, crawled by a test of their own (so parallel test workers can share the crawl out).
OTHER_ROLES = tuple(role for role in ROLES if role not in DRAWN_ROLES)
SIZES = {"laptop": (1366, 768), "tablet": (820, 1180)}
OVERFLOW_JS = (Path(__file__).with_name("overflow.js")).read_text(encoding="utf-8")
#: Where the drawn screens are kept as PNGs, when asked for (SCREENSHOT_DIR).
SHOTS = Path(os.environ["SCREENSHOT_DIR"]) if os.environ.get("SCREENSHOT_DIR") else None


class _Links(HTMLParser):
    """The hrefs of <a> and the URLs a GET <form> submits with its default values."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self._form: dict | None = None
        self._select: dict | None = None
        self._textarea: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = {k: (v or "") for k, v in attrs}
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        elif tag == "form":
            method = a.get("method", "get").lower()
            self._form = {"action": a.get("action", ""), "get": method == "get", "fields": []}
        elif self._form is None:
            return
        elif tag == "input" and a.get("name") and "disabled" not in a:
            kind = a.get("type", "text").lower()
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            if kind in ("submit", "image", "button", "reset", "file"):
                return
            self._form["fields"].append((a["name"], a.get("value", "")))
        elif tag == "button" and a.get("name") and a.get("type", "submit") == "submit":
            if not any(f[0] == a["name"] for f in self._form["fields"]):
                self._form.setdefault("button", (a["name"], a.get("value", "")))
        elif tag == "select" and a.get("name") and "disabled" not in a:
            self._select = {"name": a["name"], "first": None, "selected": None}
        elif tag == "option" and self._select is not None:
            value = a.get("value")
            if self._select["first"] is None:
                self._select["first"] = value
            if "selected" in a:
                self._select["selected"] = value
        elif tag == "textarea" and a.get("name"):
            self._textarea = {"name": a["name"], "text": ""}

    def handle_data(self, data):
        if self._textarea is not None:
            self._textarea["text"] += data

    def handle_endtag(self, tag):
        if self._form is None:
            return
        if tag == "select" and self._select is not None:
            s, self._select = self._select, None
            value = s["selected"] if s["selected"] is not None else s["first"]
            if value is not None:
                self._form["fields"].append((s["name"], value))
        elif tag == "textarea" and self._textarea is not None:
            t, self._textarea = self._textarea, None
            self._form["fields"].append((t["name"], t["text"]))
        elif tag == "form":
            form, self._form = self._form, None
            if form["get"]:
                fields = form["fields"] + ([form["button"]] if "button" in form else [])
                action = form["action"].split("?")[0] if fields else form["action"]
                self.links.append(action + ("?" + urlencode(fields) if fields else "") or "?")


def _links(html: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    parser.close()
    return parser.links


def _pattern(path: str, query: str) -> tuple[str, int]:
    """The kind of page a URL is, and how many of that kind are fetched."""
    if path.startswith("/admin/"):  # Django's own machinery: a sample of each admin page
        return re.sub(r"\d+", "N", path) + ("?" if query else ""), ADMIN_PER_PATTERN
    pairs = parse_qsl(query, keep_blank_values=True)
    if not pairs:
        return path, MAX_PAGES_PER_ROLE  # every model, case and experiment page itself
    # Each model (a family), case and experiment keeps its own share: its id stays, as does
    # the model a new case is started with; the other values (a tree, a test) vary.
    head = re.match(r"^/(models|cases|experiments)/\d+/", path)
    start = head.group(0) if head else ""
    keys = sorted({f"{k}={v}" if k == "model" else k for k, v in pairs})
    return start + re.sub(r"\d+", "N", path[len(start) :]) + "?" + ",".join(keys), APP_PER_PATTERN


def crawl(
    request, origin: str, role: str, typed: tuple[str, ...] = ()
) -> tuple[list[str], Counter]:
    """Breadth-first from ``START`` and the ``typed`` URLs (a bookmark, an address typed: no
    page links them, so a 403 or 404 there is no dead end): each same-site URL once; returns
    the 5xx and the links to a 403 or 404 found, and the counts."""
    site = urlsplit(origin)
    queue: deque[tuple[str, str]] = deque([(start, "(start)") for start in START])
    queue.extend((url, "(typed)") for url in typed if url not in START)
    seen = set(START) | set(typed)
    taken: Counter = Counter()
    failures: list[str] = []
    stats: Counter = Counter()
    while queue and stats["pages"] < MAX_PAGES_PER_ROLE:
        url, referrer = queue.popleft()
        response = request.get(url, max_redirects=0, timeout=120_000)
        stats["pages"] += 1
        stats[f"{response.status // 100}xx"] += 1
        LOG.append(f"{role}\t{response.status}\t{url}\t{referrer}")
        if response.status >= 500:
            failures.append(f"{response.status} {url} (from {referrer}) as {role}")
            continue
        if response.status in (403, 404) and not referrer.startswith("("):
            # a screen offering a link that leads nowhere, or where its reader may not go
            failures.append(f"{response.status} {url} (a dead end, from {referrer}) as {role}")
        found = []
        if 300 <= response.status < 400 and response.headers.get("location"):
            found = [response.headers["location"]]
        elif "text/html" in response.headers.get("content-type", ""):
            found = _links(response.text())
            if response.status == 200:
                SCREENS.setdefault(role, []).append(url)
        for href in found:
            target = urljoin(origin + url, href.strip())
            parts = urlsplit(target)
            if (parts.scheme, parts.netloc) != (site.scheme, site.netloc):
                continue
            path = parts.path or "/"
            if SKIP.match(path):
                continue
            local = urlunsplit(("", "", path, parts.query, ""))
            if local in seen:
                continue
            seen.add(local)
            kind, most = _pattern(path, parts.query)
            if taken[kind] >= most:
                stats["left"] += 1
                LOG.append(f"{role}\tleft\t{local}\t{url}")
                continue
            taken[kind] += 1
            queue.append((local, url))
    stats["queued, not fetched"] = len(queue)
    return failures, stats


# ------------------------------------------------------------------ the world crawled
def _train(*, dataset, learner: str, params: dict, name: str, approve: bool = True):
    from django.contrib.auth.models import User

    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services.training import create_training, run_training

    trained = create_training(
        user=User.objects.get(username=ADMIN[0]),
        dataset=dataset,
        learner=learner,
        params=params,
        error_matrix=dataset.error_matrices.filter(name="Uniform 100").first(),
        name=name,
    )
    result = run_training(trained_model_id=trained.pk)
    assert result.status == TrainedModel.SUCCEEDED, result.error
    return approve_for_clinicians(result) if approve else result


def _cases(trained, clinician, rows: list, label: str) -> None:
    """One open case (its first result entered) and one closed case (the advice followed to
    its conclusion, accepted, and a confirmed diagnosis recorded) on ``trained``."""
    from diagnosis.clinic.selectors.cases import case_state
    from diagnosis.clinic.services import cases
    from diagnosis.clinic.services import step as step_service
    from diagnosis.clinic.services.confirmations import record_confirmed_diagnosis

    tests = {t.index: t for t in trained.dataset.tests.all()}
    for row, close in ((rows[0], False), (rows[1], True)):
        case = cases.start_case(
            user=clinician,
            trained_model=trained,
            patient_reference=f"CRAWL-{label}-{'closed' if close else 'open'}",
        )
        for _ in range(2 * len(tests) + 2):
            advice = case_state(user=clinician, case=case).advice
            if advice.kind != "extract":
                break
            test = tests[advice.test_index]
            value = row[test.index]
            if value is None or (isinstance(value, float) and math.isnan(value)):
                step_service.mark_unavailable(user=clinician, case=case, test=test)
            else:
                step_service.record_result(user=clinician, case=case, test=test, value=value)
            if not close:
                break
        if not close:
            continue
        case.refresh_from_db()
        advice = case_state(user=clinician, case=case).advice
        if advice.kind == "reject":
            step_service.refer(user=clinician, case=case)
        else:
            label_index = advice.label_index
            step_service.classify(user=clinician, case=case, label=label_index or 0)
        case.refresh_from_db()
        record_confirmed_diagnosis(user=clinician, case=case, label=0)


@pytest.fixture
def world(transactional_db):
    """Demo users, heart and thyroid with their demo models (fixtures), a forest, a boosted
    ensemble and a selector trained here, a draft, a retired, a queued and a failed model,
    two cases per approved model, the demo experiment; returns each role's user."""
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    from diagnosis.catalog.models import Dataset
    from diagnosis.management import demo_data
    from diagnosis.permissions import CLINICIANS, MODEL_ADMINS
    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services.approval import retire_model
    from diagnosis.training.services.training import create_training

    started = time.monotonic()
    devnull = open(os.devnull, "w")
    call_command(
        "load_demo_data", "--only", demo_data.HEART, "--only", demo_data.THYROID, stdout=devnull
    )
    print(f"demo data and models: {time.monotonic() - started:.1f} s")
    heart = Dataset.objects.get(name=demo_data.HEART)
    thyroid = Dataset.objects.get(name=demo_data.THYROID)
    admin = User.objects.get(username=ADMIN[0])
    clinician = User.objects.get(username=CLINICIAN[0])
    for learner, params in (
        ("budget_rf", {"max_trees": 6}),
        ("boosting", {"n_trials": 3}),
    ):
        at = time.monotonic()
        _train(dataset=heart, learner=learner, params=params, name=f"{learner} heart (crawl)")
        print(f"{learner}: {time.monotonic() - at:.1f} s")
    # The selector (its fit takes minutes: exported once, export_demo_models --model ...).
    approve_for_clinicians(_from_fixture(heart, "cost_selected", "Selector heart (browser test)"))
    # A draft (never approved); a model approved, given cases, then retired; a queued and a
    # failed training (their pages show progress and the error).
    draft = _from_fixture(heart, "eg2", "EG2 heart (browser test)")
    retired = approve_for_clinicians(_from_fixture(thyroid, "eg2", "EG2 thyroid (browser test)"))
    create_training(
        user=admin,
        dataset=heart,
        learner="eg2",
        params={},
        error_matrix=heart.error_matrices.first(),
        name="EG2 heart queued (crawl)",
    )
    failed = create_training(
        user=admin,
        dataset=heart,
        learner="eg2",
        params={},
        error_matrix=heart.error_matrices.first(),
        name="EG2 heart failed (crawl)",
    )
    TrainedModel.objects.filter(pk=failed.pk).update(
        status=TrainedModel.FAILED, error="MemoryError: the crawl's failed training"
    )
    rows = {dataset.pk: demo_data.BUILDERS[dataset.name]()["rows"] for dataset in (heart, thyroid)}
    approved = TrainedModel.objects.filter(
        approval=TrainedModel.APPROVED, status=TrainedModel.SUCCEEDED
    ).order_by("pk")
    for trained in approved:
        _cases(trained, clinician, rows[trained.dataset_id], f"{trained.learner}-{trained.pk}")
    retire_model(user=admin, trained_model=retired, reason="Retired by the crawl's set-up.")
    assert draft.approval == TrainedModel.DRAFT
    model_admin = User.objects.create_user("crawl-model-admin", is_staff=True)
    model_admin.groups.add(Group.objects.get(name=MODEL_ADMINS))
    other = User.objects.create_user("crawl-other-clinician")
    other.groups.add(Group.objects.get(name=CLINICIANS))
    print(f"world: {time.monotonic() - started:.1f} s, {approved.count()} approved models")
    roles = {
        "anonymous": None,
        "clinician": clinician,
        "lead clinician": User.objects.get(username="lead"),
        "other clinician": other,
        "model admin (staff)": model_admin,
        "superuser (demo admin)": admin,
        "staff, no group": User.objects.create_user("crawl-staff", is_staff=True),
    }
    assert tuple(roles) == ROLES, "each role of the world has its test (ROLES)"
    return roles


def _from_fixture(dataset, learner: str, name: str):
    """A browser-test model from tests/browser/models/ (a draft, as every new training), with
    the learner's default parameters;
    ``name`` is the one its fixture was exported under."""
    from django.contrib.auth.models import User

    from diagnosis.management.demo_data import FIXTURE_FILES
    from diagnosis.management.demo_models import load_model_fixture
    from diagnosis.training.services.training import create_training

    trained = create_training(
        user=User.objects.get(username=ADMIN[0]),
        dataset=dataset,
        learner=learner,
        params={},
        error_matrix=dataset.error_matrices.filter(name="Uniform 100").first(),
        name=name,
    )
    stem = Path(FIXTURE_FILES[dataset.name]).stem
    path = Path(__file__).resolve().parent / "models" / f"{stem}-{learner}.json"
    return load_model_fixture(trained=trained, path=path)


def _diagram_urls() -> tuple[str, ...]:
    """Every model's three diagram pages, alone and with one of its cases, whatever its kind:
    a link names only its own kind (``diagram_kind``), but an address typed or kept from before
    must not fail (issue 28: a conditioned-loss case's trees page answered 500)."""
    from diagnosis.clinic.models import DiagnosisCase
    from diagnosis.training.models import TrainedModel

    urls = []
    for pk in TrainedModel.objects.order_by("pk").values_list("pk", flat=True):
        case = DiagnosisCase.objects.filter(trained_model_id=pk).order_by("pk").first()
        for page in ("tree", "trees", "decision"):
            urls.append(f"/models/{pk}/{page}/")
            if case is not None:
                urls.append(f"/models/{pk}/{page}/?case={case.pk}")
    return tuple(urls)


def _state() -> dict:
    """What a GET must never change: every row of the app but the access log (each read of a
    case is logged by design), as (id, status-like fields) or counts."""
    from django.contrib.auth.models import User

    from diagnosis.bench.models import Experiment, ExperimentTask
    from diagnosis.catalog import models as catalog_models
    from diagnosis.clinic import models as clinic_models
    from diagnosis.integration.models import ApiToken
    from diagnosis.training import models as training_models

    def rows(model, *fields):
        return sorted(model.objects.values_list("pk", *fields))

    return {
        "models": rows(training_models.TrainedModel, "status", "approval", "progress"),
        "cases": rows(clinic_models.DiagnosisCase, "status", "updated_at"),
        "steps": rows(clinic_models.DiagnosisStep),
        "confirmations": rows(clinic_models.ConfirmedDiagnosis),
        "decisions": rows(training_models.ModelDecision),
        "experiments": rows(Experiment, "status"),
        "experiment tasks": rows(ExperimentTask, "status"),
        "datasets": rows(catalog_models.Dataset),
        "tests": rows(catalog_models.DiagnosticTest, "price", "discounted_price"),
        "matrices": rows(catalog_models.ErrorMatrix, "matrix"),
        "teams": rows(clinic_models.Team),
        "tokens": rows(ApiToken),
        "users": rows(User, "is_active"),
    }


def _screen_kind(path: str, query: str) -> str:
    """One screen of each kind: ids and values are not kinds (a model page is one, whichever
    model; a case with ``?test=`` another), but each model keeps its own (families differ)."""
    head = re.match(r"^/models/\d+/", path)
    start = head.group(0) if head else ""
    keys = ",".join(sorted({k for k, _ in parse_qsl(query, keep_blank_values=True)}))
    return start + re.sub(r"\d+", "N", path[len(start) :]) + "?" + keys


def _sign_in(context, user, host: str) -> None:
    """The context carries ``user``'s session (None: anonymous)."""
    from django.conf import settings
    from django.test import Client

    if user is None:
        return
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": session, "domain": host, "path": "/"}]
    )


def _crawl_checked(chromium, live_server, world, roles: tuple[str, ...]) -> None:
    """Each role's crawl (the clinician's with every diagram page typed in): no 5xx, no link to
    a 403/404, no GET write; each role's fetches logged to var/link-crawl/<role>.tsv, and the
    HTML pages it was answered 200 left in ``SCREENS``."""
    failures: list[str] = []
    SCREENS.clear()
    before = _state()
    host = urlsplit(live_server.url).hostname
    for role in roles:
        LOG.clear()
        started = time.monotonic()
        context = chromium.new_context(base_url=live_server.url)
        try:
            _sign_in(context, world[role], host)
            typed = _diagram_urls() if role == "clinician" else ()
            found, stats = crawl(context.request, live_server.url, role, typed)
        finally:
            context.close()
        failures += found
        print(f"{role}: {dict(stats)} in {time.monotonic() - started:.1f} s")
        log = CRAWL_LOGS / f"{re.sub(r'[^a-z]+', '-', role).strip('-')}.tsv"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("role\tstatus\turl\treferrer\n" + "\n".join(LOG) + "\n", encoding="utf-8")
    after = _state()
    changed = [name for name in before if before[name] != after[name]]
    assert changed == [], f"a GET changed {changed}"
    assert failures == [], f"{len(failures)} server errors:\n" + "\n".join(failures)


def test_every_link_of_every_screen_answers_without_a_server_error(chromium, live_server, world):
    """The crawl of every family's screens by each role whose screens are not drawn (the next
    test crawls the others): no 5xx, no link to a 403/404, no GET write."""
    _crawl_checked(chromium, live_server, world, OTHER_ROLES)


def test_every_link_answers_and_every_kind_of_screen_fits(chromium, live_server, world):
    """The crawl by the clinician, the lead and the model admin: no 5xx, no link to a 403/404,
    no GET write; then one screen of each kind they reached, drawn at 1366x768 and 820x1180,
    overflows nothing."""
    _crawl_checked(chromium, live_server, world, DRAWN_ROLES)

    # Every kind of app screen the crawl reached, drawn at both widths: nothing wider than
    # its container (the overflow check of test_screens_fit, on the screens it does not visit).
    overflowing: list[str] = []
    drawn = 0
    host = urlsplit(live_server.url).hostname
    kinds: dict[str, tuple[str, str]] = {}  # kind -> (the first role that reached it, URL)
    for role in DRAWN_ROLES:
        for url in SCREENS.get(role, []):
            parts = urlsplit(url)
            if not parts.path.startswith("/admin/"):  # the admin is Django's own layout
                kinds.setdefault(_screen_kind(parts.path, parts.query), (role, url))
    for role in DRAWN_ROLES:
        urls = [url for first, url in kinds.values() if first == role]
        for size, (width, height) in SIZES.items():
            context = chromium.new_context(
                base_url=live_server.url, viewport={"width": width, "height": height}
            )
            try:
                _sign_in(context, world[role], host)
                page = context.new_page()
                for url in urls:
                    page.goto(url, wait_until="load", timeout=120_000)
                    for figure in page.locator("[data-figure]").all():
                        figure.locator(".main-svg").first.wait_for(timeout=60_000)
                    drawn += 1
                    if SHOTS is not None:  # to look at: SCREENSHOT_DIR=... bin/test this file
                        SHOTS.mkdir(parents=True, exist_ok=True)
                        page.evaluate("window.scrollTo(0, 0)")
                        name = re.sub(r"[^A-Za-z0-9]+", "-", url).strip("-") or "home"
                        shot = SHOTS / f"crawl-{name}-{size}.png"
                        page.screenshot(path=str(shot), full_page=True)
                    overflowing += [
                        f"{url} as {role} at {size}: {problem}"
                        for problem in page.evaluate(OVERFLOW_JS)
                    ]
            finally:
                context.close()
    print(f"screens drawn for the fit check: {drawn}")
    assert drawn >= 40, f"only {drawn} screens drawn: did the crawl reach the app's screens?"
    assert overflowing == [], f"{len(overflowing)} overflows:\n" + "\n".join(overflowing)
