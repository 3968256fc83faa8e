"""Grade submitted lab notebooks in one command and write a gradebook (and feedback for each student).

    python -m devicelab.grading SUBMISSIONS... [--out gradebook.csv] [-j N] [--timeout S] [--feedback DIR]
                                               [--max-runs N] [--sandbox | --no-sandbox]
                                               [--warm-kernels | --no-warm-kernels]

SUBMISSIONS are notebooks or folders of notebooks (searched recursively; nbgrader's
`submitted/<student>/<assignment>/` layout is read as it is). Each run of a submission gets a throwaway world
(`world.py`): a fresh home, IPython and Jupyter folders and temporary folder, a kernel started from the
grader's own interpreter by absolute path, and the grader's private copy of devicelab, read-only, written
from the bytes the grader read and hashed when it started. With the sandbox (on by default where bubblewrap
runs) the kernel sees the machine read-only, a private /tmp and no network, and kernels start warm (`warm.py`:
forks of one interpreter that has imported torch, each inside its own sandbox; `--no-warm-kernels`: each fresh).
`-j N` grades N at once; a broken, crashing or endless submission is one row and never stops the others.

How a submission is judged. Two cells of the grader's own, which the student never sees (they are not in
the kernel's input history), surround the student's cells; each runs `kernel.py` from the private copy after
checking its SHA-256, in a fresh namespace, and keeps nothing in the kernel:

- before the first student cell, a fingerprint of what the checks rely on (torch's and the layers' methods,
  builtins, the installed devicelab, the IPython shell, sys.modules, hooks) goes to the grader;
- after the last one, the fingerprint again, what the namespace shows (`lab` or `exN` replaced or given
  attributes, `exec` or `get_ipython` rebound, callbacks or threads from the notebook), then a fresh private
  copy of devicelab is loaded (every file checked against the grader's hashes) and judges each exercise on
  its own with the student's variables and its own `lab` and `device`; a check that raises or runs past
  `--timeout` costs that exercise only. Verdicts come back in lines carrying a nonce that only this cell's
  text holds. If judging one exercise kills or hangs the kernel, the notebook is run again without judging
  it; a student cell that kills or hangs the kernel is replaced by an error and the notebook is run again,
  `--max-runs` times at most (6 by default) before the row says it gave up.

Tamper detection marks the row (column `tampered`, most serious first, then "+N more"; every finding is in
the JSON file written per submission) instead of trusting it: fingerprints that differ, the namespace
evidence, a grading cell that did not finish or printed lines without its nonce, the private copy or the
installed package or site-packages changed on disk, and the static scan of the code (`scan.py`).

Limits: the student's code and the checks share one Python process, because the checks must call the
student's functions. Code written against this grader (obfuscated, or at C level) can defeat the in-process
layers; the sandbox limits what it can reach, and a container per submission (see the instructors' page)
limits it further. Read the code of any row marked `tampered`.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import json
import logging
import os
import re
import secrets
import site
import subprocess
import sys
import time
import warnings
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path

import nbformat

from ..chapters import MODULES, exercises_for
from . import world as worlds
from .kernel import compare
from .scan import MARKER, python_of, static_findings

__all__ = ["MARKER", "Grade", "feedback", "find_notebooks", "grade", "main", "static_findings", "write_gradebook"]

# devicelab.checks' statuses, written here: that module imports torch, which the grader's worker processes do without
# (a worker drives kernels and reads notebooks; tests/test_grading.py checks that the two agree)
NOT_ATTEMPTED, INCORRECT, CORRECT = "not_attempted", "incorrect", "correct"
NOT_GRADED = "not_graded"  # the notebook stopped before this exercise could be judged
LAB_LINE = re.compile(r'^LAB = "([\w-]+)"', re.M)
LANG_LINE = re.compile(r'^LANG = "(\w+)"', re.M)
PACKAGE = Path(__file__).resolve().parent.parent
NOT_LOADED = ("grading", "__main__.py")  # the grader itself is not part of what judges
MAX_RUNS = 6  # one run, plus reruns without a cell or an exercise that killed or hung the kernel
PROBE_SECONDS = 20  # how long a kernel may take to answer after an interrupted cell
# What no kernel may read (the submissions, the gradebook, the feedback), set by main() for its workers; the
# submission's own folder is always hidden.
HIDDEN_ENV = "DEVICELAB_GRADER_HIDDEN"
SHORT_FINDINGS = 2  # how many findings the gradebook's `tampered` column shows before "+N more"

BOOT = """\
import hashlib as _hashlib, sys as _sys
with open({path!r}, "rb") as _file:
    _code = _file.read()
