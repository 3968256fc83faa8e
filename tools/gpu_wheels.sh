#!/usr/bin/env bash
# Prepare the wheels that tools/gpu_check.py needs on a CUDA machine without network access (Python 3.12,
# with torch, timm and pytest installed): nbval, ipykernel, nbclient, matplotlib and what they pull in, plus this course's
# helper package. They land in .whl/ (ignored by git); see the README's GPU section.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
rm -rf .whl && mkdir -p .whl
platforms=()
for n in 2_28 2_27 2_17 2014; do
  if [ "$n" = 2014 ]; then platforms+=(--platform manylinux2014_x86_64); else platforms+=(--platform "manylinux_${n}_x86_64"); fi
done
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  "${platforms[@]}" --platform manylinux1_x86_64 --platform any -d .whl nbval==0.11.0 ipykernel nbclient matplotlib
# Already on the H200's image: carrying a second version of these would stop the install.
for present in pytest pluggy iniconfig packaging coverage pygments psutil python_dateutil six attrs \
               typing_extensions setuptools; do
  rm -f .whl/${present}-*.whl
done
.venv/bin/python -m pip wheel -q --no-deps -w .whl .
du -sh .whl && ls .whl
