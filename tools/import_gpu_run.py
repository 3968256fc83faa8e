"""Check the archive of a GPU run (tools/verify_on_gpu.ipynb, or gpu_check.py --archive) and bring it in.

Usage:  make import-gpu-run ARCHIVE=devicelab-gpu-run-<commit>-cuda.zip
        python tools/import_gpu_run.py ARCHIVE [--check]     (--check: say whether it would be accepted; write nothing)

The archive is refused, with the reason, unless all of these hold:
  - it is a GPU run's archive whose files all parse (manifest, captures, claims records, JUnit reports,
    executed notebooks);
  - it was made at this checkout's commit (HEAD), or at an earlier commit from which nothing the run
    depends on has changed (the labs, the solutions, the helper package, the tests it ran), from a
    checkout without local changes;
  - it ran on a real accelerator, CUDA or MPS, with a device name: not on the CPU, not with `meta`
    standing in for the GPU (no capture may print a `meta` device);
  - every lab of this checkout is in it: each lab and solution notebook ran and passed, each reproduce
    step was captured, and (a CUDA run) each solution's executed notebook ran this checkout's code;
  - every record agrees with the manifest: the same device type, device name, torch version and date.

When it is accepted, it writes devicelab/data/gpu_captures.json (captures merged by lab, step, torch and
device type; a CUDA run's claims records merged by test), and a CUDA run's executed solutions into
solutions/executed/. Commit both: the lab pages then say "verified on <GPU>, torch <v>, <date>" with the
captured wording beside the expected one, and the chapters' claims tables show the GPU's results.
A claims test that failed on the GPU is recorded as failed (the table says so); it does not refuse the run.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import execute_solutions  # noqa: E402
import gpu_check  # noqa: E402

from devicelab import captures  # noqa: E402

# What a GPU run depends on: an archive made at an earlier commit is accepted when none of these changed.
RUN_INPUTS = ("labs", "solutions/source", "solutions/en", "solutions/zh", "devicelab", "tests/claims",
              "tests/unit", "tools/gpu_check.py", "tools/execute_solutions.py", "pyproject.toml")
# What the import itself writes: local changes there are what a second import replaces.
WRITTEN = ("devicelab/data/", "solutions/executed/")
META_DEVICE = re.compile(r"\bmeta\b")
COMMIT = re.compile(r"^[0-9a-f]{40}$")


class Refused(Exception):
    """The archive cannot be imported; the message says why."""


class Run:
    """An accepted archive: its manifest, captures, claims records and executed notebooks."""

    def __init__(self, manifest: dict, new_captures: list[dict], claims: list[dict], executed: dict[str, dict]):
        self.manifest = manifest
        self.captures = new_captures
        self.claims = claims
        self.executed = executed  # "en/01-devices.ipynb" -> the executed notebook

    @property
    def device(self) -> str:
        """The run's device type: "cuda" or "mps"."""
        return str(self.manifest["device"])


