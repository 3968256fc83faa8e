"""Launch a DistributedDataParallel job with torchrun from a notebook cell, with a hard time limit.

`launch()` runs `torchrun --standalone --nproc_per_node=N script ...` (as `python -m torch.distributed.run`,
which is what the `torchrun` command runs, so that it works whatever PATH a notebook kernel has) in a
process group of its own. It prints every line the ranks print as it comes, and returns what each rank
said. When the job runs past its time limit, or ends with a failing rank, the whole process group is
ended, so that no rank is left hanging in a collective: the cell reports it instead of hanging.
"""

from __future__ import annotations

import atexit
import inspect
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .messages import add, text

SCRIPT = Path(__file__).with_name("ddp_train.py")
# The lines the course's script prints for each rank: "rank 1 | device cpu | epoch 2 | loss 0.412 | ..."
RANK_LINE = re.compile(r"^rank (?P<rank>\d+) \| (?P<rest>.*)$")
RANK_START = re.compile(r"(?=rank \d+ \| )")
FAILED_LINE = re.compile(r"^\[rank(?P<rank>\d+)\]: (?P<error>[\w.]*(?:Error|Exception)\b.*)$")
FIELD = re.compile(r"(?P<name>[a-z_]+) (?P<value>\S+)")


@dataclass
class DDPRun:
    """What a torchrun job did: its exit status, its whole output, and each rank's own lines."""

    command: list[str]
    returncode: int | None
    output: str
    seconds: float
    timed_out: bool = False
    ranks: dict[int, list[str]] = field(default_factory=dict)
    pid: int = 0  # torchrun's process id, which is also the id of the job's process group

    @property
    def ok(self) -> bool:
        """True when every rank finished and torchrun exited with status 0."""
        return self.returncode == 0 and not self.timed_out

    def records(self, rank: int = 0) -> list[dict[str, str]]:
        """The `name value` fields of each line rank `rank` printed (e.g. {"epoch": "1", "loss": "0.52"})."""
        return [{m["name"]: m["value"] for m in FIELD.finditer(line)} for line in self.ranks.get(rank, [])]

    def series(self, name: str, rank: int = 0) -> list[float]:
        """One field as numbers, in the order rank `rank` printed it (e.g. its loss per epoch)."""
        return [float(r[name]) for r in self.records(rank) if name in r]

    def failures(self) -> dict[int, str]:
        """For each rank that raised, the last line of its traceback (torchrun prefixes them `[rankN]:`)."""
        found: dict[int, str] = {}
        for line in self.output.splitlines():
            match = FAILED_LINE.match(line)
            if match:
                found[int(match["rank"])] = match["error"]
        return found


def torchrun_command(script: str | Path, nproc: int = 2, args: Sequence[str] = ()) -> list[str]:
    """The command line: `python -m torch.distributed.run --standalone --nproc_per_node=N script args...`."""
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
            str(script), *map(str, args)]


def _end_group(process: subprocess.Popen, grace: float = 3.0) -> None:
    """Stop torchrun and every rank it started: SIGTERM to the whole group, then SIGKILL to what is left."""
    if os.name != "posix":  # pragma: no cover - the course runs on Linux and macOS
        process.kill()
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        # torchrun is gone; a rank it could not stop may still be in the group.
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return


def launch(
    script: str | Path = SCRIPT,
    nproc: int = 2,
    args: Sequence[str] = (),
    timeout: float = 60.0,
    echo: bool = True,
    env: dict[str, str] | None = None,
) -> DDPRun:
    """Run `script` under torchrun with `nproc` processes; end every process after `timeout` seconds.

    Prints each line as the job prints it (when `echo`), then one line saying how the job ended. Never
    raises because the job failed: look at `run.ok`, `run.returncode`, `run.timed_out`, `run.output`.
    A job in which a rank was aborted (SIGABRT) without any Python error is run once more, saying so: on a
    busy machine gloo has been seen to abort a rank of a job that did nothing wrong.
    """
    run = _launch_once(script, nproc, args, timeout, echo, env)
    if not run.ok and not run.timed_out and not run.failures() and "SIGABRT" in run.output:
        if echo:
            print(text("ddp.aborted_again"))
        again = _launch_once(script, nproc, args, timeout, echo, env)
        again.output = run.output + "\n" + again.output
        return again
    return run


