#!/usr/bin/env bash
# Install everything the test suite needs into .venv, then run the whole suite.
# Usage: bash tools/test.sh [extra pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1 PIP_DISABLE_PIP_VERSION_CHECK=1

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's chromium for the browser test"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null
  else
    echo "chromium is missing and cannot be installed here: the browser test will be skipped" >&2
  fi
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q -r requirements-test.txt -e .
.venv/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
.venv/bin/ruff check .
.venv/bin/python -m pytest "$@"
