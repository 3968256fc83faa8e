"""Grade submitted lab notebooks in one command and write a gradebook (and feedback for each student).

    python -m devicelab.grading SUBMISSIONS... [--out gradebook.csv] [-j N] [--timeout S] [--feedback DIR]

SUBMISSIONS are notebooks or folders of notebooks (searched recursively). Each one runs in a kernel
of its own, in a throwaway folder; `-j N` runs N of them at once. A broken, crashing or endless
submission is one row of the gradebook and never stops the others.

How a submission is judged. The grader runs the student's cells between two cells of its own, which
the student cannot see (they are not in the kernel's input history):

- Before any student code, it loads a fresh private copy of the devicelab package under a random
  module name, from a read-only copy of the grader's own package files made when grading starts,
  checking each file against the SHA-256 the grader computed itself. It creates the lab (language,
  device) and the exercises from that copy, and records what the checks depend on: the methods of
  torch.Tensor, nn.Module, the nn layers and the optimizers, the torch, nn, functional and optim
  modules, the builtins, the installed devicelab modules and classes (and the code objects of their
  functions), sys.modules, sys.stdout, trace and profile hooks.
- After the last student cell, each exercise is judged on its own by the private copy, with the
  student's variables and the lab's own `lab` and `device`: a check that raises or runs past
  `--timeout` costs that exercise only (❌ with the reason). If judging one exercise kills or hangs
  the kernel, the notebook is run again without judging it. A student cell that kills or hangs the
  kernel is replaced by an error and the notebook is run again.
- Verdicts come back on stdout in lines carrying a random token that only the grading cell knows,
  so a submission that prints grade lines forges nothing.

Tamper detection marks the row (column `tampered`) instead of trusting it:

- at run time, anything recorded before the student's code that is different after it (a patched
  `torch.Tensor.to`, `Exercise.evaluate`, `devicelab.checks.CORRECT`, a replaced `sys.modules`
  entry or `sys.stdout`, a trace hook, an IPython event callback or a thread defined in the
  notebook, `lab` or `lab.exercises` replaced), checked before and after judging;
- statically, in the submission's code: assignments, `setattr` or `del` on devicelab, torch,
  `builtins`, `sys` (but `sys.path` and `torch.backends`), `lab` or `exN`; edits of `sys.modules`;
  trace, profile and audit hooks; `gc` object walks; `ctypes`; `exec`, `eval`, `compile`,
  `__import__`; IPython event callbacks; the grade-line marker in a string;
- the grader's copy of the devicelab files is hashed again after each submission.

Limits: the student's code and the checks share one Python process, because the checks must call
the student's functions. Code written to attack this grader in particular (walking the garbage
collector or the stack frames to reach the private copy, C-level memory edits, obfuscated code that
the static scan cannot read) can defeat these checks; they catch the usual patches, not a
determined attacker. Submissions are code: grade them inside a container or a throwaway machine,
and read the code of any row marked `tampered`.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import json
import logging
import re
import secrets
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

import nbformat

from .chapters import MODULES, exercises_for
from .checks import CORRECT, INCORRECT, NOT_ATTEMPTED

NOT_GRADED = "not_graded"  # the notebook stopped before this exercise could be judged
MARKER = "DEVICELAB-GRADE"
LAB_LINE = re.compile(r'^LAB = "([\w-]+)"', re.M)
LANG_LINE = re.compile(r'^LANG = "(\w+)"', re.M)
PACKAGE = Path(__file__).resolve().parent
NOT_LOADED = ("grading.py", "__main__.py")  # the grader itself is not part of what judges
MAX_RUNS = 6  # one run, plus reruns without a cell or an exercise that killed or hung the kernel
PROBE_SECONDS = 20  # how long a kernel may take to answer after an interrupted cell

# --- the code that runs inside the kernel ----------------------------------------------------------
# Executed (with store_history=False) before the first student cell; `install` returns the function
# the grading cell calls. It must only use what exists before the student's code runs.
KERNEL_CODE = r'''
import builtins, contextlib, hashlib, importlib, importlib.abc, importlib.util, io, json, os, signal, sys
import threading, types

BUILTIN_NAMES = ("isinstance", "issubclass", "len", "callable", "getattr", "setattr", "hasattr", "type",
                 "iter", "next", "range", "print", "repr", "str", "int", "float", "bool", "list", "tuple",
                 "dict", "set", "sorted", "sum", "any", "all", "min", "max", "abs", "zip", "enumerate",
                 "map", "filter", "open", "exec", "eval", "compile", "__import__", "id", "hash", "object",
                 "super", "vars", "format", "round", "BaseException", "Exception", "StopIteration",
                 "KeyboardInterrupt", "TimeoutError", "RuntimeError", "TypeError", "ValueError")


class GradingTimeout(BaseException):
    """Raised by the grader's alarm when one check runs too long (not an Exception: checks catch those)."""