if _hashlib.sha256(_code).hexdigest() != {digest!r}:
    raise ImportError("the grader's kernel code changed on disk")
_namespace = {{"__name__": "devicelab_grader_kernel"}}
exec(compile(_code, {path!r}, "exec"), _namespace)
_namespace[{entry!r}]({config!r}, _sys._getframe(1).f_globals)
"""
# The cell reaches the builtins module through literals and types alone: no name a notebook can rebind
# (`exec`, `compile`, `__builtins__`) stands between it and the code it runs.
GRADER_CELL = ('[b.exec(b.compile({boot!r}, "<devicelab grader>", "exec"), '
               '{{"__name__": "devicelab_grader", "__builtins__": b}}) '
               'for c in ().__class__.__base__.__subclasses__() if c.__name__ == "BuiltinImporter" '
               'for b in [c.create_module(c.find_spec("builtins"))]];\n')
PROBE_CELL = "pass\n"

# --- the grader's own words (kept here so the feedback never depends on the student's kernel) -------
WORDS = {
    "en": {
        "title": "Feedback", "lab": "Lab", "score": "Score", "problem": "Problem seen while running",
        "tampered": "The grader found changes to what the checks rely on; an instructor will look at this "
                    "submission",
        "hint": "Hint", "not_graded": "Not graded: the notebook stopped before this exercise could be judged.",
        "correct": "correct", "incorrect": "not yet", "not_attempted": "not attempted", NOT_GRADED: "not graded",
        "grading.check_timeout": "Not yet: the check ran past {seconds} s with your answer (an endless loop?).",
        "grading.check_raised": "Not yet: your answer made the check fail: {error}",
        "grading.bad_verdict": "Not yet: the check could not judge this answer.",
        "grading.killed": "Not yet: judging this answer stopped the notebook's kernel.",
        "grading.syntax": "Not yet: cell {cell} does not run: {error}. Fix it, run the notebook from the top, "
                          "then check again.",
    },
    "zh": {
        "title": "反馈", "lab": "实验", "score": "得分", "problem": "运行时出现的问题",
        "tampered": "评分程序发现检查所依赖的对象被改动过；老师会查看这份作业",
        "hint": "提示", "not_graded": "未评分：笔记本在评判这道练习之前就停止了。",
        "correct": "正确", "incorrect": "还不对", "not_attempted": "未作答", NOT_GRADED: "未评分",
        "grading.check_timeout": "还不对：用你的答案运行检查超过了 {seconds} 秒（死循环？）。",
        "grading.check_raised": "还不对：你的答案让检查出错：{error}",
        "grading.bad_verdict": "还不对：检查无法评判这个答案。",
        "grading.killed": "还不对：评判这个答案时笔记本的内核停止了。",
        "grading.syntax": "还不对：第 {cell} 个单元格无法运行：{error}。请改正它，从头运行笔记本，再检查一次。",
    },
}
MARKS = {CORRECT: "✅", INCORRECT: "❌", NOT_ATTEMPTED: "📝", NOT_GRADED: "⏹"}


@dataclass
class Grade:
    """One submission's row in the gradebook."""

    path: Path
    lab: str = "?"
    verdicts: dict[str, str] = field(default_factory=dict)
    problem: str = ""
    shown: str = ""  # the path as the gradebook shows it: relative to the folder given
    lang: str = "en"
    messages: dict[str, str] = field(default_factory=dict)  # each exercise's reason, in `lang`
    tampered: list[str] = field(default_factory=list)  # every finding, most serious first
    seconds: float = 0.0
    student: str = ""
    problems: list[str] = field(default_factory=list)  # every problem seen (the `problem` column is their summary)
    sandbox: bool = False

    @property
    def score(self) -> int:
        """How many exercises are correct."""
        return sum(v == CORRECT for v in self.verdicts.values())


