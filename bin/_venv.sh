# Sourced by bin/run, bin/test and bin/lint:  . bin/_venv.sh <lock file>
# Creates .venv if needed, installs the lock file's exact versions (only when the lock or
# pyproject.toml changed since the last install: a copy is kept in .venv), then the project
# itself in editable mode without dependencies, and activates the venv.
# Playwright drives Debian's /usr/bin/chromium: no browser is downloaded.
lock_file="${1:?usage: . bin/_venv.sh <lock file>}"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
installed_copy=".venv/.installed-$(basename "$lock_file")"
if ! cat "$lock_file" pyproject.toml | cmp -s - "$installed_copy" 2>/dev/null; then
  echo "bin/$(basename "$0"): installing $lock_file into .venv (a few minutes the first time)"
  pip install --quiet --disable-pip-version-check -r "$lock_file"
  pip install --quiet --disable-pip-version-check --no-deps -e .
  cat "$lock_file" pyproject.toml >"$installed_copy"
fi
unset lock_file installed_copy