def install(config):
    root, package, hashes = config["root"], config["package"], config["hashes"]
    _open, _exec, _compile, _sha = builtins.open, builtins.exec, builtins.compile, hashlib.sha256

    class VerifiedLoader(importlib.abc.Loader):
        def __init__(self, path, rel):
            self.path, self.rel = path, rel

        def create_module(self, spec):
            return None

        def exec_module(self, module):
            with _open(self.path, "rb") as handle:
                data = handle.read()
            if _sha(data).hexdigest() != hashes.get(self.rel):
                raise ImportError(f"devicelab/{self.rel} changed on disk since the grader started")
            _exec(_compile(data, self.path, "exec"), module.__dict__)

    class PrivateFinder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if fullname != root and not fullname.startswith(root + "."):
                return None
            parts = fullname.split(".")[1:]
            base = os.path.join(package, *parts)
            if os.path.isfile(os.path.join(base, "__init__.py")):
                file, rel, where = os.path.join(base, "__init__.py"), "/".join([*parts, "__init__.py"]), [base]
            elif os.path.isfile(base + ".py"):
                file, rel, where = base + ".py", "/".join(parts) + ".py", None
            else:
                return None
            return importlib.util.spec_from_file_location(
                fullname, file, loader=VerifiedLoader(file, rel), submodule_search_locations=where)

    finder = PrivateFinder()
    sys.meta_path.insert(0, finder)
    try:
        for rel in sorted(hashes):
            if rel.rsplit("/", 1)[-1] in config["skip_files"]:  # also a subpackage's __main__.py
                continue
            dotted = rel[:-3].replace("/", ".")
            dotted = dotted[: -len("__init__")].rstrip(".") if dotted.endswith("__init__") else dotted
            importlib.import_module(root + ("." + dotted if dotted else ""))
    finally:
        sys.meta_path.remove(finder)
    private = {n: m for n, m in sys.modules.items() if n == root or n.startswith(root + ".")}
    checks = private[root + ".checks"]
    with contextlib.redirect_stdout(io.StringIO()):
        lab = private[root].start_lab(config["lab"], lang=config["lang"])
    exercises = list(lab.exercises)

    import torch, torch.nn, torch.nn.functional, torch.optim, torch.utils.data  # noqa: E401
    torch_dir = os.path.dirname(torch.__file__)
    installed = {}
    try:
        import devicelab, devicelab.checks, devicelab.lab  # noqa: E401,F401
        for module in config["chapter_modules"]:
            importlib.import_module("devicelab.chapters." + module)
        installed = {n: m for n, m in sys.modules.items() if n == "devicelab" or n.startswith("devicelab.")}
    except Exception:  # noqa: BLE001 - the private copy judges; the installed one is only watched
        pass
    blank_module = installed.get("devicelab.checks")
    if blank_module is not None:  # the student's `____` is the installed package's: judge it as blank
        own_class, own_blank = checks.Blank, checks.____
        for module in private.values():
            for key, value in list(vars(module).items()):
                if value is own_class:
                    setattr(module, key, blank_module.Blank)
                elif value is own_blank:
                    setattr(module, key, blank_module.____)
    expected_types = [type(e).__name__ for e in exercises]
    try:  # the kernel's own namespace, taken now: the student could shadow `globals` or `get_ipython`
        shell = get_ipython()  # noqa: F821 - defined in every IPython kernel
        user_ns = shell.user_ns
    except NameError:
        shell = user_ns = None
    out = sys.stdout
    write, flush = out.write, out.flush
    setitimer, set_signal = getattr(signal, "setitimer", None), signal.signal
    _dict, _isinstance, _type, _str, _dumps = dict, isinstance, type, str, json.dumps

    def function_of(value):
        if _isinstance(value, (staticmethod, classmethod, types.MethodType)):
            value = value.__func__
        return value if _isinstance(value, types.FunctionType) else None

    def state(value):
        # A function's code can be swapped in place, so its identity alone is not enough.
        owner = function_of(value)
        if owner is None:
            return (value, None, None, None)
        return (value, owner.__code__, owner.__defaults__, owner.__kwdefaults__)

    def wrapped(value):
        try:
            return getattr(value, "__wrapped__", None) if function_of(value) is not None else None
        except Exception:  # noqa: BLE001
            return None

    def torch_wrapper(old, new):
        # torch wraps some of its own functions on first use (an optimizer's step, torch._dynamo's
        # manual_seed): a functools.wraps wrapper of the original whose code lives in torch itself.
        return wrapped(new) is old and (code_of(new) or "").startswith(torch_dir)

    def watched_value(key, value):
        # Module attributes that judging relies on: functions, classes, modules and CONSTANTS (not state).
        return _isinstance(value, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)) or \
            key.isupper()

    def watch_class(label, cls, into):
        into[label + "#"] = ("class", {k: state(v) for k, v in _dict(vars(cls)).items()})

    def watch_module(label, module, into, deep=False):
        into[f"sys.modules[{label!r}]"] = ("value", state(sys.modules.get(module.__name__)))
        for key, value in list(vars(module).items()):
            if not watched_value(key, value):
                continue
            into[f"{label}.{key}"] = ("value", state(value))
            if deep and _isinstance(value, type) and value.__module__ == module.__name__:
                watch_class(f"{label}.{key}", value, into)

    def snapshot():
        found = {}
        for name in BUILTIN_NAMES:
            found["builtins." + name] = ("value", state(getattr(builtins, name, None)))
        for cls in (torch.Tensor, torch._C.TensorBase, torch.nn.Parameter, torch.optim.Optimizer,
                    torch.utils.data.DataLoader, torch.utils.data.Dataset, torch.utils.data.TensorDataset,
                    type(out)):
            watch_class(f"{cls.__module__}.{cls.__qualname__}", cls, found)
        for space in (torch.nn, torch.optim):
            for key, value in list(vars(space).items()):
                if _isinstance(value, type) and issubclass(value, (torch.nn.Module, torch.optim.Optimizer)):
                    watch_class(f"{space.__name__}.{key}", value, found)
        for module in (torch, torch.nn, torch.nn.functional, torch.optim, torch.utils.data, json, signal):
            watch_module(module.__name__, module, found)
        for name, module in {**installed, **private}.items():
            watch_module(name.replace(root, "<private devicelab>"), module, found, deep=True)
        for label, value in (("sys.modules", sys.modules), ("sys.stdout", sys.stdout),
                             ("sys.gettrace()", sys.gettrace()), ("sys.getprofile()", sys.getprofile()),
                             ("threading trace hook", getattr(threading, "_trace_hook", None)),
                             ("threading profile hook", getattr(threading, "_profile_hook", None))):
            found[label] = ("value", state(value))
        found["sys.meta_path"] = ("value", (tuple(map(id, sys.meta_path)), None, None, None))
        return found

    def same(old, new):
        if old[0] is new[0] or _isinstance(old[0], tuple) and old[0] == new[0]:
            return all(a is b for a, b in zip(old[1:], new[1:]))
        return torch_wrapper(old[0], new[0])

    before = snapshot()
    missing = ("value", (object(), None, None, None))

    def code_of(value):
        owner = function_of(value)
        return owner.__code__.co_filename if owner is not None else None

    def defined_in_notebook(value):
        return getattr(value, "__module__", None) == "__main__"

    def evidence(namespace):
        found = []
        now = snapshot()
        for key, (kind, old) in before.items():
            new = now.get(key, missing)[1]
            if kind == "value":
                if not same(old, new):
                    found.append(f"changed: {key}")
                continue
            key = key.rstrip("#")  # a class's entry, apart from the module attribute that names it
            for name in {**old, **new}:
                if name not in new:
                    found.append(f"deleted: {key}.{name}")
                elif name not in old:
                    added = new[name][0]
                    if name == "__slotnames__":  # copyreg caches it on a class the first time one is pickled
                        continue
                    if wrapped(added) is None or \
                            not (code_of(added) or "").startswith(torch_dir):
                        found.append(f"added: {key}.{name}")
                elif not same(old[name], new[name]):
                    found.append(f"changed: {key}.{name}")
        try:
            events = shell.events.callbacks
            for event, callbacks in events.items():
                if any(defined_in_notebook(c) for c in callbacks):
                    found.append(f"an IPython {event} callback defined in the notebook")
        except Exception:  # noqa: BLE001
            pass
        for thread in threading.enumerate():
            if defined_in_notebook(type(thread)) or defined_in_notebook(getattr(thread, "_target", None)):
                found.append("a thread started by the notebook is still running")
        student_lab = namespace.get("lab")
        lab_class = getattr(installed.get("devicelab.lab"), "Lab", None)
        if student_lab is not None and lab_class is not None:
            if _type(student_lab) is not lab_class:
                found.append("`lab` is not the lab the setup cell created")
            elif [_type(e).__name__ for e in getattr(student_lab, "exercises", [])] != expected_types:
                found.append("`lab.exercises` was replaced")
        for name, expected in zip([e.name for e in exercises], expected_types):
            value = namespace.get(name)
            if value is not None and _type(value).__name__ != expected:
                found.append(f"`{name}` is not the lab's exercise")
            elif value is not None and defined_in_notebook(_type(value)):
                found.append(f"`{name}` is a class defined in the notebook")
        return found

    def emit(nonce, kind, data):
        write(f"{config['marker']}-{nonce} {kind} {_dumps(data)}\n")
        flush()

    def alarm(signum, frame):
        raise GradingTimeout()

    def grade(namespace, nonce, skip, seconds):
        namespace = user_ns if user_ns is not None else namespace
        emit(nonce, "tamper", evidence(namespace))
        judged = _dict(namespace)
        judged["lab"], judged["device"] = lab, lab.device
        for exercise in exercises:
            if exercise.name in skip:
                continue
            emit(nonce, "start", exercise.name)
            previous = set_signal(signal.SIGALRM, alarm) if setitimer else None
            if setitimer:
                setitimer(signal.ITIMER_REAL, seconds)
            try:
                verdict = exercise.evaluate(judged)
                if _type(verdict) is not checks.Verdict or verdict.status not in (
                        checks.CORRECT, checks.INCORRECT, checks.NOT_ATTEMPTED):
                    record = {"status": checks.INCORRECT, "key": "grading.bad_verdict", "params": {}}
                else:
                    record = {"status": verdict.status, "key": verdict.key,
                              "params": {k: _str(v)[:300] for k, v in verdict.params.items()},
                              "message": verdict.message()}
            except GradingTimeout:
                record = {"status": checks.INCORRECT, "key": "grading.check_timeout", "params": {"seconds": seconds}}
            except BaseException as error:  # noqa: BLE001 - whatever happens costs this exercise only
                record = {"status": checks.INCORRECT, "key": "grading.check_raised",
                          "params": {"error": f"{_type(error).__name__}: {error}"[:200]}}
            finally:
                if setitimer:
                    setitimer(signal.ITIMER_REAL, 0)
                    set_signal(signal.SIGALRM, previous)
            emit(nonce, "verdict", {"name": exercise.name, **record})
        emit(nonce, "tamper", evidence(namespace))
        emit(nonce, "done", True)

    return grade