def find_notebooks(paths: list[Path]) -> list[tuple[Path, str]]:
    """The notebooks named and those inside the folders named, each with the path the gradebook shows."""
    found: list[tuple[Path, str]] = []
    for path in paths:
        if path.is_dir():
            found += [(p, p.relative_to(path).as_posix()) for p in sorted(path.rglob("*.ipynb"))]
        else:
            found.append((path, path.as_posix()))
    return [(p, shown) for p, shown in found if ".ipynb_checkpoints" not in p.parts]


def student_of(shown: str) -> str:
    """The student a submission belongs to: nbgrader's `submitted/<student>/<assignment>/`, else its first folder."""
    parts = Path(shown).parts
    if "submitted" in parts[:-1] and len(parts) - parts.index("submitted") >= 4:
        return parts[parts.index("submitted") + 1]
    return parts[0] if len(parts) > 1 else Path(shown).stem


def package_files(package: Path = PACKAGE) -> dict[str, bytes]:
    """Every file of the devicelab package (no caches), by path relative to the package: what the checks are."""
    return {p.relative_to(package).as_posix(): p.read_bytes() for p in sorted(package.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".json")}


def package_hashes(package: Path = PACKAGE) -> dict[str, str]:
    """SHA-256 of every Python file of the devicelab package, by path relative to the package."""
    return {p.relative_to(package).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(package.rglob("*.py")) if "__pycache__" not in p.parts}


def startup_state() -> str:
    """A digest of what interpreters and kernels read at start-up outside a world: site-packages (listing, .pth
    and *customize files), the account's IPython startup folders, Jupyter kernelspecs and config."""
    digest = hashlib.sha256()
    home = Path.home()
    sites = {Path(f) for f in {*site.getsitepackages(), site.getusersitepackages()}}
    others = [*home.glob(".ipython/profile_*/startup"), home / ".local/share/jupyter/kernels", home / ".jupyter",
              Path(sys.prefix) / "share/jupyter/kernels"]
    for path in sorted(sites) + sorted(others):
        if not path.is_dir():
            continue
        for entry in sorted(path.iterdir()):
            digest.update(str(entry).encode())
            inner = [entry] if entry.is_file() else sorted(entry.glob("*.json")) if path not in sites else []
            for file in inner:
                if path not in sites or file.suffix == ".pth" or file.stem in ("sitecustomize", "usercustomize"):
                    digest.update(file.read_bytes())
    return digest.hexdigest()


# --- running one submission ----------------------------------------------------------------------------
@dataclass
class _Run:
    records: dict[str, dict] = field(default_factory=dict)
    tampered: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    started: str | None = None  # the exercise being judged when the run stopped
    stopped_in: int | None = None  # the student cell that killed or hung the kernel
    setup_error: str = ""
    done: bool = False
    died: bool = False


def _quiet_logger() -> logging.Logger:
    log = logging.getLogger("devicelab.grading.kernel")
    log.propagate = False
    log.handlers = [logging.NullHandler()]
    log.setLevel(logging.CRITICAL)
    return log


def _lines(cell: nbformat.NotebookNode, nonce: str) -> tuple[list[tuple[str, object]], int]:
    """The grader's lines in a cell's stdout (kind, data), and how many marker lines lacked the nonce."""
    text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("name") == "stdout")
    return _parse_lines(text, nonce)


def _parse_lines(text: str, nonce: str) -> tuple[list[tuple[str, object]], int]:
    prefix = f"{MARKER}-{nonce} "
    found, forged = [], 0
    for line in text.splitlines():
        if not line.startswith(prefix):
            forged += MARKER in line
            continue
        kind, _, payload = line[len(prefix):].partition(" ")
        try:
            found.append((kind, json.loads(payload)))
        except ValueError:
            continue
    return found, forged


def _cell(entry: str, config: dict, package: Path, digest: str) -> nbformat.NotebookNode:
    boot = BOOT.format(path=str(package / "grading" / "kernel.py"), digest=digest, entry=entry, config=config)
    return nbformat.v4.new_code_cell(GRADER_CELL.format(boot=boot))


def _cell_error(cell: nbformat.NotebookNode) -> str:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename')}: {output.get('evalue')}"[:200]
    return ""


