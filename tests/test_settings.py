"""config.settings read with nothing but a secret key in the environment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _settings_in_clean_env(extra: dict[str, str], statement: str) -> subprocess.CompletedProcess:
    """Runs ``statement`` after loading the settings in a fresh interpreter with only ``extra``."""
    # A fresh interpreter: this process's settings were loaded from bin/test's environment.
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), **extra}
    code = (
        "import os\nos.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings'\n"
        f"from django.conf import settings\n{statement}\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )


def test_debug_is_off_unless_asked_for(tmp_path):
    """With no DJANGO_DEBUG, DEBUG is False; DJANGO_DEBUG=true turns it on."""
    env = {"DJANGO_SECRET_KEY": "test-only", "DIAGNOSIS_VAR_DIR": str(tmp_path)}
    default = _settings_in_clean_env(env, "print(settings.DEBUG)")
    asked = _settings_in_clean_env({**env, "DJANGO_DEBUG": "true"}, "print(settings.DEBUG)")
    assert (default.returncode, default.stdout.strip()) == (0, "False"), default.stderr
    assert (asked.returncode, asked.stdout.strip()) == (0, "True"), asked.stderr


def test_settings_refuse_to_load_without_a_secret_key_when_debug_is_off(tmp_path):
    """No DJANGO_SECRET_KEY and no DJANGO_DEBUG: loading fails and says what to set."""
    result = _settings_in_clean_env({"DIAGNOSIS_VAR_DIR": str(tmp_path)}, "settings.DEBUG")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_local_hosts_are_allowed_by_default(tmp_path):
    """127.0.0.1 and localhost (where bin/run listens) are allowed hosts with no ALLOWED_HOSTS."""
    env = {"DJANGO_SECRET_KEY": "test-only", "DIAGNOSIS_VAR_DIR": str(tmp_path)}
    result = _settings_in_clean_env(env, "print(' '.join(settings.ALLOWED_HOSTS))")
    assert {"127.0.0.1", "localhost"} <= set(result.stdout.split()), result.stderr


def test_production_settings_pass_django_deploy_checks(tmp_path):
    """With only a strong secret key set, `manage.py check --deploy` reports no warning at all."""
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_SECRET_KEY": "k9-Qz" * 12,  # 60 characters, varied: passes security.W009
        "DIAGNOSIS_VAR_DIR": str(tmp_path),
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_plain_http_mode_turns_off_https_only_cookies_and_redirect(tmp_path):
    """DJANGO_HTTPS=false (bin/run on 127.0.0.1) drops the HTTPS redirect and Secure cookies."""
    env = {"DJANGO_SECRET_KEY": "test-only", "DIAGNOSIS_VAR_DIR": str(tmp_path)}
    statement = (
        "print(settings.SECURE_SSL_REDIRECT, settings.SESSION_COOKIE_SECURE,"
        " settings.CSRF_COOKIE_SECURE)"
    )
    default = _settings_in_clean_env(env, statement)
    plain = _settings_in_clean_env({**env, "DJANGO_HTTPS": "false"}, statement)
    assert default.stdout.split() == ["True", "True", "True"], default.stderr
    assert plain.stdout.split() == ["False", "False", "False"], plain.stderr


def test_a_dead_workers_task_goes_back_to_redis_after_the_longest_training(tmp_path):
    """Tasks are rejected on worker loss and Redis redelivers after TRAINING_TIME_LIMIT + 10 min."""
    env = {
        "DJANGO_SECRET_KEY": "test-only",
        "DIAGNOSIS_VAR_DIR": str(tmp_path),
        "REDIS_URL": "redis://127.0.0.1:6379/15",
        "TRAINING_TIME_LIMIT": "1200",
    }
    statement = (
        "print(settings.CELERY_TASK_ACKS_LATE, settings.CELERY_TASK_REJECT_ON_WORKER_LOST,"
        " settings.CELERY_BROKER_TRANSPORT_OPTIONS['visibility_timeout'])"
    )
    result = _settings_in_clean_env(env, statement)
    assert result.stdout.split() == ["True", "True", "1800"], result.stderr


def test_the_key_bin_run_generated_is_read_when_none_is_exported(tmp_path):
    """Without DJANGO_SECRET_KEY, var/secret_key (bin/run's) is the key: `python manage.py ...`
    works in the same folder without exporting it."""
    (tmp_path / "secret_key").write_text("generated-by-bin-run-" + "x" * 40 + "\n")
    result = _settings_in_clean_env(
        {"DIAGNOSIS_VAR_DIR": str(tmp_path)}, "print(settings.SECRET_KEY)"
    )
    assert (result.returncode, result.stdout.strip()) == (0, "generated-by-bin-run-" + "x" * 40)


def test_manage_py_under_a_python_without_django_runs_in_the_project_venv(tmp_path):
    """`python manage.py` with a Python that lacks Django (the README's command, typed in a
    plain shell) re-runs under .venv, where Django is, and answers."""
    base_python = getattr(sys, "_base_executable", sys.executable)
    lacks = subprocess.run(
        [base_python, "-c", "import django"], env={"PATH": "/usr/bin:/bin"}, capture_output=True
    )
    assert lacks.returncode != 0, f"{base_python} has Django: nothing to test"
    (tmp_path / "secret_key").write_text("k" * 50)
    result = subprocess.run(
        [base_python, str(REPO / "manage.py"), "help", "api_token"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "DIAGNOSIS_VAR_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Issue an API token" in result.stdout
