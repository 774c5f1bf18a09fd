"""Time ``bin/run`` from a fresh clone to its first page, then a second start of the same clone.

Clones this repository's committed HEAD (or ``--commit``) into a temporary folder, so the clone
has no venv, no database, no numba cache and no generated secret key, and runs its ``bin/run``
there exactly as a newcomer would (SQLite, filesystem queue), on a free port.  The clock stops
when the demo clinician, signed in, gets the home page with HTTP 200 (the first page); it goes
on until every demo model (``demo_models.DEMO_LEARNERS``) is listed there (all ready).  Then
bin/run is stopped (TERM, as Ctrl-C) and started again in the same clone: the second figure.
pip may reuse its cache and the local wheel folder (``PIP_FIND_LINKS``); nothing is downloaded
from elsewhere than PyPI.

    python -m benchmarks.bin_run_time                      # this checkout's HEAD
    python -m benchmarks.bin_run_time --commit 75fa030     # an older commit, for the peer figure

Every line bin/run prints is echoed with the seconds since start, so the slow steps show.
"""

from __future__ import annotations

import argparse
import html
import http.cookiejar
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

from benchmarks._server import ROOT, free_port

CLINICIAN = ("clinician", os.environ.get("DEMO_CLINICIAN_PASSWORD", "clinician-demo"))
# Variables of this shell that would point the clone at our database, queue, venv or key.
_CLEARED = (
    "DATABASE_URL",
    "REDIS_URL",
    "DJANGO_SECRET_KEY",
    "DIAGNOSIS_VAR_DIR",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "NUMBA_CACHE_DIR",
    "DJANGO_SETTINGS_MODULE",
    "DJANGO_DEBUG",
)


def demo_model_names() -> list[str]:
    """The names load_demo_data gives the demo models (label demo: dataset)."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DJANGO_DEBUG", "true")
    import django

    django.setup()
    from diagnosis.management.demo_data import BUILDERS
    from diagnosis.management.demo_models import (
        DEMO_LEARNERS,
        DEMO_LEARNERS_DEFAULT,
    )

    return [
        f"{label} demo: {dataset}"
        for dataset in BUILDERS
        for _, label, _ in DEMO_LEARNERS.get(dataset, DEMO_LEARNERS_DEFAULT)
    ]


def _echo(process: subprocess.Popen, started: float, log: list[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        text = f"  [{time.monotonic() - started:6.1f} s] {line.rstrip()}"
        log.append(text)
        print(text, flush=True)


def _first_page(base: str, names: list[str]) -> tuple[str | None, int]:
    """(None, models listed) once the signed-in clinician's home page answers 200, else
    (why not, 0)."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    try:
        with opener.open(f"{base}/accounts/login/", timeout=10) as response:
            form = response.read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
        if token is None:
            return "no sign-in form", 0
        body = urllib.parse.urlencode(
            {
                "csrfmiddlewaretoken": token.group(1),
                "username": CLINICIAN[0],
                "password": CLINICIAN[1],
            }
        ).encode()
        request = urllib.request.Request(
            f"{base}/accounts/login/", data=body, headers={"Referer": f"{base}/accounts/login/"}
        )
        with opener.open(request, timeout=30):
            pass
        with opener.open(f"{base}/", timeout=30) as response:
            status, page = response.status, html.unescape(response.read().decode())
    except OSError as error:
        return f"not answering ({error.__class__.__name__})", 0
    if status != 200:
        return f"home page answered {status}", 0
    return None, sum(name in page for name in names)


def timed_start(
    clone: Path, env: dict, port: int, names: list[str], timeout: float, ready_timeout: float
) -> tuple[float, int, float | None]:
    """Seconds from starting bin/run to the first page, the demo models it listed then, and
    seconds until all of them were listed (None: not within ``timeout``); bin/run stopped."""
    started = time.monotonic()
    process = subprocess.Popen(
        ["bin/run"],
        cwd=clone,
        env={**env, "PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: stopped as a whole below
    )
    log: list[str] = []
    threading.Thread(target=_echo, args=(process, started, log), daemon=True).start()
    base = f"http://127.0.0.1:{port}"
    why: str | None = "not started"
    first: float | None = None
    listed_first = 0
    try:
        while time.monotonic() - started < (
            timeout if first is None else min(timeout, first + ready_timeout)
        ):
            if process.poll() is not None:
                raise SystemExit(f"bin/run exited with status {process.returncode}")
            why, listed = _first_page(base, names)
            if why is None and first is None:
                first, listed_first = time.monotonic() - started, listed
                print(f"  first page after {first:.1f} s: {listed} of {len(names)} demo models")
            if first is not None and why is None and listed == len(names):
                return first, listed_first, time.monotonic() - started
            time.sleep(1.0)
        if first is None:
            raise SystemExit(f"no first page within {timeout:.0f} s ({why})")
        return first, listed_first, None  # not all listed within the ready timeout
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)  # as Ctrl-C: the supervisor stops all three
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _describe(figures: tuple[float, int, float | None], total: int, timeout: float) -> str:
    first, listed, all_ready = figures
    ready = (
        f"all ready after {all_ready:.1f} s"
        if all_ready is not None
        else (f"not all ready within {timeout:.0f} s")
    )
    return f"first page {first:.1f} s with {listed} of {total} demo models, {ready}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commit", default="HEAD", help="What to clone (default: HEAD).")
    parser.add_argument("--timeout", type=float, default=1800.0, help="Give up after (s).")
    parser.add_argument(
        "--ready-timeout",
        type=float,
        default=900.0,
        help="After the first page, wait this long (s) for every demo model to be listed.",
    )
    parser.add_argument("--keep", action="store_true", help="Keep the clone (prints where).")
    args = parser.parse_args()
    # Copied before demo_model_names() sets up Django here (it sets DJANGO_DEBUG for itself).
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    names = demo_model_names()
    # Our venv off PATH: the clone makes and uses its own.
    venv_bin = str(Path(sys.prefix) / "bin")
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != venv_bin)
    folder = Path(tempfile.mkdtemp(prefix="bin-run-time-"))
    clone = folder / "repo"
    try:
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", args.commit],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", commit], check=True)
        port = free_port()
        print(f"bin/run of {commit[:10]} in a fresh clone ({clone}), port {port}", flush=True)
        first = timed_start(clone, env, port, names, args.timeout, args.ready_timeout)
        print(f"first start: {_describe(first, len(names), args.ready_timeout)}", flush=True)
        second = timed_start(clone, env, port, names, args.timeout, args.ready_timeout)
        print(f"second start: {_describe(second, len(names), args.ready_timeout)}", flush=True)
        print(
            f"\nbin/run from a fresh clone of {commit[:10]} (signed-in clinician's home page, "
            f"{len(names)} demo models):"
            f"\n  first start:  {_describe(first, len(names), args.ready_timeout)}"
            f"\n  second start: {_describe(second, len(names), args.ready_timeout)}"
            f"\n  (load average now {os.getloadavg()[0]:.1f})"
        )
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