def _run_once(nb: nbformat.NotebookNode, config: dict, files: dict[str, bytes], skip: list[str], timeout: int,
              sandbox: bool, warm: str | None = None) -> _Run:
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    run = _Run()
    world = worlds.new_world()
    package = world.write_package(files)
    digest = hashlib.sha256(files["grading/kernel.py"]).hexdigest()
    setup_nonce, nonce = secrets.token_hex(16), secrets.token_hex(16)
    base = {**config, "package": str(package), "denied_log": str(world.root / f"denied-{nonce}")}
    setup = _cell("before", {**base, "nonce": setup_nonce}, package, digest)
    journal = world.root / f"journal-{nonce}"
    grading = _cell("judge", {**base, "nonce": nonce, "skip": skip, "seconds": timeout, "journal": str(journal)},
                    package, digest)
    probe = nbformat.v4.new_code_cell(PROBE_CELL)
    remaining = len([n for n in config["exercises"] if n not in skip])
    limits = {id(grading): timeout * (remaining + 1) + 120, id(probe): min(PROBE_SECONDS, max(timeout, 5)),
              id(setup): 300}
    replies: dict[int, dict] = {}
    manager = worlds.kernel_manager(world, sandbox, warm)
    worlds.become_subreaper()  # orphans of the kernel's processes come to this one, to be ended with it
    before = worlds.children()
    client = NotebookClient(
        nb, km=manager, timeout=timeout, allow_errors=True, interrupt_on_timeout=True, shutdown_kernel="immediate",
        error_on_timeout={"ename": "CellTimeoutError", "evalue": f"ran past {timeout} s and was interrupted",
                          "traceback": []},
        timeout_func=lambda cell: limits.get(id(cell), timeout), log=_quiet_logger(), record_timing=False,
        on_cell_executed=lambda cell, cell_index, execute_reply: replies.__setitem__(id(cell), execute_reply),
    )
    student = list(nb.cells)
    nb.cells = [setup, *student, grading, probe]  # nbclient writes each executed cell back at its index
    current = -1
    kernel_pid = None
    try:
        with client.setup_kernel(cwd=str(world.work), env=world.env(), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, cleanup_kc=True):  # the kernel dies with its world
            kernel_pid = getattr(manager.provisioner, "pid", None)  # the kernel (or its sandbox) itself
            client.execute_cell(setup, 0, store_history=False)
            for current, cell in enumerate(student):
                if cell.cell_type != "code":
                    continue
                client.execute_cell(cell, current + 1)
                reply = replies.get(id(cell), {}).get("content", {})
                if reply.get("ename") == "CellTimeoutError":
                    run.problems.append(f"cell {current + 1} ran past {timeout} s and was interrupted")
                    client.execute_cell(probe, len(student) + 2, store_history=False)
                    if replies.pop(id(probe), {}).get("content", {}).get("ename") == "CellTimeoutError":
                        run.stopped_in = current
                        run.problems[-1] = f"cell {current + 1} ran past {timeout} s and would not stop"
                        return run
            current = len(student)
            client.execute_cell(grading, len(student) + 1, store_history=False)
    except DeadKernelError:
        run.died = True
        if current < len(student):
            run.stopped_in = current
            run.problems.append(f"DeadKernelError: the kernel died in cell {current + 1}")
        else:
            run.problems.append("DeadKernelError: the kernel died while an exercise was judged")
    except Exception as error:  # noqa: BLE001 - a kernel that cannot start is one bad row
        run.problems.append(f"{type(error).__name__}: {error}".splitlines()[0][:200])
    finally:
        try:
            if manager.has_kernel:
                run_sync(manager.shutdown_kernel)(now=True)
        except Exception:  # noqa: BLE001, S110 - already gone
            pass
        left = worlds.end_leftovers(world, before, kernel_pid)
        if left:
            run.tampered.append(f"processes started by the notebook outlived its kernel and were ended: "
                                f"{', '.join(left[:3])}" + (f" and {len(left) - 3} more" if len(left) > 3 else ""))
        nb.cells = student
        _read_run(run, setup, grading, setup_nonce, nonce, current >= len(student), journal)
        changed = sorted(rel for rel, data in files.items()
                         if not (package / rel).is_file() or (package / rel).read_bytes() != data)
        if changed:
            run.tampered.append(f"the grader's private copy of devicelab was changed on disk ({', '.join(changed)})")
        world.remove()
    return run


