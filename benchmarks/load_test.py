"""Many clinicians' systems stepping cases at once through /api/v1, on the production stack.

Sets up a fresh PostgreSQL database (``--database``, dropped and created again), migrates,
loads the demo datasets and models, makes ``--clinicians`` clinician users with an API token
each, and starts gunicorn (``--workers`` sync workers) with the Redis cache for rate limits.
Then one thread per clinician works through ``--cases`` patients each: it starts a case, answers
every test the model asks for with that real patient's recorded value (or "not available" when
the record has none) and closes the case with the advised conclusion or referral.

Printed: requests per second, latency percentiles per operation, every non-2xx answer, and a
check that the price stored for every step equals the library's own recomputation
(``CostModel.marginal_cost`` over the tests done before it, from the model's price snapshot).
The peer in the same run is the cheapest authenticated call (``GET /api/v1/models``).

    python -m benchmarks.load_test                        # 10 clinicians x 5 cases, 3 workers
    python -m benchmarks.load_test --clinicians 50 --cases 4 --workers 4
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

import requests

from benchmarks._server import free_port, manage, start_gunicorn, wait_until_up

# Run inside `manage.py shell`: clinicians with tokens, and each ready model's patients.
_SETUP = """
import json
from django.contrib.auth.models import Group, User
from diagnosis.models import TrainedModel
from diagnosis.permissions import CLINICIANS
from diagnosis.services.api_tokens import issue_api_token
group = Group.objects.get_or_create(name=CLINICIANS)[0]
tokens = []
for i in range({clinicians}):
    user = User.objects.get_or_create(username=f"load-{{i}}")[0]
    user.groups.add(group)
    tokens.append(issue_api_token(issuer=None, owner=user, name="load test")[1])
models = []
for trained in TrainedModel.objects.filter(status="succeeded").select_related("dataset"):
    tests = [t.name for t in trained.dataset.tests.order_by("index")]
    rows = [
        {{name: value for name, value in zip(tests, case.values)}}
        for case in trained.dataset.cases.order_by("id")[:500]
    ]
    models.append({{"id": trained.pk, "name": str(trained), "rows": rows}})
print("SETUP" + json.dumps({{"tokens": tokens, "models": models}}))
"""

# Run inside `manage.py shell` after the load: every stored price against the library's.
_CHECK = """
import json
from diagnosis.models import DiagnosisCase
from diagnosis.services.costs import cost_model_from_snapshot
steps = matched = 0
worst = 0.0
for case in DiagnosisCase.objects.select_related("trained_model").prefetch_related("steps__test"):
    cost_model = cost_model_from_snapshot(case.trained_model.cost_snapshot)
    done = set()
    for step in case.steps.order_by("position"):
        if step.kind != "result":
            continue
        expected = cost_model.marginal_cost(step.test.index, frozenset(done))
        steps += 1
        matched += abs(step.price - expected) < 1e-9
        worst = max(worst, abs(step.price - expected))
        done.add(step.test.index)
print("CHECK" + json.dumps({"steps": steps, "matched": matched, "worst": worst,
                            "cases": DiagnosisCase.objects.count(),
                            "closed": DiagnosisCase.objects.exclude(status="open").count()}))
"""


class Recorder:
    """Latencies per operation and statuses of non-2xx answers, shared by the threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.failures: Counter[str] = Counter()

    def call(self, session: requests.Session, operation: str, method: str, url: str, **kw):
        started = time.perf_counter()
        response = session.request(method, url, timeout=60, **kw)
        elapsed = time.perf_counter() - started
        with self.lock:
            self.latency[operation].append(elapsed)
            if not response.ok:
                self.failures[f"{operation} {response.status_code}: {response.text[:120]}"] += 1
        return response