def failed(error):
    def grade(namespace, nonce, skip, seconds):
        print(f"{MARKER_PREFIX}-{nonce} setup_error {json.dumps(error)}")
    return grade
'''

SETUP_CELL = """\
def _setup_{token}():
    namespace = {{"__name__": "devicelab_grader", "MARKER_PREFIX": {marker!r}}}
    exec(compile({code!r}, "<devicelab grader>", "exec"), namespace)
    try:
        return namespace["install"]({config!r})
    except BaseException as error:  # reported by the grading cell
        return namespace["failed"](f"{{type(error).__name__}}: {{error}}"[:300])
globals()["_{token}"] = _setup_{token}()
del _setup_{token}
"""
GRADING_CELL = "_{token}(globals(), {nonce!r}, {skip!r}, {seconds!r})\n"
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
    tampered: list[str] = field(default_factory=list)
    seconds: float = 0.0

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


def private_copy(into: Path) -> Path:
    """A read-only copy of the package: what the kernels load, whatever happens to the install meanwhile."""
    target = into / "devicelab"
    for source in sorted(PACKAGE.rglob("*")):
        if "__pycache__" in source.parts or not source.is_file():
            continue
        copied = target / source.relative_to(PACKAGE)
        copied.parent.mkdir(parents=True, exist_ok=True)
        copied.write_bytes(source.read_bytes())
        copied.chmod(0o444)
    return target


def package_hashes(package: Path = PACKAGE) -> dict[str, str]:
    """SHA-256 of every Python file of the devicelab package, by path relative to the package."""
    return {p.relative_to(package).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(package.rglob("*.py")) if "__pycache__" not in p.parts}


# --- static scan -------------------------------------------------------------------------------------
WATCHED_ROOTS = ("devicelab", "torch", "builtins", "sys", "importlib", "signal", "json", "threading", "IPython")
ALLOWED_PREFIXES = ("torch.backends.", "sys.path", "torch.manual_seed")
FORBIDDEN_CALLS = {
    "sys.settrace", "sys.setprofile", "sys.addaudithook", "sys._getframe", "threading.settrace",
    "threading.setprofile", "gc.get_objects", "gc.get_referrers", "gc.get_referents", "importlib.reload",
    "builtins.exec", "builtins.eval", "builtins.compile", "builtins.__import__", "builtins.setattr",
    "builtins.delattr",
}
LAB_NAMES = re.compile(r"^(lab|ex\d+)$")


def _python_of(cell_source: str) -> str:
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(cell_source)
    except Exception:  # noqa: BLE001 - without IPython, magics stay unparsable and are skipped
        return cell_source


class _Scanner(ast.NodeVisitor):
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {"__builtins__": "builtins"}
        for name in ("exec", "eval", "compile", "__import__", "setattr", "delattr"):
            self.aliases[name] = f"builtins.{name}"
        self.found: list[str] = []

    def dotted(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            if LAB_NAMES.match(node.id):
                return f"devicelab.{node.id}"
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def watched(self, node: ast.AST) -> str | None:
        # The first name inside `node` that stands for a watched module (or the lab), as a dotted path.
        for inner in ast.walk(node):
            path = self.dotted(inner) if isinstance(inner, (ast.Name, ast.Attribute)) else None
            if path and path.split(".")[0] in WATCHED_ROOTS:
                full = self.dotted(node) or path
                if not full.startswith(ALLOWED_PREFIXES):
                    return full
        return None

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                alias.name.split(".")[0]
            if alias.name.split(".")[0] == "ctypes":
                self.found.append("imports ctypes")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if node.module:
                self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        if (node.module or "").split(".")[0] == "ctypes":
            self.found.append("imports ctypes")

    def target(self, node: ast.AST, verb: str) -> None:
        if isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                self.target(element, verb)
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            path = self.watched(node.value)
            if path is not None or (isinstance(node, ast.Subscript) and self.dotted(node.value) == "sys.modules"):
                self.found.append(f"{verb} {ast.unparse(node)}")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self.target(target, "assigns")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.target(node.target, "assigns")
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.target(node.target, "assigns")
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self.target(target, "deletes")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = self.dotted(node.func) or ""
        if name in FORBIDDEN_CALLS:
            self.found.append(f"calls {name.removeprefix('builtins.')}()")
            if name in ("builtins.setattr", "builtins.delattr") and node.args and self.watched(node.args[0]) is None:
                self.found.pop()  # setattr on the student's own objects is fine
        elif name.startswith("sys.modules."):
            self.found.append(f"calls {name}()")
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "register" and \
                "events" in ast.unparse(node.func.value):
            self.found.append("registers an IPython event callback")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and MARKER in node.value:
            self.found.append(f"a string containing the grade marker {MARKER!r}")


def static_findings(nb: nbformat.NotebookNode) -> list[str]:
    """What the submission's code does to the objects the checks rely on (empty for honest notebooks)."""
    scanner = _Scanner()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(_python_of(cell.source))
        except SyntaxError:
            continue
        scanner.visit(tree)
    return list(dict.fromkeys(scanner.found))


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


def _quiet_logger() -> logging.Logger:
    log = logging.getLogger("devicelab.grading.kernel")
    log.propagate = False
    log.handlers = [logging.NullHandler()]
    log.setLevel(logging.CRITICAL)
    return log


def _read_grading_output(cell: nbformat.NotebookNode, nonce: str, run: _Run) -> None:
    prefix = f"{MARKER}-{nonce} "
    text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("name") == "stdout")
    for line in text.splitlines():
        if not line.startswith(prefix):
            continue
        kind, _, payload = line[len(prefix):].partition(" ")
        try:
            data = json.loads(payload)
        except ValueError:
            continue
        if kind == "start":
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


def _run_once(nb: nbformat.NotebookNode, config: dict, skip: list[str], timeout: int, workdir: str) -> _Run:
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    run = _Run()
    token, nonce = secrets.token_hex(16), secrets.token_hex(16)
    setup = nbformat.v4.new_code_cell(SETUP_CELL.format(token=token, marker=MARKER, code=KERNEL_CODE,
                                                        config=config))
    grading = nbformat.v4.new_code_cell(GRADING_CELL.format(token=token, nonce=nonce, skip=skip, seconds=timeout))
    probe = nbformat.v4.new_code_cell(PROBE_CELL)
    remaining = len([n for n in config["exercises"] if n not in skip])
    limits = {id(grading): timeout * (remaining + 1) + 60, id(probe): min(PROBE_SECONDS, max(timeout, 5)),
              id(setup): 300}
    replies: dict[int, dict] = {}
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", allow_errors=True, interrupt_on_timeout=True,
        error_on_timeout={"ename": "CellTimeoutError", "evalue": f"ran past {timeout} s and was interrupted",
                          "traceback": []},
        timeout_func=lambda cell: limits.get(id(cell), timeout), log=_quiet_logger(), record_timing=False,
        on_cell_executed=lambda cell, cell_index, execute_reply: replies.__setitem__(id(cell), execute_reply),
    )
    student = list(nb.cells)
    nb.cells = [setup, *student, grading, probe]  # nbclient writes each executed cell back at its index
    current = -1
    try:
        with client.setup_kernel(cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
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
        if current < len(student):
            run.stopped_in = current
            run.problems.append(f"DeadKernelError: the kernel died in cell {current + 1}")
        else:
            run.problems.append("DeadKernelError: the kernel died while an exercise was judged")
    except Exception as error:  # noqa: BLE001 - a kernel that cannot start is one bad row
        run.problems.append(f"{type(error).__name__}: {error}".splitlines()[0][:200])
    finally:
        _read_grading_output(grading, nonce, run)
        nb.cells = student
    return run


def _first_error(nb: nbformat.NotebookNode) -> str:
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error" and output.get("ename") != "KeyboardInterrupt":
                return f"cell {index + 1}: {output.get('ename')}: {output.get('evalue')}"[:200]
    return ""


def _blanked(number: int) -> str:
    return f"raise RuntimeError('the grader skipped cell {number}: it killed or hung the kernel')\n"


def grade(path: Path, timeout: int = 300, shown: str = "", package: Path = PACKAGE,
          hashes: dict[str, str] | None = None) -> Grade:
    """Run one submission in fresh kernels and judge each of its exercises on its own (with `package`'s checks)."""
    started = time.monotonic()
    result = Grade(path, shown=shown or path.as_posix())
    hashes = hashes if hashes is not None else package_hashes(package)
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as error:  # noqa: BLE001 - an unreadable file is one bad row
        result.problem = f"unreadable notebook: {type(error).__name__}: {error}"[:200]
        return result
    sources = [c.source for c in nb.cells if c.cell_type == "code"]
    lab = next((m.group(1) for s in sources if (m := LAB_LINE.search(s))), "?")
    lang = next((m.group(1) for s in sources if (m := LANG_LINE.search(s))), "en")
    result.lab, result.lang = lab, lang if lang in WORDS else "en"
    result.tampered = [f"code {e}" for e in static_findings(nb)]
    if lab not in MODULES:
        result.problem = "no known LAB line: is this a lab notebook?"
        result.seconds = round(time.monotonic() - started, 1)
        return result
    names = [ex.name for ex in exercises_for(lab)]
    result.verdicts = {name: NOT_GRADED for name in names}
    config = {"root": f"_devicelab_{secrets.token_hex(8)}", "package": str(package), "hashes": hashes,
              "skip_files": list(NOT_LOADED), "lab": lab, "lang": result.lang, "marker": MARKER,
              "chapter_modules": sorted(set(MODULES.values())), "exercises": names}
    problems: list[str] = []
    skip: list[str] = []
    cells = nb
    for _ in range(MAX_RUNS):
        executed = nbformat.from_dict(json.loads(json.dumps(cells)))
        with tempfile.TemporaryDirectory(prefix="devicelab-grade-") as workdir:
            run = _run_once(executed, config, skip, timeout, workdir)
        problems += [p for p in run.problems if p not in problems]
        result.tampered += [f"run {e}" for e in run.tampered if f"run {e}" not in result.tampered]
        for name, record in run.records.items():
            result.verdicts[name] = record["status"]
            result.messages[name] = _message(record, result.lang)
        if run.setup_error:
            problems.append(f"the grader could not load its checks: {run.setup_error}")
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
    if package_hashes(package) != hashes:
        result.tampered.append("the grader's copy of devicelab changed on disk while this submission ran")
    result.problem = "; ".join(p for p in problems if p)[:300]
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
    """One CSV row per submission: verdicts, score, first problem, tamper evidence and seconds taken."""
    names = sorted({name for g in grades for name in g.verdicts}, key=lambda n: (len(n), n))
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["submission", "lab", *names, "correct", "out_of", "problem", "tampered", "seconds"])
        for g in grades:
            writer.writerow([g.shown or str(g.path), g.lab, *(g.verdicts.get(n, "-") for n in names), g.score,
                             len(g.verdicts), g.problem, " | ".join(g.tampered)[:500], g.seconds])


def feedback(g: Grade) -> str:
    """The feedback file for one submission (markdown, in its notebook's language): verdicts, reasons, hints."""
    from .messages import text

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


def _grade_job(path: str, timeout: int, shown: str, package: str, hashes: dict[str, str]) -> Grade:
    warnings.simplefilter("ignore")
    return grade(Path(path), timeout, shown, Path(package), hashes)


def main(argv: list[str] | None = None) -> int:
    """Grade every submission named on the command line and write the gradebook (and feedback files)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=Path("gradebook.csv"))
    parser.add_argument("-j", "--jobs", type=int, default=1, help="submissions graded at once")
    parser.add_argument("--timeout", type=int, default=300, help="seconds a cell (or one check) may run")
    parser.add_argument("--feedback", type=Path, help="write one markdown feedback file per submission here")
    args = parser.parse_args(argv)
    notebooks = find_notebooks(args.submissions)
    with tempfile.TemporaryDirectory(prefix="devicelab-checks-") as folder:
        package = private_copy(Path(folder))
        ordered = _grade_all(notebooks, args.jobs, args.timeout, package)
        changed = any("changed on disk" in " ".join(g.tampered) for g in ordered)
        for copied in package.rglob("*.py"):
            copied.chmod(0o644)  # so that the folder can be removed
    write_gradebook(ordered, args.out)
    if args.feedback is not None:
        for g in ordered:
            target = args.feedback / Path(g.shown).with_suffix(".md").as_posix().lstrip("./")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(feedback(g), encoding="utf-8")
    if changed:
        print("warning: the grader's copy of devicelab changed on disk during grading: "
              "a submission wrote to it; grade the others again", file=sys.stderr)
    print(f"gradebook: {args.out} ({len(ordered)} submissions)", file=sys.stderr)
    return 0


def _grade_all(notebooks: list[tuple[Path, str]], jobs: int, timeout: int, package: Path) -> list[Grade]:
    hashes = package_hashes(package)
    grades: dict[int, Grade] = {}

    def report(index: int, g: Grade) -> None:
        grades[index] = g
        flags = "  tampered" if g.tampered else ""
        flags += f"  ({g.problem[:80]})" if g.problem else ""
        print(f"[{len(grades)}/{len(notebooks)}] {g.shown} {g.score}/{len(g.verdicts) or '?'}{flags}",
              file=sys.stderr, flush=True)

    if jobs <= 1:
        warnings.simplefilter("ignore")
        for index, (path, shown) in enumerate(notebooks):
            report(index, grade(path, timeout, shown, package, hashes))
    else:
        with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
            futures = {pool.submit(_grade_job, str(path), timeout, shown, str(package), hashes): index
                       for index, (path, shown) in enumerate(notebooks)}
            for future in as_completed(futures):
                report(futures[future], future.result())
    return [grades[i] for i in range(len(notebooks))]


if __name__ == "__main__":
    sys.exit(main())
