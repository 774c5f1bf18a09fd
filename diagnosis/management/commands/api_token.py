"""Issues a bearer token for /api/v1 as a user, printing it once (only its hash is kept)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from diagnosis.integration.services.api_tokens import issue_api_token


class Command(BaseCommand):
    help = "Issue an API token acting as USERNAME: manage.py api_token USERNAME --name 'ward EHR'"

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", required=True, help="Which system will use the token.")
        parser.add_argument("--days", type=int, default=365, help="Valid for this many days.")

    def handle(self, *args, username: str, name: str, days: int, **options):
        owner = get_user_model().objects.filter(username=username).first()
        if owner is None:
            raise CommandError(f"There is no user {username!r}.")
        try:
            token, plain = issue_api_token(issuer=None, owner=owner, name=name, valid_days=days)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stdout.write(plain)
        self.stderr.write(
            f"Token {token.prefix}… for {owner} ({name}), valid until {token.expires_at:%Y-%m-%d}. "
            "It is shown only now; send it as 'Authorization: Bearer <token>'."
        )
