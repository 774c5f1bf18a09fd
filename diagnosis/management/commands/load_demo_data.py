"""Demo users, the three demo datasets and their trained models (``DEMO_LEARNERS``).  Safe to run
again.

A demo user's password and roles are set only when the user is created: a later run (every
start of bin/run) never resets a password someone changed.  ``demo_logins()`` says how to log in.
"""

from __future__ import annotations

import os
from typing import Any, TypedDict

from django.contrib.auth.hashers import check_password
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand
from django.db import transaction

from diagnosis.bench.models import Experiment
from diagnosis.bench.services import runner as experiment_runner
from diagnosis.bench.services.experiments import create_experiment
from diagnosis.catalog.models import Dataset
from diagnosis.catalog.services.datasets import create_dataset
from diagnosis.clinic.models import Team
from diagnosis.integration.services.codes import load_demo_codes
from diagnosis.management import demo_data
from diagnosis.management.demo_models import (
    DEMO_LEAF,
    DEMO_LEARNERS,
    DEMO_LEARNERS_DEFAULT,
    DEMO_MATRICES,
    DEMO_MATRIX,
    create_demo_model,
    demo_models_of,
)
from diagnosis.permissions import CLINICIANS, LEAD_CLINICIANS, MODEL_ADMINS
from diagnosis.roles import grant_role_permissions
from diagnosis.training.models import TrainedModel
from diagnosis.training.services.approval import approve_for_demo

# Re-exported: the demo models' choices live in demo_models, beside their fixtures.
__all__ = ["DEMO_LEARNERS", "DEMO_LEARNERS_DEFAULT", "DEMO_MATRICES", "DEMO_MATRIX", "Command"]

# Username, the environment variable that may set its first password, and the default.
DEMO_USERS = (
    ("clinician", "DEMO_CLINICIAN_PASSWORD", "clinician-demo"),
    ("lead", "DEMO_LEAD_PASSWORD", "lead-demo"),
    ("admin", "DEMO_ADMIN_PASSWORD", "admin-demo"),
)
# The lead clinician reads (only reads) the cases of this team's members: the demo clinician.
DEMO_TEAM = "Demo ward"


class _ExperimentSettings(TypedDict):
    """``create_experiment``'s arguments for the demo experiment."""

    name: str
    learners: list[dict[str, Any]]
    matrix_kind: str
    costs: list[float]
    k: int
    repeats: int
    seed: int


# The demo experiment (the bench, issue 14): two learners on heart at three uniform error costs,
# 3-fold, so that /experiments/ and the research page show a finished one from the start.
DEMO_EXPERIMENT: _ExperimentSettings = {
    "name": "Demo: EG2 against DTMC on heart, three error costs",
    "learners": [{"key": "eg2", "params": DEMO_LEAF}, {"key": "dtmc", "params": DEMO_LEAF}],
    "matrix_kind": "uniform",
    "costs": [10.0, 100.0, 1000.0],
    "k": 3,
    "repeats": 1,
    "seed": 0,
}


