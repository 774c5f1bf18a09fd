"""Keeps bin/run's processes running: starts each program, restarts one that dies, and says so.

    python -m config.supervise --program "web=gunicorn config.wsgi" --program "worker=celery ..."

Each program runs in its own process group (session), so when a program's main process dies,
what it leaves behind (a Celery pool process whose parent was killed, say) is killed with it
before the program is started again.  A program that dies within ``--min-uptime`` seconds of
starting is restarted after a growing delay (1, 2, 4 ... 30 s), and after
``--max-quick-failures`` such deaths in a row everything is stopped and the exit status is 1:
a port in use or a bad setting does not fix itself.  TERM or INT stops every program (TERM,
then KILL after ``--grace`` seconds) and exits with 0.

Written here rather than taken from supervisord: bin/run needs only restart-and-report for
three programs, and supervisord would add a daemon, a configuration file and its own log format
for it.  Every line this prints starts with ``supervise:``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import TextIO

MAX_DELAY = 30.0


@dataclass
class Program:
    """One supervised command and the state of its current process."""

    name: str
    argv: list[str]
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    restarts: int = 0
    quick_failures: int = 0
    restart_at: float | None = None


def describe_exit(returncode: int) -> str:
    """'was killed by SIGKILL' or 'exited with status 3', from a Popen return code."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    return f"exited with status {returncode}"


def parse_program(text: str) -> Program:
    """A ``NAME=COMMAND`` argument as a Program (the command split as a shell would)."""
    name, sep, command = text.partition("=")
    argv = shlex.split(command)
    if not sep or not name.strip() or not argv:
        raise argparse.ArgumentTypeError(f"expected NAME=COMMAND, got {text!r}")
    return Program(name=name.strip(), argv=argv)


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the whole group is already gone


class Supervisor:
    def __init__(
        self,
        programs: list[Program],
        *,
        out: TextIO = sys.stdout,
        min_uptime: float = 5.0,
        max_quick_failures: int = 5,
        grace: float = 20.0,
        poll: float = 0.2,
    ) -> None:
        if len({p.name for p in programs}) != len(programs):
            raise ValueError("program names must be unique")
        self.programs = programs
        self.out = out
        self.min_uptime = min_uptime
        self.max_quick_failures = max_quick_failures
        self.grace = grace
        self.poll = poll
        self.stopping = False

    def say(self, message: str) -> None:
        print(f"supervise: {message}", file=self.out, flush=True)

    def start(self, program: Program) -> None:
        # A session of its own: a Ctrl-C at the terminal reaches only the supervisor, which
        # stops the programs in order, and the program's leftovers can be killed as a group.
        program.process = subprocess.Popen(program.argv, start_new_session=True)
        program.started_at = time.monotonic()
        program.restart_at = None
        if program.restarts:
            self.say(
                f"restarted {program.name} (pid {program.process.pid}; restart {program.restarts})"
            )
        else:
            self.say(f"started {program.name} (pid {program.process.pid})")

    def check(self) -> bool:
        """Handles deaths and due restarts once; False when it is time to give up."""
        now = time.monotonic()
        for program in self.programs:
            process = program.process
            if process is not None and process.poll() is not None:
                uptime = now - program.started_at
                # What the dead process started (its pool, its workers) goes with it.
                _kill_group(process.pid, signal.SIGKILL)
                program.process = None
                if uptime < self.min_uptime:
                    program.quick_failures += 1
                    delay = min(2.0 ** (program.quick_failures - 1), MAX_DELAY)
                else:
                    program.quick_failures = 0
                    delay = 0.0
                message = (
                    f"{program.name} (pid {process.pid}) {describe_exit(process.returncode)} "
                    f"after {uptime:.0f} s"
                )
                if program.quick_failures >= self.max_quick_failures:
                    self.say(
                        f"{message}; it died {program.quick_failures} times in a row within "
                        f"{self.min_uptime:g} s of starting, so everything stops"
                    )
                    return False
                self.say(f"{message}; restarting it" + (f" in {delay:g} s" if delay else ""))
                program.restarts += 1
                program.restart_at = now + delay
            if program.process is None and program.restart_at is not None:
                if now >= program.restart_at:
                    self.start(program)
        return True

    def run(self) -> int:
        """Starts every program and keeps them running until ``stopping`` is set."""
        for program in self.programs:
            self.start(program)
        status = 0
        while not self.stopping:
            if not self.check():
                status = 1
                break
            time.sleep(self.poll)
        self.stop_all()
        return status

    def stop_all(self) -> None:
        running = [p.process for p in self.programs if p.process is not None]
        if running:
            self.say("stopping " + ", ".join(p.name for p in self.programs if p.process))
        for process in running:
            # TERM to the main process only: Celery and gunicorn stop their own pools in order.
            process.terminate()
        deadline = time.monotonic() + self.grace
        for process in running:
            try:
                process.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                pass
            # KILL the group even after a clean exit: nothing of it may outlive the run.
            _kill_group(process.pid, signal.SIGKILL)
            process.wait()
        for program in self.programs:
            program.process = None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--program",
        action="append",
        type=parse_program,
        required=True,
        metavar="NAME=COMMAND",
        help="a program to keep running (repeat for several)",
    )
    parser.add_argument("--min-uptime", type=float, default=5.0)
    parser.add_argument("--max-quick-failures", type=int, default=5)
    parser.add_argument("--grace", type=float, default=20.0)
    args = parser.parse_args(argv)
    try:
        supervisor = Supervisor(
            args.program,
            min_uptime=args.min_uptime,
            max_quick_failures=args.max_quick_failures,
            grace=args.grace,
        )
    except ValueError as error:
        parser.error(str(error))

    def request_stop(signum, frame):
        supervisor.stopping = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    return supervisor.run()


if __name__ == "__main__":
    sys.exit(main())
