"""One throwaway world per kernel run, and the kernel started in it (under bubblewrap where it can run).

A world is a folder with a fresh home, IPython folder, Jupyter config/data/runtime folders, temporary folder
and working folder, plus the grader's private copy of devicelab, read-only. The kernel is started from the
absolute path of the grader's own interpreter (`python -s -m ipykernel_launcher`), never through a kernelspec
name that a user's kernelspec could replace, with an environment that points every start-up location into
the world: a startup file, a kernelspec or a `.pth` file a submission writes there dies with it.

With the sandbox (bubblewrap), the kernel sees only the system's folders and the interpreter's, read-only, a
private `/tmp`, its own processes and no network: not the instructor's home, the submissions or the course
checkout. Only its world is writable, and the private copy is bound read-only on top of it (and is what the
student's `import devicelab` finds).

A warm kernel (`warm.py`, `WarmServer`) joins the same sandbox instead of being started inside it: bubblewrap
makes the sandbox as above around a placeholder process, and the kernel, a fork of a server that has imported
torch, enters its namespaces.

Without the sandbox, the grader makes itself a child subreaper (Linux) and, when a kernel has ended, ends every
process the kernel left behind (`leftovers`).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# Variables that would point the kernel at start-up code or folders outside its world.
DROPPED = ("PYTHONSTARTUP", "PYTHONPATH_EXTRA", "PYTHONUSERBASE", "PYTHONHOME", "PYTHONINSPECT", "PYTHONEXECUTABLE",
           "DEVICELAB_GRADER_HIDDEN")
DROPPED_PREFIXES = ("JUPYTER", "IPYTHON", "XDG_", "MPLCONFIGDIR")


WARM = Path(__file__).resolve().parent / "warm.py"  # run by path: the warm kernels' server and client
TAG = "DEVICELAB_WORLD"  # in the kernel's environment, inherited by whatever it starts: how leftovers are found


@dataclass
class World:
    """The folders of one kernel run (all under `root`)."""

    root: Path

    def __post_init__(self) -> None:
        for folder in (self.home, self.ipython, self.jupyter / "config", self.jupyter / "data",
                       self.jupyter / "runtime", self.tmp, self.work, self.cache):
            folder.mkdir(parents=True, exist_ok=True)

    home = property(lambda self: self.root / "home")
    ipython = property(lambda self: self.root / "home" / ".ipython")
    jupyter = property(lambda self: self.root / "jupyter")
    runtime = property(lambda self: self.root / "jupyter" / "runtime")
    tmp = property(lambda self: self.root / "tmp")
    work = property(lambda self: self.root / "work")
    cache = property(lambda self: self.root / "home" / ".cache")
    checks = property(lambda self: self.root / "checks")

    def env(self) -> dict[str, str]:
        """The kernel's environment: the grader's, with every start-up location inside this world."""
        env = {k: v for k, v in os.environ.items() if k not in DROPPED and not k.startswith(DROPPED_PREFIXES)}
        env.update({
            "HOME": str(self.home), "IPYTHONDIR": str(self.ipython), "TMPDIR": str(self.tmp), "TEMP": str(self.tmp),
            "TMP": str(self.tmp), "JUPYTER_CONFIG_DIR": str(self.jupyter / "config"),
            "JUPYTER_DATA_DIR": str(self.jupyter / "data"), "JUPYTER_RUNTIME_DIR": str(self.runtime),
            "JUPYTER_PLATFORM_DIRS": "1", "XDG_CACHE_HOME": str(self.cache),
            "XDG_CONFIG_HOME": str(self.home / ".config"), "MPLCONFIGDIR": str(self.home / ".config" / "matplotlib"),
            "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1", TAG: self.root.name,
        })
        return env

    def write_package(self, files: dict[str, bytes]) -> Path:
        """Write the grader's private copy of devicelab into the world, read-only; return its folder."""
        target = self.checks / "devicelab"
        for rel, data in files.items():
            path = target / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(0o444)
        for folder in sorted({p for p in target.rglob("*") if p.is_dir()} | {target, self.checks}, reverse=True):
            folder.chmod(0o555)
        return target

    def remove(self) -> None:
        """Delete the world (making read-only parts writable first)."""
        for path in self.root.rglob("*"):
            try:
                if not path.is_symlink():
                    path.chmod(0o755 if path.is_dir() else 0o644)
            except OSError:
                pass
        shutil.rmtree(self.root, ignore_errors=True)


def new_world(prefix: str = "devicelab-grade-") -> World:
    """A fresh world in the grader's temporary folder."""
    return World(Path(tempfile.mkdtemp(prefix=prefix)))


