"""Measure the course's budgets (DESIGN.md §7): notebook run times, site build time, page weights.

Usage: make bench    (or: python tools/benchmark.py [--skip-notebooks] [--skip-cold] [--suite | --only-suite])
Prints a table; nothing here is asserted, the figures go into the closing notes of a change.

The strict build is timed twice: warm (the committed store of executed solution notebooks is fresh, as in
CI and the deploy workflow) and cold (an empty store: the build executes every solution notebook itself).
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_NOTEBOOK_S, BUDGET_SUITE_S, BUDGET_BUILD_S = 30, 8 * 60, 60
BUDGET_CHAPTER_KB, BUDGET_LAB_KB = 300, 600
BUDGET_CHECK_S, BUDGET_TEST_S = 3 * 60, 15 * 60


def timed(args: list[str], extra_env: dict[str, str] | None = None) -> tuple[float, int]:
    """Seconds a command takes, and its exit code."""
    start = time.monotonic()
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **(extra_env or {})}
    code = subprocess.run(args, cwd=ROOT, env=env, capture_output=True).returncode
    return time.monotonic() - start, code


def stored_runs() -> tuple[int, int, float]:
    """How many solution notebooks the store holds a run of, how many are stale, and their run seconds in all."""
    sys.path.insert(0, str(ROOT / "tools"))
    import execute_solutions

    notebooks = execute_solutions.solution_notebooks()
    stale = sum(execute_solutions.staleness(p) is not None for p in notebooks)
    seconds = 0.0
    for path in execute_solutions.STORE.glob("*/*.ipynb"):
        seconds += execute_solutions.read_json(path)["metadata"][execute_solutions.META]["ran_on"]["seconds"]
    return len(notebooks), stale, seconds


def page_weight(site: Path, page: str) -> tuple[int, int, dict[str, int]]:
    """Bytes (raw, gzipped as a server sends them) of a page's HTML and the CSS and JS it loads up front."""
    html_path = site / page / "index.html"
    html = html_path.read_text(encoding="utf-8")
    parts = {"html": len(html.encode())}
    zipped = len(gzip.compress(html.encode()))
    refs = re.findall(r'<link[^>]+rel="stylesheet"[^>]+href="([^"]+)"', html)
    refs += re.findall(r'<script[^>]+src="([^"]+)"', html)
    for ref in refs:
        if ref.startswith(("http:", "https:", "//")):
            continue
        target = (html_path.parent / ref.split("?")[0]).resolve()
        if target.exists():
            parts[ref.rsplit("/", 1)[-1]] = target.stat().st_size
            zipped += len(gzip.compress(target.read_bytes()))
    return sum(parts.values()), zipped, parts


def _pytest_summary(output: str) -> str:
    """pytest's closing counts ("3690 passed, 65 skipped in 612.3s"), or '?'."""
    found = re.findall(r"^=+ (.*? in [\d.]+s.*?) =+$", output, re.M)
    return found[-1] if found else "?"


def suite_tiers() -> list[tuple[str, str, str]]:
    """Wall and CPU time of `make check` and of the whole suite as `make test` runs it (both cores), with their
    counts, and the suite's CPU seconds per group (conftest.GROUPS): CPU time shows what a change costs even on
    a busy machine."""
    sys.path.insert(0, str(ROOT / "tools"))
    import timeline

    rows = []
    for name, command, budget in (
        ("make check (the everyday tier)", ["make", "check"], f"<= {BUDGET_CHECK_S} s"),
        ("make test (the whole suite, -n 2)", ["make", "test"], f"<= {BUDGET_TEST_S} s"),
    ):
        with tempfile.TemporaryDirectory() as folder:
            cpu_file = Path(folder) / "cpu.jsonl"
            start, used = time.monotonic(), os.times()
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                                  env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "DEVICELAB_CPU": str(cpu_file)})
            seconds, after = time.monotonic() - start, os.times()
            records = timeline.read(cpu_file) if cpu_file.exists() else []
        cpu = (after.children_user - used.children_user) + (after.children_system - used.children_system)
        status = "ok" if done.returncode == 0 else "FAILED"
        rows.append((f"{name}: {_pytest_summary(done.stdout)} ({status})", f"{seconds:.0f} s", budget))
        rows.append(("  CPU seconds, everything it ran (install, ruff, pytest)", f"{cpu:.0f} s", "-"))
        for group, (group_cpu, tests) in timeline.cpu_groups(records).items():
            rows.append((f"  CPU seconds: {group} ({tests} tests)", f"{group_cpu:.0f} s", "-"))
        whole = timeline.machine(records)
        if whole is not None:
            rows.append(("  CPU seconds of the whole machine during pytest (sandboxed kernels and browsers too)",
                         f"{whole['cpu']:.0f} s", "-"))
        slowest = re.search(r"=+ slowest \d+ durations =+\n(.*?)\n\n", done.stdout, re.S)
        if slowest:
            for line in slowest.group(1).splitlines()[:10]:
                rows.append((f"  {line.strip()}", "", ""))
    return rows