class Command(BaseCommand):
    help = "Create demo users, datasets (heart, thyroid, Pima) and their trained demo models."

    def add_arguments(self, parser):
        parser.add_argument("--no-train", action="store_true", help="Create no demo models.")
        parser.add_argument(
            "--train",
            action="store_true",
            help="Train the demo models here (minutes) instead of loading fixtures/demo_models.",
        )
        parser.add_argument(
            "--no-experiment",
            action="store_true",
            help="Do not compute the demo experiment (the research page's example).",
        )
        parser.add_argument(
            "--queue-training",
            action="store_true",
            help="A demo model whose fixture does not fit is queued for the Celery worker "
            "instead of trained here.",
        )
        parser.add_argument(
            "--queue-experiment",
            action="store_true",
            help="Queue the demo experiment for the Celery worker instead of computing it here.",
        )
        parser.add_argument(
            "--only", action="append", choices=sorted(demo_data.BUILDERS), help="Only this dataset."
        )

    def handle(self, *args, **options):
        admin = self._users()
        names = options["only"] or list(demo_data.BUILDERS)
        for name in names:
            dataset = Dataset.objects.filter(name=name).first()
            if dataset is None:
                dataset = create_dataset(**demo_data.BUILDERS[name]())
                self.stdout.write(
                    f"Created dataset {name}: {dataset.cases.count()} cases, "
                    f"{dataset.tests.count()} tests"
                )
            else:
                self.stdout.write(f"Dataset {name} already exists ({dataset.cases.count()} cases)")
            if not options["no_train"]:
                for learner, label, params in demo_models_of(name):
                    trained = create_demo_model(
                        user=admin,
                        dataset=dataset,
                        learner=learner,
                        label=label,
                        params=params,
                        train=options["train"],
                        queue=options["queue_training"],
                        say=self._say,
                    )
                    # Demo models arrive approved; one an admin has since retired stays so.
                    if trained is not None and trained.approval == TrainedModel.DRAFT:
                        approve_for_demo(user=admin, trained_model=trained)
        for line in load_demo_codes():  # the tests' LOINC codes, the classes' (issue 31)
            self.stdout.write(line)
        if demo_data.HEART in names and not options["no_experiment"]:
            self._experiment(
                admin, Dataset.objects.get(name=demo_data.HEART), queue=options["queue_experiment"]
            )

    def _experiment(self, admin: User, dataset: Dataset, *, queue: bool) -> None:
        """One small finished experiment, so the experiments and research pages are never
        empty: computed for real by the workers' code path (run_task), in this process, or
        with ``queue`` by the Celery worker once it runs (bin/run: the first page waits for
        no compiler)."""
        existing = Experiment.objects.filter(name=DEMO_EXPERIMENT["name"])
        if existing.filter(status=Experiment.DONE).exists():
            self.stdout.write(f"  experiment {DEMO_EXPERIMENT['name']!r} already computed")
            return
        if queue and existing.filter(status__in=[Experiment.QUEUED, Experiment.RUNNING]).exists():
            self.stdout.write(f"  experiment {DEMO_EXPERIMENT['name']!r} already queued")
            return
        experiment = create_experiment(user=admin, dataset=dataset, launch=queue, **DEMO_EXPERIMENT)
        if queue:
            self.stdout.write(
                f"  experiment {experiment.name!r} queued: the worker computes its "
                f"{experiment.n_tasks} tasks in the background"
            )
            return
        for pk in experiment.tasks.filter(lead__isnull=True).values_list("pk", flat=True):
            experiment_runner.run_task(task_id=pk, worker="load_demo_data")
        experiment.refresh_from_db()
        self.stdout.write(
            f"  experiment {experiment.name!r}: {experiment.get_status_display()}, "
            f"{experiment.n_done} of {experiment.n_tasks} tasks"
            + (f" ({experiment.status_reason})" if experiment.status_reason else "")
        )

    @transaction.atomic
    def _users(self) -> User:
        grant_role_permissions()  # as after every migrate; the groups exist from here on
        clinicians = Group.objects.get(name=CLINICIANS)
        admins = Group.objects.get(name=MODEL_ADMINS)
        clinician, created = self._user("clinician")
        if created:
            clinician.groups.add(clinicians)
        lead, created = self._user("lead")
        if created:  # a clinician with their own cases, who also reads the team's
            lead.first_name, lead.last_name = "Lena", "Lead"
            lead.save(update_fields=["first_name", "last_name"])
            lead.groups.add(clinicians, Group.objects.get(name=LEAD_CLINICIANS))
        if not Team.objects.filter(name=DEMO_TEAM).exists():  # made once, then left as edited
            team = Team.objects.create(name=DEMO_TEAM)
            team.members.add(clinician, lead)
            team.leads.add(lead)
            self.stdout.write(f"Created team {DEMO_TEAM}: lead reads clinician's cases")
        admin, created = self._user("admin")
        if created:
            admin.is_staff = admin.is_superuser = True
            admin.save(update_fields=["is_staff", "is_superuser"])
            admin.groups.add(admins)
        return admin

    def _user(self, username: str) -> tuple[User, bool]:
        user = User.objects.filter(username=username).first()
        if user is not None:
            self.stdout.write(f"User {username} already exists (password left as it is)")
            return user, False
        user = User(username=username)
        user.set_password(_first_password(username))
        user.save()
        self.stdout.write(f"Created user {username}")
        return user, True

    def _say(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()


def _first_password(username: str) -> str:
    """The password a demo user gets when it is created: from the environment, else the default."""
    for name, variable, default in DEMO_USERS:
        if name == username:
            return os.environ.get(variable, default)
    raise KeyError(f"{username!r} is not a demo user")


def demo_logins() -> list[str]:
    """How to log in as each demo user, as lines: the first password while it still works,
    else "password as set".  Reads only: checking never rehashes or saves a password."""
    lines = []
    for username, _, _ in DEMO_USERS:
        user = User.objects.filter(username=username).first()
        if user is None:
            lines.append(f"{username}: no such user (run load_demo_data)")
        elif user.has_usable_password() and check_password(
            _first_password(username), user.password
        ):
            lines.append(f"{username} / {_first_password(username)}")
        else:
            lines.append(f"{username} / (password as set)")
    return lines
