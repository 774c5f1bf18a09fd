"""Compile (and cache on disk) every learner's numba kernels: for a worker machine (README).

bin/run does not wait for it: its Celery worker warms the kernels in the background as it
starts (config/celery.py).
"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from diagnosis.shared import learner_registry
from diagnosis.training.services.warmup import warm_kernels


def _keys(text: str, known: set[str]) -> set[str]:
    keys = {k.strip() for k in text.split(",") if k.strip()}
    if unknown := sorted(keys - known):
        raise CommandError(f"unknown learners {unknown}; known: {sorted(known)}")
    return keys


class Command(BaseCommand):
    help = "Fit every learner once on a tiny table so its compiled kernels are ready."
    requires_system_checks: list[str] = []  # needs no URLs or database

    def add_arguments(self, parser):
        parser.add_argument(
            "--only", help="comma-separated learner keys to warm (default: every learner)"
        )
        parser.add_argument(
            "--skip", default="", help="comma-separated learner keys another process warms"
        )

    def handle(self, *args, **options):
        known = set(learner_registry.LEARNERS)
        only = _keys(options["only"], known) if options["only"] else None
        skip = _keys(options["skip"], known)
        started = time.perf_counter()
        seconds = warm_kernels(only=only, skip=skip)
        each = ", ".join(f"{key} {s:.1f} s" for key, s in seconds.items())
        self.stdout.write(
            f"Warmed the learners' kernels in {time.perf_counter() - started:.1f} s ({each})"
        )
