"""Django settings of the product, all deployment choices read from the environment.

``DATABASE_URL``  database (dj-database-url); default SQLite ``var/db.sqlite3``.
``REDIS_URL``     Celery broker; unset means kombu's ``filesystem://`` transport
                  under ``var/celery/`` so a fresh install needs nothing running.
``CELERY_BROKER_URL`` overrides both.
``DJANGO_DEBUG``     debug pages and settings: off unless ``true`` (never on by accident).
``DJANGO_SECRET_KEY`` required when debug is off (``bin/run`` keeps one in ``var/secret_key``).
``ALLOWED_HOSTS``  comma-separated; default ``127.0.0.1,localhost,testserver``.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("DIAGNOSIS_VAR_DIR", BASE_DIR / "var"))
# Plotly figure JSON written by the benchmark scripts (paper 003's sweeps), shown at /research/.
RESEARCH_FIGURES_DIR = Path(os.environ.get("RESEARCH_FIGURES_DIR", BASE_DIR / "benchmarks" / "out"))
SHARED_DIR = Path(os.environ.get("SHARED_DIR", BASE_DIR.parent / "shared")).resolve()


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


# Off by default: the debug page shows settings and tracebacks to whoever triggers an error.
DEBUG = _flag("DJANGO_DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY must be set unless DJANGO_DEBUG=true "
            "(bin/run generates one in var/secret_key)"
        )
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")
    if h.strip()
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "diagnosis.apps.DiagnosisConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Every page needs a login unless its view is marked login_not_required.
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}", conn_max_age=60, conn_health_checks=True
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web process and the Celery worker write the same file: wait for locks
    # instead of failing, and take the write lock up front to avoid deadlocks.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 30, "transaction_mode": "IMMEDIATE"}
    )
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    VAR_DIR.mkdir(parents=True, exist_ok=True)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # No manifest: tests and runserver work without collectstatic having run.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Before collectstatic has run (tests, first start) whitenoise serves from the finders instead;
# an existing (empty) STATIC_ROOT keeps it from warning on every request.
WHITENOISE_USE_FINDERS = True
try:
    STATIC_ROOT.mkdir(exist_ok=True)
except OSError:
    pass

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# ---------------------------------------------------------------- Celery
REDIS_URL = os.environ.get("REDIS_URL", "")
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or REDIS_URL or "filesystem://"
if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_QUEUE_DIR = VAR_DIR / "celery"
    for _sub in ("queue", "processed", "control"):
        (CELERY_QUEUE_DIR / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_QUEUE_DIR / "queue"),
        "data_folder_out": str(CELERY_QUEUE_DIR / "queue"),
        "processed_folder": str(CELERY_QUEUE_DIR / "processed"),
        "store_processed": False,
        # Without this kombu writes its broadcast exchange files into the working directory.
        "control_folder": str(CELERY_QUEUE_DIR / "control"),
    }
    # The filesystem transport has no broadcast: no remote control, mingle or gossip.
    CELERY_WORKER_ENABLE_REMOTE_CONTROL = False
# Training state lives in the database (TrainedModel), so no result backend.
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "diagnosis")

# Seconds a training may run, and after which a silent "running" model is failed.
TRAINING_TIME_LIMIT = int(os.environ.get("TRAINING_TIME_LIMIT", "3600"))
TRAINING_STALE_SECONDS = int(os.environ.get("TRAINING_STALE_SECONDS", "600"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}

CELERY_BEAT_SCHEDULE = {
    "fail-stale-trainings": {
        "task": "diagnosis.tasks.fail_stale_trainings",
        "schedule": 60.0,
    },
}
