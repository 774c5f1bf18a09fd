"""Compile (and cache on disk) every learner's numba kernels: for a worker machine (README).

bin/run does not wait for it: its Celery worker warms the kernels in the background as it
starts (config/celery.py).
"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand

from diagnosis.training.services.warmup import warm_kernels


class Command(BaseCommand):
    help = "Fit every learner once on a tiny table so its compiled kernels are ready."
    requires_system_checks: list[str] = []  # needs no URLs or database

    def handle(self, *args, **options):
        started = time.perf_counter()
        seconds = warm_kernels()
        each = ", ".join(f"{key} {s:.1f} s" for key, s in seconds.items())
        self.stdout.write(
            f"Warmed the learners' kernels in {time.perf_counter() - started:.1f} s ({each})"
        )
