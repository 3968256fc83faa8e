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

On Apple silicon, `make gpu-check DEVICE=mps` (python tools/gpu_check.py --device mps) runs the labs and the
solutions on MPS and records their captures as MPS captures, beside the CUDA ones (the site shows MPS wording
where it differs). It runs no claims tests (they need CUDA) and leaves solutions/executed/ alone.

`--archive PATH` also writes one zip file with everything the run produced (captures, claims records, the
JUnit reports, the executed solutions, the device's name, the torch and CUDA versions, the commit):
tools/verify_on_gpu.ipynb makes one on Colab, and `make import-gpu-run ARCHIVE=...` checks it and brings
it into a checkout (tools/import_gpu_run.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
import zipfile
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devicelab import captures  # noqa: E402
from devicelab.devices import environment_report, on_colab  # noqa: E402

ARCHIVE_FORMAT = "devicelab-gpu-run/1"
DEVICES = captures.DEVICES  # what a run may use: "cuda" or "mps"

NOTEBOOK_TIMEOUT_S = 900  # one notebook, on any GPU (nbclient also stops a cell after 600 s)
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


def execute_apart(notebook: Path, env: dict[str, str]) -> dict:
    """execute_solutions.execute(notebook) in a process of its own (so that several run at once)."""
    with tempfile.TemporaryDirectory(prefix="gpu-check-run-") as folder:
        target = Path(folder) / "executed.json"
        code = ("import json, os, sys; from pathlib import Path; sys.path.insert(0, sys.argv[3]); "
                "import execute_solutions as e; executed = e.execute(Path(sys.argv[1]), env=dict(os.environ)); "
                "Path(sys.argv[2]).write_text(json.dumps(executed))")
        done = subprocess.run([sys.executable, "-c", code, str(notebook), str(target), str(ROOT / "tools")],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=NOTEBOOK_TIMEOUT_S)
        if done.returncode != 0:
            raise RuntimeError((done.stdout + done.stderr)[-3000:])
        return json.loads(target.read_text(encoding="utf-8"))


def store_outputs(env: dict[str, str], rows: list[tuple[str, str, float]], failures: list[str],
                  device: str = "cuda", store: Path | None = None, jobs: int = 1) -> list[Path]:
    """Execute every solution notebook on this machine's `device`, `jobs` at a time; return the entries written.

    They go into the store (solutions/executed/), or into `store` when it is given (an MPS run keeps
    them out of the store: the site shows the CUDA run's outputs).
    """
    sys.path.insert(0, str(ROOT / "tools"))
    import execute_solutions

    def one(notebook: Path) -> tuple[Path, dict | Exception, float]:
        start = time.monotonic()
        try:
            return notebook, execute_apart(notebook, env), time.monotonic() - start
        except Exception as error:  # noqa: BLE001 - every notebook gets its row; the run fails at the end
            return notebook, error, time.monotonic() - start

    written = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for notebook, executed, seconds in pool.map(one, execute_solutions.solution_notebooks()):
            name = str(notebook.relative_to(ROOT))
            if isinstance(executed, Exception):
                rows.append((name, "FAILED", seconds))
                failures.append(f"{name}\n{type(executed).__name__}: {str(executed)[-3000:]}")
                print(f"{name}: FAILED ({seconds:.0f} s)", flush=True)
                continue
            ran = executed["metadata"][execute_solutions.META]["ran_on"]
            if ran["device"] != device:
                failures.append(f"{name}: ran on {ran['device']}, not on the GPU: not stored")
                rows.append((name, "not on GPU", seconds))
                continue
            if not ran.get("gpu"):  # the run's probe names CUDA GPUs only
                ran["gpu"] = environment_report(torch_device(device))["gpu"]
            if store is None:
                written.append(execute_solutions.write_entry(notebook, executed))
            else:
                target = store / notebook.parent.name / notebook.name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(executed, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
                                  encoding="utf-8")
                written.append(target)
            rows.append((f"{name} (outputs stored)", "ok", seconds))
            print(f"{name}: executed ({seconds:.0f} s)", flush=True)
    return written


def torch_device(device: str):
    """torch.device(device), imported late: the bookkeeping above needs no torch."""
    import torch

    return torch.device(device)


def run(args: list[str], env: dict[str, str], timeout: float = NOTEBOOK_TIMEOUT_S) -> tuple[int, float, str]:
    """Run a command in the repository; return its exit code, seconds and the end of its output."""
    start = time.monotonic()
    try:
        done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as late:
        text = (late.stdout or b"").decode(errors="replace") if isinstance(late.stdout, bytes) else (late.stdout or "")
        return 124, time.monotonic() - start, (text + f"\nstopped after {timeout} s")[-3000:]
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
    return report_outcomes(ElementTree.parse(junit_xml).getroot())


def report_outcomes(report: ElementTree.Element) -> list[dict[str, str]]:
    """Each test case of a parsed JUnit report: its id, outcome and message (see claims_outcomes)."""
    found = []
    for case in report.iter("testcase"):
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


def accelerator_problem(device: str) -> str | None:
    """Why this machine cannot run the check on `device`, or None when it can."""
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        return "gpu-check needs a CUDA GPU: torch.cuda.is_available() is False on this machine."
    if device == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            return "gpu-check DEVICE=mps needs Apple's MPS: torch.backends.mps.is_available() is False here."
    if device not in DEVICES:
        return f"gpu-check runs on {' or '.join(DEVICES)}, not on {device}: nothing else can verify the labs."
    return None


def machine_facts(device, day: str | None = None) -> dict[str, object]:
    """What the run's archive says about the machine: device type and name, torch, CUDA, Python, platform."""
    import torch

    report = environment_report(device)
    return {
        "device": device.type,
        "gpu": report["gpu"] if report["gpu"] != "-" else "",
        "torch": torch.__version__,
        "cuda": torch.version.cuda or "",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "colab": on_colab(),
        "date": day or date.today().isoformat(),
    }


TREE_FILE = ".devicelab-tree"  # `git rev-parse HEAD` and `git ls-files -s`, for a copy without .git


def git_blob(data: bytes) -> str:
    """The object id git gives a file with these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def git_state(root: Path = ROOT) -> tuple[str, bool]:
    """The checkout's commit and whether its tracked files are as committed ("" and False outside git).

    A copy without .git (sent to a CUDA machine without network) proves its commit with TREE_FILE,
    written by `make gpu-wheels`: the commit, then each tracked file's mode, object id and path. The copy
    is clean only when every one of those files is there with those exact bytes.
    """
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                check=True).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                 capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return tree_file_state(root)
    return commit, not changed


def tree_file_state(root: Path = ROOT) -> tuple[str, bool]:
    """The commit named by TREE_FILE and whether every file it lists is here unchanged."""
    listing = root / TREE_FILE
    if not listing.is_file():
        return "", False
    commit, *entries = listing.read_text(encoding="utf-8").splitlines()
    if not re.fullmatch(r"[0-9a-f]{40}", commit.strip()) or not entries:
        return "", False
    for entry in entries:
        info, _, path = entry.partition("\t")
        mode, blob = info.split()[:2]
        if mode == "160000":  # a submodule: its files are not the commit's
            continue
        file = root / path
        if mode == "120000":  # a symbolic link: git stores where it points
            data = os.readlink(file).encode() if file.is_symlink() else None
        else:
            data = file.read_bytes() if file.is_file() else None
        if data is None or git_blob(data) != blob:
            return commit.strip(), False
    return commit.strip(), True


def labs() -> list[str]:
    """Every lab of this checkout, by id (01-devices ...)."""
    return sorted(p.stem for p in (ROOT / "solutions" / "source").glob("*.md"))


def rekey_gpu_runs(store: Path | None = None, root: Path = ROOT) -> list[Path]:
    """Keep the stored solution runs made on CUDA fresh after the capture file changed; return those rekeyed.

    A stored run's key includes every file of devicelab/data/, because the CPU path prints the captures.
    On CUDA nothing reads them: a reproduce step raises for real and a measurement measures. So a CUDA
    run's outputs stay what they were when captures of other steps, devices or torch versions arrive.
    """
    sys.path.insert(0, str(ROOT / "tools"))
    import execute_solutions

    store = store or execute_solutions.STORE
    data = {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / "devicelab" / "data").rglob("*")) if p.is_file()}
    done = []
    for entry in sorted(store.glob("*/*.ipynb")):
        executed = execute_solutions.read_json(entry)
        meta = executed.get("metadata", {}).get(execute_solutions.META)
        if not meta or meta.get("ran_on", {}).get("device") != "cuda":
            continue
        keyed = {name: digest for name, digest in meta.get("helper_sha256", {}).items()
                 if not name.startswith("devicelab/data/")}
        if {**keyed, **data} != meta.get("helper_sha256"):
            meta["helper_sha256"] = dict(sorted({**keyed, **data}.items()))
            entry.write_text(json.dumps(executed, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
                             encoding="utf-8")
            done.append(entry)
    return done


def write_archive(path: Path, manifest: dict[str, object], files: dict[str, bytes]) -> Path:
    """One zip file: manifest.json and the run's files (captures, claims, JUnit reports, executed notebooks)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps({"format": ARCHIVE_FORMAT, **manifest}, indent=1,
                                                     ensure_ascii=False) + "\n")
        for name, data in sorted(files.items()):
            archive.writestr(name, data)
    return path


