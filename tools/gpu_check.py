"""Run every lab and solution (both languages) on CUDA, plus the GPU claims tests, and record what the GPU printed.

Usage, on a machine with a CUDA GPU:   make gpu-check      (or: python tools/gpu_check.py)
On a CUDA machine without network access, where nbval is not installed, see `make gpu-wheels` and the README.

Each notebook runs with the helper in strict mode (DEVICELAB_STRICT=1): every `reproduce` step must
run on the GPU and raise its expected error. The labs run under nbval; the solutions are executed by
tools/execute_solutions.py (after the labs' captures are saved, which the runs' keys include), and their
executed copies replace the store solutions/executed/: the site's solution pages then show the GPU's
outputs ("ran on: <GPU>, torch X, date"). Without nbclient or matplotlib the solutions run under nbval too,
and the store is left alone. What each step printed is
merged into devicelab/data/gpu_captures.json (by lab, step and torch version), which the labs'
CPU path and the site read. The GPU claims tests run with --junitxml; each test's outcome, with the
GPU's name, the torch version and the date, is merged into the same file under "claims" (by test and
torch version), from which each chapter page's "what is tested where" table says what has run on a
GPU. Prints a summary table; exits non-zero on any failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devicelab import captures  # noqa: E402

REPRODUCE_STEP = re.compile(r"^@lab\.reproduce\(.*?\)\s*\n\s*def (\w+)\(", re.S | re.M)


def expected_steps() -> set[tuple[str, str]]:
    """Every (lab, step) that a lab source marks as a reproduce step."""
    steps = set()
    for source in sorted((ROOT / "solutions" / "source").glob("*.md")):
        steps |= {(source.stem, step) for step in REPRODUCE_STEP.findall(source.read_text(encoding="utf-8"))}
    return steps


def notebooks() -> list[Path]:
    """Every lab and solution notebook, both languages."""
    return sorted((ROOT / "labs").glob("*/*.ipynb")) + sorted((ROOT / "solutions").glob("*/*.ipynb"))


def can_store_outputs() -> bool:
    """True when this machine can execute the solutions into the store (nbclient; matplotlib for the plot)."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("nbclient", "matplotlib", "nbformat"))


def store_outputs(env: dict[str, str], rows: list[tuple[str, str, float]], failures: list[str]) -> list[Path]:
    """Execute every solution notebook on this machine into the store; return the entries written."""
    sys.path.insert(0, str(ROOT / "tools"))
    import execute_solutions

    written = []
    for notebook in execute_solutions.solution_notebooks():
        name = str(notebook.relative_to(ROOT))
        start = time.monotonic()
        try:
            executed = execute_solutions.execute(notebook, env=env)
        except Exception as error:  # noqa: BLE001 - every notebook gets its row; the run fails at the end
            rows.append((name, "FAILED", time.monotonic() - start))
            failures.append(f"{name}\n{type(error).__name__}: {str(error)[-3000:]}")
            continue
        ran = executed["metadata"][execute_solutions.META]["ran_on"]
        if ran["device"] != "cuda":
            failures.append(f"{name}: ran on {ran['device']}, not on the GPU: not stored")
            rows.append((name, "not on GPU", time.monotonic() - start))
            continue
        written.append(execute_solutions.write_entry(notebook, executed))
        rows.append((f"{name} (outputs stored)", "ok", time.monotonic() - start))
    return written


def run(args: list[str], env: dict[str, str]) -> tuple[int, float, str]:
    """Run a command in the repository; return its exit code, seconds and the end of its output."""
    start = time.monotonic()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    return done.returncode, time.monotonic() - start, (done.stdout + done.stderr)[-3000:]


def read_log(path: Path) -> list[dict[str, str]]:
    """The captures the notebooks logged, one JSON object a line."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def missing_steps(logged: list[dict[str, str]], wanted: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The reproduce steps that no notebook logged."""
    return wanted - {(c["lab"], c["step"]) for c in logged}


def newest_per_step(logged: list[dict[str, str]]) -> list[dict[str, str]]:
    """One capture per (lab, step, torch): the four notebooks of a lab print the same error."""
    return captures.merge([], logged)


def claims_outcomes(junit_xml: Path) -> list[dict[str, str]]:
    """Each test case of a pytest --junitxml report: its id (path::name[params]), outcome and message."""
    if not junit_xml.exists():
        return []
    found = []
    for case in ElementTree.parse(junit_xml).getroot().iter("testcase"):
        # classname is "tests.claims.test_file", or "tests.claims.test_file.TestClass" for a method
        parts = case.get("classname", "").split(".")
        modules = [part for part in parts if not part[:1].isupper()]
        classes = [part for part in parts if part[:1].isupper()]
        test = "::".join(["/".join(modules) + ".py", *classes, case.get("name", "")])
        outcome, message = "passed", ""
        for tag, name in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
            child = case.find(tag)
            if child is not None:
                outcome = name
                message = " ".join((child.get("message") or "").split())[:200]
                break
        found.append({"test": test, "outcome": outcome, "message": message})
    return found


