"""The grader's code inside a submission's kernel: a fingerprint before the student's code, the judging after it.

This file is never imported by a lab. The grader ships it by path, from its private read-only copy of the
package, to two cells of its own that the student never sees (they are not in the kernel's input history);
each cell checks the file's SHA-256, runs it in a fresh namespace and calls one entry point:

- `before(config, user_ns)`, ahead of the first student cell: prints a fingerprint of what the checks rely
  on (ids of the functions, classes, modules and hooks below) on a line that only the grader reads;
- `judge(config, user_ns)`, after the last student cell: prints the same fingerprint taken again, what the
  namespace shows (a replaced `lab`, an attribute set on an exercise, a rebound `exec`, a callback or a thread
  defined in the notebook), then loads a fresh copy of devicelab from the grader's private copy, checking each
  file's SHA-256, and judges every exercise with it; the fingerprint once more after judging.

Nothing is kept in the kernel between the two calls: no function, closure, nonce or exercise of the grader's
exists while student code runs, and the verdicts come from exercise objects created after the last student
cell. The grader compares the fingerprints itself (`compare`), outside the kernel.

Only the standard library at module level: the file runs before anything else is trusted.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import importlib
import importlib.abc
import importlib.util
import io
import json
import os
import signal
import sys
import threading
import types

BUILTIN_NAMES = ("isinstance", "issubclass", "len", "callable", "getattr", "setattr", "hasattr", "type",
                 "iter", "next", "range", "print", "repr", "str", "int", "float", "bool", "list", "tuple",
                 "dict", "set", "sorted", "sum", "any", "all", "min", "max", "abs", "zip", "enumerate",
                 "map", "filter", "open", "exec", "eval", "compile", "__import__", "id", "hash", "object",
                 "super", "vars", "format", "round", "globals", "BaseException", "Exception", "StopIteration",
                 "KeyboardInterrupt", "TimeoutError", "RuntimeError", "TypeError", "ValueError")
# Names a notebook must not rebind: the grader's cells and the checks look them up.
HIJACKABLE = ("exec", "eval", "compile", "__import__", "globals", "get_ipython", "open", "print", "isinstance",
              "getattr", "type", "__builtins__")
ESSENTIAL = ("__init__.py", "checks.py", "lab.py", "messages.py")  # what judging cannot do without
SHELL_METHODS = ("run_cell", "run_cell_async", "run_ast_nodes", "run_code", "ex", "ev", "safe_execfile",
                 "transform_cell", "should_run_async", "user_expressions")


class GradingTimeout(BaseException):
    """Raised by the grader's alarm when one check runs too long (not an Exception: checks catch those)."""


# --- fingerprints -----------------------------------------------------------------------------------------
def _function_of(value: object) -> types.FunctionType | None:
    if isinstance(value, (staticmethod, classmethod, types.MethodType)):
        value = value.__func__
    return value if isinstance(value, types.FunctionType) else None


def _state(value: object) -> list:
    # A function's code and defaults can be swapped in place, so its identity alone is not enough.
    owner = _function_of(value)
    if owner is None:
        return [id(value), 0, 0, 0, 0, ""]
    try:
        inner = getattr(owner, "__wrapped__", None)
    except Exception:  # noqa: BLE001
        inner = None
    return [id(value), id(owner.__code__), id(owner.__defaults__), id(owner.__kwdefaults__),
            id(inner) if inner is not None else 0, owner.__code__.co_filename]


def _watched_value(key: str, value: object) -> bool:
    # Module attributes that judging relies on: functions, classes, modules and CONSTANTS (not state).
    return isinstance(value, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)) or \
        key.isupper()


def _watch_class(label: str, cls: type, into: dict) -> None:
    for key, value in list(dict(vars(cls)).items()):
        into[f"{label}#{key}"] = _state(value)


def _watch_module(label: str, module: types.ModuleType, into: dict, deep: bool = False) -> None:
    into[f"sys.modules[{label!r}]"] = _state(sys.modules.get(getattr(module, "__name__", label)))
    for key, value in list(vars(module).items()):
        if not _watched_value(key, value):
            continue
        into[f"{label}.{key}"] = _state(value)
        if deep and isinstance(value, type) and value.__module__ == module.__name__:
            _watch_class(f"{label}.{key}", value, into)


def _shell() -> object | None:
    try:
        from IPython import get_ipython

        return get_ipython()
    except Exception:  # noqa: BLE001 - not in a kernel (unit tests)
        return None


