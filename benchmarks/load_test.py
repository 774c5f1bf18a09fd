"""Simulated clinicians stepping cases on the production stack: gunicorn, PostgreSQL, Redis.

Set-up (``--database`` is dropped and created again unless ``--reuse``): migrate, the demo
datasets and models (``load_demo_data``: heart's DTMC tree, thyroid's conditioned-loss model),
a 40-tree BudgetRF forest on thyroid trained through the app's own services
(``create_training`` + ``run_training``), and ``--users`` clinicians, each with a password and an
API token.  Then gunicorn serves the app as ``bin/run`` does (``config/gunicorn.py``: each worker
preloads the ready models), with an access log that records each request's server time.

For each model (``--models``: tree, conditioned_loss, forest) and each level, simulated
clinicians who logged in once (``--api v1``: a bearer token; ``--api session``: the login form,
then the session API with its CSRF header) start cases and step through them, answering each
test the model asks for with a real patient's recorded value ("not available" when the record
has none; a derived test such as FTI by its missing inputs, named in the state's
``derived_from``) and closing with the advised conclusion or referral, then starting the next
patient.
Every level is bounded in time (``--seconds``):

* ``one user``      a single clinician, no think time: the server time of a step alone;
* ``saturation``    ``--saturation-users`` clinicians, no think time: steps per second;
* ``10/50/100``     clinicians thinking ``--think`` s (uniformly 0.5x..1.5x) between steps.

After every run the database is checked (cases of that run): step positions 0..n-1 with no
gap or duplicate, exactly one closing step (classify or refer, the last one) per closed case and
none on an open case, and every stored price equal to the price recomputed from the model's
snapshot by ``learners``' ``CostModel.marginal_cost`` (``TrainedModel.snapshot.prices``).

Printed: one table row per (model, level): steps, steps/s, client-side latency p50/p95/p99/max
of the step requests, the server's own time per step (gunicorn's ``%(D)s``, median and p95),
errors (non-2xx answers and failed connections) and the integrity check.  The exit status is 1
on any error or failed check.

    python -m benchmarks.load_test                                  # every model and level
    python -m benchmarks.load_test --models tree --levels one,saturation --seconds 15
    python -m benchmarks.load_test --api session --levels 10,100

The load generator runs on the same cores as the server and the database: on a shared
2-core machine every figure is pessimistic.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from benchmarks._server import free_port, manage, start_gunicorn, wait_until_up

if TYPE_CHECKING:  # the load generator itself never loads the library
    from learners.costs import CostModel

PASSWORD = "load-test-password-1"
LEVELS = ("one", "saturation", "10", "50", "100")
MODELS = ("tree", "conditioned_loss", "forest")


# ------------------------------------------------------------------------------ HTTP client
class Client:
    """One clinician's HTTP client: a new connection per request (gunicorn's sync workers close
    each), the session's cookies, and the token or CSRF header."""

    def __init__(self, port: int, token: str | None = None) -> None:
        self.port = port
        self.token = token
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body=None, form: dict | None = None):
        headers = {"Host": "127.0.0.1"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            if "csrftoken" in self.cookies:
                headers["X-CSRFToken"] = self.cookies["csrftoken"]
        data = None
        if form is not None:
            form = {**form, "csrfmiddlewaretoken": self.cookies.get("csrftoken", "")}
            data = urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            content = response.read()
            for header in response.msg.get_all("Set-Cookie") or ():
                for name, morsel in SimpleCookie(header).items():
                    self.cookies[name] = morsel.value
            return response.status, response.getheader("Location"), content
        finally:
            connection.close()


class Failed(Exception):
    pass


@dataclass
class Run:
    """What one level recorded, shared by its clinicians' threads."""

    deadline: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    steps: list[float] = field(default_factory=list)
    starts: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)

    def call(self, client: Client, kind: str, method: str, path: str, **kw):
        started = time.perf_counter()
        try:
            status, location, content = client.request(method, path, **kw)
        except OSError as exc:
            with self.lock:
                self.errors[f"{kind}: {type(exc).__name__}: {exc}"] += 1
            raise Failed from exc
        elapsed = time.perf_counter() - started
        with self.lock:
            (self.steps if kind == "step" else self.starts).append(elapsed)
            if status >= 400 or (status >= 300 and kind != "start"):
                self.errors[f"{kind} {status}: {content[:160]!r}"] += 1
        if status >= 400:
            raise Failed
        return status, location, content


# ------------------------------------------------------------------------- one clinician
def _answer(state: dict, patient: dict) -> dict:
    advice = state["advice"]
    if advice["kind"] == "extract":
        return _enter(advice["test_name"], {t["name"]: t for t in state["tests"]}, patient)
    if advice["kind"] == "classify":
        return {"action": "classify", "label": advice["label"]}
    return {"action": "refer"}


