#!/usr/bin/env python
"""Django's command-line utility for the diagnosis project."""

import os
import sys
from pathlib import Path


def _in_project_venv() -> None:
    """Re-run under the project's ``.venv`` (made by bin/run) when this Python lacks Django, so
    ``python manage.py ...`` works as the README writes it, from any shell."""
    try:
        import django  # noqa: F401
    except ModuleNotFoundError:
        venv = Path(__file__).resolve().parent / ".venv"
        python = venv / "bin" / "python"
        if python.is_file() and Path(sys.prefix).resolve() != venv.resolve():
            os.execv(str(python), [str(python), *sys.argv])
        raise SystemExit(
            "Django is not installed for this Python: run bin/run once (it makes .venv), "
            "or use .venv/bin/python manage.py ..."
        ) from None


def main() -> None:
    _in_project_venv()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