def _read_run(run: _Run, setup: nbformat.NotebookNode, grading: nbformat.NotebookNode, setup_nonce: str,
              nonce: str, judged: bool, journal: Path | None = None) -> None:
    before = next((data for kind, data in _lines(setup, setup_nonce)[0] if kind == "fingerprint"), None)
    if before is None:
        run.setup_error = _cell_error(setup) or "the grader's first cell printed nothing"
        return
    lines, forged = _lines(grading, nonce)
    if forged:
        run.tampered.append(f"{forged} grade line(s) without the grader's nonce were printed while judging")
    fingerprints = 0
    for kind, data in lines:
        if kind == "fingerprint":
            fingerprints += 1
            if fingerprints == 1:
                run.tampered += compare(before, data)
        elif kind == "fingerprint_after_judging":
            run.tampered += [f"while judging, {f}" for f in compare(before, data) if f not in run.tampered]
        elif kind == "start":
            run.started = data
        elif kind == "verdict":
            run.records[data["name"]] = data
            run.started = None
        elif kind == "tamper":
            run.tampered += [e for e in data if e not in run.tampered]
        elif kind == "setup_error":
            run.setup_error = str(data)
        elif kind == "done":
            run.done = True
    if run.died and judged and journal is not None and journal.is_file():
        # The kernel died while judging, maybe before its last stdout lines left it: the journal (written before
        # stdout, line by line) names the exercise it had started last. Without a verdict on stdout, that exercise
        # is the one that stopped the kernel (an earlier one whose verdict was lost stays "not graded" and is judged
        # again on the next run).
        started = [data for kind, data in _parse_lines(journal.read_text(encoding="utf-8", errors="replace"),
                                                       nonce)[0] if kind == "start"]
        if started and started[-1] not in run.records:
            run.started = str(started[-1])
    if judged and not run.done and not run.died and run.started is None and not run.setup_error:
        error = _cell_error(grading)
        run.tampered.append("the grader's judging cell did not run to the end" + (f" ({error})" if error else ""))


def _first_error(nb: nbformat.NotebookNode) -> str:
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error" and output.get("ename") != "KeyboardInterrupt":
                return f"cell {index + 1}: {output.get('ename')}: {output.get('evalue')}"[:200]
    return ""


def _blanked(number: int) -> str:
    return f"raise RuntimeError('the grader skipped cell {number}: it killed or hung the kernel')\n"


def _drop_nbgrader_tests(nb: nbformat.NotebookNode) -> None:
    # nbgrader's autograded test cells assert what the grader judges itself: they would only add errors.
    nb.cells = [c for c in nb.cells if not (c.get("metadata", {}).get("nbgrader", {}).get("grade")
                                            and not c.get("metadata", {}).get("nbgrader", {}).get("solution"))]


def syntax_errors(nb: nbformat.NotebookNode) -> dict[int, str]:
    """The code cells (by index in the notebook) that do not parse, with the error."""
    found = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        try:
            ast.parse(python_of(cell.source))
        except SyntaxError as error:
            found[index] = f"SyntaxError: {error.msg} (line {error.lineno})"
    return found


def _exercise_cells(nb: nbformat.NotebookNode, names: list[str]) -> dict[str, range]:
    """For each exercise, the cells between the previous exercise's check and its own `exN.check()`."""
    spans, start = {}, 0
    for index, cell in enumerate(nb.cells):
        for name in names:
            if cell.cell_type == "code" and name not in spans and re.search(rf"^\s*{name}\.check\(", cell.source, re.M):
                spans[name] = range(start, index + 1)
                start = index + 1
    return spans


def _severity(finding: str) -> int:
    """0: the grading itself was attacked; 1: what the checks use was changed; 2: other run-time changes;
    3: what the code looks like (the static scan)."""
    if finding.startswith("code "):
        return 3
    said = finding.removeprefix("run ")
    if said.startswith(("the grader", "while judging", "the installed", "start-up code")) or "nonce" in said or \
            "private copy" in said or "outlived" in said:
        return 0
    if any(word in said for word in ("devicelab", "`lab", "`ex", "get_ipython", "rebinds", "callback", "evaluate",
                                     "thread")):
        return 1
    return 2


def summary(findings: list[str], shown: int = SHORT_FINDINGS) -> str:
    """The gradebook's `tampered` cell: the most serious findings, then "+N more"."""
    if not findings:
        return ""
    first = " | ".join(f[:160] for f in findings[:shown])
    return first + (f" | +{len(findings) - shown} more" if len(findings) > shown else "")