def _enter(name: str, tests: dict, patient: dict) -> dict:
    """The patient's recorded value of test ``name`` ("not available" without one); a derived
    test (``derived_from``) is ordered by entering its first missing input, as the API says."""
    inputs = [tests[source] for source in tests[name].get("derived_from", [])]
    if any(t["unavailable"] for t in inputs):
        return {"action": "unavailable", "test": name}
    missing = [t for t in inputs if not t["done"]]
    if missing:
        return _enter(missing[0]["name"], tests, patient)
    value = patient.get(name)
    if value is None:
        return {"action": "unavailable", "test": name}
    return {"action": "result", "test": name, "value": value}


def clinician(run: Run, client: Client, api: str, model: dict, think: float, seat: int) -> None:
    """Start a case, step it to its end, start the next, until the run's deadline."""
    rng = random.Random(seat)
    patients = model["rows"]
    n = seat * 7
    if think:
        time.sleep(rng.uniform(0, think))  # users arrive spread over one think time
    try:
        while time.perf_counter() < run.deadline:
            patient = patients[n % len(patients)]
            n += 1
            if api == "v1":
                _, _, content = run.call(
                    client, "start", "POST", "/api/v1/cases", body={"model": model["id"]}
                )
                state = json.loads(content)
                steps = f"/api/v1/cases/{state['case']}/steps"
            else:
                _, location, _ = run.call(
                    client,
                    "start",
                    "POST",
                    f"/cases/new/?model={model['id']}",
                    form={"model": model["id"], "patient_reference": ""},
                )
                case = int(location.rstrip("/").rsplit("/", 1)[1])
                steps = f"/api/cases/{case}/step"
                _, _, content = run.call(client, "start", "GET", steps)
                state = json.loads(content)
            while state["advice"] is not None and state["is_open"]:
                if think:
                    pause = rng.uniform(0.5 * think, 1.5 * think)
                    if time.perf_counter() + pause >= run.deadline:
                        return
                    time.sleep(pause)
                if time.perf_counter() >= run.deadline:
                    return
                body = {**_answer(state, patient), "seen": state["version"]}
                _, _, content = run.call(client, "step", "POST", steps, body=body)
                state = json.loads(content)
    except Failed:
        return


def log_in(port: int, username: str) -> Client:
    """The login form, as a browser fills it: the CSRF cookie first, then the password."""
    client = Client(port)
    client.request("GET", "/accounts/login/")
    status, _, content = client.request(
        "POST", "/accounts/login/", form={"username": username, "password": PASSWORD}
    )
    if status != 302 or "sessionid" not in client.cookies:
        raise SystemExit(f"login of {username} failed: {status} {content[:200]!r}")
    return client


# ------------------------------------------------------------------ set-up and integrity
def setup(users: int, models: list[str]) -> dict:
    """Clinicians with passwords and tokens, and the models (the forest trained here)."""
    from django.contrib.auth.models import Group, User

    from diagnosis.catalog.models import Dataset
    from diagnosis.catalog.selectors.datasets import default_error_matrix
    from diagnosis.integration.services.api_tokens import issue_api_token
    from diagnosis.permissions import CLINICIANS
    from diagnosis.training.models import TrainedModel
    from diagnosis.training.services.training import create_training, run_training

    group = Group.objects.get(name=CLINICIANS)
    admin = User.objects.get(username="admin")
    tokens = {}
    for i in range(users):
        user, _ = User.objects.get_or_create(username=f"load-{i}")
        user.set_password(PASSWORD)
        user.save()
        user.groups.add(group)
        tokens[user.username] = issue_api_token(issuer=None, owner=user, name="load test")[1]
    ready = TrainedModel.objects.filter(status=TrainedModel.SUCCEEDED).select_related("dataset")
    chosen = {}
    if "tree" in models:
        chosen["tree"] = ready.filter(learner="dtmc", dataset__name__startswith="Heart").first()
    if "conditioned_loss" in models:
        chosen["conditioned_loss"] = ready.filter(learner="conditioned_loss").first()
    if "forest" in models:
        name = "BudgetRF 40 trees (load test): Thyroid"
        forest = ready.filter(learner="budget_rf", name=name).first()
        if forest is None:
            thyroid = Dataset.objects.get(name__startswith="Thyroid")
            started = time.perf_counter()
            forest = run_training(
                trained_model_id=create_training(
                    user=admin,
                    dataset=thyroid,
                    learner="budget_rf",
                    params={"max_trees": 40},
                    error_matrix=default_error_matrix(dataset=thyroid),
                    name=name,
                ).pk
            )
            if forest is None:
                raise SystemExit("BudgetRF training vanished")
            if forest.status != TrainedModel.SUCCEEDED:
                raise SystemExit(f"BudgetRF training failed: {forest.error}")
            print(f"  BudgetRF trained: {time.perf_counter() - started:.1f} s", flush=True)
        chosen["forest"] = forest
    out: dict[str, dict] = {"tokens": tokens, "models": {}}
    for key, trained in chosen.items():
        if trained is None:
            raise SystemExit(f"no ready {key} model")
        from diagnosis.clinic.selectors.cases import estimator_for

        estimator = estimator_for(trained)
        size = len(trained.model_json) / 1024
        trees = len(getattr(estimator, "trees_", ())) or 1
        tests = [t.name for t in trained.dataset.tests.order_by("index")]
        rows = [
            dict(zip(tests, case.values, strict=True))
            for case in trained.dataset.cases.order_by("id")[:500]
        ]
        out["models"][key] = {
            "id": trained.pk,
            "name": f"{trained} ({trained.learner}, {trees} tree(s), JSON {size:.0f} KiB)",
            "rows": rows,
        }
    return out


