"""Demo users, the three demo datasets and one trained EG2 model each.  Safe to run again."""

from __future__ import annotations

import os

from django.contrib.auth.models import Group, Permission, User
from django.core.management.base import BaseCommand
from django.db import transaction

from diagnosis.management import demo_data
from diagnosis.models import Dataset, TrainedModel
from diagnosis.permissions import CLINICIANS, MODEL_ADMINS
from diagnosis.services.datasets import create_dataset
from diagnosis.services.training import create_training, run_training

DEMO_MATRIX = "Uniform 100"
DEMO_LEARNERS_DEFAULT = (("eg2", "EG2"),)
# Thyroid also gets paper 003's model: its history questions are free, so only the
# four blood tests are priced and the 2^4 state classifiers stay small.
DEMO_LEARNERS = {demo_data.THYROID: (("eg2", "EG2"), ("conditioned_loss", "Conditioned loss"))}


class Command(BaseCommand):
    help = (
        "Create demo users, datasets (heart, thyroid, Pima) and one trained EG2 model per dataset."
    )

    def add_arguments(self, parser):
        parser.add_argument("--no-train", action="store_true", help="Do not train the demo models.")
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
                for learner, label in DEMO_LEARNERS.get(name, DEMO_LEARNERS_DEFAULT):
                    self._train(admin, dataset, learner=learner, label=label)

    @transaction.atomic
    def _users(self) -> User:
        clinicians, _ = Group.objects.get_or_create(name=CLINICIANS)
        admins, _ = Group.objects.get_or_create(name=MODEL_ADMINS)
        admins.permissions.set(Permission.objects.filter(content_type__app_label="diagnosis"))
        clinician = self._user(
            "clinician", os.environ.get("DEMO_CLINICIAN_PASSWORD", "clinician-demo")
        )
        clinician.groups.add(clinicians)
        admin = self._user("admin", os.environ.get("DEMO_ADMIN_PASSWORD", "admin-demo"))
        admin.is_staff = admin.is_superuser = True
        admin.save(update_fields=["is_staff", "is_superuser"])
        admin.groups.add(admins)
        return admin

    def _user(self, username: str, password: str) -> User:
        user, created = User.objects.get_or_create(username=username)
        user.set_password(password)
        user.save()
        self.stdout.write(f"{'Created' if created else 'Updated'} user {username}")
        return user

    def _train(self, admin: User, dataset: Dataset, *, learner: str, label: str) -> None:
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
            params={},
            error_matrix=dataset.error_matrices.filter(name=DEMO_MATRIX).first(),
            name=name,
        )
        result = run_training(trained_model_id=trained.pk)
        if result.status != TrainedModel.SUCCEEDED:
            self.stderr.write(f"  training {name!r} failed: {result.error}")
            return
        m = result.metrics
        self.stdout.write(
            f"  trained {name!r} in {result.fit_seconds:.2f}s: "
            f"held-out accuracy {m['accuracy']:.3f}, "
            f"mean test cost {m['mean_test_cost']:.2f}, "
            f"normalized cost {m['normalized_cost'] or 0:.3f} "
            f"({m['n_test_cases']} cases)"
        )
