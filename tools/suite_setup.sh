# Sourced by tools/test.sh and tools/check.sh once the environment is installed: what both tiers set and do before
# pytest starts.
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
