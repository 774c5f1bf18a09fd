"""Registers (or updates) an EHR allowed to call /cds-services: its JWT issuer, public keys,
browser origins, the FHIR servers its calls may name and the clinician whose cases its hook
calls open."""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from diagnosis.integration.services.cds_clients import register_client


class Command(BaseCommand):
    help = (
        "Register a CDS Hooks client: manage.py cds_client --name 'ward EHR' --issuer "
        "https://ehr.example --clinician USERNAME (--jwks-url URL | --jwks-file keys.json) "
        "[--origin https://ehr.example ...] [--fhir-server https://ehr.example/fhir ...]"
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help="Which EHR this is.")
        parser.add_argument("--issuer", required=True, help="The iss claim of its JWTs.")
        parser.add_argument("--clinician", required=True, help="The username its calls act as.")
        parser.add_argument("--jwks-url", default="", help="Where the EHR serves its JWKS.")
        parser.add_argument("--jwks-file", default="", help="A file holding its public JWKS.")
        parser.add_argument(
            "--origin", action="append", default=[], help="A browser origin for CORS (repeat)."
        )
        parser.add_argument(
            "--fhir-server",
            action="append",
            default=[],
            help="A FHIR base URL its calls may name as fhirServer (repeat); any other is refused.",
        )

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username=options["clinician"]).first()
        if user is None:
            raise CommandError(f"There is no user {options['clinician']!r}.")
        jwks = None
        if options["jwks_file"]:
            try:
                jwks = json.loads(Path(options["jwks_file"]).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise CommandError(f"Cannot read the JWKS file: {exc}") from None
        try:
            client = register_client(
                name=options["name"],
                issuer=options["issuer"],
                clinician=user,
                jwks=jwks,
                jwks_url=options["jwks_url"],
                allowed_origins=options["origin"],
                fhir_servers=options["fhir_server"],
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stdout.write(
            f"CDS Hooks client {client.pk}: {client.name}, issuer {client.issuer}, acting as "
            f"{user}; origins: {', '.join(client.allowed_origins) or 'none'}; FHIR servers: "
            f"{', '.join(client.fhir_servers) or 'none'}."
        )