def _launch_once(script: str | Path, nproc: int, args: Sequence[str], timeout: float, echo: bool,
                 env: dict[str, str] | None) -> DDPRun:
    command = torchrun_command(script, nproc, args)
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1", **(env or {})}
    started = time.monotonic()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
        env=environment, start_new_session=True,  # a process group of its own: ended as a whole
    )
    lines: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if echo:
                print(line, end="", flush=True)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        # On a time-out, and also after a failing rank: torchrun stops its workers itself, but nothing
        # it started may outlive the cell.
        _end_group(process)
    reader.join(timeout=5)
    run = DDPRun(command, None if timed_out else process.returncode, "\n".join(lines),
                 time.monotonic() - started, timed_out, pid=process.pid)
    for line in lines:
        # Ranks share one pipe and `print` writes its text and its newline separately, so two ranks'
        # lines can arrive joined ("rank 1 | attempt 2rank 0 | attempt 2"): read each piece on its own.
        for piece in RANK_START.split(line.strip()):
            found = RANK_LINE.match(piece.strip())
            if found:
                run.ranks.setdefault(int(found["rank"]), []).append(found["rest"])
    if echo:
        if run.timed_out:
            print(text("ddp.timed_out", seconds=int(timeout)))
        elif run.ok:
            print(text("ddp.finished", nproc=nproc, seconds=f"{run.seconds:.1f}"))
        else:
            print(text("ddp.failed", code=run.returncode))
    return run


HEADER = """\
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

DDP = DistributedDataParallel
"""


def module_source(*functions: Callable[..., object]) -> str:
    """The source of notebook functions as one module, after the imports a DDP script needs (HEADER)."""
    return "\n\n".join([HEADER, *(textwrap.dedent(inspect.getsource(f)) for f in functions)])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _sweep_orphans() -> None:
    """Remove the module files of processes that ended without running their exit handlers (a kernel that was
    killed): the name of each file holds the id of the process that wrote it."""
    for old in Path(tempfile.gettempdir()).glob("ddp_answers_*_*.py"):
        pid = old.name.split("_")[2]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            try:
                old.unlink(missing_ok=True)
            except OSError:  # another user's file in a shared temporary folder: not ours to remove
                pass


def write_module(*functions: Callable[..., object], path: str | Path | None = None) -> Path:
    """Write notebook functions to a module file (a temporary one by default, removed when this process
    ends, or by the next call of any process when this one was killed) that every rank can import."""
    if path is None:
        _sweep_orphans()
        handle, name = tempfile.mkstemp(prefix=f"ddp_answers_{os.getpid()}_", suffix=".py")
        os.close(handle)
        atexit.register(Path(name).unlink, missing_ok=True)
        path = name
    path = Path(path)
    path.write_text(module_source(*functions), encoding="utf-8")
    return path


add(
    {
        "ddp.finished": {
            "en": "torchrun: all {nproc} processes finished cleanly in {seconds} s.",
            "zh": "torchrun：全部 {nproc} 个进程正常结束，用时 {seconds} 秒。",
        },
        "ddp.aborted_again": {
            "en": "torchrun: a rank was aborted (SIGABRT) without a Python error, which gloo has been seen to do on a "
            "busy machine to a job that did nothing wrong; running the job once more.",
            "zh": "torchrun：有一个 rank 在没有任何 Python 错误的情况下被中止（SIGABRT）；"
            "在繁忙的机器上，gloo 曾对没有任何问题的作业这样做过。现在把作业再运行一次。",
        },
        "ddp.failed": {
            "en": "torchrun: the job failed (exit status {code}); the lines above say which rank failed and why. "
            "Every process of the job has been stopped.",
            "zh": "torchrun：作业失败（退出码 {code}）；上面的输出说明了是哪个 rank、因为什么失败。"
            "作业的所有进程都已结束。",
        },
        "ddp.timed_out": {
            "en": "torchrun: the job was still running after {seconds} s (a rank stuck waiting for the others?). "
            "Every process of the job has been stopped.",
            "zh": "torchrun：作业运行 {seconds} 秒后仍未结束（某个 rank 卡在等待其他进程？）。"
            "作业的所有进程都已结束。",
        },
    }
)
