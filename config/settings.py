"""Django settings of the product, all deployment choices read from the environment.

``DATABASE_URL``  database (dj-database-url); default SQLite ``var/db.sqlite3``.
``REDIS_URL``     Celery broker; unset means kombu's ``filesystem://`` transport
                  under ``var/celery/`` so a fresh install needs nothing running.
``CELERY_BROKER_URL`` overrides both.
``DJANGO_DEBUG``     debug pages and settings: off unless ``true`` (never on by accident).
``DJANGO_SECRET_KEY`` required when debug is off; unset, the key ``bin/run`` keeps in
                   ``var/secret_key`` is read.
``ALLOWED_HOSTS``  comma-separated; default ``127.0.0.1,localhost,testserver``.
``DJANGO_STATIC_ROOT`` where collectstatic puts the hashed, compressed assets (default
                   ``staticfiles/``).
``DJANGO_HTTPS``   served over TLS (directly or behind a proxy setting X-Forwarded-Proto): HSTS,
                   HTTPS redirect and Secure cookies. On unless ``false``; ``bin/run`` and
                   ``bin/test`` turn it off because they talk plain HTTP on 127.0.0.1.
``SESSION_IDLE_MINUTES`` a session ends after this long without a request (default 30).
``DJANGO_TRUSTED_PROXIES`` comma-separated addresses or networks of the reverse proxies whose
                   X-Forwarded-For names the client (default none: the socket's peer).
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("DIAGNOSIS_VAR_DIR", BASE_DIR / "var"))
# Plotly figure JSON written by the paper benchmarks (benchmarks/pruning.py, budget_rf.py,
# boosting.py, ...), shown at /research/. The default folder is committed, so a fresh clone shows
# the figures measured last; benchmarks/_figures.py computes the same default without Django.
RESEARCH_FIGURES_DIR = Path(
    os.environ.get("RESEARCH_FIGURES_DIR", BASE_DIR / "fixtures" / "research_figures")
)
SHARED_DIR = Path(os.environ.get("SHARED_DIR", BASE_DIR.parent / "shared")).resolve()


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


# Off by default: the debug page shows settings and tracebacks to whoever triggers an error.
DEBUG = _flag("DJANGO_DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
_SECRET_FILE = VAR_DIR / "secret_key"
if not SECRET_KEY and _SECRET_FILE.is_file():
    # The key bin/run generated: ``python manage.py ...`` then works in the same folder without
    # exporting it (the README's commands, as written).
    SECRET_KEY = _SECRET_FILE.read_text(encoding="utf-8").strip()
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
    "axes",
    "ninja",  # /api/v1's schema reader, served from the package's own static files
    "simple_history",  # the catalog's change history (diagnosis/catalog/models/audit.py)
    "diagnosis.apps.DiagnosisConfig",
    "diagnosis.catalog.apps.CatalogConfig",
    "diagnosis.training.apps.TrainingConfig",
    "diagnosis.clinic.apps.ClinicConfig",
    "diagnosis.bench.apps.BenchConfig",
    "diagnosis.integration.apps.IntegrationConfig",
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
    # Who made each catalog change, for django-simple-history's records.
    "simple_history.middleware.HistoryRequestMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # A request whose database connection was lost runs once more when that repeats nothing.
    "diagnosis.middleware.DatabaseRetryMiddleware",
    # Patient pages and JSON are never cached; browsers are denied sensors they never need.
    "diagnosis.middleware.PrivateResponseMiddleware",
    # A sign-in beyond the few a process hashes at once is answered 503 + Retry-After at once.
    "diagnosis.middleware.SignInLimitMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its 429 answer.
    "axes.middleware.AxesMiddleware",
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

AUTHENTICATION_BACKENDS = [
    # First, so a locked-out username is refused before its password is even checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

# Django's PBKDF2 first (stored hashes unchanged), computed on low-priority threads so that a
# crowd of sign-ins never takes the CPU from the steps (diagnosis/hashers.py); Django's other
# default hashers after it, to read hashes they made.
PASSWORD_HASHERS = [
    "diagnosis.hashers.LowPriorityPBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.BCryptSHA256PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]

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
# collectstatic (bin/run's setup; the tests' session fixture) fills it; whitenoise serves it.
STATIC_ROOT = Path(os.environ.get("DJANGO_STATIC_ROOT", BASE_DIR / "staticfiles"))
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    # vendor/plotly.min.js from the installed (locked) plotly package, not a copy in git.
    "config.staticfinders.PlotlyFinder",
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Content-hashed names (served "immutable", cached for a year) with gzip and brotli copies.
    # {% static %} needs the manifest: run collectstatic before serving.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
# Only the debug server looks in the source folders; otherwise the collected files are served.
WHITENOISE_USE_FINDERS = DEBUG
# Only the hashed names are kept (and compressed): half the work for collectstatic.
WHITENOISE_KEEP_ONLY_HASHED_FILES = not DEBUG
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
# A task whose worker process died (kill -9, out of memory) goes back to the queue, not lost.
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "diagnosis")

# Seconds a training may run. A running training beats every TRAINING_HEARTBEAT_SECONDS (5, from
# a thread, never from the fitting loop); after TRAINING_STALE_SECONDS (30) of silence its worker
# is taken for dead. The sweep (beat every TRAINING_SWEEP_SECONDS, 10, and every worker as it
# starts) then queues the training again, at most TRAINING_MAX_ATTEMPTS starts in all, or ends
# an anytime training that had stored a model as "interrupted". A dead worker is so noticed
# within stale + sweep = 40 s. A queued training whose message is neither in the broker's queue
# nor held unacknowledged by a worker (Redis restarted empty, say) is sent again by the next
# sweep, once TRAINING_SEND_GRACE_SECONDS passed since it was sent (a message moving from the
# queue to a worker is briefly in neither). Both brokers' states are read: Redis's lists and
# unacked hash, and the filesystem queue's folder (a message file present = held); a broker
# whose state cannot be read falls back to re-sending after TRAINING_RESEND_SECONDS.
TRAINING_TIME_LIMIT = int(os.environ.get("TRAINING_TIME_LIMIT", "3600"))
TRAINING_HEARTBEAT_SECONDS = float(os.environ.get("TRAINING_HEARTBEAT_SECONDS", "5"))
TRAINING_STALE_SECONDS = int(os.environ.get("TRAINING_STALE_SECONDS", "30"))
TRAINING_SWEEP_SECONDS = float(os.environ.get("TRAINING_SWEEP_SECONDS", "10"))
TRAINING_MAX_ATTEMPTS = int(os.environ.get("TRAINING_MAX_ATTEMPTS", "3"))
TRAINING_SEND_GRACE_SECONDS = float(os.environ.get("TRAINING_SEND_GRACE_SECONDS", "10"))
TRAINING_RESEND_SECONDS = int(os.environ.get("TRAINING_RESEND_SECONDS", "900"))
# A "let the data choose" training sends each candidate as a task to the experiments queue, so
# every worker there takes a share; its own worker measures whatever is still waiting.
SELECTION_FAN_OUT = _flag("SELECTION_FAN_OUT", True)
# Memory a training may take, in MB. A training whose up-front estimate (patients x tests x the
# learner's factor, services/training_memory.py) is above it is refused before it starts; the
# pool process fits under an address-space limit (RLIMIT_AS) of its size at the start of the
# fit plus this much, so a fit that asks for more fails with a MemoryError stored as the
# reason instead of taking the machine's memory. A pool process that grew past it is replaced
# after its task (Celery's worker_max_memory_per_child, in KiB). 0 turns both off.
TRAINING_MEMORY_LIMIT_MB = float(os.environ.get("TRAINING_MEMORY_LIMIT_MB", "4096"))
if TRAINING_MEMORY_LIMIT_MB > 0:
    CELERY_WORKER_MAX_MEMORY_PER_CHILD = max(int(TRAINING_MEMORY_LIMIT_MB * 1024), 1)
# Experiments (issue 14) run as many small tasks on their own queue, so training and the
# clinicians' work are never stuck behind them. A running task beats about every
# EXPERIMENT_STALE_SECONDS / 3 (at most every 10 s); after EXPERIMENT_STALE_SECONDS of silence
# its worker is taken for dead and the task is queued again, at most EXPERIMENT_MAX_ATTEMPTS
# starts. Pending tasks of an experiment nothing moved for EXPERIMENT_RESEND_SECONDS are sent
# again (the broker lost them).
EXPERIMENTS_QUEUE = os.environ.get("EXPERIMENTS_QUEUE", "experiments")
EXPERIMENT_TASK_TIME_LIMIT = int(os.environ.get("EXPERIMENT_TASK_TIME_LIMIT", "1800"))
EXPERIMENT_STALE_SECONDS = int(os.environ.get("EXPERIMENT_STALE_SECONDS", "60"))
EXPERIMENT_MAX_ATTEMPTS = int(os.environ.get("EXPERIMENT_MAX_ATTEMPTS", "3"))
EXPERIMENT_RESEND_SECONDS = int(os.environ.get("EXPERIMENT_RESEND_SECONDS", "600"))
EXPERIMENT_MAX_TASKS = int(os.environ.get("EXPERIMENT_MAX_TASKS", "20000"))
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # Redis gives an unacknowledged task to another worker after this long: longer than the
    # longest training, so a slow run is never started twice (a dead one is re-queued sooner
    # by the heartbeat sweep).
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": TRAINING_TIME_LIMIT + 600}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}

CELERY_BEAT_SCHEDULE = {
    "recover-trainings": {
        "task": "diagnosis.tasks.recover_trainings",
        "schedule": TRAINING_SWEEP_SECONDS,
        # a sweep no worker took before the next one is dropped, not piled up behind a fit
        "options": {"expires": TRAINING_SWEEP_SECONDS},
    },
    "recover-experiments": {
        "task": "diagnosis.tasks.recover_experiments",
        "schedule": 60.0,
    },
}

# ---------------------------------------------------------------- Defences
# Calls per token (or per address before a token is known) to /api/v1, counted in the cache.
API_RATE_LIMIT = os.environ.get("API_RATE_LIMIT", "600/m")
# Refused tokens per address before that address's tokens are answered 429 (the limit above
# counts only calls whose token was accepted).
API_BAD_TOKEN_LIMIT = os.environ.get("API_BAD_TOKEN_LIMIT", "20/m")
# Shared by every web process when Redis is there (so a rate limit is one count, not one per
# process); in-memory otherwise. A Redis that hangs is given up on after a second (the rate
# limits then count per process, diagnosis/integration/throttling.py) rather than holding the
# call.
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# The reverse proxies in front of this site (comma-separated addresses or networks, e.g.
# "127.0.0.1,10.0.0.0/24"). Only a request from one of them has its X-Forwarded-For read (the
# right-most address that is not one of them is the client: diagnosis/client_address.py);
# unset, the client is the socket's peer and the header is ignored.
TRUSTED_PROXIES = [
    entry.strip()
    for entry in os.environ.get("DJANGO_TRUSTED_PROXIES", "").split(",")
    if entry.strip()
]

# Wrong passwords: 5 in a row for one username from one client address lock that pair (not
# the username from everywhere: a stranger cannot lock a colleague out of their own desk) for
# 5 minutes (django-axes answers 429); a right password resets the count.
AXES_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("LOGIN_COOLOFF_MINUTES", "5")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# The client address as every other limit reads it (trusted proxies only).
AXES_CLIENT_IP_CALLABLE = "diagnosis.client_address.client_address"

# Sign-ins at once, per web process (diagnosis.middleware.SignInGate): a sign-in hashes its
# password (PBKDF2, about half a second of CPU), so a crowd of them could hold every thread while
# steps wait. SIGN_IN_CONCURRENCY hash at once, SIGN_IN_QUEUE more wait up to
# SIGN_IN_WAIT_SECONDS for a turn, and any other is answered at once: 503 with Retry-After
# (SIGN_IN_RETRY_AFTER_SECONDS) and the sign-in page asking to press "Sign in" again then.
# Kept below the threads of a web worker (config/gunicorn.py, WEB_THREADS) so steps always have
# free ones.
SIGN_IN_CONCURRENCY = int(os.environ.get("SIGN_IN_CONCURRENCY", "1"))
SIGN_IN_QUEUE = int(os.environ.get("SIGN_IN_QUEUE", "2"))
SIGN_IN_WAIT_SECONDS = float(os.environ.get("SIGN_IN_WAIT_SECONDS", "5"))
SIGN_IN_RETRY_AFTER_SECONDS = float(os.environ.get("SIGN_IN_RETRY_AFTER_SECONDS", "5"))
# The hashes run on SIGN_IN_CONCURRENCY threads per process with this nice and Linux's SCHED_IDLE
# policy (per thread): a step wanting a core gets it first. 0 keeps the normal priority.
# benchmarks/sign_in_load, 100 sign-ins at once with 3 workers on a loaded machine: concurrency 2
# and nice 10 left the steps' p95 at 2.6-3.4x their baseline, 1 and 19 at 2.0x; on a quiet one,
# nice 19 alone 1.84x, with SCHED_IDLE 1.04x and 1.67x (README of benchmarks/).
SIGN_IN_HASH_NICE = int(os.environ.get("SIGN_IN_HASH_NICE", "19"))

# Sessions end after SESSION_IDLE_MINUTES without a request, and when the browser closes.
SESSION_COOKIE_AGE = 60 * int(os.environ.get("SESSION_IDLE_MINUTES", "30"))
SESSION_SAVE_EVERY_REQUEST = True
SESSION_EXPIRE_AT_BROWSER_CLOSE = True
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
# Under /api/ a refused CSRF check answers JSON (programs read JSON), elsewhere the usual page.
CSRF_FAILURE_VIEW = "diagnosis.views.csrf.csrf_failure"

SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
HTTPS = _flag("DJANGO_HTTPS", True)
if HTTPS:
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    # A TLS-terminating proxy says the original scheme in this header (and strips it from clients).
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
