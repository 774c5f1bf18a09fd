"""Rebuild fixtures/demo_models from the demo data: each demo model trained afresh, then written."""

from __future__ import annotations

import time
from pathlib import Path

from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import BaseCommand

from diagnosis.catalog.models import Dataset
from diagnosis.management import demo_data
from diagnosis.management.demo_models import (
    build_demo_fixture,
    build_model_fixture,
    demo_models_of,
    fixture_path,
    write_fixture,
)


class Command(BaseCommand):
    help = (
        "Train every demo model afresh from the demo data (fixed seeds: the same models every "
        "time) and write its fixture to fixtures/demo_models/. Takes minutes."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--only", action="append", choices=sorted(demo_data.BUILDERS), help="Only this dataset."
        )
        parser.add_argument("--learner", action="append", help="Only this learner key.")
        parser.add_argument(
            "--model",
            nargs=5,
            action="append",
            metavar=("DATASET", "LEARNER", "MATRIX", "NAME", "PATH"),
            help="Instead of the demo models: this model (default parameters) of a demo "
            "dataset under the named error matrix, written to PATH (the browser tests' models).",
        )

    def handle(self, *args, **options):
        names = options["only"] or list(demo_data.BUILDERS)
        only = [arg for name in names for arg in ("--only", name)]
        # The demo users and datasets, without models or the experiment.
        call_command("load_demo_data", "--no-train", "--no-experiment", *only, stdout=self.stdout)
        admin = User.objects.get(username="admin")
        if options["model"]:
            for dataset_name, learner, matrix, model_name, path in options["model"]:
                dataset = Dataset.objects.get(name=dataset_name)
                document = build_model_fixture(
                    user=admin,
                    dataset=dataset,
                    learner=learner,
                    params={},
                    error_matrix=dataset.error_matrices.get(name=matrix),
                    name=model_name,
                    say=self._say,
                )
                write_fixture(document, Path(path))
                self._say(f"wrote {path}")
            return
        for name in names:
            dataset = Dataset.objects.get(name=name)
            for learner, label, params in demo_models_of(name):
                if options["learner"] and learner not in options["learner"]:
                    continue
                started = time.perf_counter()
                document = build_demo_fixture(
                    user=admin,
                    dataset=dataset,
                    learner=learner,
                    label=label,
                    params=params,
                    say=self._say,
                )
                path = fixture_path(dataset_name=name, learner=learner)
                write_fixture(document, path)
                self._say(f"wrote {path} ({time.perf_counter() - started:.0f} s)")

    def _say(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()
