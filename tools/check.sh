#!/usr/bin/env bash
# The everyday tier (make check), at most 3 minutes on two cores: the unit tests, the claims that run on a CPU,
# the error index, the notebooks' staleness and same-code tests, the linter's tests, and the English solution
# notebooks under nbval. No browser, no answer banks, no grading runs, no site build: `make test` runs those.
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1
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
paths=(tests/unit tests/claims tests/errors tests/test_notebooks_in_step.py tests/test_version_comparisons.py
       tests/test_packaging.py solutions/en)
[ -d tests/lint ] && paths+=(tests/lint)
"$venv/bin/python" -m pytest -n 2 --dist loadgroup -m "not browser and not gpu" --durations=10 "${paths[@]}" "$@"
