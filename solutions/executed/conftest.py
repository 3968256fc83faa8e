"""The executed copies of the solution notebooks are what the site shows (tools/execute_solutions.py), not tests.

nbval collects every notebook under solutions/; the notebooks it must run are solutions/en and solutions/zh.
"""

collect_ignore_glob = ["*/*.ipynb"]
