#!/usr/bin/env bash
# Prepare the wheels that tools/gpu_check.py needs on a CUDA machine without network access (Python 3.12,
# with torch, timm, pytest and matplotlib installed): nbval, ipykernel, nbclient and what they pull in. The
# course's helper runs from the copy itself, not from a wheel. They land in .whl/ (ignored by git); see the README's GPU section. It also writes
# .devicelab-tree (the commit and its files' object ids), by which a copy without .git proves its commit.
set -euo pipefail
cd "$(dirname "$0")/.."
for ignored in /.whl/ /.devicelab-tree; do
  grep -qx "$ignored" .git/info/exclude 2>/dev/null || echo "$ignored" >> .git/info/exclude
done
{ git rev-parse HEAD; git ls-files -s; } > .devicelab-tree
git diff --quiet HEAD || echo "warning: local changes: a run of this copy will not count as the commit's" >&2
rm -rf .whl && mkdir -p .whl
platforms=()
for n in 2_28 2_27 2_17 2014; do
  if [ "$n" = 2014 ]; then platforms+=(--platform manylinux2014_x86_64); else platforms+=(--platform "manylinux_${n}_x86_64"); fi
done
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  "${platforms[@]}" --platform manylinux1_x86_64 --platform any -d .whl nbval==0.11.0 ipykernel nbclient
# What a PyTorch CUDA image already holds (torch needs numpy; matplotlib comes with most): carrying a
# second copy of these would shadow the machine's own.
for present in pytest pluggy iniconfig packaging coverage pygments psutil python_dateutil six attrs \
               typing_extensions setuptools numpy matplotlib contourpy cycler fonttools kiwisolver pillow \
               pyparsing jinja2 markupsafe; do
  rm -f .whl/${present}-*.whl
done
du -sh .whl && ls .whl
