# Every command a contributor needs; each one installs what it uses first (tools/install.sh: once, then
# it returns at once until a requirements file changes).
.PHONY: serve build test check notebooks outputs nbgrader bench gpu-check gpu-wheels import-gpu-run install install-site lock

VENV ?= .venv
export VENV
PY := $(VENV)/bin/python
# The suite on both cores; tests that share a kernel, a process or a built site are kept together (conftest.py).
PYTEST_PARALLEL ?= -n 2 --dist loadgroup

serve:        ## install and serve the bilingual site at http://127.0.0.1:8000
	bash tools/serve.sh

build: install-site   ## build the site into site/ (strict)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

test:         ## install and run the whole test suite (CPU only), on both cores, with the 20 slowest tests
	bash tools/test.sh $(PYTEST_PARALLEL) --durations=20

check: install   ## the everyday tier, at most 3 minutes: unit tests, CPU claims, error index, English notebooks, no browser
	bash tools/check.sh

notebooks: install-site   ## regenerate labs/ and solutions/ notebooks from solutions/source/
	$(PY) tools/build_notebooks.py

outputs: install   ## execute the solution notebooks whose stored run (solutions/executed/, shown on the site) is stale (ARGS=--check only lists them)
	$(PY) tools/execute_solutions.py $(ARGS)

nbgrader: install   ## write nbgrader-course/: an nbgrader course folder (source/, config) from solutions/source/
	$(PY) tools/nbgrader_course.py

bench: install   ## measure the budgets: notebook times, site build time, page weights, the suite's tiers
	$(PY) tools/benchmark.py

gpu-check:    ## on a CUDA machine (DEVICE=mps: Apple silicon): run every notebook on the GPU, the GPU claims, record captures
	python3 tools/gpu_check.py --device $(or $(DEVICE),cuda)

gpu-wheels: install   ## prepare .whl/ for running gpu-check on a CUDA machine without network (see README)
	bash tools/gpu_wheels.sh

import-gpu-run: install   ## check a GPU run's archive (tools/verify_on_gpu.ipynb) and bring it in: ARCHIVE=<file>.zip
	@test -n "$(ARCHIVE)" || { echo "usage: make import-gpu-run ARCHIVE=devicelab-gpu-run-<commit>-cuda.zip"; exit 2; }
	$(PY) tools/import_gpu_run.py "$(ARCHIVE)"

install:      ## install everything the tests, grading and tools use into $(VENV) (quick when done)
	bash tools/install.sh dev

lock:         ## after changing a requirements file: write requirements-lock.txt (what `make install` installs when it fits)
	bash tools/lock.sh

install-site: ## install what the site and the labs use into $(VENV) (quick when done)
	bash tools/install.sh site
