"""A storm of simultaneous sign-ins against the production server, while clinicians step cases.

Set-up as ``benchmarks.load_test`` does it (PostgreSQL ``--database``, dropped and created
again unless ``--reuse``; Redis; the heart demo tree), plus ``--sign-ins`` users with a password
(Django's PBKDF2 hash: about half a second of CPU per sign-in).  gunicorn then serves the app
as ``bin/run`` does (``--config python:config.gunicorn``, ``--workers``: ``WEB_CONCURRENCY``'s
default of 3), so its worker class, threads and the sign-in limit are the product's own.

Two phases in one run, with the same ``--clinicians`` stepping heart cases over ``/api/v1``
(each thinking ``--think`` s between steps, as load_test's clinicians do):

* ``baseline``  ``--baseline-seconds`` of steps alone: the peer the storm is compared with;
* ``storm``     every sign-in user has opened the login page (its CSRF cookie); then all
                POST their password at the same moment (a barrier), while the steps go on.
                A sign-in answered 503 (too many at once) is sent again after its
                ``Retry-After``, as the page asks a person to, until ``--deadline`` s passed.
                The steps stop when every sign-in has its answer.

Printed: the sign-ins' first answers (how many within ``--deadline`` s, by status, the slowest),
how many were signed in within the deadline counting the retries, and the steps' p50/p95 in
each phase with the storm's p95 as a multiple of the baseline's; the load average before and
after (the machine is shared: compare the two phases of one run, not runs).

    python -m benchmarks.sign_in_load
    python -m benchmarks.sign_in_load --sign-ins 100 --clinicians 4 --reuse
"""

from __future__ import annotations

import argparse
import http.client
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

from benchmarks._server import free_port, manage, start_gunicorn, wait_until_up
from benchmarks.load_test import Client, Failed, Run, _pct, clinician

PASSWORD = "sign-in-storm-password-1"


def setup(sign_ins: int, clinicians: int) -> dict:
    """Stepping clinicians (tokens, the heart tree) and ``sign_ins`` users with one password."""
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group, User

    from benchmarks.load_test import setup as load_test_setup
    from diagnosis.permissions import CLINICIANS

    prepared = load_test_setup(clinicians, ["tree"])
    group = Group.objects.get(name=CLINICIANS)
    encoded = make_password(PASSWORD)  # one hash for all: the set-up is not what is measured
    for i in range(sign_ins):
        user, _ = User.objects.get_or_create(username=f"sign-in-{i}")
        user.password = encoded
        user.save()
        user.groups.add(group)
    return prepared


class RetryClient(Client):
    """load_test's client (cookies, CSRF), remembering the last answer's ``Retry-After``."""

    last_retry_after: str | None = None

    def request(self, method, path, body=None, form=None):
        headers = {"Host": "127.0.0.1"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        data = None
        if form is not None:
            form = {**form, "csrfmiddlewaretoken": self.cookies.get("csrftoken", "")}
            data = urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=90)
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            content = response.read()
            for header in response.msg.get_all("Set-Cookie") or ():
                for name, morsel in SimpleCookie(header).items():
                    self.cookies[name] = morsel.value
            self.last_retry_after = response.getheader("Retry-After")
            return response.status, response.getheader("Location"), content
        finally:
            connection.close()


@dataclass
class StepRun(Run):
    """load_test's record of a level, with every clinician request in ``steps`` (a case start
    too), and a request that got no answer (a timeout) or failed counted there at the time it
    took: a starved step shows in the p95."""

    unanswered: int = 0

    def call(self, client: Client, kind: str, method: str, path: str, **kw):
        started = time.perf_counter()
        try:
            status, location, content = client.request(method, path, **kw)
        except OSError as exc:
            with self.lock:
                self.steps.append(time.perf_counter() - started)
                self.unanswered += 1
                self.errors[f"{kind}: {type(exc).__name__}: {exc}"] += 1
            raise Failed from exc
        with self.lock:
            self.steps.append(time.perf_counter() - started)
            if status >= 400 or (status >= 300 and kind != "start"):
                self.unanswered += 1
                self.errors[f"{kind} {status}: {content[:160]!r}"] += 1
        if status >= 400:
            raise Failed
        return status, location, content


def steps_while(run: Run, port: int, prepared: dict, think: float) -> list[threading.Thread]:
    model = prepared["models"]["tree"]
    clients = [Client(port, token=prepared["tokens"][n]) for n in sorted(prepared["tokens"])]
    threads = [
        threading.Thread(target=clinician, args=(run, c, "v1", model, think, i), daemon=True)
        for i, c in enumerate(clients)
    ]
    for thread in threads:
        thread.start()
    return threads