def integrity(after_case: int) -> dict:
    """Check the cases with id > ``after_case``: positions, closing steps, prices."""
    from diagnosis.clinic.models import DiagnosisCase, DiagnosisStep

    closing = {DiagnosisStep.CLASSIFY, DiagnosisStep.REFER}
    problems: list[str] = []
    cases = steps = priced = 0
    models: dict[int, CostModel] = {}
    query = (
        DiagnosisCase.objects.filter(pk__gt=after_case)
        .select_related("trained_model")
        .defer("trained_model__model_json")
        .prefetch_related("steps__test")
        .order_by("pk")
    )
    for case in query:
        cases += 1
        rows = sorted(case.steps.all(), key=lambda s: s.position)
        steps += len(rows)
        positions = [s.position for s in rows]
        if positions != list(range(len(rows))):
            problems.append(f"case {case.pk}: positions {positions}")
        ends = [s for s in rows if s.kind in closing]
        if case.is_open and ends:
            problems.append(f"case {case.pk}: open with {len(ends)} closing step(s)")
        if not case.is_open and (len(ends) != 1 or rows[-1] is not ends[0]):
            problems.append(f"case {case.pk}: {case.status} with {len(ends)} closing step(s)")
        if case.trained_model_id not in models:
            models[case.trained_model_id] = case.trained_model.snapshot.prices
        cost_model = models[case.trained_model_id]
        replacements = {s.superseded_by_id for s in rows if s.superseded_by_id}
        done: list[int] = []
        for step in rows:
            if step.kind != DiagnosisStep.RESULT:
                expected = 0.0
            elif step.pk in replacements:  # a corrected value: already paid
                expected = 0.0
            else:
                assert step.test is not None  # a result names its test
                expected = cost_model.marginal_cost(step.test.index, frozenset(done))
                done.append(step.test.index)
            if step.correction == DiagnosisStep.UNDONE and step.test is not None:
                done.remove(step.test.index)
            priced += 1
            if abs(step.price - expected) > 1e-9:
                problems.append(f"case {case.pk} step {step.position}: {step.price} != {expected}")
    return {"cases": cases, "steps": steps, "priced": priced, "problems": problems}


def last_case_id() -> int:
    from django.db.models import Max

    from diagnosis.clinic.models import DiagnosisCase

    return DiagnosisCase.objects.aggregate(last=Max("pk"))["last"] or 0


# ------------------------------------------------------------------------------ one level
def server_times(log: Path, offset: int, model_steps: str) -> list[float]:
    """Milliseconds gunicorn spent on each step request logged after ``offset`` bytes."""
    times = []
    with log.open("rb") as f:
        f.seek(offset)
        for line in f.read().decode(errors="replace").splitlines():
            parts = line.split()
            if len(parts) == 4 and parts[0] == "POST" and model_steps in parts[1]:
                times.append(int(parts[3]) / 1000)
    return times


