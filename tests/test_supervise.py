"""config.supervise, which keeps bin/run's web server, Celery worker and beat running."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 20


def _supervise(tmp_path: Path, *args: str) -> tuple[subprocess.Popen, Path]:
    """Runs ``python -m config.supervise`` with ``args``; its output goes to a file."""
    log = tmp_path / "supervise.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "config.supervise", *args],
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return process, log


def _wait_for(path: Path, pattern: str) -> re.Match:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        match = re.search(pattern, path.read_text() if path.exists() else "")
        if match:
            return match
        time.sleep(0.1)
    pytest.fail(f"no {pattern!r} in {path.name}:\n{path.read_text() if path.exists() else ''}")


def _alive(pid: int) -> bool:
    # A zombie (killed but not yet reaped by its parent) counts as dead.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_dead(pid: int) -> None:
    deadline = time.monotonic() + TIMEOUT
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), f"process {pid} is still running"


@pytest.fixture
def stop_after():
    started: list[subprocess.Popen] = []
    yield started.append
    for process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_a_killed_program_is_restarted_and_the_restart_is_reported(tmp_path, stop_after):
    """kill -9 of a program: the supervisor says which died of what, and starts a new one."""
    process, log = _supervise(tmp_path, "--min-uptime", "0.5", "--program", "sleeper=sleep 600")
    stop_after(process)
    first = int(_wait_for(log, r"started sleeper \(pid (\d+)\)").group(1))
    time.sleep(0.6)  # past --min-uptime, so the restart is immediate
    os.kill(first, signal.SIGKILL)
    _wait_for(log, rf"sleeper \(pid {first}\) was killed by SIGKILL after \d+ s; restarting it\n")
    second = int(_wait_for(log, r"restarted sleeper \(pid (\d+); restart 1\)").group(1))
    assert second != first and _alive(second)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=TIMEOUT) == 0
    _wait_dead(second)


def test_what_a_dead_program_started_is_killed_with_it(tmp_path, stop_after):
    """A child left behind by a killed program (as a Celery pool process would be) is killed."""
    child_file = tmp_path / "child.pid"
    command = f"sh -c 'sleep 600 & echo $! > {child_file}; exec sleep 601'"
    process, log = _supervise(tmp_path, "--program", f"parent={command}")
    stop_after(process)
    parent = int(_wait_for(log, r"started parent \(pid (\d+)\)").group(1))
    child = int(_wait_for(child_file, r"^(\d+)\n").group(1))
    assert _alive(child)
    os.kill(parent, signal.SIGKILL)
    _wait_for(log, r"restarted parent")
    _wait_dead(child)


def test_a_program_that_keeps_dying_at_once_stops_everything(tmp_path, stop_after):
    """A program that dies right after starting, again and again, ends the run with status 1."""
    process, log = _supervise(
        tmp_path,
        "--max-quick-failures",
        "2",
        "--program",
        "broken=sh -c 'exit 3'",
        "--program",
        "sleeper=sleep 600",
    )
    stop_after(process)
    sleeper = int(_wait_for(log, r"started sleeper \(pid (\d+)\)").group(1))
    assert process.wait(timeout=TIMEOUT) == 1
    output = log.read_text()
    assert "broken (pid" in output and "exited with status 3" in output
    assert "died 2 times in a row" in output
    _wait_dead(sleeper)


def test_a_bad_program_argument_is_refused_with_a_message(tmp_path):
    """A --program without NAME=COMMAND is a usage error naming what was expected."""
    result = subprocess.run(
        [sys.executable, "-m", "config.supervise", "--program", "no-command-here"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode == 2
    assert "expected NAME=COMMAND" in result.stderr
