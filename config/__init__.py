"""Django project configuration: settings, URLs, WSGI entry point and the Celery app.

The Celery app is imported here so that it exists (and ``shared_task`` binds to it) as
soon as Django loads ``config.settings``; ``celery -A config`` finds it as ``celery_app``.
"""

from .celery import app as celery_app

__all__ = ["celery_app"]
