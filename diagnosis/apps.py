"""App configuration."""

from django.apps import AppConfig


class DiagnosisConfig(AppConfig):
    """The diagnosis app (project and app share the package)."""

    name = "diagnosis"
    verbose_name = "Cost-aware diagnosis"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from .roles import grant_role_permissions

        # After the permissions exist (post_migrate), so a fresh database is usable
        # by model-admins without the demo data.  After every app's migrate, not only this
        # one's: the domain apps after it in INSTALLED_APPS get their permissions later.
        post_migrate.connect(grant_role_permissions, dispatch_uid="diagnosis-role-permissions")
