"""Compile (and cache on disk) every learner's numba kernels: for a worker machine (README).

bin/run does not wait for it: its Celery worker warms the kernels in the background as it
starts (config/celery.py).
"""

from __future__ import annotations

import argparse
import time

from django.core.management.base import BaseCommand

from diagnosis.shared import learner_registry
from diagnosis.training.services.warmup import warm_kernels


def _keys(text: str) -> frozenset[str]:
    """Comma-separated registry keys; an unknown key is an error naming the known ones."""
    keys = frozenset(key.strip() for key in text.split(",") if key.strip())
    unknown = keys - set(learner_registry.LEARNERS)
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown learner {', '.join(sorted(unknown))}; "
            f"known: {', '.join(learner_registry.LEARNERS)}"
        )
    return keys


class Command(BaseCommand):
    help = "Fit every learner once on a tiny table so its compiled kernels are ready."
    requires_system_checks: list[str] = []  # needs no URLs or database

    def add_arguments(self, parser):
        parser.add_argument(
            "--learners",
            type=_keys,
            help="only these learners (registry keys, comma-separated)",
        )
        parser.add_argument(
            "--skip",
            type=_keys,
            default=frozenset(),
            help="every learner but these (registry keys, comma-separated)",
        )

    def handle(self, *args, **options):
        chosen = set(options["learners"] or learner_registry.LEARNERS) - options["skip"]
        started = time.perf_counter()
        seconds = warm_kernels(learners=chosen)
        each = ", ".join(f"{key} {s:.1f} s" for key, s in seconds.items())
        self.stdout.write(
            f"Warmed the learners' kernels in {time.perf_counter() - started:.1f} s ({each})"
        )
