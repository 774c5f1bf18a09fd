"""Cost-aware diagnosis: the Django side.  Its domain apps are ``catalog``, ``training``,
``clinic``, ``bench`` and ``integration``; the core (this package's own modules) holds the
roles, middleware, error pages and the migrations that record how the tables came to be.

Importing it has no side effects; the project configuration (settings, URLs, the Celery
app) lives in the ``config`` package.
"""