def _json(archive: zipfile.ZipFile, name: str):
    try:
        return json.loads(archive.read(name).decode("utf-8"))
    except KeyError:
        raise Refused(f"the archive has no {name}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise Refused(f"{name} in the archive does not parse: {error}") from None


def _same(what: str, record: dict, manifest: dict, fields: tuple[str, ...]) -> None:
    for field in fields:
        if str(record.get(field, "")) != str(manifest.get(field, "")):
            raise Refused(f"{what} says {field} {record.get(field)!r}, the manifest {manifest.get(field)!r}: "
                          "the archive mixes runs")


def check_device(manifest: dict) -> None:
    """Refuse a run that did not use a real accelerator with a name."""
    device, name = str(manifest.get("device", "")), str(manifest.get("gpu", "")).strip()
    if device == "meta":
        raise Refused("the run used `meta` standing in for the GPU: a stand-in verifies nothing")
    if device not in gpu_check.DEVICES:
        raise Refused(f"the run used {device or 'no device'}, not a GPU (CUDA or MPS): nothing was verified")
    if not name or name == "-" or META_DEVICE.search(name) or name.lower() == "cpu":
        raise Refused(f"the run names no real device ({name!r}): an accelerator run records the GPU's name")


def read_archive(path: Path, commit: str, root: Path = ROOT) -> Run:
    """Read and check a GPU run's archive against this checkout at `commit`; raise Refused with the reason."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as error:
        raise Refused(f"{path} is not a readable zip archive: {error}") from None
    with archive:
        manifest = _json(archive, "manifest.json")
        if not isinstance(manifest, dict) or manifest.get("format") != gpu_check.ARCHIVE_FORMAT:
            raise Refused(f"not a GPU run's archive of this course (format {gpu_check.ARCHIVE_FORMAT} expected)")
        for field in ("commit", "device", "gpu", "torch", "date", "labs", "notebooks"):
            if field not in manifest:
                raise Refused(f"the manifest has no {field}")
        check_device(manifest)
        made_at = str(manifest["commit"])
        if not COMMIT.match(made_at):
            raise Refused(f"the run names no commit ({made_at!r}): it was not made from a git checkout")
        if made_at != commit:
            raise Refused(f"the run was made at commit {made_at[:12]}, this checkout is at {commit[:12]}")
        if manifest.get("tree_clean") is not True:
            raise Refused("the run's checkout had local changes: its results are not those of the commit")
        if not re.fullmatch(r"\d{4}-\d\d-\d\d", str(manifest["date"])):
            raise Refused(f"the manifest's date {manifest['date']!r} is not a date")
        new = _json(archive, "captures.json")
        claims = _json(archive, "claims.json")
        _json(archive, "gpu_captures.json")
        names = set(archive.namelist())
        executed = {}
        for name in sorted(names):
            if name.startswith("executed/") and name.endswith(".ipynb"):
                executed[name.removeprefix("executed/")] = _json(archive, name)
        reports = {}
        for name in sorted(names):
            if name.endswith(".xml"):
                try:
                    reports[name] = ElementTree.fromstring(archive.read(name))
                except ElementTree.ParseError as error:
                    raise Refused(f"{name} in the archive does not parse: {error}") from None
    run = Run(manifest, new, claims, executed)
    check_labs(run, reports, root)
    check_records(run, reports, root)
    if run.device == "cuda":
        check_executed(run, root)
    return run


def check_labs(run: Run, reports: dict, root: Path = ROOT) -> None:
    """Refuse unless every lab of this checkout ran, passed and was captured."""
    wanted = sorted(p.stem for p in (root / "solutions" / "source").glob("*.md"))
    if sorted(run.manifest["labs"]) != wanted:
        raise Refused(f"the run's labs {run.manifest['labs']} are not this checkout's {wanted}")
    results = {row.get("notebook"): row.get("result") for row in run.manifest["notebooks"]}
    for lab in wanted:
        for kind in ("labs", "solutions"):
            for lang in execute_solutions.LANGS:
                notebook = f"{kind}/{lang}/{lab}.ipynb"
                if notebook not in results:
                    raise Refused(f"{notebook} is not in the run")
                if results[notebook] != "ok":
                    raise Refused(f"{notebook} did not pass on the GPU ({results[notebook]}): see the archive's "
                                  "failures.txt; fix the lab, then run the notebook again")
    for notebook in results:
        if notebook.startswith("labs/"):
            report = reports.get("junit/" + notebook.replace("/", "__").removesuffix(".ipynb") + ".xml")
            if report is None:
                raise Refused(f"the archive has no JUnit report of {notebook}")
            failed = [case for case in report.iter("testcase")
                      if case.find("failure") is not None or case.find("error") is not None]
            if failed:
                raise Refused(f"the JUnit report of {notebook} has failures, yet the manifest says it passed")
    missing = sorted(gpu_check.missing_steps(run.captures, gpu_check.expected_steps()))
    if missing or run.manifest.get("missing_steps"):
        steps = ", ".join(f"{lab}/{step}" for lab, step in missing) or ", ".join(run.manifest["missing_steps"])
        raise Refused(f"no capture of {steps}: those steps did not raise on the GPU")
    if run.device == "cuda":
        for lab in wanted:
            for lang in execute_solutions.LANGS:
                if f"{lang}/{lab}.ipynb" not in run.executed:
                    raise Refused(f"the archive has no executed solution {lang}/{lab}.ipynb")


def check_records(run: Run, reports: dict, root: Path = ROOT) -> None:
    """Refuse a capture or claims record that another machine, device, torch or day could have made."""
    for capture in run.captures:
        what = f"the capture of {capture.get('lab')}/{capture.get('step')}"
        _same(what, {"device": captures.device_of(capture), **capture}, run.manifest, ("device", "gpu", "torch"))
        if not _same_run_day(str(capture.get("date", "")), str(run.manifest["date"])):
            raise Refused(f"{what} is dated {capture.get('date')!r}, the run {run.manifest['date']}: the archive "
                          "mixes runs")
        if META_DEVICE.search(str(capture.get("message", ""))):
            raise Refused(f"{what} prints a `meta` device where a GPU prints cuda:0: it was made with `meta` "
                          "standing in for the GPU")
    if run.device != "cuda":
        if run.claims:
            raise Refused("an MPS run carries claims records: the claims tests need CUDA")
        return
    if not run.claims:
        raise Refused("a CUDA run without claims records: the GPU claims tests did not run")
    for record in run.claims:
        _same(f"the claims record of {record.get('test')}", {"device": captures.device_of(record), **record},
              run.manifest, ("device", "gpu", "torch", "date"))
        test_file = root / str(record.get("test", "")).split("::", 1)[0]
        function = str(record.get("test", "")).rsplit("::", 1)[-1].split("[", 1)[0]
        if not test_file.is_file() or f"def {function}(" not in test_file.read_text(encoding="utf-8"):
            raise Refused(f"the claims record of {record.get('test')} names no test of this checkout")
    report = reports.get("claims.xml")
    if report is None:
        raise Refused("the archive has no JUnit report of the claims tests (claims.xml)")
    outcomes = [{"test": r["test"], "outcome": r["outcome"], "message": r["message"]} for r in run.claims]
    if outcomes != gpu_check.report_outcomes(report):
        raise Refused("the claims records do not say what the claims tests' JUnit report says")


def _same_run_day(day: str, started: str) -> bool:
    """True when `day` is the day a run started, or the next (a run may pass midnight)."""
    from datetime import date

    try:
        return 0 <= (date.fromisoformat(day) - date.fromisoformat(started)).days <= 1
    except ValueError:
        return False


def check_executed(run: Run, root: Path = ROOT) -> None:
    """Refuse an executed solution that ran elsewhere, or ran other code than this checkout's."""
    for name, executed in run.executed.items():
        meta = executed.get("metadata", {}).get(execute_solutions.META)
        if not isinstance(meta, dict) or "ran_on" not in meta:
            raise Refused(f"executed/{name} has no execution record")
        ran = meta["ran_on"]
        _same(f"executed/{name}", {**ran, "device": ran.get("device")}, run.manifest, ("device", "gpu", "torch"))
        notebook = root / "solutions" / name
        if not notebook.is_file():
            raise Refused(f"executed/{name} is not a solution notebook of this checkout")
        keyed = {k: v for k, v in meta.get("helper_sha256", {}).items() if not k.startswith("devicelab/data/")}
        probe = json.loads(json.dumps(executed))
        probe["metadata"][execute_solutions.META]["helper_sha256"] = {**keyed, **_data_digests(root)}
        reason = execute_solutions.staleness(notebook, stored=probe, root=root)
        if reason is not None:
            raise Refused(f"executed/{name} is not a run of this checkout: {reason}")


def _data_digests(root: Path) -> dict[str, str]:
    data = root / "devicelab" / "data"
    return {p.relative_to(root).as_posix(): execute_solutions.sha256(p.read_bytes())
            for p in sorted(data.rglob("*")) if p.is_file()}


def write(run: Run, root: Path = ROOT) -> list[Path]:
    """Bring an accepted run into the checkout: the capture file, and a CUDA run's executed solutions."""
    path = root / "devicelab" / "data" / "gpu_captures.json"
    stamped = [{**c, "device": run.device} for c in run.captures]
    captures.save(captures.merge(captures.load(path), stamped), path,
                  claims=captures.merge_claims(captures.load_claims(path),
                                               [{**c, "device": run.device} for c in run.claims]))
    written = [path]
    store = root / "solutions" / "executed"
    for name, executed in sorted(run.executed.items()) if run.device == "cuda" else []:
        target = store / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(executed, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
                          encoding="utf-8")
        written.append(target)
    gpu_check.rekey_gpu_runs(store, root)  # the capture file changed: the CUDA runs' keys follow it
    return written


def git(root: Path, *args: str) -> subprocess.CompletedProcess:
    """A git command in the checkout."""
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)


