"""bin/run's set-up in one process: migrate, demo data and models, static files.

One Django start instead of three: on a busy 2-core machine each start (Django, numpy,
scikit-learn imported) cost seconds of the second start's budget.
"""

from __future__ import annotations

from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Migrate, load the demo data and models (queueing the demo experiment, and any demo "
        "model without a fitting fixture, for the worker) and collect the static files."
    )

    def handle(self, *args, **options):
        steps = (
            ("migrating the database", ("migrate", "--noinput")),
            (
                "demo users, datasets and models",
                ("load_demo_data", "--queue-experiment", "--queue-training"),
            ),
            ("collecting static files", ("collectstatic", "--noinput", "--verbosity", "0")),
        )
        for what, command in steps:
            self.stdout.write(f"bin/run: {what}")
            self.stdout.flush()
            call_command(*command, stdout=self.stdout, stderr=self.stderr)
