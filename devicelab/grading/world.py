"""One throwaway world per kernel run, and the kernel started in it (under bubblewrap where it can run).

A world is a folder with a fresh home, IPython folder, Jupyter config/data/runtime folders, temporary folder
and working folder, plus the grader's private copy of devicelab, read-only. The kernel is started from the
absolute path of the grader's own interpreter (`python -s -m ipykernel_launcher`), never through a kernelspec
name that a user's kernelspec could replace, with an environment that points every start-up location into
the world: a startup file, a kernelspec or a `.pth` file a submission writes there dies with it.

With the sandbox (bubblewrap), the kernel also sees the machine read-only, a private `/tmp` and no network;
only its world is writable, and the private copy is bound read-only on top of it.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# Variables that would point the kernel at start-up code or folders outside its world.
DROPPED = ("PYTHONSTARTUP", "PYTHONPATH_EXTRA", "PYTHONUSERBASE", "PYTHONHOME", "PYTHONINSPECT", "PYTHONEXECUTABLE")
DROPPED_PREFIXES = ("JUPYTER", "IPYTHON", "XDG_", "MPLCONFIGDIR")


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
            "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1",
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


def kernel_argv(world: World, sandbox: bool) -> list[str]:
    """The command that starts the kernel: the grader's own interpreter by absolute path, maybe inside bwrap."""
    python = [os.path.abspath(sys.executable), "-s", "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    if not sandbox:
        return python
    return [*bwrap_prefix(world), *python]


def bwrap_prefix(world: World) -> list[str]:
    """bubblewrap's arguments: the machine read-only, private /tmp, no network; the world writable."""
    argv = [shutil.which("bwrap") or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]
    for device in sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri/*")):
        argv += ["--dev-bind", device, device]  # a GPU stays usable inside
    # The private /tmp hides whatever lives there: an interpreter or a checkout under /tmp (a clone made for a CI
    # run, say) is put back, read-only.
    for path in _under_tmp([sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path, str(Path(__file__).parents[2])]):
        argv += ["--ro-bind", path, path]
    root = str(world.root)
    argv += ["--bind", root, root, "--ro-bind", str(world.checks), str(world.checks),
             "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--chdir", str(world.work), "--"]
    return argv


def _under_tmp(paths: list[str]) -> list[str]:
    """The existing folders among `paths` that a private /tmp would hide, outermost only."""
    found: list[str] = []
    for raw in sorted({os.path.realpath(p) for p in paths if p} | {os.path.abspath(p) for p in paths if p}):
        if not raw.startswith(("/tmp/", "/dev/shm/")) or not os.path.isdir(raw):
            continue
        if not any(raw == kept or raw.startswith(kept + "/") for kept in found):
            found.append(raw)
    return found


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


def kernel_manager(world: World, sandbox: bool):  # noqa: ANN201 - jupyter_client's AsyncKernelManager
    """An AsyncKernelManager that starts the world's kernel over Unix sockets in the world's runtime folder."""
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import AsyncKernelManager

    # Asynchronous, as nbclient expects: with a blocking client, a kernel that dies mid-cell is never noticed.
    manager = AsyncKernelManager(kernel_name="python3", transport="ipc",
                                 connection_file=str(world.runtime / "kernel.json"))
    manager._kernel_spec = KernelSpec(argv=kernel_argv(world, sandbox), display_name="devicelab grader",
                                      language="python", interrupt_mode="message", resource_dir=str(world.root))
    return manager