def describe(label: str, run: StepRun) -> str:
    if not run.steps:
        return f"{label}: no steps"
    ms = [v * 1000 for v in run.steps]
    return (
        f"{label}: {len(ms)} requests ({run.unanswered} unanswered or failed, counted at "
        f"the time they took), p50 {_pct(ms, 0.5):.0f} ms, p95 {_pct(ms, 0.95):.0f} ms, "
        f"max {max(ms):.0f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sign-ins", type=int, default=100)
    parser.add_argument("--clinicians", type=int, default=4, help="stepping cases meanwhile")
    parser.add_argument("--think", type=float, default=0.5, help="mean think time (s)")
    parser.add_argument("--baseline-seconds", type=float, default=30.0)
    parser.add_argument("--deadline", type=float, default=30.0, help="seconds a sign-in may take")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (bin/run's 3)")
    parser.add_argument("--database", default="sign_in_load", help="PostgreSQL (recreated)")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/12")
    parser.add_argument("--reuse", action="store_true", help="keep the database of an earlier run")
    args = parser.parse_args(argv)

    database = f"postgresql://postgres@127.0.0.1:5432/{args.database}"
    if not args.reuse:
        for command in (["dropdb", "--if-exists"], ["createdb"]):
            subprocess.run(
                [*command, "-h", "127.0.0.1", "-U", "postgres", args.database], check=True
            )
    env = {k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=database,
        REDIS_URL=args.redis,
        DJANGO_SECRET_KEY="sign-in-load-only",
        DJANGO_DEBUG="false",
        DJANGO_HTTPS="false",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        API_RATE_LIMIT="1000000/m",
        DJANGO_STATIC_ROOT=str(Path(tempfile.mkdtemp(prefix="sign-in-load-static-"))),
    )
    print("Setting up (as bin/run does, on PostgreSQL):", flush=True)
    manage(["migrate", "--noinput"], env, "migrate")
    manage(["load_demo_data", "--only", "Heart disease (Cleveland)"], env, "demo data and models")
    manage(["collectstatic", "--noinput", "--verbosity", "0"], env, "collectstatic")
    os.environ.update(env)
    import django

    django.setup()
    prepared = setup(args.sign_ins, args.clinicians)
    from django.db import connections

    connections.close_all()

    port = free_port()
    server = start_gunicorn(env, port, args.workers)
    load_before = os.getloadavg()
    try:
        wait_until_up(f"http://127.0.0.1:{port}/accounts/login/", server, seconds=300)
        # warm-up: every worker parses the model before anything is timed
        warm = StepRun(deadline=time.perf_counter() + 5)
        for thread in steps_while(warm, port, prepared, 0.0):
            thread.join()

        baseline = StepRun(deadline=time.perf_counter() + args.baseline_seconds)
        for thread in steps_while(baseline, port, prepared, args.think):
            thread.join()

        users = [f"sign-in-{i}" for i in range(args.sign_ins)]
        barrier = threading.Barrier(len(users) + 1)
        results: list[dict] = [{} for _ in users]
        storm = StepRun(deadline=time.perf_counter() + 3600)

        def person(i: int) -> None:
            client = RetryClient(port)
            client.request("GET", "/accounts/login/")
            form = {"username": users[i], "password": PASSWORD, "next": "/"}
            barrier.wait()
            began = time.perf_counter()
            tries = 0
            while True:
                tries += 1
                sent = time.perf_counter()
                try:
                    status, _, _ = client.request("POST", "/accounts/login/", form=form)
                except OSError as exc:
                    status = type(exc).__name__
                answered = time.perf_counter()
                if tries == 1:
                    results[i]["first"] = (status, answered - sent)
                if status == 302 and "sessionid" in client.cookies:
                    results[i]["signed_in"] = answered - began
                    break
                if status != 503:
                    break
                wait = float(client.last_retry_after or 1)
                if answered + wait - began >= args.deadline:
                    break
                time.sleep(wait)
            results[i]["tries"] = tries

        people = [
            threading.Thread(target=person, args=(i,), daemon=True) for i in range(len(users))
        ]
        for thread in people:
            thread.start()
        steppers = steps_while(storm, port, prepared, args.think)
        time.sleep(1.0)  # the steps are under way when the storm comes
        barrier.wait()
        storm_began = time.perf_counter()
        for thread in people:
            thread.join(timeout=args.deadline + 90)
        storm_seconds = time.perf_counter() - storm_began
        storm.deadline = 0.0
        for thread in steppers:
            thread.join(timeout=60)
    finally:
        server.terminate()
        server.wait(timeout=30)
    load_after = os.getloadavg()

    firsts = [r["first"] for r in results if "first" in r]
    statuses = Counter(str(status) for status, _ in firsts)
    within = [s for status, s in firsts if s <= args.deadline and isinstance(status, int)]
    signed = sorted(r["signed_in"] for r in results if "signed_in" in r)
    signed_within = [s for s in signed if s <= args.deadline]
    tries = sum(r.get("tries", 0) for r in results)
    print(
        f"\nSign-in storm: {args.sign_ins} simultaneous sign-ins, gunicorn {args.workers} workers "
        "(config/gunicorn.py), PostgreSQL, Redis; "
        f"{args.clinicians} clinicians stepping heart cases over /api/v1 (think {args.think} s)"
    )
    print(
        f"  load average before {load_before[0]:.2f} {load_before[1]:.2f}, "
        f"after {load_after[0]:.2f} {load_after[1]:.2f} (2 cores shared)"
    )
    slowest = max((s for _, s in firsts), default=float("nan"))
    print(
        f"  first answers within {args.deadline:.0f} s: {len(within)}/{args.sign_ins} "
        f"(statuses: {dict(sorted(statuses.items()))}); slowest first answer {slowest:.1f} s, "
        f"median {_pct([s for _, s in firsts], 0.5) if firsts else float('nan'):.1f} s"
    )
    print(
        f"  signed in within {args.deadline:.0f} s (503s sent again after Retry-After): "
        f"{len(signed_within)}/{args.sign_ins} in {tries} POSTs; last at "
        f"{signed[-1] if signed else float('nan'):.1f} s; storm over after {storm_seconds:.1f} s"
    )
    print("  " + describe("steps and case starts, baseline (no storm)", baseline))
    print("  " + describe("steps and case starts, during the storm  ", storm))
    if baseline.steps and storm.steps:
        ratio = _pct(storm.steps, 0.95) / _pct(baseline.steps, 0.95)
        print(f"  steps p95 during the storm / baseline p95: {ratio:.2f}x")
    for message, count in (baseline.errors + storm.errors).most_common(5):
        print(f"    step error {count} x {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
