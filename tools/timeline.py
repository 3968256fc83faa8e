"""Where the two workers of `make test` spend their time, and the costs the scheduler orders its work by.

`make test` with DEVICELAB_TIMELINE=FILE writes one JSON line per phase of each test (root conftest.py).
This reads such a file and prints each worker's busy and idle seconds, the wall time, and the costliest
scheduling units (a notebook, an xdist group, or a single test). With --write it stores the unit costs in
tests/durations.json, which the scheduler (root conftest.py) uses to hand out the costliest units first, so
that no long unit starts last while the other worker waits.

With DEVICELAB_CPU=FILE, each test process also writes the CPU seconds of each test (its kernels, subprocesses and
browser included: a process that is still running counts as it goes, read from /proc); `--cpu FILE` prints them per
group (answer banks, grading, site, notebooks, learner walks, ...) and the costliest units: CPU seconds show what a
change costs even on a busy machine. The process that started the run also writes how busy the whole machine was
meanwhile: what no test process saw (processes that start and end between two tests' readings with no one of ours
waiting for them, other work on the machine) is the difference.

Usage: python tools/timeline.py FILE [--write] [--top N]
       python tools/timeline.py --cpu FILE [--top N]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conftest import DURATIONS, GROUPS, scope_of  # noqa: E402 - the scheduler's own notion of a unit


def read(path: Path) -> list[dict]:
    """The phases recorded in a timeline file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("timeline", type=Path, nargs="?")
    parser.add_argument("--write", action="store_true", help=f"store the unit costs in {DURATIONS.name}")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--cpu", type=Path, help="a DEVICELAB_CPU file: CPU seconds per group and unit")
    args = parser.parse_args()
    if args.cpu:
        return cpu_report(read(args.cpu), args.top)
    if args.timeline is None:
        parser.error("give a timeline file, or --cpu FILE")
    phases = read(args.timeline)
    if not phases:
        print("empty timeline", file=sys.stderr)
        return 1
    start, stop = min(p["start"] for p in phases), max(p["stop"] for p in phases)
    busy: dict[str, float] = collections.defaultdict(float)
    last: dict[str, float] = {}
    units: dict[str, float] = collections.defaultdict(float)
    for phase in phases:
        seconds = phase["stop"] - phase["start"]
        busy[phase["worker"]] += seconds
        last[phase["worker"]] = max(last.get(phase["worker"], 0.0), phase["stop"])
        units[scope_of(phase["id"])] += seconds
    wall = stop - start
    print(f"wall time of the tests: {wall:.0f} s; {len(units)} units")
    for worker in sorted(busy):
        print(f"  {worker}: busy {busy[worker]:.0f} s, done {last[worker] - start:.0f} s after the start, "
              f"idle {wall - busy[worker]:.0f} s")
    print(f"costliest {args.top} units:")
    for scope, seconds in sorted(units.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"  {seconds:7.1f} s  {scope}")
    if args.write:
        kept = {scope: round(seconds, 1) for scope, seconds in sorted(units.items()) if seconds >= 1.0}
        DURATIONS.write_text(json.dumps(kept, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {len(kept)} unit costs (those of 1 s or more) to {DURATIONS.relative_to(ROOT)}")
    return 0


def cpu_groups(records: list[dict]) -> dict[str, tuple[float, int]]:
    """{group: (CPU seconds, tests)}, in the order of conftest.GROUPS, then "other" and "session"."""
    order = [name for _, name in GROUPS] + ["other", "session"]
    found: dict[str, list[float]] = {}
    for record in tests_and_processes(records):
        entry = found.setdefault(record["group"], [0.0, 0])
        entry[0] += record["cpu"]
        entry[1] += record["group"] != "session"
    return {name: (round(found[name][0], 1), found[name][1]) for name in dict.fromkeys(order) if name in found}


def tests_and_processes(records: list[dict]) -> list[dict]:
    """The records of tests and test processes, without the whole machine's (see machine())."""
    return [r for r in records if r["group"] != "machine"]


def machine(records: list[dict]) -> dict | None:
    """The whole machine's busy CPU seconds while the run lasted (conftest.machine_busy_seconds): the run that started
    first ended last, so its record is the largest one (a pytest that a test starts writes its own)."""
    found = [r for r in records if r["group"] == "machine"]
    return max(found, key=lambda r: r["cpu"]) if found else None


def cpu_report(records: list[dict], top: int) -> int:
    """Print the CPU seconds of a run per group and its costliest units."""
    whole = machine(records)
    records = tests_and_processes(records)
    if not records:
        print("empty CPU file", file=sys.stderr)
        return 1
    total = sum(r["cpu"] for r in records)
    print(f"CPU seconds of the tests: {total:.0f} s in {sum(r['group'] != 'session' for r in records)} tests")
    if whole is not None:
        print(f"  the whole machine was busy {whole['cpu']:.0f} CPU-s in the {whole['wall']:.0f} s the run lasted; "
              f"{whole['cpu'] - total:.0f} s are not counted above: processes that started and ended between two "
              "readings with none of ours waiting for them, and any other work on the machine")
    for name, (seconds, tests) in cpu_groups(records).items():
        print(f"  {name:<16} {seconds:8.1f} s  {100 * seconds / total:5.1f} %  {tests:5d} tests")
    units: dict[str, float] = collections.defaultdict(float)
    for record in records:
        if record["group"] != "session":
            units[scope_of(record["id"])] += record["cpu"]
    print(f"costliest {top} units by CPU:")
    for scope, seconds in sorted(units.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {seconds:7.1f} s  {scope}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