def run_level(args, port: int, clients: list[Client], model: dict, users: int, think: float):
    from django.db import connections

    connections.close_all()
    run = Run(deadline=time.perf_counter() + args.seconds)
    threads = [
        threading.Thread(
            target=clinician,
            args=(run, clients[i], args.api, model, think, i),
            daemon=True,
        )
        for i in range(users)
    ]
    started = time.perf_counter()
    run.deadline = started + args.seconds
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=args.seconds + 120)
    return run, time.perf_counter() - started


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS), help=f"of {', '.join(MODELS)}")
    parser.add_argument("--levels", default=",".join(LEVELS), help=f"of {', '.join(LEVELS)}")
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each level")
    parser.add_argument("--think", type=float, default=2.0, help="mean think time (s)")
    parser.add_argument("--saturation-users", type=int, default=12)
    parser.add_argument("--workers", type=int, default=4, help="gunicorn sync workers")
    parser.add_argument("--api", choices=("v1", "session"), default="v1")
    parser.add_argument("--database", default="load_test", help="PostgreSQL database (recreated)")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--reuse", action="store_true", help="keep the database of an earlier run")
    args = parser.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    levels = [lv for lv in args.levels.split(",") if lv]
    if set(models) - set(MODELS) or set(levels) - set(LEVELS):
        parser.error("unknown model or level")

    database = f"postgresql://postgres@127.0.0.1:5432/{args.database}"
    if not args.reuse:
        for command in (["dropdb", "--if-exists"], ["createdb"]):
            where = ["-h", "127.0.0.1", "-U", "postgres", args.database]
            subprocess.run([*command, *where], check=True)
    env = {k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=database,
        REDIS_URL=args.redis,
        DJANGO_SECRET_KEY="load-test-only",
        DJANGO_DEBUG="false",
        DJANGO_HTTPS="false",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        API_RATE_LIMIT="1000000/m",  # the load is the point here, not the limit
        LOGIN_FAILURE_LIMIT="1000",
        DJANGO_STATIC_ROOT=str(Path(tempfile.mkdtemp(prefix="load-test-static-"))),
    )
    print("Setting up (as bin/run does, on PostgreSQL):", flush=True)
    manage(["migrate", "--noinput"], env, "migrate")
    only = ["--only", "Heart disease (Cleveland)"] if "tree" in models else []
    if {"conditioned_loss", "forest"} & set(models):
        only += ["--only", "Thyroid (ann-thyroid)"]
    manage(["load_demo_data", *only], env, "demo data and models")
    manage(["collectstatic", "--noinput", "--verbosity", "0"], env, "collectstatic")
    os.environ.update(env)
    import django

    django.setup()
    most = max([1, args.saturation_users] + [int(lv) for lv in levels if lv.isdigit()])
    prepared = setup(most, models)
    from django.db import connections

    connections.close_all()
    port = free_port()
    log = Path(tempfile.mkdtemp(prefix="load-test-log-")) / "access.log"
    log.touch()
    server = start_gunicorn(
        env, port, args.workers, access_log=log, access_format="%(m)s %(U)s %(s)s %(D)s"
    )
    rows: list[str] = []
    failed = False
    try:
        wait_until_up(f"http://127.0.0.1:{port}/accounts/login/", server, seconds=300)
        names = sorted(prepared["tokens"])
        if args.api == "v1":
            clients = [Client(port, token=prepared["tokens"][n]) for n in names]
        else:
            print(f"  logging in {len(names)} clinicians (once each)", flush=True)
            clients = [log_in(port, n) for n in names]
        path = "/steps" if args.api == "v1" else "/step"
        for key in models:
            model = prepared["models"][key]
            print(f"\n{key}: {model['name']}", flush=True)
            for level in levels:
                users = 1 if level == "one" else args.saturation_users
                users = int(level) if level.isdigit() else users
                think = args.think if level.isdigit() else 0.0
                before, offset = last_case_id(), log.stat().st_size
                run, seconds = run_level(args, port, clients, model, users, think)
                time.sleep(0.5)  # the access log is written after the answer
                srv_ms = server_times(log, offset, path)
                check = integrity(before)
                from django.db import connections

                connections.close_all()
                errors = sum(run.errors.values())
                ok = not errors and not check["problems"] and run.steps
                failed |= not ok
                ms = [s * 1000 for s in run.steps] or [float("nan")]
                row = (
                    f"{key:<17}{level:>10}{users:>6}{think:>6.1f}{len(run.steps):>7}"
                    f"{len(run.steps) / seconds:>9.1f}{statistics.median(ms):>8.1f}"
                    f"{_pct(ms, 0.95):>8.1f}{_pct(ms, 0.99):>8.1f}{max(ms):>8.1f}"
                    f"{statistics.median(srv_ms or [float('nan')]):>8.1f}"
                    f"{_pct(srv_ms or [float('nan')], 0.95):>8.1f}{errors:>7}"
                    f"  {check['cases']} cases, {check['priced']} prices, "
                    f"{len(check['problems'])} problems"
                )
                rows.append(row)
                print(row, flush=True)
                for message, count in run.errors.most_common(5):
                    print(f"    {count} x {message}", flush=True)
                for problem in check["problems"][:5]:
                    print(f"    integrity: {problem}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    header = (
        f"{'model':<17}{'level':>10}{'users':>6}{'think':>6}{'steps':>7}{'steps/s':>9}"
        f"{'p50':>8}{'p95':>8}{'p99':>8}{'max':>8}{'srv p50':>8}{'srv p95':>8}{'errors':>7}"
        "  integrity"
    )
    print(
        f"\nLoad test: gunicorn {args.workers} sync workers, PostgreSQL, Redis; API {args.api}; "
        f"{args.seconds:.0f} s per level; latencies in ms (client side: the step request; srv: "
        "gunicorn's own time for it)"
    )
    print(header)
    print("\n".join(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
