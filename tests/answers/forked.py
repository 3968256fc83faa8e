"""Kernel side of the answer harness: judge one answer (or run the rest of a notebook) in a fork of the kernel.

Loaded into the notebook's kernel by path (`harness._load_forked`), never imported by the tests
themselves. `run_in_fork` forks the kernel process: the child starts from the notebook's exact state (copy on
write), runs the given cells and asks the checks, writes a JSON report into a pipe and ends with `os._exit`;
the parent (the kernel the notebook lives in) only waits and reads. Whatever an answer does to modules,
globals, torch's state or the file descriptors of its process stays in the child, so the next answer starts
from the same state as the first, without a new kernel and without replaying the notebook.

The child never talks to the front end: the kernel's sockets belong to the parent, so the child's output goes
into a buffer, and its displays and tracebacks are dropped (the report carries the errors).
"""

from __future__ import annotations

import io
import json
import os
import select
import signal
import sys
import time


def warm() -> None:
    """Pay, once in the kernel, for what every fork would otherwise import again on its own: the first optimizer
    (about a second of torch._dynamo, sympy, ... imports). The random state is left as it was."""
    import torch

    with torch.random.fork_rng(devices=[]):
        layer = torch.nn.Linear(1, 1)
        optimizer = torch.optim.Adam(layer.parameters())
        layer(torch.zeros(1, 1)).sum().backward()
        optimizer.step()


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _verdict(shell, exercise: str, seconds: float | None = None) -> dict[str, str]:
    """The verdict of `exercise`, asked the way the notebook asks it: by calling its `check()` (with the check's
    time limit cut to `seconds` when given: this process is a throwaway fork)."""
    namespace = shell.user_ns
    if exercise not in namespace:
        return {"status": "raised", "key": "", "message": f"NameError: name {exercise!r} is not defined"}
    seen: list[object] = []
    exercise_object = namespace[exercise]
    kind = type(exercise_object)
    original = kind.evaluate
    if seconds is not None:
        exercise_object.seconds = seconds

    def spy(self, *args, **kwargs):
        verdict = original(self, *args, **kwargs)
        seen.append(verdict)
        return verdict

    kind.evaluate = spy  # in the child only: the parent's class is untouched
    try:
        result = shell.run_cell(f"{exercise}.check()\n", silent=True)
    finally:
        kind.evaluate = original
    error = result.error_before_exec or result.error_in_exec
    if error is not None:
        return {"status": "raised", "key": "", "message": _error_text(error)}
    if not seen:
        return {"status": "raised", "key": "", "message": f"{exercise}.check() did not evaluate anything"}
    verdict = seen[-1]
    return {"status": verdict.status, "key": verdict.key, "message": verdict.message()}


def _child(shell, cells: list[tuple[int, str]], exercises: list[str], write_end: int, seconds: float | None) -> None:
    report: dict[str, object] = {"errors": [], "verdicts": {}}
    try:
        os.setpgid(0, 0)  # its own process group: a timeout ends whatever it started as well
        sys.stdout = sys.stderr = io.StringIO()
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.set_num_threads(1)  # OpenMP's thread pool did not survive the fork: stay on this thread
        shell._showtraceback = lambda etype, evalue, stb: None
        shell.display_pub.publish = lambda *args, **kwargs: None
        for number, code in cells:
            result = shell.run_cell(code, silent=True)
            error = result.error_before_exec or result.error_in_exec
            if error is not None:
                report["errors"].append(f"code cell {number}: {_error_text(error)}")
        report["verdicts"] = {name: _verdict(shell, name, seconds) for name in exercises}
    except BaseException as error:  # noqa: BLE001 - anything at all must reach the parent as a report
        report["errors"].append(f"harness: {_error_text(error)}")
    finally:
        data = json.dumps(report).encode()
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(write_end, view):]
        finally:
            os._exit(0)


def run_in_fork(cells: list[tuple[int, str]], exercises: list[str], timeout: float = 600,
                seconds: float | None = None) -> None:
    """Run `cells` (number, code) in a fork of this kernel, then ask each of `exercises` (with their checks' time
    limit cut to `seconds` when given); print the report."""
    from IPython import get_ipython

    shell = get_ipython()
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child ends in os._exit
        os.close(read_end)
        _child(shell, cells, exercises, write_end, seconds)
    os.close(write_end)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_end], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        if timed_out:
            for target in (-pid, pid):
                try:
                    os.kill(target, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        _, status = os.waitpid(pid, 0)
    if timed_out:
        report = {"errors": [f"TimeoutError: the fork ran longer than {timeout} s"], "verdicts": {}}
    elif not chunks:
        report = {"errors": [f"harness: the fork died without a report (wait status {status})"], "verdicts": {}}
    else:
        report = json.loads(b"".join(chunks))
    print("DEVICELAB-FORK " + json.dumps(report))
