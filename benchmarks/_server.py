"""Setting up and serving a private copy of the app, as ``bin/run`` does, for the benchmarks."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def manage(args: list[str], env: dict, label: str) -> str:
    """``manage.py <args>`` in ``env``; prints how long it took, stops the run on failure."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"{label} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    print(f"  {label}: {time.perf_counter() - started:.1f} s", flush=True)
    return done.stdout


def start_gunicorn(
    env: dict,
    port: int,
    workers: int,
    *,
    access_log: Path | None = None,
    access_format: str | None = None,
) -> subprocess.Popen:
    """gunicorn serving the app on 127.0.0.1:``port`` (the caller waits and terminates it).

    ``access_log``: a file for gunicorn's access log, in ``access_format`` (gunicorn's atoms,
    e.g. ``%(D)s``, the microseconds the server spent on the request).
    """
    logging = []
    if access_log is not None:
        logging = ["--access-logfile", str(access_log)]
        if access_format:
            logging += ["--access-logformat", access_format]
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--no-control-socket",
            # bin/run's gunicorn settings: each worker preloads the ready models.
            "--config",
            "python:config.gunicorn",
            *logging,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_until_up(url: str, server: subprocess.Popen, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("gunicorn exited before answering")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"{url} did not answer within {seconds:.0f} s")