def fingerprint(chapter_modules: list[str]) -> dict[str, list]:
    """Ids of what the checks rely on, by name: torch's and the nn layers' methods, builtins, devicelab, hooks."""
    import torch
    import torch.nn
    import torch.nn.functional
    import torch.optim
    import torch.utils.data

    installed = {}
    try:
        import devicelab
        import devicelab.checks
        import devicelab.lab  # noqa: F401
        for module in chapter_modules:
            importlib.import_module("devicelab.chapters." + module)
    except Exception:  # noqa: BLE001 - the private copy judges; the installed one is only watched
        pass
    found: dict[str, list] = {}
    for name, module in list(sys.modules.items()):
        if (name == "devicelab" or name.startswith("devicelab.")) and not name.startswith("devicelab.grading"):
            if isinstance(module, types.ModuleType):
                installed[name] = module
            else:  # a replaced entry is a finding, never a reason for the grader to fail
                found[f"sys.modules[{name!r}]"] = _state(module)
    for name in BUILTIN_NAMES:
        found["builtins." + name] = _state(getattr(builtins, name, None))
    classes = [torch.Tensor, torch._C.TensorBase, torch.nn.Parameter, torch.optim.Optimizer,
               torch.utils.data.DataLoader, torch.utils.data.Dataset, torch.utils.data.TensorDataset,
               type(sys.stdout), importlib.abc.MetaPathFinder]
    shell = _shell()
    if shell is not None:
        classes += [c for c in type(shell).__mro__ if c.__module__.startswith(("IPython", "ipykernel"))]
        kernel = getattr(shell, "kernel", None)
        if kernel is not None:
            classes += [c for c in type(kernel).__mro__ if c.__module__.startswith("ipykernel")]
        for name in SHELL_METHODS:
            found[f"get_ipython().{name}"] = _state(vars(shell).get(name))
    for cls in classes:
        _watch_class(f"{cls.__module__}.{cls.__qualname__}", cls, found)
    for space in (torch.nn, torch.optim):
        for key, value in list(vars(space).items()):
            if isinstance(value, type) and issubclass(value, (torch.nn.Module, torch.optim.Optimizer)):
                _watch_class(f"{space.__name__}.{key}", value, found)
    for module in (torch, torch.nn, torch.nn.functional, torch.optim, torch.utils.data, json, signal, hashlib,
                   importlib, importlib.util, io, contextlib, os, builtins):
        _watch_module(module.__name__, module, found)
    for name, module in installed.items():
        _watch_module(name, module, found, deep=True)
    for label, value in (("sys.modules", sys.modules), ("sys.stdout", sys.stdout), ("sys.__stdout__", sys.__stdout__),
                         ("sys.gettrace()", sys.gettrace()), ("sys.getprofile()", sys.getprofile()),
                         ("threading trace hook", getattr(threading, "_trace_hook", None)),
                         ("threading profile hook", getattr(threading, "_profile_hook", None)),
                         ("signal SIGALRM handler", signal.getsignal(signal.SIGALRM)
                          if hasattr(signal, "SIGALRM") else None)):
        found[label] = _state(value)
    found["sys.meta_path"] = [sum(map(id, sys.meta_path)), len(sys.meta_path), 0, 0, 0, ""]
    found["sys.path_hooks"] = [sum(map(id, sys.path_hooks)), len(sys.path_hooks), 0, 0, 0, ""]
    found["torch directory"] = [0, 0, 0, 0, 0, os.path.dirname(torch.__file__)]
    return found


