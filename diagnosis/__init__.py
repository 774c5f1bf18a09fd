"""Cost-aware diagnosis: the Django app (models, services, selectors, views, tasks).

Importing it has no side effects; the project configuration (settings, URLs, the Celery
app) lives in the ``config`` package.
"""
