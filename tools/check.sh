#!/usr/bin/env bash
# The everyday tier (make check), at most 3 minutes on two cores: the unit tests, the claims that run on a CPU,
# the error index, the notebooks' staleness and same-code tests, the linter's tests, and the English solution
# notebooks under nbval. No browser, no answer banks, no grading runs, no site build: `make test` runs those.
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1
source tools/suite_setup.sh  # OpenMP threads, the course compiled once, ruff
paths=(tests/unit tests/claims tests/errors tests/test_notebooks_in_step.py tests/test_version_comparisons.py
       tests/test_packaging.py solutions/en)
[ -d tests/lint ] && paths+=(tests/lint)
"$venv/bin/python" -m pytest -n 2 --dist loadgroup -m "not browser and not gpu" --durations=10 "${paths[@]}" "$@"
