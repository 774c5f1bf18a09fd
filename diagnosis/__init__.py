"""Cost-aware diagnosis: the Django project and app (one package)."""

from .celery import app as celery_app

__all__ = ["celery_app"]