def grade(path: Path, timeout: int = 300, shown: str = "", files: dict[str, bytes] | None = None,
          sandbox: bool = False, max_runs: int = MAX_RUNS, warm: str | None = None,
          names: dict[str, list[str]] | None = None) -> Grade:
    """Run one submission in fresh worlds and judge each of its exercises on its own (with `files`' checks).
    `names`: each lab's exercise names, when the caller has them (a worker process then loads no chapter's module)."""
    started = time.monotonic()
    result = Grade(path, shown=shown or path.as_posix(), sandbox=sandbox)
    result.student = student_of(result.shown)
    files = files if files is not None else package_files()
    hashes = {rel: hashlib.sha256(data).hexdigest() for rel, data in files.items() if rel.endswith(".py")}
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as error:  # noqa: BLE001 - an unreadable file is one bad row
        result.problem = f"unreadable notebook: {type(error).__name__}: {error}"[:200]
        return result
    _drop_nbgrader_tests(nb)
    sources = [c.source for c in nb.cells if c.cell_type == "code"]
    lab = next((m.group(1) for s in sources if (m := LAB_LINE.search(s))), "?")
    lang = next((m.group(1) for s in sources if (m := LANG_LINE.search(s))), "en")
    result.lab, result.lang = lab, lang if lang in WORDS else "en"
    static = [f"code {e}" for e in static_findings(nb, lab)]
    if lab not in MODULES:
        result.problem = "no known LAB line: is this a lab notebook?"
        result.tampered = static
        result.seconds = round(time.monotonic() - started, 1)
        return result
    names = (names or exercise_names([lab]))[lab]
    result.verdicts = {name: NOT_GRADED for name in names}
    hidden = [str(path.resolve().parent), *filter(None, os.environ.get(HIDDEN_ENV, "").split(os.pathsep))]
    config = {"root": f"_devicelab_{secrets.token_hex(8)}", "hashes": hashes, "skip_files": list(NOT_LOADED),
              "hidden": hidden,
              "lab": lab, "lang": result.lang, "marker": MARKER, "chapter_modules": sorted(set(MODULES.values())),
              "exercises": names}
    problems: list[str] = []
    found: list[str] = []
    skip: list[str] = []
    cells = nb
    deaths = 0
    installed, site_before = (package_hashes(PACKAGE), startup_state()) if not sandbox else ({}, "")
    for _ in range(max_runs):
        executed = nbformat.from_dict(json.loads(json.dumps(cells)))
        run = _run_once(executed, config, files, skip, timeout, sandbox, warm)
        deaths += run.died
        problems += [p for p in run.problems if p not in problems]
        found += [f"run {e}" for e in run.tampered if f"run {e}" not in found]
        for name, record in run.records.items():
            result.verdicts[name] = record["status"]
            result.messages[name] = _message(record, result.lang)
        if run.setup_error:
            problems.append(f"the grader could not load its checks: {run.setup_error}")
            found.append(f"the grader could not load its checks: {run.setup_error}")
            break
        if run.started is not None:  # judging this exercise killed or hung the kernel: rerun without it
            result.verdicts[run.started] = INCORRECT
            result.messages[run.started] = WORDS[result.lang]["grading.killed"]
            problems.append(f"judging {run.started} stopped the kernel")
        elif run.stopped_in is not None:  # a student cell killed or hung it: rerun with that cell failing
            cells = nbformat.from_dict(json.loads(json.dumps(cells)))
            cells.cells[run.stopped_in].source = _blanked(run.stopped_in + 1)
        else:
            problems.append(_first_error(executed))
            break
        skip = [n for n in names if result.verdicts[n] != NOT_GRADED]
        if len(skip) == len(names):
            break
    else:
        if NOT_GRADED in result.verdicts.values():
            problems.append(f"gave up after {deaths} kernel deaths" if deaths else f"gave up after {max_runs} runs")
    if not sandbox and package_hashes(PACKAGE) != installed:  # in the sandbox both are read-only
        found.append("the installed devicelab package changed on disk while this submission ran")
    if not sandbox and startup_state() != site_before:
        found.append("start-up code changed while this submission ran "
                     "(site-packages, ~/.ipython startup or a kernelspec)")
    broken = syntax_errors(nb)
    for name, span in _exercise_cells(nb, names).items():
        cell = next((i for i in span if i in broken), None)
        if cell is not None and result.verdicts.get(name) in (NOT_ATTEMPTED, NOT_GRADED):
            result.verdicts[name] = INCORRECT
            result.messages[name] = WORDS[result.lang]["grading.syntax"].format(cell=cell + 1, error=broken[cell])
    result.tampered = sorted(found + static, key=_severity)
    result.problems = [p for p in problems if p]
    gave_up = [p for p in result.problems if p.startswith("gave up")]
    result.problem = "; ".join(gave_up + [p for p in result.problems if p not in gave_up])[:300]
    result.seconds = round(time.monotonic() - started, 1)
    return result


