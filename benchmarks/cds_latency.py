"""Simulated EHR sessions calling the CDS Hooks ``patient-view`` service with ``prefetch``, beside
plain ``/api/v1`` steps in the same run, on the production stack: gunicorn, PostgreSQL, Redis.

Set-up (``--database`` is dropped and created again unless ``--reuse``): migrate, the demo heart
dataset with its DTMC model and its FHIR codes (``load_demo_data --only``), one clinician with
an API token, and one CDS Hooks client (an EC P-384 key made here; its public JWKS registered
through ``register_client``) acting as that clinician.  Then gunicorn serves the app as
``bin/run`` does, with an access log recording each request's server time (``%(D)s``).

Each of ``--sessions`` simulated EHR sessions, until ``--seconds`` have passed, takes the next
real heart patient and

* opens the chart: ``POST /cds-services/cost-aware-model-<id>`` (``patient-view``, a fresh JWT
  signed by the EHR's key, a new ``hookInstance``), its ``prefetch`` holding the Patient and a
  Bundle of the patient's recorded numeric results (2 to 4 of them, each an Observation coded
  and in the unit the demo codes map): the service opens the patient's case, records the
  Observations as steps and answers its card;
* thinks (``--think`` s, uniformly 0.5x..1.5x), then takes one plain ``/api/v1`` step on a case
  of its own (``POST /api/v1/cases`` to start it when it has none open, then ``POST
  /api/v1/cases/<id>/steps`` with the patient's value of the advised test, or the advised
  conclusion), and thinks again.

Printed: one row per kind of call: how many, errors (non-2xx answers and failed connections),
the client-side latency p50/p95 and the server's own time (gunicorn's ``%(D)s``) p50/p95, in
ms, and whether the server-time p95 is within ``--target`` ms.  The exit status is 1 on any
error.

    python -m benchmarks.cds_latency                       # 50 sessions, 30 s
    python -m benchmarks.cds_latency --sessions 10 --seconds 15 --reuse

The load generator (which signs a JWT per hook call) runs on the same cores as the server and
the database: on a shared 2-core machine every figure is pessimistic.
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
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks._server import free_port, manage, start_gunicorn, wait_until_up
from benchmarks.load_test import _answer

ISSUER = "https://ehr.latency.example"
HEART = "Heart disease (Cleveland)"
UCUM = "http://unitsofmeasure.org"
HOOK = "patient-view"
STEP = "api/v1 step"


@dataclass
class Run:
    deadline: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    latency: dict[str, list[float]] = field(default_factory=lambda: {HOOK: [], STEP: []})
    errors: Counter = field(default_factory=Counter)


class Failed(Exception):
    pass


def request(port: int, method: str, path: str, body: Any, headers: dict[str, str]):
    """One HTTP request on a new connection (gunicorn's sync workers close each)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        sent = {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json", **headers}
        payload = json.dumps(body).encode() if body is not None else None
        connection.request(method, path, body=payload, headers=sent)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def timed(run: Run, kind: str, port: int, method: str, path: str, body, headers) -> Any:
    started = time.perf_counter()
    try:
        status, content = request(port, method, path, body, headers)
    except OSError as exc:
        with run.lock:
            run.errors[f"{kind}: {type(exc).__name__}: {exc}"] += 1
        raise Failed from exc
    elapsed = time.perf_counter() - started
    with run.lock:
        if kind in run.latency:
            run.latency[kind].append(elapsed)
        if status >= 400:
            run.errors[f"{kind} {status}: {content[:160]!r}"] += 1
    if status >= 400:
        raise Failed
    return json.loads(content)


def signed(key, audience: str) -> str:
    """A CDS Hooks JWT: iss, aud (the service's URL), iat, exp (5 minutes), a new jti."""
    from joserfc import jwt

    now = int(time.time())
    claims = {"iss": ISSUER, "aud": audience, "iat": now, "exp": now + 300, "jti": uuid.uuid4().hex}
    header = {"alg": "ES384", "kid": key.kid, "typ": "JWT"}
    return jwt.encode(header, claims, key, algorithms=["ES384"])


def observations(patient_id: str, row: dict, codes: dict, rng: random.Random) -> list[dict]:
    """2 to 4 of the patient's recorded numeric results as coded Observations."""
    names = [n for n in codes if row.get(n) is not None]
    chosen = rng.sample(names, min(len(names), rng.randint(2, 4)))
    resources = []
    for i, name in enumerate(chosen):
        system, code, unit = codes[name]
        quantity: dict[str, Any] = {"value": row[name]}
        if unit:
            quantity.update(system=UCUM, code=unit)
        resources.append(
            {
                "resourceType": "Observation",
                "id": f"{patient_id}-o{i}",
                "status": "final",
                "code": {"coding": [{"system": system, "code": code}]},
                "subject": {"reference": f"Patient/{patient_id}"},
                "valueQuantity": quantity,
            }
        )
    return resources


def session(run: Run, port: int, key, prepared: dict, seat: int, think: float) -> None:
    """One EHR session: a chart opened (patient-view), one /api/v1 step, again and again."""
    rng = random.Random(seat)
    rows, codes = prepared["rows"], prepared["codes"]
    service = f"/cds-services/cost-aware-model-{prepared['model']}"
    audience = f"http://127.0.0.1:{port}{service}"
    bearer = {"Authorization": f"Bearer {prepared['token']}"}
    n, state = seat * 7, None

    def pause() -> bool:
        wait = rng.uniform(0.5 * think, 1.5 * think) if think else 0.0
        if time.perf_counter() + wait >= run.deadline:
            return False
        time.sleep(wait)
        return True

    if think:
        time.sleep(rng.uniform(0, think))  # sessions arrive spread over one think time
    try:
        while time.perf_counter() < run.deadline:
            row = rows[n % len(rows)]
            patient_id = f"s{seat}-p{n}"
            n += 1
            body = {
                "hook": HOOK,
                "hookInstance": str(uuid.uuid4()),
                "context": {"userId": "Practitioner/latency", "patientId": patient_id},
                "prefetch": {
                    "patient": {"resourceType": "Patient", "id": patient_id},
                    "observations": {
                        "resourceType": "Bundle",
                        "type": "searchset",
                        "entry": [
                            {"resource": r} for r in observations(patient_id, row, codes, rng)
                        ],
                    },
                },
            }
            token = {"Authorization": f"Bearer {signed(key, audience)}"}
            timed(run, HOOK, port, "POST", service, body, token)
            if not pause():
                return
            if state is None or not state["is_open"]:
                state = timed(
                    run,
                    "start",
                    port,
                    "POST",
                    "/api/v1/cases",
                    {"model": prepared["model"]},
                    bearer,
                )
            step = {**_answer(state, row), "seen": state["version"]}
            state = timed(
                run, STEP, port, "POST", f"/api/v1/cases/{state['case']}/steps", step, bearer
            )
            if not pause():
                return
    except Failed:
        return
    except Exception as exc:  # a bug of the load generator: counted, never hidden
        with run.lock:
            run.errors[f"session: {exc!r:.200}"] += 1


def setup() -> dict:
    """The clinician, its token, the CDS client and its key, the model and the patients."""
    from django.contrib.auth.models import Group, User
    from joserfc.jwk import ECKey

    from diagnosis.catalog.models import DiagnosticTest
    from diagnosis.catalog.selectors.vocabulary import vocabulary_of
    from diagnosis.integration.selectors.codes import code_book
    from diagnosis.integration.services.api_tokens import issue_api_token
    from diagnosis.integration.services.cds_clients import register_client
    from diagnosis.permissions import CLINICIANS
    from diagnosis.training.models import TrainedModel

    user, _ = User.objects.get_or_create(username="cds-latency")
    user.groups.add(Group.objects.get(name=CLINICIANS))
    token = issue_api_token(issuer=None, owner=user, name="latency")[1]
    key = ECKey.generate_key("P-384", parameters={"kid": "latency"})
    register_client(
        name="Latency EHR",
        issuer=ISSUER,
        clinician=user,
        jwks={"keys": [key.as_dict(private=False)]},
    )
    trained = (
        TrainedModel.objects.filter(
            status=TrainedModel.SUCCEEDED,
            approval=TrainedModel.APPROVED,
            learner="dtmc",
            dataset__name__startswith="Heart",
        )
        .select_related("dataset")
        .first()
    )
    if trained is None:
        raise SystemExit("no approved DTMC heart model")
    book = code_book(trained.dataset_id, vocabulary_of(trained).class_labels)
    tests = list(trained.dataset.tests.order_by("index"))
    codes = {
        t.name: (book.of_test[t.name].system, book.of_test[t.name].code, book.of_test[t.name].unit)
        for t in tests
        if t.kind == DiagnosticTest.NUMERIC
    }
    names = [t.name for t in tests]
    rows = [
        dict(zip(names, case.values, strict=True))
        for case in trained.dataset.cases.order_by("id")[:500]
    ]
    return {"token": token, "key": key, "model": trained.pk, "codes": codes, "rows": rows}


def server_times(log: Path, kind: str) -> list[float]:
    """Milliseconds gunicorn spent on each logged request of ``kind``."""
    times = []
    for line in log.read_text(errors="replace").splitlines():
        parts = line.split()
        if len(parts) != 4 or parts[0] != "POST" or not parts[2].startswith("2"):
            continue
        if (kind == HOOK and parts[1].startswith("/cds-services/")) or (
            kind == STEP and parts[1].startswith("/api/v1/cases/") and parts[1].endswith("/steps")
        ):
            times.append(int(parts[3]) / 1000)
    return times


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=50, help="simulated EHR sessions")
    parser.add_argument("--seconds", type=float, default=30.0, help="length of the run")
    parser.add_argument("--think", type=float, default=2.0, help="mean think time (s)")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn sync workers")
    parser.add_argument("--target", type=float, default=50.0, help="server-time p95 goal (ms)")
    parser.add_argument("--database", default="cds_latency", help="PostgreSQL database")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--reuse", action="store_true", help="keep the database of an earlier run")
    args = parser.parse_args(argv)

    if not args.reuse:
        for command in (["dropdb", "--if-exists"], ["createdb"]):
            where = ["-h", "127.0.0.1", "-U", "postgres", args.database]
            subprocess.run([*command, *where], check=True)
    env = {k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=f"postgresql://postgres@127.0.0.1:5432/{args.database}",
        REDIS_URL=args.redis,
        DJANGO_SECRET_KEY="cds-latency-only",
        DJANGO_DEBUG="false",
        DJANGO_HTTPS="false",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        API_RATE_LIMIT="1000000/m",  # the load is the point here, not the limit
        DJANGO_STATIC_ROOT=str(Path(tempfile.mkdtemp(prefix="cds-latency-static-"))),
    )
    print("Setting up (as bin/run does, on PostgreSQL):", flush=True)
    manage(["migrate", "--noinput"], env, "migrate")
    manage(["load_demo_data", "--only", HEART], env, "demo heart data, model and codes")
    manage(["collectstatic", "--noinput", "--verbosity", "0"], env, "collectstatic")
    os.environ.update(env)
    import django

    django.setup()
    prepared = setup()
    from django.db import connections

    connections.close_all()
    port = free_port()
    log = Path(tempfile.mkdtemp(prefix="cds-latency-log-")) / "access.log"
    log.touch()
    server = start_gunicorn(
        env, port, args.workers, access_log=log, access_format="%(m)s %(U)s %(s)s %(D)s"
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}/accounts/login/", server, seconds=300)
        run = Run(deadline=time.perf_counter() + args.seconds)
        threads = [
            threading.Thread(
                target=session,
                args=(run, port, prepared["key"], prepared, i, args.think),
                daemon=True,
            )
            for i in range(args.sessions)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=args.seconds + 120)
        time.sleep(0.5)  # the access log is written after the answer
    finally:
        server.terminate()
        server.wait(timeout=30)
    errors = sum(run.errors.values())
    print(
        f"\nCDS latency: {args.sessions} EHR sessions, {args.seconds:.0f} s, think "
        f"{args.think:.1f} s; gunicorn {args.workers} sync workers, PostgreSQL, Redis; "
        "ms (client: the whole request; srv: gunicorn's own time)"
    )
    print(
        f"{'call':<13}{'calls':>7}{'errors':>7}{'p50':>8}{'p95':>8}{'srv p50':>9}{'srv p95':>9}"
        f"  srv p95 <= {args.target:g} ms"
    )
    for kind in (HOOK, STEP):
        ms = [s * 1000 for s in run.latency[kind]]
        srv = server_times(log, kind)
        kind_errors = sum(c for m, c in run.errors.items() if m.startswith(kind))
        verdict = "yes" if srv and _pct(srv, 0.95) <= args.target else "no"
        print(
            f"{kind:<13}{len(ms):>7}{kind_errors:>7}"
            f"{statistics.median(ms or [float('nan')]):>8.1f}{_pct(ms, 0.95):>8.1f}"
            f"{statistics.median(srv or [float('nan')]):>9.1f}{_pct(srv, 0.95):>9.1f}"
            f"  {verdict}"
        )
    for message, count in run.errors.most_common(5):
        print(f"    {count} x {message}", flush=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
