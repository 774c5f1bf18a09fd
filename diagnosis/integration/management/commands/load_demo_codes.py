"""Gives the demo datasets present their FHIR codes (``fixtures/fhir/demo_codes.json``)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from diagnosis.integration.services.codes import load_demo_codes


class Command(BaseCommand):
    help = "Map the demo datasets' tests to LOINC (or local) codes and their classes to codes."

    def handle(self, *args, **options):
        for line in load_demo_codes() or ["Demo codes: nothing to add"]:
            self.stdout.write(line)