def claims_records(outcomes: list[dict[str, str]], gpu: str, torch_version: str, cuda: str | None,
                   day: str | None = None) -> list[dict[str, str]]:
    """The verification record of one run of the GPU claims tests: each outcome with GPU, torch and date."""
    day = day or date.today().isoformat()
    return [{**o, "gpu": gpu, "torch": torch_version, "cuda": cuda or "", "date": day} for o in outcomes]


def main() -> int:
    """Run the whole GPU check and print its table."""
    import torch

    if not torch.cuda.is_available():
        print("gpu-check needs a CUDA GPU: torch.cuda.is_available() is False on this machine.")
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    log = workdir / "captures.jsonl"
    env = {**os.environ, "DEVICELAB_STRICT": "1", "DEVICELAB_CAPTURE_LOG": str(log), "PYTHONUNBUFFERED": "1"}
    env.pop("DEVICELAB_DEVICE", None)
    rows: list[tuple[str, str, float]] = []
    failures: list[str] = []
    pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    storing = can_store_outputs()
    solutions_dir = ROOT / "solutions"
    for notebook in notebooks():
        if storing and notebook.is_relative_to(solutions_dir):
            continue  # executed below, once the captures are saved
        code, seconds, tail = run([*pytest, "--nbval-lax", "--nbval-current-env", str(notebook)], env)
        name = str(notebook.relative_to(ROOT))
        rows.append((name, "ok" if code == 0 else "FAILED", seconds))
        if code != 0:
            failures.append(f"{name}\n{tail}")
    junit = workdir / "claims.xml"
    code, seconds, tail = run(
        [*pytest, "-o", "addopts=", "-m", "gpu", "-rs", f"--junitxml={junit}", "tests/claims", "tests/unit"], env
    )
    counts = re.findall(r"(\d+) (passed|failed|skipped|error)", tail)
    rows.append(("tests/claims tests/unit -m gpu", ", ".join(f"{n} {w}" for n, w in counts) or "?", seconds))
    if code != 0:
        failures.append(f"claims\n{tail}")
    logged = read_log(log)
    new = newest_per_step(logged)
    gpu = torch.cuda.get_device_name(0)
    claims = claims_records(claims_outcomes(junit), gpu, torch.__version__, torch.version.cuda)
    captures.save(
        captures.merge(captures.load(), new), claims=captures.merge_claims(captures.load_claims(), claims)
    )
    stored: list[Path] = []
    if storing:
        # After the save: each stored run's key holds the capture file as the site will have it. These runs
        # log to their own file (the labs printed the same steps), so the capture file stays as saved.
        solutions_log = workdir / "solutions-captures.jsonl"
        stored = store_outputs({**env, "DEVICELAB_CAPTURE_LOG": str(solutions_log)}, rows, failures)
        logged = logged + read_log(solutions_log)
    else:
        print("solution outputs not stored: this machine lacks nbclient or matplotlib (see `make gpu-wheels`)")
    for lab, step in sorted(missing_steps(logged, expected_steps())):
        failures.append(f"{lab}/{step}: no capture: the step did not raise on the GPU")
    print(f"\n{'what':<42} {'result':<28} {'seconds':>7}")
    for what, result, secs in rows:
        print(f"{what:<42} {result:<28} {secs:7.1f}")
    ran = {outcome: sum(c["outcome"] == outcome for c in claims) for outcome in ("passed", "failed", "skipped")}
    print(f"recorded {len(claims)} GPU claims tests: " + ", ".join(f"{n} {w}" for w, n in ran.items()))
    for capture in new:
        print(f"captured {capture['lab']}/{capture['step']} on {capture['gpu']}, torch {capture['torch']}: "
              f"{capture['message'][:90]}")
    print(f"stored the GPU's outputs of {len(stored)} solution notebooks in solutions/executed/")
    out = os.environ.get("OUT")
    if out:
        shutil.copy(captures.CAPTURE_FILE, Path(out) / "gpu_captures.json")
        for entry in stored:  # copy back into solutions/executed/<lang>/ with gpu_captures.json
            target = Path(out) / "executed" / entry.parent.name / entry.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(entry, target)
        (Path(out) / "gpu_check_failures.txt").write_text("\n\n".join(failures) or "none\n", encoding="utf-8")
    if failures:
        print("\nFAILURES:\n" + "\n\n".join(failures))
        return 1
    print("\ngpu-check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