def clinician(base: str, token: str, models: list[dict], cases: int, seat: int, rec: Recorder):
    """One clinician's system: ``cases`` patients, each stepped to its conclusion."""
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    rec.call(session, "GET /models", "GET", f"{base}/api/v1/models")
    for n in range(cases):
        model = models[(seat + n) % len(models)]
        patient = model["rows"][(seat * cases + n) % len(model["rows"])]
        started = rec.call(
            session, "POST /cases", "POST", f"{base}/api/v1/cases", json={"model": model["id"]}
        )
        if not started.ok:
            continue
        state = started.json()
        steps_url = f"{base}/api/v1/cases/{state['case']}/steps"
        for _ in range(100):
            advice = state["advice"]
            if advice is None:
                break
            if advice["kind"] == "extract":
                value = patient.get(advice["test_name"])
                body = (
                    {"action": "unavailable", "test": advice["test_name"]}
                    if value is None
                    else {"action": "result", "test": advice["test_name"], "value": value}
                )
            elif advice["kind"] == "classify":
                body = {"action": "classify", "label": advice["label"]}
            else:
                body = {"action": "refer"}
            body["seen"] = state["version"]
            answer = rec.call(session, "POST /steps", "POST", steps_url, json=body)
            if not answer.ok:
                break
            state = answer.json()
            if not state["is_open"]:
                break
        rec.call(session, "GET /cases/{id}", "GET", f"{base}/api/v1/cases/{state['case']}")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def report(rec: Recorder, seconds: float, check: dict, args) -> str:
    total = sum(len(v) for v in rec.latency.values())
    lines = [
        f"Load test: {args.clinicians} clinicians x {args.cases} cases, gunicorn {args.workers} "
        f"sync workers, PostgreSQL, Redis cache",
        f"requests: {total} in {seconds:.1f} s = {total / seconds:.1f} req/s; "
        f"non-2xx answers: {sum(rec.failures.values())}",
        "",
        f"{'operation':<18}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}",
    ]
    for operation, values in sorted(rec.latency.items()):
        ms = [v * 1000 for v in values]
        lines.append(
            f"{operation:<18}{len(ms):>7}{statistics.median(ms):>9.1f}"
            f"{_percentile(ms, 0.95):>9.1f}{_percentile(ms, 0.99):>9.1f}{max(ms):>9.1f}"
        )
    peer = statistics.median(rec.latency["GET /models"])
    step = statistics.median(rec.latency["POST /steps"])
    lines += [
        "",
        f"median step / median GET /models (peer, same run): {step / peer:.2f}x",
        f"cases: {check['cases']} started, {check['closed']} closed; "
        f"result steps: {check['steps']}, prices equal to the library's recomputation: "
        f"{check['matched']}/{check['steps']} (largest difference {check['worst']:.3g})",
    ]
    for failure, count in rec.failures.most_common(10):
        lines.append(f"  {count} x {failure}")
    return "\n".join(lines)


def _fresh_database(name: str) -> str:
    for command in (["dropdb", "--if-exists"], ["createdb"]):
        subprocess.run([*command, "-h", "127.0.0.1", "-U", "postgres", name], check=True)
    return f"postgresql://postgres@127.0.0.1:5432/{name}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clinicians", type=int, default=10)
    parser.add_argument("--cases", type=int, default=5, help="patients per clinician")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn sync workers")
    parser.add_argument("--database", default="load_test", help="PostgreSQL database (recreated)")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep the database of an earlier run (its demo models; its old cases are counted)",
    )
    args = parser.parse_args(argv)

    env = {k: v for k, v in os.environ.items() if k not in {"CELERY_BROKER_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=(
            f"postgresql://postgres@127.0.0.1:5432/{args.database}"
            if args.reuse
            else _fresh_database(args.database)
        ),
        REDIS_URL=args.redis,
        DJANGO_SECRET_KEY="load-test-only",
        DJANGO_DEBUG="false",
        DJANGO_HTTPS="false",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        API_RATE_LIMIT="1000000/m",  # the load is the point here, not the limit
        DJANGO_STATIC_ROOT=str(Path(tempfile.mkdtemp(prefix="load-test-static-"))),
    )
    print("Setting up (as bin/run does, on PostgreSQL):", flush=True)
    if args.reuse:
        manage(
            [
                "shell",
                "-c",
                "from diagnosis.models import DiagnosisCase as C; C.objects.all().delete()",
            ],
            env,
            "old cases removed",
        )
    manage(["migrate", "--noinput"], env, "migrate")
    manage(["load_demo_data"], env, "demo data and models")
    manage(["collectstatic", "--noinput", "--verbosity", "0"], env, "collectstatic")
    out = manage(["shell", "-c", _SETUP.format(clinicians=args.clinicians)], env, "users, tokens")
    setup = json.loads(out.split("SETUP", 1)[1].splitlines()[0])
    print(f"  models: {', '.join(m['name'] for m in setup['models'])}", flush=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_gunicorn(env, port, args.workers)
    rec = Recorder()
    try:
        wait_until_up(f"{base}/accounts/login/", server, seconds=300)
        threads = [
            threading.Thread(
                target=clinician,
                args=(base, token, setup["models"], args.cases, seat, rec),
            )
            for seat, token in enumerate(setup["tokens"])
        ]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=30)
    out = manage(["shell", "-c", _CHECK], env, "price check")
    check = json.loads(out.split("CHECK", 1)[1].splitlines()[0])
    print()
    print(report(rec, seconds, check, args))
    return 0 if not rec.failures and check["matched"] == check["steps"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