def compare(before: dict[str, list], after: dict[str, list]) -> list[str]:
    """What differs between two fingerprints, as findings (torch's own lazy wrappers and caches aside)."""
    torch_dir = before.get("torch directory", [0, 0, 0, 0, 0, "\0"])[5]
    found: list[str] = []
    for key, old in before.items():
        new = after.get(key)
        if new is None:
            found.append(f"deleted: {key.replace('#', '.')}")
        elif new != old:
            # torch wraps some of its own functions on first use (an optimizer's step, torch._dynamo's
            # manual_seed): a functools.wraps wrapper of the original whose code lives in torch itself.
            if new[4] == old[0] and new[5].startswith(torch_dir):
                continue
            found.append(f"changed: {key.replace('#', '.')}")
    classes = {key.rsplit("#", 1)[0] for key in before if "#" in key}
    for key, new in after.items():
        if key in before or "#" not in key or key.rsplit("#", 1)[0] not in classes:
            continue  # module attributes are watched for changes only; a class made lazily is new
        if key.endswith("#__slotnames__"):  # copyreg caches it on a class the first time one is pickled
            continue
        if new[4] and new[5].startswith(torch_dir):
            continue
        found.append(f"added: {key.replace('#', '.')}")
    for replaced in [f for f in found if f.startswith("changed: sys.modules[")]:
        name = replaced[len("changed: sys.modules["):].rstrip("]").strip("'\"")
        echoes = [f for f in found if f.split(": ", 1)[-1].startswith(name + ".")]
        if echoes:  # a replaced module: every attribute of it differs, and that is one finding
            found = [f for f in found if f not in echoes]
            found[found.index(replaced)] = f"{replaced} (with {len(echoes)} of its attributes)"
    modules = [f for f in found if f.startswith("changed: sys.modules[")]
    if len(modules) > 1:  # one replaced sys.modules entry is the finding; the rest is its echo
        found = [f for f in found if f not in modules[1:]]
        found[found.index(modules[0])] = f"{modules[0]} and {len(modules) - 1} more sys.modules entries"
    return found


# --- what the namespace shows --------------------------------------------------------------------------------
def _real_file(value: object) -> bool:
    owner = _function_of(value)
    filename = owner.__code__.co_filename if owner is not None else ""
    return bool(filename) and os.path.isfile(filename) and "ipykernel_" not in filename


def _notebook_made(value: object) -> bool:
    if getattr(value, "__module__", None) == "__main__":
        return True
    return _function_of(value) is not None and not _real_file(value)


def namespace_evidence(user_ns: dict, lab: object, exercises: list, installed_lab_class: type | None) -> list[str]:
    """What the notebook's namespace, its callbacks and its threads show about tampering."""
    found: list[str] = []
    for name in HIJACKABLE:
        if name not in user_ns or user_ns[name] is getattr(builtins, name, None):
            continue
        value = user_ns[name]
        if name == "__builtins__" and value in (builtins, vars(builtins)):
            continue
        function = _function_of(value)
        filename = function.__code__.co_filename if function is not None else ""
        if _real_file(value) and f"{os.sep}IPython{os.sep}" in filename or f"{os.sep}ipykernel{os.sep}" in filename:
            continue  # IPython's own `open` and `get_ipython`
        found.append(f"the notebook rebinds `{name}`")
    shell = _shell()
    if shell is not None:
        for event, callbacks in list(getattr(getattr(shell, "events", None), "callbacks", {}).items()):
            if any(_notebook_made(c) for c in callbacks):
                found.append(f"an IPython {event} callback defined in the notebook")
        for name in SHELL_METHODS:
            if name in vars(shell):
                found.append(f"get_ipython().{name} was replaced")
    for thread in threading.enumerate():
        if _notebook_made(type(thread)) or _notebook_made(getattr(thread, "_target", None)):
            found.append("a thread started by the notebook is still running")
    expected_types = [type(e).__name__ for e in exercises]
    student_lab = user_ns.get("lab")
    if student_lab is not None and installed_lab_class is not None:
        if type(student_lab) is not installed_lab_class:
            found.append("`lab` is not the lab the setup cell created")
        else:
            extra = sorted(set(vars(student_lab)) - set(vars(lab)))
            if extra:
                found.append(f"attributes set on `lab`: {', '.join(extra)}")
            if [type(e).__name__ for e in getattr(student_lab, "exercises", [])] != expected_types:
                found.append("`lab.exercises` was replaced")
    for exercise in exercises:
        value = user_ns.get(exercise.name)
        if value is None:
            continue
        if type(value).__name__ != type(exercise).__name__:
            found.append(f"`{exercise.name}` is not the lab's exercise")
        elif _notebook_made(type(value)):
            found.append(f"`{exercise.name}` is a class defined in the notebook")
        else:
            extra = sorted(set(vars(value)) - set(vars(exercise)))
            if extra:
                found.append(f"attributes set on `{exercise.name}`: {', '.join(extra)}")
        for other in getattr(student_lab, "exercises", None) or []:
            if type(other).__name__ == type(exercise).__name__:
                extra = sorted(set(getattr(other, "__dict__", {})) - set(vars(exercise)))
                if extra:
                    found.append(f"attributes set on `lab.exercises` ({exercise.name}): {', '.join(extra)}")
    return list(dict.fromkeys(found))