def _message(record: dict, lang: str) -> str:
    key = record.get("key", "")
    if key.startswith("grading."):
        try:
            return WORDS[lang][key].format(**record.get("params", {}))
        except (KeyError, IndexError, ValueError):
            return WORDS[lang].get(key, key)
    return str(record.get("message", ""))


# --- gradebook and feedback ----------------------------------------------------------------------------
def write_gradebook(grades: list[Grade], out: Path) -> None:
    """One CSV row per submission: verdicts, score, first problem, tamper evidence (short) and seconds taken."""
    names = sorted({name for g in grades for name in g.verdicts}, key=lambda n: (len(n), n))
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["submission", "student", "lab", *names, "correct", "out_of", "problem", "tampered",
                         "seconds"])
        for g in grades:
            writer.writerow([g.shown or str(g.path), g.student, g.lab, *(g.verdicts.get(n, "-") for n in names),
                             g.score, len(g.verdicts), g.problem, summary(g.tampered), g.seconds])


def details(g: Grade) -> str:
    """The full record of one submission, as JSON: every verdict and reason, every problem and finding."""
    record = asdict(g)
    record["path"] = g.shown
    record["score"] = g.score
    return json.dumps(record, ensure_ascii=False, indent=1) + "\n"


def feedback(g: Grade) -> str:
    """The feedback file for one submission (markdown, in its notebook's language): verdicts, reasons, hints."""
    from ..messages import text

    words = WORDS[g.lang]
    lines = [f"# {words['title']}: {g.shown}", "", f"{words['lab']}: {g.lab} · {words['score']}: "
             f"{g.score}/{len(g.verdicts)}", ""]
    if g.problem:
        lines += [f"{words['problem']}: {g.problem}", ""]
    if g.tampered:
        lines += [f"**{words['tampered']}.**", ""]
    exercises = {ex.name: ex for ex in exercises_for(g.lab)} if g.lab in MODULES else {}
    for name, status in g.verdicts.items():
        lines += [f"## {name} · {MARKS.get(status, '')} {words.get(status, status)}", ""]
        lines += [g.messages.get(name) or (words["not_graded"] if status == NOT_GRADED else ""), ""]
        exercise = exercises.get(name)
        if status != CORRECT and exercise is not None and exercise.hints:
            lines += [f"> {words['hint']}: {text(exercise.hints[0], g.lang)}", ""]
    return "\n".join(lines).rstrip() + "\n"


def exercise_names(labs: Iterable[str] = MODULES) -> dict[str, list[str]]:
    """Each lab's exercise names, in the notebook's order (this loads the labs' chapter modules, and torch)."""
    return {lab: [ex.name for ex in exercises_for(lab)] for lab in labs}