def main() -> int:
    """Run every measurement and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-notebooks", action="store_true")
    parser.add_argument("--skip-cold", action="store_true", help="skip the build with an empty store (minutes)")
    parser.add_argument("--suite", action="store_true",
                        help="also time `make check` and the whole suite as `make test` runs it (tens of minutes)")
    parser.add_argument("--only-suite", action="store_true", help="time the two test tiers and nothing else")
    args = parser.parse_args()
    rows: list[tuple[str, str, str]] = []
    if args.suite or args.only_suite:
        rows += suite_tiers()
    if args.only_suite:
        args.skip_notebooks = args.skip_cold = True
    if not args.skip_notebooks:
        total = 0.0
        for notebook in sorted(ROOT.glob("labs/*/*.ipynb")) + sorted(ROOT.glob("solutions/*/*.ipynb")):
            seconds, code = timed([sys.executable, "-m", "pytest", "-q", str(notebook.relative_to(ROOT))])
            total += seconds
            status = "ok" if code == 0 else "FAILED"
            rows.append((f"notebook {notebook.relative_to(ROOT)} ({status})", f"{seconds:.1f} s",
                         f"<= {BUDGET_NOTEBOOK_S} s"))
        rows.append(("all notebooks", f"{total:.1f} s", f"<= {BUDGET_SUITE_S} s"))
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d"]
    notebooks, stale, run_seconds = stored_runs()
    rows.append((f"stored runs of solution notebooks ({notebooks} notebooks, {stale} stale)",
                 f"{run_seconds:.0f} s", "- (their execution time, all together)"))
    if not args.skip_cold:
        with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as store:
            seconds, code = timed([*build, out], {"DEVICELAB_OUTPUTS_STORE": store})
            rows.append((f"mkdocs build --strict, cold: empty store, executes {notebooks} notebooks "
                         f"({'ok' if code == 0 else 'FAILED'})", f"{seconds:.1f} s", "-"))
    with tempfile.TemporaryDirectory() as out:
        seconds, code = timed([*build, out])
        warm = "warm" if stale == 0 else f"{stale} stale runs executed first"
        rows.append((f"mkdocs build --strict, {warm} ({'ok' if code == 0 else 'FAILED'})", f"{seconds:.1f} s",
                     f"<= {BUDGET_BUILD_S} s"))
        site = Path(out)
        for lab in sorted(p.stem for p in ROOT.glob("solutions/source/*.md")):
            for page, budget in ((lab, BUDGET_CHAPTER_KB), (f"labs/{lab}", BUDGET_LAB_KB),
                                 (f"zh/labs/{lab}", BUDGET_LAB_KB), (f"solutions/{lab}", BUDGET_LAB_KB),
                                 (f"zh/solutions/{lab}", BUDGET_LAB_KB)):
                if not (site / page / "index.html").exists():
                    rows.append((f"page /{page}/", "absent", "-"))
                    continue
                size, zipped, parts = page_weight(site, page)
                detail = ", ".join(f"{k} {v / 1024:.0f}" for k, v in parts.items())
                rows.append((f"page /{page}/ raw ({detail})", f"{size / 1024:.0f} KB", f"<= {budget} KB"))
                rows.append((f"page /{page}/ gzipped, as served", f"{zipped / 1024:.0f} KB", f"<= {budget} KB"))
        index = site / "search" / "search_index.json"
        rows.append(("search index (loaded on first search)", f"{index.stat().st_size / 1024:.0f} KB", "-"))
    width = max(len(r[0]) for r in rows)
    for what, measured, budget in rows:
        print(f"{what:<{width}}  {measured:>9}  {budget}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
