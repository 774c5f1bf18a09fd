"""Prints how to log in as the demo users, changing nothing (bin/run calls it on every start)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from diagnosis.management.commands.load_demo_data import demo_logins


class Command(BaseCommand):
    help = "Print the demo users' logins: the first password while it works, else 'as set'."

    def handle(self, *args, **options):
        for line in demo_logins():
            self.stdout.write(line)
