#!/usr/bin/env bash
# Install everything the test suite needs into .venv (and Debian's chromium), then run the whole suite.
# Usage: bash tools/test.sh [extra pytest arguments]    (make test adds: -n 2 --dist loadgroup --durations=20)
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1 PIP_DISABLE_PIP_VERSION_CHECK=1
bash tools/install.sh dev --browser
venv="${VENV:-.venv}"
# Two workers on two cores: one OpenMP thread per process, or torch's spinning threads fight for the cores.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# The suite starts hundreds of Python processes (kernels, the command-line tools, torchrun's ranks): each reads the
# course's modules compiled once (__pycache__, which git ignores) instead of compiling them again, also where the
# shell sets PYTHONDONTWRITEBYTECODE (the unit, lint, error and claim tiers took 188 CPU-s with it set, 164 without,
# from a checkout with no __pycache__ yet). The real projects' files under tests/lint are read as text, never imported.
unset PYTHONDONTWRITEBYTECODE
"$venv/bin/python" -m compileall -qq -j 0 -x 'tests/lint/(realworld|fixtures)/' devicelab tools tests conftest.py
"$venv/bin/python" -m ruff check .
"$venv/bin/python" -m pytest "$@"
