#!/usr/bin/env bash
# Install what the site needs (no torch) into .venv-site, then serve it at http://127.0.0.1:8000 (both languages).
# Building the site runs no notebook: the solution pages show the stored runs of solutions/executed/ (a stale
# one is shown as it is, and the log says so; `make outputs` in the full environment refreshes them).
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1
export VENV="${SITE_VENV:-.venv-site}"
export DEVICELAB_OUTPUTS="${DEVICELAB_OUTPUTS:-stored}"
bash tools/install.sh serve
exec "$VENV/bin/python" -m mkdocs serve -a "${ADDRESS:-127.0.0.1:8000}"
