# Every command a contributor needs; each one installs what it uses.
.PHONY: serve build test notebooks outputs nbgrader bench gpu-check gpu-wheels

serve:        ## install and serve the bilingual site at http://127.0.0.1:8000
	bash tools/serve.sh

build:        ## build the site into site/ (strict)
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

test:         ## install and run the whole test suite (CPU only)
	bash tools/test.sh

notebooks:    ## regenerate labs/ and solutions/ notebooks from solutions/source/
	.venv/bin/python tools/build_notebooks.py

outputs:      ## execute the solution notebooks whose stored run (solutions/executed/, shown on the site) is stale
	.venv/bin/python tools/execute_solutions.py

nbgrader:     ## write nbgrader-course/: an nbgrader course folder (source/, config) from solutions/source/
	.venv/bin/python tools/nbgrader_course.py

bench:        ## measure the budgets: notebook times, site build time, page weights
	.venv/bin/python tools/benchmark.py

gpu-check:    ## on a CUDA machine: run every notebook on the GPU, the GPU claims, record captures
	python3 tools/gpu_check.py

gpu-wheels:   ## prepare .whl/ for running gpu-check on a CUDA machine without network (see README)
	bash tools/gpu_wheels.sh