def notebook_rows(rows: list[tuple[str, str, float]]) -> list[dict[str, object]]:
    """The notebooks' rows of the summary table, for the archive's manifest."""
    return [{"notebook": what.split(" ")[0], "result": result, "seconds": round(secs, 1)}
            for what, result, secs in rows if what.split(" ")[0].endswith(".ipynb")]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: --device cuda|mps (default: $DEVICE, else cuda), --archive PATH and --jobs N."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=os.environ.get("DEVICE") or "cuda",
                        help="cuda (default) or mps (Apple silicon); also read from $DEVICE")
    parser.add_argument("--archive", type=Path, help="also write the run's archive (a .zip) here")
    parser.add_argument("--jobs", "-j", type=int, default=int(os.environ.get("GPU_CHECK_JOBS") or 1),
                        help="notebooks run at once (default 1; each holds its own CUDA context)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the whole GPU check and print its table."""
    args = parse_args(argv)
    device = args.device.strip().lower()
    jobs = max(1, args.jobs)
    problem = accelerator_problem(device)
    if problem:
        print(problem)
        return 2
    import torch

    started = time.monotonic()
    commit, clean = git_state()
    facts = machine_facts(torch.device(device))
    workdir = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    log = workdir / "captures.jsonl"
    (workdir / "junit").mkdir()
    env = {**os.environ, "DEVICELAB_STRICT": "1", "DEVICELAB_CAPTURE_LOG": str(log), "PYTHONUNBUFFERED": "1",
           "DEVICELAB_DEVICE": device}
    rows: list[tuple[str, str, float]] = []
    failures: list[str] = []
    reports: dict[str, Path] = {}
    pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    storing = can_store_outputs()
    solutions_dir = ROOT / "solutions"
    labs_now = [nb for nb in notebooks() if not (storing and nb.is_relative_to(solutions_dir))]

    def lab_run(notebook: Path) -> tuple[str, int, float, str]:
        name = str(notebook.relative_to(ROOT))
        report = workdir / "junit" / (name.replace("/", "__").removesuffix(".ipynb") + ".xml")
        reports[f"junit/{report.name}"] = report
        return (name, *run([*pytest, "--nbval-lax", "--nbval-current-env", f"--junitxml={report}",
                            str(notebook)], env))

    # (solutions are executed below, once the captures are saved)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for name, code, seconds, tail in pool.map(lab_run, labs_now):
            rows.append((name, "ok" if code == 0 else "FAILED", seconds))
            print(f"{name}: {rows[-1][1]} ({seconds:.0f} s)", flush=True)
            if code != 0:
                failures.append(f"{name}\n{tail}")
    junit = workdir / "claims.xml"
    claims: list[dict[str, str]] = []
    if device == "cuda":
        code, seconds, tail = run(
            [*pytest, "-o", "addopts=", "-m", "gpu", "-rs", "--continue-on-collection-errors",
             f"--junitxml={junit}", "tests/claims", "tests/unit"],
            env)
        counts = re.findall(r"(\d+) (passed|failed|skipped|error)", tail)
        rows.append(("tests/claims tests/unit -m gpu", ", ".join(f"{n} {w}" for n, w in counts) or "?", seconds))
        print(f"claims tests on the GPU: {rows[-1][1]} ({seconds:.0f} s)", flush=True)
        if code != 0:
            failures.append(f"claims\n{tail}")
        claims = [{**c, "device": device}
                  for c in claims_records(claims_outcomes(junit), str(facts["gpu"]), str(facts["torch"]),
                                          str(facts["cuda"]), day=str(facts["date"]))]
    else:
        rows.append(("tests/claims tests/unit -m gpu", "not run: CUDA only", 0.0))
    logged = read_log(log)
    new = [{**c, "device": device} for c in newest_per_step(logged)]
    captures.save(
        captures.merge(captures.load(), new), claims=captures.merge_claims(captures.load_claims(), claims)
    )
    rekeyed = rekey_gpu_runs()
    stored: list[Path] = []
    if storing:
        # After the save: each stored run's key holds the capture file as the site will have it. These runs
        # log to their own file (the labs printed the same steps), so the capture file stays as saved.
        solutions_log = workdir / "solutions-captures.jsonl"
        stored = store_outputs({**env, "DEVICELAB_CAPTURE_LOG": str(solutions_log)}, rows, failures, device,
                               store=None if device == "cuda" else workdir / "executed", jobs=jobs)
        logged = logged + read_log(solutions_log)
    else:
        print("solution outputs not stored: this machine lacks nbclient or matplotlib (see `make gpu-wheels`)")
    missing = sorted(missing_steps(logged, expected_steps()))
    for lab, step in missing:
        failures.append(f"{lab}/{step}: no capture: the step did not raise on the GPU")
    table = [f"\n{'what':<42} {'result':<28} {'seconds':>7}"]
    table += [f"{what:<42} {result:<28} {secs:7.1f}" for what, result, secs in rows]
    ran = {outcome: sum(c["outcome"] == outcome for c in claims)
           for outcome in ("passed", "failed", "skipped", "error")}
    table.append(f"recorded {len(claims)} GPU claims tests: " + ", ".join(f"{n} {w}" for w, n in ran.items()))
    table += [f"captured {c['lab']}/{c['step']} on {c['gpu']}, torch {c['torch']}: {c['message'][:90]}"
              for c in new]
    where = "solutions/executed/" if device == "cuda" else "the archive only (an MPS run)"
    table.append(f"stored the {device} outputs of {len(stored)} solution notebooks in {where}")
    if rekeyed:
        table.append(f"kept {len(rekeyed)} stored CUDA runs fresh with the new capture file")
    print("\n".join(table))
    out = os.environ.get("OUT")
    if out:
        shutil.copy(captures.CAPTURE_FILE, Path(out) / "gpu_captures.json")
        for entry in stored:  # copy back into solutions/executed/<lang>/ with gpu_captures.json
            target = Path(out) / "executed" / entry.parent.name / entry.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(entry, target)
        (Path(out) / "gpu_check_failures.txt").write_text("\n\n".join(failures) or "none\n", encoding="utf-8")
    if args.archive:
        files = {name: path.read_bytes() for name, path in reports.items() if path.exists()}
        if junit.exists():
            files["claims.xml"] = junit.read_bytes()
        files["captures.json"] = json.dumps(new, indent=1, ensure_ascii=False).encode()
        files["claims.json"] = json.dumps(claims, indent=1, ensure_ascii=False).encode()
        files["gpu_captures.json"] = captures.CAPTURE_FILE.read_bytes()
        files["summary.txt"] = "\n".join(table).encode()
        files["failures.txt"] = ("\n\n".join(failures) or "none\n").encode()
        for entry in stored:
            files[f"executed/{entry.parent.name}/{entry.name}"] = entry.read_bytes()
        manifest = {
            "commit": commit, "tree_clean": clean, **facts, "seconds": round(time.monotonic() - started), "jobs": jobs,
            "labs": labs(), "notebooks": notebook_rows(rows), "claims": ran, "captures": len(new),
            "missing_steps": [f"{lab}/{step}" for lab, step in missing], "failures": len(failures),
        }
        print(f"\narchive: {write_archive(args.archive, manifest, files)}")
    if failures:
        print("\nFAILURES:\n" + "\n\n".join(failures))
        return 1
    print("\ngpu-check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