def commit_to_check(made_at: str, root: Path = ROOT) -> str:
    """The commit an archive made at `made_at` is checked against: HEAD, or `made_at` when it is as good."""
    head = git(root, "rev-parse", "HEAD").stdout.strip()
    if not head:
        raise Refused("this is not a git checkout: the archive's commit cannot be checked")
    changed = git(root, "status", "--porcelain", "--untracked-files=no", "--", *RUN_INPUTS).stdout.split("\n")
    changed = [line for line in changed if line.strip() and not any(w in line for w in WRITTEN)]
    if changed:
        raise Refused("this checkout has local changes to what the run depends on (" +
                      ", ".join(line[3:] for line in changed[:5]) + "): commit or undo them first")
    if made_at == head or not COMMIT.match(made_at):
        return head
    if git(root, "merge-base", "--is-ancestor", made_at, head).returncode != 0:
        raise Refused(f"the run was made at commit {made_at[:12]}, which is not in this checkout's history "
                      f"(HEAD is {head[:12]}): fetch it, or check out the commit that was verified")
    diff = git(root, "diff", "--name-only", made_at, head, "--", *RUN_INPUTS).stdout.split()
    diff = [name for name in diff if not name.startswith(WRITTEN)]
    if diff:
        raise Refused(f"the run was made at commit {made_at[:12]}; since then {len(diff)} files it depends on "
                      f"changed ({', '.join(diff[:5])}): run the notebook again at {head[:12]}")
    return made_at


