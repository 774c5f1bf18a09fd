"""Demo users, the three demo datasets and their trained models (``DEMO_LEARNERS``).  Safe to run
again.

A demo user's password and roles are set only when the user is created: a later run (every
start of bin/run) never resets a password someone changed.  ``demo_logins()`` says how to log in.
"""

from __future__ import annotations

import os

from django.contrib.auth.hashers import check_password
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand
from django.db import transaction

from diagnosis.management import demo_data
from diagnosis.models import Dataset, Experiment, Team, TrainedModel
from diagnosis.permissions import CLINICIANS, LEAD_CLINICIANS, MODEL_ADMINS
from diagnosis.roles import grant_role_permissions
from diagnosis.selectors.models import default_error_matrix
from diagnosis.services import experiment_runner
from diagnosis.services.approval import approve_for_demo
from diagnosis.services.datasets import create_dataset
from diagnosis.services.experiments import create_experiment
from diagnosis.services.training import create_training, run_training
from diagnosis.services.training_data import THIN_SUPPORT

# The error costs each demo model is trained with (fixtures/demo: each dataset's first, default
# matrix): a missed disease costs five false alarms, a referral one and a half.  Pima's errors
# are priced at the scale of its lab: under "Uniform 100" no test pays for itself (buying all
# eight and concluding with C4.5 lifts held-out accuracy from 65% to 77%, $11.70 of errors saved
# per patient, less than the $17.61 glucose test alone), and even at 500/100 a missed diabetes
# is worth 28 glucose tests, so the greedy learners hardly order it (2% of patients).
DEMO_MATRIX = "Missed disease costs 500 (refer at 150)"
DEMO_MATRICES = {demo_data.PIMA: "Missed diabetes costs 2500, false alarm 500"}
# Username, the environment variable that may set its first password, and the default.
DEMO_USERS = (
    ("clinician", "DEMO_CLINICIAN_PASSWORD", "clinician-demo"),
    ("lead", "DEMO_LEAD_PASSWORD", "lead-demo"),
    ("admin", "DEMO_ADMIN_PASSWORD", "admin-demo"),
)
# The lead clinician reads (only reads) the cases of this team's members: the demo clinician.
DEMO_TEAM = "Demo ward"
# A demo tree's leaf holds at least THIN_SUPPORT (10) training patients, so no advice rests on
# fewer (the model page warns about such models; heart's DTMC had 16 of 92 held-out
# conclusions on 2 to 9 patients with the learners' default of 2).
_LEAF = {"min_samples_leaf": THIN_SUPPORT}
DEMO_LEARNERS_DEFAULT = (("eg2", "EG2", _LEAF),)
# Heart and Pima get DTMC, which picks each test by the test and error costs it saves: EG2
# weighs a test's information against its price only, and under a matrix where a missed
# disease costs five false alarms its trees cost more than calling every patient ill.
# Heart also gets ACT (paper 000, issue 12), the learner the benchmarks measure against the
# best existing systems, so that a clinician can try it on the demo's cases.
# Thyroid also gets paper 003's model: its history questions are free, so only the
# four blood tests are priced and the 2^4 state classifiers stay small.
# The demo experiment (the bench, issue 14): two learners on heart at three uniform error costs,
# 3-fold, so that /experiments/ and the research page show a finished one from the start.
DEMO_EXPERIMENT = {
    "name": "Demo: EG2 against DTMC on heart, three error costs",
    "learners": [{"key": "eg2", "params": _LEAF}, {"key": "dtmc", "params": _LEAF}],
    "matrix_kind": "uniform",
    "costs": [10.0, 100.0, 1000.0],
    "k": 3,
    "repeats": 1,
    "seed": 0,
}
DEMO_LEARNERS = {
    demo_data.HEART: (("dtmc", "DTMC", _LEAF), ("act", "ACT", {})),
    demo_data.PIMA: (("dtmc", "DTMC", _LEAF),),
    demo_data.THYROID: (("eg2", "EG2", _LEAF), ("conditioned_loss", "Conditioned loss", {})),
}


class Command(BaseCommand):
    help = "Create demo users, datasets (heart, thyroid, Pima) and their trained demo models."

    def add_arguments(self, parser):
        parser.add_argument("--no-train", action="store_true", help="Do not train the demo models.")
        parser.add_argument(
            "--no-experiment",
            action="store_true",
            help="Do not compute the demo experiment (the research page's example).",
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
                for learner, label, params in DEMO_LEARNERS.get(name, DEMO_LEARNERS_DEFAULT):
                    self._train(admin, dataset, learner=learner, label=label, params=params)
        if demo_data.HEART in names and not options["no_experiment"]:
            self._experiment(admin, Dataset.objects.get(name=demo_data.HEART))

    def _experiment(self, admin: User, dataset: Dataset) -> None:
        """One small finished experiment, so the experiments and research pages are never
        empty: computed for real by the workers' code path (run_task), in this process."""
        if Experiment.objects.filter(name=DEMO_EXPERIMENT["name"], status=Experiment.DONE):
            self.stdout.write(f"  experiment {DEMO_EXPERIMENT['name']!r} already computed")
            return
        experiment = create_experiment(user=admin, dataset=dataset, launch=False, **DEMO_EXPERIMENT)
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

    def _train(
        self, admin: User, dataset: Dataset, *, learner: str, label: str, params: dict
    ) -> None:
        name = f"{label} demo: {dataset.name}"
        existing = TrainedModel.objects.filter(
            dataset=dataset, name=name, status=TrainedModel.SUCCEEDED
        )
        if existing.exists():
            self.stdout.write(f"  model {name!r} already trained")
            return
        trained = create_training(
            user=admin,
            dataset=dataset,
            learner=learner,
            params=params,
            error_matrix=dataset.error_matrices.filter(
                name=DEMO_MATRICES.get(dataset.name, DEMO_MATRIX)
            ).first()
            or default_error_matrix(dataset=dataset),
            name=name,
        )
        result = run_training(trained_model_id=trained.pk)
        if result.status != TrainedModel.SUCCEEDED:
            self.stderr.write(f"  training {name!r} failed: {result.error}")
            return
        approve_for_demo(user=admin, trained_model=result)  # demo models arrive approved
        m = result.metrics
        self.stdout.write(
            f"  trained {name!r} in {result.fit_seconds:.2f}s: "
            f"held-out accuracy {m['accuracy']:.3f}, "
            f"mean test cost {m['mean_test_cost']:.2f}, "
            f"normalized cost {m['normalized_cost'] or 0:.3f}, "
            f"total cost {m['mean_total_cost']:.2f} per patient against "
            f"{m['baselines']['order_nothing']['mean_total_cost']:.2f} ordering nothing "
            f"({m['n_test_cases']} cases)"
        )


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
