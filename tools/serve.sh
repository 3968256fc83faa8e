#!/usr/bin/env bash
# Install what the site needs into .venv, then serve it at http://127.0.0.1:8000 (both languages).
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1
bash tools/install.sh site
exec "${VENV:-.venv}/bin/python" -m mkdocs serve -a "${ADDRESS:-127.0.0.1:8000}"