def _denied(log_path: str) -> list[str]:
    try:
        with open(log_path, encoding="utf-8") as log:
            return [line.strip() for line in log if line.strip()]
    except OSError:
        return []


def _descendants() -> list[int]:
    """The live processes this kernel started (directly or not), from /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] not in ("Z", "X"):
            parents[int(entry)] = int(fields[1])
    found, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        for child, parent in parents.items():
            if parent == pid and child not in found:
                found.append(child)
                todo.append(child)
    return found


# --- the private copy ------------------------------------------------------------------------------------
def load_private(root: str, package: str, hashes: dict[str, str], skip: list[str]) -> dict[str, types.ModuleType]:
    """Import the package at `package` as `root`, every file checked against `hashes` (raises ImportError if not)."""
    _open, _exec, _compile, _sha = builtins.open, builtins.exec, builtins.compile, hashlib.sha256

    class VerifiedLoader(importlib.abc.Loader):
        def __init__(self, path: str, rel: str) -> None:
            self.path, self.rel = path, rel

        def create_module(self, spec):  # noqa: ANN001, ANN201 - importlib's protocol
            return None

        def exec_module(self, module):  # noqa: ANN001, ANN201
            with _open(self.path, "rb") as handle:
                data = handle.read()
            if _sha(data).hexdigest() != hashes.get(self.rel):
                raise ImportError(f"devicelab/{self.rel} changed on disk since the grader started")
            _exec(_compile(data, self.path, "exec"), module.__dict__)

    class PrivateFinder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001, ANN201
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
            if rel.split("/")[0] in skip or rel.rsplit("/", 1)[-1] in skip:
                continue
            dotted = rel[:-3].replace("/", ".")
            dotted = dotted[: -len("__init__")].rstrip(".") if dotted.endswith("__init__") else dotted
            try:
                importlib.import_module(root + ("." + dotted if dotted else ""))
            except Exception as error:  # a helper the checks never use (a lint plugin) may need more packages
                if "changed on disk" in str(error) or rel in ESSENTIAL or rel.startswith("chapters/"):
                    raise
    finally:
        sys.meta_path.remove(finder)
    return {n: m for n, m in sys.modules.items() if n == root or n.startswith(root + ".")}


# --- the two entry points ---------------------------------------------------------------------------------
def _emitter(marker: str, nonce: str, journal: str = ""):  # noqa: ANN202
    out = sys.stdout
    write, flush, dumps = out.write, out.flush, json.dumps
    # A kernel killed while an exercise is judged may take its last stdout messages with it; the journal (a file
    # in the world, written unbuffered) still tells the grader which exercise was being judged. Only "start" lines
    # go there: verdicts are read from stdout alone.
    fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600) if journal else None
    os_write = os.write

    def emit(kind: str, data: object) -> None:
        line = f"{marker}-{nonce} {kind} {dumps(data)}\n"
        if fd is not None and kind == "start":
            os_write(fd, line.encode())
        write(line)
        flush()

    return emit


def before(config: dict, user_ns: dict) -> None:
    """Hide what no submission may read; print the fingerprint taken before the first student cell."""
    emit = _emitter(config["marker"], config["nonce"])
    _hide(config.get("hidden", []), config.get("denied_log", ""))
    emit("fingerprint", fingerprint(config["chapter_modules"]))


_READS = ("open", "os.listdir", "os.scandir", "glob.glob", "os.chdir", "shutil.copyfile", "shutil.copytree",
          "os.symlink", "os.link", "os.rename")


def _hide(hidden: list[str], log_path: str) -> None:
    """An audit hook (for the rest of the kernel's life) that refuses to open what the grader hides: the other
    submissions, the gradebook, the feedback, and /proc entries of processes this kernel did not start (the
    grader's command line names the submissions). Each refusal is logged for the judging cell."""
    roots = tuple(os.path.realpath(h) for h in hidden)
    me = os.getpid()

    def ours(pid: int) -> bool:  # this kernel or a process it started
        while pid > 1:
            if pid == me:
                return True
            try:
                with open(f"/proc/{pid}/stat", "rb") as stat:  # reading a stat file is no audited event of ours
                    pid = int(stat.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                return False
        return False

    busy = threading.local()  # the hook's own reads of /proc raise audit events too: do not judge those

    def hook(event: str, args: tuple) -> None:
        if event not in _READS or not args or isinstance(args[0], int) or args[0] is None:
            return
        if getattr(busy, "on", False):
            return
        busy.on = True
        try:
            judge(args[0])
        finally:
            busy.on = False

    def judge(path: object) -> None:
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return
        parts = real.split(os.sep)
        other_process = len(parts) > 3 and parts[1] == "proc" and parts[2].isdigit() and not ours(int(parts[2]))
        if other_process or any(real == root or real.startswith(root + os.sep) for root in roots):
            if log_path:
                with open(log_path, "a", encoding="utf-8") as log:
                    log.write(real + "\n")
            raise PermissionError(f"the grader keeps this from submissions: {real}")

    sys.addaudithook(hook)


def judge(config: dict, user_ns: dict) -> None:
    """Judge every exercise not in config["skip"] with a fresh private copy of devicelab; print the results."""
    emit = _emitter(config["marker"], config["nonce"], config.get("journal", ""))
    emit("fingerprint", fingerprint(config["chapter_modules"]))
    try:
        private = load_private(config["root"], config["package"], config["hashes"], config["skip_files"])
        root = config["root"]
        checks = private[root + ".checks"]
        with contextlib.redirect_stdout(io.StringIO()):
            lab = private[root].start_lab(config["lab"], lang=config["lang"])
        exercises = list(lab.exercises)
    except BaseException as error:  # noqa: BLE001 - reported, never raised into the notebook
        emit("setup_error", f"{type(error).__name__}: {error}"[:300])
        return
    installed_checks = sys.modules.get("devicelab.checks")
    if isinstance(installed_checks, types.ModuleType) and hasattr(installed_checks, "Blank"):
        # the student's `____` is the installed package's: judge it as blank
        own_class, own_blank = checks.Blank, checks.____
        for module in private.values():
            for key, value in list(vars(module).items()):
                if value is own_class:
                    setattr(module, key, installed_checks.Blank)
                elif value is own_blank:
                    setattr(module, key, installed_checks.____)
    installed_lab = getattr(sys.modules.get("devicelab.lab"), "Lab", None)
    installed_lab = installed_lab if isinstance(installed_lab, type) else None
    distrust = [f"what the checks read is not PyTorch's own: {finding}"
                for finding in private[root + ".trust"].untrusted()]
    denied = _denied(config.get("denied_log", ""))
    if denied:
        distrust.append(f"tried to read what the grader keeps from submissions ({len(denied)} times, first "
                        f"{denied[0][:120]})")
    started = _descendants()
    if started:
        distrust.append(f"processes started by the notebook were still running when it was judged ({len(started)})")
    emit("tamper", namespace_evidence(user_ns, lab, exercises, installed_lab) + distrust)
    judged = dict(user_ns)
    judged["lab"], judged["device"] = lab, lab.device
    seconds = config["seconds"]
    setitimer = getattr(signal, "setitimer", None)

    def alarm(signum, frame):  # noqa: ANN001, ANN202
        raise GradingTimeout()

    for exercise in exercises:
        if exercise.name in config["skip"]:
            continue
        emit("start", exercise.name)
        previous = signal.signal(signal.SIGALRM, alarm) if setitimer else None
        if setitimer:
            setitimer(signal.ITIMER_REAL, seconds)
        try:
            verdict = exercise.evaluate(judged)
            if type(verdict) is not checks.Verdict or verdict.status not in (
                    checks.CORRECT, checks.INCORRECT, checks.NOT_ATTEMPTED):
                record = {"status": checks.INCORRECT, "key": "grading.bad_verdict", "params": {}}
            else:
                record = {"status": verdict.status, "key": verdict.key,
                          "params": {k: str(v)[:300] for k, v in verdict.params.items()},
                          "message": verdict.message()}
        except GradingTimeout:
            record = {"status": checks.INCORRECT, "key": "grading.check_timeout", "params": {"seconds": seconds}}
        except BaseException as error:  # noqa: BLE001 - whatever happens costs this exercise only
            record = {"status": checks.INCORRECT, "key": "grading.check_raised",
                      "params": {"error": f"{type(error).__name__}: {error}"[:200]}}
        finally:
            if setitimer:
                setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
        emit("verdict", {"name": exercise.name, **record})
    for name in [n for n in sys.modules if n == root or n.startswith(root + ".")]:
        del sys.modules[name]
    emit("fingerprint_after_judging", fingerprint(config["chapter_modules"]))
    emit("done", True)
