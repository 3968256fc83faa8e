"""Time the grader on the honest notebooks of every lab (each lab's solution in Chinese and its untouched student
version in English: 18 submissions), graded three ways: warm kernels in the sandbox (the default), cold kernels in
the sandbox (`--no-warm-kernels`), and cold kernels without it (`--no-sandbox`).

    .venv/bin/python tools/bench_grading.py [-j 2] [--modes warm cold no-sandbox]

For each way: the wall-clock time of the whole command, the CPU time the whole machine was busy meanwhile (from
/proc/stat: the kernels in the sandbox are nobody's waited-for children, so no process's own account holds their
CPU time), the mean of the gradebook's `seconds` column, and whether every row got the verdicts an honest notebook
deserves. Run it on an otherwise idle machine: the machine's figure counts whatever else runs.
"""

from __future__ import annotations

import argparse
import csv
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = {"warm": ["--sandbox", "--warm-kernels"], "cold": ["--sandbox", "--no-warm-kernels"],
         "no-sandbox": ["--no-sandbox"]}


def busy_seconds() -> float:
    """CPU seconds the whole machine has been busy since it started (every core, idle and I/O wait left out)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / 100  # USER_HZ


def submissions(folder: Path) -> int:
    for source in sorted((ROOT / "solutions" / "source").glob("*.md")):
        lab = source.stem
        shutil.copy(ROOT / "solutions" / "zh" / f"{lab}.ipynb", folder / f"{lab}-solved.ipynb")
        shutil.copy(ROOT / "labs" / "en" / f"{lab}.ipynb", folder / f"{lab}-untouched.ipynb")
    return len(list(folder.glob("*.ipynb")))


def honest(row: dict) -> bool:
    wanted = "correct" if row["submission"].endswith("-solved.ipynb") else "not_attempted"
    statuses = {row[k] for k in row if re.fullmatch(r"ex\d+", k) and row[k] != "-"}
    return statuses == {wanted} and not row["tampered"] and not row["problem"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="devicelab-bench-grading-") as tmp:
        folder = Path(tmp) / "submissions"
        folder.mkdir()
        count = submissions(folder)
        print(f"{count} submissions, -j {args.jobs}")
        for mode in args.modes:
            out = Path(tmp) / f"{mode}.csv"
            busy, start = busy_seconds(), time.monotonic()
            done = subprocess.run([sys.executable, "-m", "devicelab.grading", str(folder), "--out", str(out),
                                   "-j", str(args.jobs), *MODES[mode]], capture_output=True, text=True)
            wall, cpu = time.monotonic() - start, busy_seconds() - busy
            if done.returncode != 0:
                print(f"{mode:>10}: failed: {done.stderr[-500:]}")
                continue
            rows = list(csv.DictReader(out.open(encoding="utf-8")))
            kernels = next((line for line in done.stderr.splitlines() if line.startswith("kernels:")), "")
            seconds = sum(float(r["seconds"]) for r in rows) / len(rows)
            print(f"{mode:>10}: {wall:6.1f} s wall, {cpu:6.1f} CPU-s busy ({cpu / len(rows):4.1f} a submission), "
                  f"{seconds:4.1f} s a row; {sum(map(honest, rows))}/{len(rows)} graded as honest"
                  + (f"; {kernels}" if kernels else ""))


if __name__ == "__main__":
    main()
