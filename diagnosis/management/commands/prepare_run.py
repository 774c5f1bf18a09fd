"""bin/run's set-up in one process: migrate, demo data and models, static files, demo logins.

One Django start instead of four: on a busy 2-core machine each start (Django, numpy,
scikit-learn imported) cost seconds of the second start's budget.  collectstatic (hashing and
compressing every asset, plotly.js among them: 108 s on the loaded machine) runs only when the
assets changed since the last run.
"""

from __future__ import annotations

import hashlib
import os

from django.conf import settings
from django.contrib.staticfiles.finders import get_finders
from django.core.management import call_command
from django.core.management.base import BaseCommand

from diagnosis.management.commands.load_demo_data import demo_logins

STAMP_NAME = ".collected-sources"


def static_sources_digest() -> str:
    """SHA-256 of every static source file's path, size and modification time."""
    digest = hashlib.sha256()
    entries = []
    for finder in get_finders():
        for path, storage in finder.list([]):
            stat = os.stat(storage.path(path))
            entries.append(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}")
    for entry in sorted(entries):
        digest.update(entry.encode())
    return digest.hexdigest()


class Command(BaseCommand):
    help = (
        "Migrate, load the demo data and models (queueing the demo experiment, and any demo "
        "model without a fitting fixture, for the worker) and collect the static files when "
        "they changed."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--logins-fd",
            type=int,
            default=None,
            help="Also write the demo logins (manage.py demo_logins) to this open file "
            "descriptor, for bin/run's banner.",
        )

    def handle(self, *args, **options):
        self._prepare()
        if options["logins_fd"] is not None:
            with os.fdopen(options["logins_fd"], "w") as out:
                for line in demo_logins():
                    out.write(line + "\n")

    def _prepare(self) -> None:
        self._step("migrating the database", "migrate", "--noinput")
        self._step(
            "demo users, datasets and models",
            "load_demo_data",
            "--queue-experiment",
            "--queue-training",
        )
        stamp = settings.STATIC_ROOT / STAMP_NAME
        sources = static_sources_digest()
        if stamp.is_file() and stamp.read_text() == sources:
            self.stdout.write("bin/run: static files unchanged since the last collectstatic")
            return
        self._step("collecting static files", "collectstatic", "--noinput", "--verbosity", "0")
        stamp.write_text(sources)

    def _step(self, what: str, *command: str) -> None:
        self.stdout.write(f"bin/run: {what}")
        self.stdout.flush()
        call_command(*command, stdout=self.stdout, stderr=self.stderr)