def main(argv: list[str] | None = None) -> int:
    """Check the archive named on the command line; import it unless --check; exit 1 when it is refused."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archive", type=Path, help="the .zip the notebook or gpu_check.py --archive made")
    parser.add_argument("--check", action="store_true", help="only say whether it would be accepted")
    args = parser.parse_args(argv)
    try:
        with zipfile.ZipFile(args.archive) as archive:
            made_at = str(json.loads(archive.read("manifest.json")).get("commit", ""))
    except Exception:  # noqa: BLE001 - read_archive says what is wrong with it
        made_at = ""
    try:
        run = read_archive(args.archive, made_at)  # the archive itself first: device, labs, records
        commit_to_check(made_at)  # then its commit against this checkout
    except Refused as reason:
        print(f"REFUSED: {args.archive}: {reason}")
        return 1
    m = run.manifest
    said = {o: sum(c["outcome"] == o for c in run.claims) for o in ("passed", "failed", "skipped", "error")}
    print(f"accepted: {m['gpu']} ({m['device']}), torch {m['torch']}, CUDA {m.get('cuda') or '-'}, {m['date']}, "
          f"commit {str(m['commit'])[:12]}: {len(run.captures)} captures, {len(run.claims)} claims records ("
          + ", ".join(f"{n} {o}" for o, n in said.items()) + f"), {len(run.executed)} executed solutions")
    if said["failed"] or said["error"]:
        print("note: claims tests failed on the GPU; the chapters' tables will say so (see the archive's "
              "failures.txt)")
    if args.check:
        return 0
    for path in write(run):
        print(f"wrote {path.relative_to(ROOT)}")
    stale = [p for p in execute_solutions.solution_notebooks() if execute_solutions.staleness(p)]
    if stale:
        print(f"{len(stale)} stored solution runs are stale now (their CPU path prints the captures): "
              "run `make outputs`, then commit devicelab/data/ and solutions/executed/")
    else:
        print("commit devicelab/data/gpu_captures.json and solutions/executed/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