def _grade_job(path: str, timeout: int, shown: str, files: dict[str, bytes], sandbox: bool, max_runs: int,
               warm: str | None, names: dict[str, list[str]]) -> Grade:
    warnings.simplefilter("ignore")
    return grade(Path(path), timeout, shown, files, sandbox, max_runs, warm, names)


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number, not {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {number}")
    return number


def main(argv: list[str] | None = None) -> int:
    """Grade every submission named on the command line and write the gradebook (and feedback files)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=Path("gradebook.csv"))
    parser.add_argument("-j", "--jobs", type=int, default=1, help="submissions graded at once")
    parser.add_argument("--timeout", type=int, default=300, help="seconds a cell (or one check) may run")
    parser.add_argument("--feedback", type=Path, help="write one markdown feedback file per submission here")
    parser.add_argument("--max-runs", type=_positive, default=MAX_RUNS,
                        help=f"runs of a submission whose kernel dies or hangs, at most (default {MAX_RUNS})")
    parser.add_argument("--sandbox", action=argparse.BooleanOptionalAction, default=None,
                        help="run each kernel under bubblewrap (default: wherever it can run)")
    parser.add_argument("--warm-kernels", action=argparse.BooleanOptionalAction, default=True,
                        help="start each sandboxed kernel as a fork of one interpreter that has imported torch, "
                             "inside its own sandbox (the default; --no-warm-kernels starts each one fresh)")
    args = parser.parse_args(argv)
    sandbox = args.sandbox is not False
    if sandbox:
        problem = worlds.sandbox_problem()
        if problem is not None:
            print(f"sandbox off: {problem}; kernels run without it", file=sys.stderr)
            sandbox = False
    print(f"sandbox: {'on (bubblewrap)' if sandbox else 'off'}", file=sys.stderr)
    notebooks = find_notebooks(args.submissions)
    folder = args.feedback if args.feedback is not None else args.out.with_name(args.out.stem + "-details")
    os.environ[HIDDEN_ENV] = os.pathsep.join(str(p.resolve()) for p in (*args.submissions, args.out, folder))
    files = package_files()
    server = _warm_server(files) if sandbox and args.warm_kernels else None
    if not sandbox and args.warm_kernels:
        print("kernels: cold (warm kernels need the sandbox)", file=sys.stderr)
    try:
        ordered = _grade_all(notebooks, args.jobs, args.timeout, files, sandbox, args.max_runs,
                             server.path if server else None)
    finally:
        if server is not None:
            server.stop()
    write_gradebook(ordered, args.out)  # every kernel, and all it started, has ended: nothing can rewrite it
    for g in ordered:
        target = folder / Path(g.shown).with_suffix(".md").as_posix().lstrip("./")
        target.parent.mkdir(parents=True, exist_ok=True)
        if args.feedback is not None:
            target.write_text(feedback(g), encoding="utf-8")
        target.with_suffix(".json").write_text(details(g), encoding="utf-8")
    if any("private copy" in " ".join(g.tampered) for g in ordered):
        print("warning: a submission wrote to its copy of the checks; it is marked, the others were not affected",
              file=sys.stderr)
    print(f"gradebook: {args.out} ({len(ordered)} submissions); details: {folder}", file=sys.stderr)
    return 0


def _warm_server(files: dict[str, bytes]) -> worlds.WarmServer | None:
    """A warm kernel server that passed its check, or None (and why, on stderr)."""
    server = worlds.WarmServer()
    problem = server.problem(files)
    if problem is not None:
        server.stop()
        print(f"kernels: cold ({problem})", file=sys.stderr)
        return None
    print("kernels: warm (each a fork of one interpreter that has imported torch, inside its own bubblewrap)",
          file=sys.stderr)
    return server


def _grade_all(notebooks: list[tuple[Path, str]], jobs: int, timeout: int, files: dict[str, bytes],
               sandbox: bool, max_runs: int = MAX_RUNS, warm: str | None = None) -> list[Grade]:
    grades: dict[int, Grade] = {}

    def report(index: int, g: Grade) -> None:
        grades[index] = g
        flags = "  tampered" if g.tampered else ""
        flags += f"  ({g.problem[:80]})" if g.problem else ""
        print(f"[{len(grades)}/{len(notebooks)}] {g.shown} {g.score}/{len(g.verdicts) or '?'} {g.seconds}s{flags}",
              file=sys.stderr, flush=True)

    if jobs <= 1:
        warnings.simplefilter("ignore")
        for index, (path, shown) in enumerate(notebooks):
            report(index, grade(path, timeout, shown, files, sandbox, max_runs, warm))
    else:
        # Each worker is a fresh interpreter that imports the grader and no torch: the exercises' names come from here.
        names = exercise_names()
        with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
            futures = {pool.submit(_grade_job, str(path), timeout, shown, files, sandbox, max_runs, warm, names): index
                       for index, (path, shown) in enumerate(notebooks)}
            for future in as_completed(futures):
                report(futures[future], future.result())
    return [grades[i] for i in range(len(notebooks))]
