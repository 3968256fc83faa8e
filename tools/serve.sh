#!/usr/bin/env bash
# Install what the site needs into .venv, then serve it at http://127.0.0.1:8000 (both languages).
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1 PIP_DISABLE_PIP_VERSION_CHECK=1
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q -r requirements.txt -e .
exec .venv/bin/mkdocs serve -a "${ADDRESS:-127.0.0.1:8000}"
