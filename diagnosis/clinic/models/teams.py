"""Care teams: a lead clinician reads (only reads) the cases of the team's members."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Team(models.Model):
    """Clinicians working together; its leads may read every member's cases (never step them).

    Membership decides patient access, so only superusers edit teams (the admin).  A lead
    also needs the ``lead-clinicians`` group (:mod:`diagnosis.permissions`): leaving the
    group, or the team, ends the access at once.
    """

    name = models.CharField(max_length=100, unique=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="teams",
        help_text="Clinicians whose cases the team's leads may read.",
    )
    leads = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="led_teams",
        help_text="Leads (also in the lead-clinicians group) who read the members' cases.",
    )

    class Meta:
        db_table = "diagnosis_team"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
