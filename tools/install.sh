#!/usr/bin/env bash
# Install what the course's commands need into a virtual environment, once: every make target calls this.
#
# Usage: bash tools/install.sh [serve|site|dev] [--browser]
#   serve      requirements-site.txt and the devicelab package without dependencies: build and serve the site only
#              (no torch; its own environment, .venv-site by default, so that it stays small)
#   site       requirements.txt and the devicelab package (build and serve the site, run the labs)
#   dev        requirements-test.txt as well, and the notebooks' `python3` kernel (tests, grading, nbgrader, bench)
#   --browser  Debian's chromium and CJK fonts for the browser tests (with apt-get, when run as root)
# VENV names the environment (default .venv). A stamp inside it remembers what the requirement files held when
# they were installed: a second call with the same files and the same checkout returns at once.
set -euo pipefail
cd "$(dirname "$0")/.."
level="${1:-dev}"
browser=""
[ "${2:-}" = "--browser" ] && browser=1
venv="${VENV:-.venv}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

# Debian packages (chromium and CJK fonts for the browser tests, bubblewrap for the grader's sandbox) install in
# the background, with one apt-get update, while pip works; the script waits for both.
apt_packages=()
if [ -n "$browser" ] && ! command -v chromium >/dev/null 2>&1; then
  apt_packages+=(chromium fonts-noto-cjk)
  why="Debian's chromium for the browser tests"
fi
if [ "$level" = dev ] && ! command -v bwrap >/dev/null 2>&1; then
  apt_packages+=(bubblewrap)
  why="${why:+$why and }Debian's bubblewrap for the grader's sandbox"
fi
apt_pid=""
if [ ${#apt_packages[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing $why"
    ( apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_packages[@]}" >/dev/null ) &
    apt_pid=$!
  else
    echo "cannot install ${apt_packages[*]} here (not root, or no apt-get): without chromium the browser tests" \
      "are skipped; without bubblewrap the grader runs kernels without its sandbox" >&2
  fi
fi
wait_for_apt() {
  if [ -n "$apt_pid" ]; then
    wait "$apt_pid" || { echo "apt-get install ${apt_packages[*]} failed" >&2; exit 1; }
    apt_pid=""
  fi
}
trap wait_for_apt EXIT

case "$level" in
  serve) files=(requirements-site.txt pyproject.toml) ;;
  site) files=(requirements.txt requirements-site.txt pyproject.toml) ;;
  dev) files=(requirements.txt requirements-site.txt requirements-test.txt pyproject.toml) ;;
  *) echo "usage: tools/install.sh [serve|site|dev] [--browser]" >&2; exit 2 ;;
esac
want="$(cat "${files[@]}" | sha256sum | cut -c1-16) $(pwd)"
stamp="$venv/.devicelab-installed-$level"
fresh() {  # is the stamp of level $1 current?
  local files_of=(requirements.txt requirements-site.txt pyproject.toml)
  [ "$1" = serve ] && files_of=(requirements-site.txt pyproject.toml)
  [ "$1" = dev ] && files_of=(requirements.txt requirements-site.txt requirements-test.txt pyproject.toml)
  [ -x "$venv/bin/python" ] && [ -f "$venv/.devicelab-installed-$1" ] &&
    [ "$(cat "$venv/.devicelab-installed-$1")" = "$(cat "${files_of[@]}" | sha256sum | cut -c1-16) $(pwd)" ]
}
if fresh "$level" || { [ "$level" = site ] && fresh dev; }; then
  exit 0
fi

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# A venv comes with the pip of the Python that made it (23.2 on Python 3.11). pip 26 chooses among an index's
# files several times faster: resolving requirements-test.txt took 55 s with pip 23.2 and 28 s with 26.3.
"$venv/bin/pip" install -q "pip==26.3"
# pip byte-compiles what it installs one file at a time (47 s for the 12,000 files of this environment on one
# core); compileall spreads the same work over every core afterwards. A file that does not compile (a template
# with a .py name) is skipped, as pip skips it.
pip_install=("$venv/bin/pip" install -q --no-compile)
# requirements-lock.txt (tools/lock.sh) holds the resolution of requirements-test.txt for one platform. Where it
# fits, nothing is left to resolve: two pips install it at once, the CUDA libraries and triton in one, torch and
# the other packages in the other (about twenty seconds each on one core), and `pip check` confirms
# that every requirement holds. Where it does not fit, or that fails, pip resolves requirements-test.txt itself.
lock=requirements-lock.txt
lock_fits() {
  [ -f "$lock" ] &&
    [ "$(bash tools/lock.sh --key "$venv/bin/python")" = "$(grep -E '^# (requirements|platform): ' "$lock")" ]
}
install_locked() {
  local pins heavy
  pins="$(grep -v '^#' "$lock")"
  heavy="$(grep -E '^(nvidia-|triton==)' <<<"$pins")"
  # the course's own package (an editable build, a few seconds on one core) after the libraries, beside torch
  { "${pip_install[@]}" --no-deps -r <(echo "$heavy") && "${pip_install[@]}" --no-deps -e .; } &
  local heavy_pid=$! ok=0
  "${pip_install[@]}" --no-deps -r <(grep -v -E '^(nvidia-|triton==)' <<<"$pins") || ok=1
  wait "$heavy_pid" || ok=1
  [ "$ok" = 0 ] && "$venv/bin/pip" check >/dev/null
}
if [ "$level" = serve ]; then
  "${pip_install[@]}" -r requirements-site.txt
  "${pip_install[@]}" --no-deps -e .
elif [ "$level" = site ]; then
  "${pip_install[@]}" -r requirements.txt -e .
else
  if ! lock_fits; then
    [ -f "$lock" ] && echo "$lock does not fit these requirement files or this platform (make lock): resolving"
    "${pip_install[@]}" -r requirements-test.txt -e .
  elif ! install_locked; then
    echo "installing $lock failed: resolving requirements-test.txt instead"
    "${pip_install[@]}" -r requirements-test.txt -e .
  fi
  # The notebooks and the answer banks start kernels by the name `python3`: this environment's Python.
  "$venv/bin/python" -m ipykernel install --sys-prefix --name python3 >/dev/null
fi
# jsonschema (under nbformat, nbgrader and Jupyter's servers) imports every format checker it finds when it is first
# imported. rfc3987-syntax, the `iri` checker that jupyter-events pulls in, builds 39 Earley parsers there: 1.5
# CPU-seconds in every process that imports nbformat (24 processes in one run of the test suite: the test workers, the
# site build, nbgrader, the grader). No notebook or Jupyter schema uses that format, and jsonschema skips a checker
# that is not installed, so it is removed once the requirements are in.
if compgen -G "$venv/lib/python3*/site-packages/rfc3987_syntax-*.dist-info" >/dev/null; then
  "$venv/bin/pip" uninstall -q -y rfc3987-syntax
fi
# The packages' own test folders (a sixth of the source: numpy's, sympy's, networkx's, ...) are never imported here.
"$venv/bin/python" -m compileall -qq -j 0 -x '/tests?/' "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" ||
  true
wait_for_apt
echo "$want" > "$stamp"
