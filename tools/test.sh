#!/usr/bin/env bash
# Install everything the test suite needs into .venv (and Debian's chromium), then run the whole suite.
# Usage: bash tools/test.sh [extra pytest arguments]    (make test adds: -n 2 --dist loadgroup --durations=20)
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1 PIP_DISABLE_PIP_VERSION_CHECK=1
bash tools/install.sh dev --browser
source tools/suite_setup.sh  # OpenMP threads, the course compiled once, ruff
"$venv/bin/python" -m pytest "$@"