def kernel_argv(world: World, sandbox: bool, warm: str | None = None) -> list[str]:
    """The command that starts the kernel: the grader's own interpreter by absolute path, maybe inside bwrap;
    with `warm` (a warm kernel server's socket, sandbox only), the client that starts it as a fork of that server
    inside the same sandbox (warm.py)."""
    python = [os.path.abspath(sys.executable), "-s", "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    if not sandbox:
        return python
    if warm is not None:
        sandbox_args = bwrap_prefix(world)
        return [os.path.abspath(sys.executable), "-I", "-S", str(WARM), "client", warm, str(len(sandbox_args)),
                *sandbox_args, "-f", "{connection_file}"]
    return [*bwrap_prefix(world), *python]


# What a sandboxed kernel sees of the machine, read-only: the system's programs, libraries and settings. Not
# /root, /home, /work, /srv, /mnt, /media, /opt or the course checkout: a submission sees no one else's files.
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")


def interpreter_folders() -> list[str]:
    """The folders of the grader's interpreter and its libraries (the virtual environment, the base Python)."""
    found: list[str] = []
    for raw in (sys.prefix, sys.base_prefix, sys.exec_prefix):
        for path in dict.fromkeys((os.path.abspath(raw), os.path.realpath(raw))):
            if os.path.isdir(path) and not any(path == kept or path.startswith(kept + "/") for kept in found):
                found = [kept for kept in found if not kept.startswith(path + "/")] + [path]
    return sorted(found)


def bwrap_prefix(world: World) -> list[str]:
    """bubblewrap's arguments: the system and the interpreter read-only, a private /tmp, its own processes only
    (a PID namespace: whatever the kernel starts dies with it), no network; the world writable."""
    argv = [shutil.which("bwrap") or "bwrap"]
    for folder in SYSTEM_FOLDERS:
        if os.path.islink(folder):  # /bin -> usr/bin on merged-/usr systems
            argv += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            argv += ["--ro-bind", folder, folder]
    argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]
    for device in sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri/*")):
        argv += ["--dev-bind", device, device]  # a GPU stays usable inside
    for folder in interpreter_folders():
        argv += ["--ro-bind", folder, folder]
    root = str(world.root)
    argv += ["--bind", root, root, "--ro-bind", str(world.checks), str(world.checks),
             "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--new-session",
             "--die-with-parent", "--chdir", str(world.work),
             "--setenv", "PYTHONPATH", str(world.checks),  # the student's `import devicelab`: the private copy
             # ipykernel exits when its parent looks like init (pid 1, bwrap's, in a PID namespace): no parent poll;
             # --die-with-parent ends the sandbox with the grader instead.
             "--unsetenv", "JPY_PARENT_PID", "--"]
    return argv


def sandbox_problem() -> str | None:
    """None when bubblewrap can start a sandbox here; otherwise why not, in one line."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    world = new_world("devicelab-sandbox-probe-")
    try:
        world.write_package({"__init__.py": b""})
        done = subprocess.run([*bwrap_prefix(world), sys.executable, "-s", "-c", "import ipykernel"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        return f"bubblewrap could not start: {error}"
    finally:
        world.remove()
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["exit status " + str(done.returncode)])[-1]
        return f"bubblewrap could not start a sandbox here (user namespaces off?): {said}"
    return None


def kernel_manager(world: World, sandbox: bool, warm: str | None = None):  # noqa: ANN201 - an AsyncKernelManager
    """An AsyncKernelManager that starts the world's kernel over Unix sockets in the world's runtime folder."""
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import AsyncKernelManager

    # Asynchronous, as nbclient expects: with a blocking client, a kernel that dies mid-cell is never noticed.
    manager = AsyncKernelManager(kernel_name="python3", transport="ipc",
                                 connection_file=str(world.runtime / "kernel.json"))
    manager._kernel_spec = KernelSpec(argv=kernel_argv(world, sandbox, warm), display_name="devicelab grader",
                                      language="python", interrupt_mode="message", resource_dir=str(world.root))
    return manager


# --- processes a kernel leaves behind ------------------------------------------------------------------------
PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def become_subreaper() -> bool:
    """Make this process the one that inherits its descendants' orphans (Linux); False where that is not possible."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _processes() -> dict[int, int]:
    """Every live process this user can see (zombies aside): {pid: parent pid}."""
    found = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                if fields[0] not in ("Z", "X"):
                    found[int(entry)] = int(fields[1])
            except (OSError, ValueError, IndexError):
                continue
    return found


def children() -> set[int]:
    """This process's children now."""
    me = os.getpid()
    return {pid for pid, parent in _processes().items() if parent == me}


def _tagged(world: World) -> set[int]:
    mark = f"{TAG}={world.root.name}".encode()
    found = set()
    for pid in _processes():
        try:
            if mark in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                found.add(pid)
        except OSError:
            continue
    return found


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()[:80]
    except OSError:
        return "?"


def end_leftovers(world: World, before: set[int], kernel: int | None = None, grace: float = 2.0) -> list[str]:
    """End every process a finished kernel left behind: the ones that carry its world's tag, and the orphans
    handed to this (subreaper) process since `before`, with all their descendants. A process that ends on its own
    within `grace` seconds (a data loader's worker, a sandbox being torn down) was not left behind. Returns what
    had to be ended; the kernel process itself (still exiting, perhaps) is ended quietly."""
    import time

    me = os.getpid()
    ended: list[str] = []
    deadline = time.monotonic() + grace
    for _ in range(3):  # a process may fork while it is being ended: look again
        while True:
            doomed = _left(world, before, me)
            if kernel in doomed:
                doomed.discard(kernel)
                _end([kernel])
            if not doomed or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        if not doomed:
            break
        ended += [f"{pid} ({_command(pid)})" for pid in sorted(doomed)]
        _end(doomed)
    return ended


def _left(world: World, before: set[int], me: int) -> set[int]:
    """The live processes a kernel left: tagged, or orphans handed to `me` since `before`, and their descendants."""
    parents = _processes()
    doomed = (_tagged(world) | {pid for pid, parent in parents.items() if parent == me and pid not in before}) - {me}
    grew = True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in doomed} - doomed
        doomed |= more
        grew = bool(more)
    return doomed


def _end(pids) -> None:  # noqa: ANN001 - any iterable of process ids
    """SIGKILL each process and wait (at most 5 s) until none is alive; reap the ones that are our children."""
    import signal
    import time

    pids = set(pids)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        _reap(pids)
        time.sleep(0.05)
    # A process that is already a zombie counts as ended above; reap it too, or zombies pile up over a class's
    # grading.
    _reap(pids)


def _reap(pids) -> None:  # noqa: ANN001 - any iterable of process ids
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)  # our children, and the orphans this (subreaper) process inherited
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


# --- warm kernels (warm.py) --------------------------------------------------------------------------------------
class WarmServer:
    """One grading run's warm kernel server: an interpreter that has imported torch and ipykernel, which forks
    each sandboxed kernel (warm.py). Its folder holds its socket and is its working folder."""

    def __init__(self) -> None:
        self.world = new_world("devicelab-warm-")
        self.path = str(self.world.root / "server.sock")
        self.process = subprocess.Popen([os.path.abspath(sys.executable), "-s", str(WARM), "serve", self.path],
                                        cwd=self.world.work, env=self.world.env(), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.ready = self.process.stdout.readline().strip() == b"ready"

    def problem(self, files: dict[str, bytes]) -> str | None:
        """None when two warm kernels started through this server are where a cold one would be: in a sandbox of
        their own (only their own processes, no network, no other world, the grader's private copy of devicelab
        first), each with its own random state; otherwise what is wrong, in one line."""
        if not self.ready:
            return "the warm kernel server did not start"
        tokens = []
        for _ in range(2):
            world = new_world("devicelab-warm-probe-")
            try:
                world.write_package(files)
                sandbox_args = bwrap_prefix(world)
                # another world's folder, and what the grader keeps from every kernel: the submissions, the gradebook
                hidden = [str(self.world.root), *os.environ.get("DEVICELAB_GRADER_HIDDEN", "").split(os.pathsep)]
                done = subprocess.run([os.path.abspath(sys.executable), "-I", "-S", str(WARM), "client", self.path,
                                       str(len(sandbox_args)), *sandbox_args, "--probe",
                                       *[p for p in hidden if p and os.path.exists(p)]],
                                      cwd=world.work, env=world.env(), capture_output=True, text=True, timeout=60)
                said = [line for line in done.stderr.splitlines() if line.startswith("warm kernel: ")]
                if said:
                    return said[-1].removeprefix("warm kernel: ")
                found = json.loads(done.stdout.strip().splitlines()[-1])
            except (OSError, subprocess.SubprocessError, ValueError, IndexError) as error:
                return f"a warm kernel could not be checked: {type(error).__name__}"
            finally:
                world.remove()
            expected = {"cwd": str(world.work), "sys.path": [str(world.work), str(world.checks)],
                        "devicelab": str(world.checks / "devicelab" / "__init__.py"), "seen": [],
                        "interfaces": ["lo"], "processes": [1, found.get("pid")]}
            wrong = [key for key, value in expected.items() if found.get(key) != value]
            if wrong:
                return "a warm kernel is not where a cold one would be: " + ", ".join(wrong)
            tokens.append(found.get("random"))
        if tokens[0] == tokens[1]:
            return "two warm kernels share their random state"
        return None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()
        self.world.remove()
