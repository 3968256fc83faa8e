"""Time `devicelab lint` on the course's whole tree (budget: 10 s), configuration ignored so nothing is skipped.

    .venv/bin/python tools/bench_lint.py [--repeat 3]

Prints the number of files and findings (the labs' planted mistakes), the import time of the package (torch
included: the helper package imports it), the median time to lint everything once it is imported, and the
whole command's time. Each figure is wall-clock time, with the CPU time beside it: on a busy machine the wall
clock grows, the CPU time does not.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    """Lint the tree `--repeat` times in this process, once more from the command line, and print the times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    start, cpu = time.perf_counter(), time.process_time()
    from devicelab.lint import Config
    from devicelab.lint.core import iter_files, lint_file

    imported, imported_cpu = time.perf_counter() - start, time.process_time() - cpu
    files = list(iter_files([ROOT], Config()))
    times, cpus, problems = [], [], []
    for _ in range(args.repeat):
        start, cpu = time.perf_counter(), time.process_time()
        problems = [p for path in files for p in lint_file(path, Config())]
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "devicelab.lint", "--config", "/dev/null", "."], cwd=ROOT,
                   capture_output=True, check=False)
    command = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    command_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    print(f"{len(files)} files ({sum(f.suffix == '.ipynb' for f in files)} notebooks), {len(problems)} findings")
    print(f"import devicelab.lint (torch included): {imported:.2f} s (CPU {imported_cpu:.2f} s)")
    print(f"lint the tree: median {statistics.median(times):.2f} s (CPU {statistics.median(cpus):.2f} s) "
          f"of {args.repeat}")
    print(f"the whole command, python -m devicelab.lint .: {command:.2f} s (CPU {command_cpu:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
