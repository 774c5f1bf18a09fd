"""The Celery application; configuration comes from Django settings (``CELERY_*``)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("diagnosis")
app.config_from_object("django.conf:settings", namespace="CELERY")
# The tasks live in the app (diagnosis/tasks.py).
app.autodiscover_tasks(["diagnosis"])
