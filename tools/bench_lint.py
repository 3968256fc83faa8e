"""Time `devicelab lint` on the course's whole tree (budget: 10 s), configuration ignored so nothing is skipped.

    .venv/bin/python tools/bench_lint.py [--repeat 3]

Prints the number of files and findings (the labs' planted mistakes), the import time of the package (torch
included: the helper package imports it) and the median time to lint everything once it is imported.
"""

from __future__ import annotations

import argparse
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
    start = time.perf_counter()
    from devicelab.lint import Config
    from devicelab.lint.core import iter_files, lint_file

    imported = time.perf_counter() - start
    files = list(iter_files([ROOT], Config()))
    times, problems = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        problems = [p for path in files for p in lint_file(path, Config())]
        times.append(time.perf_counter() - start)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "devicelab.lint", "--config", "/dev/null", "."], cwd=ROOT,
                   capture_output=True, check=False)
    command = time.perf_counter() - start
    print(f"{len(files)} files ({sum(f.suffix == '.ipynb' for f in files)} notebooks), {len(problems)} findings")
    print(f"import devicelab.lint: {imported:.2f} s; lint the tree: median {statistics.median(times):.2f} s "
          f"of {args.repeat}; the whole command (python -m devicelab.lint .): {command:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
