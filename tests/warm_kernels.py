"""Start the suite's Jupyter kernels as forks of one warm interpreter instead of fresh ones.

A fresh kernel spends about 2.5 CPU-seconds importing ipykernel, NumPy and torch before it runs a cell, and
the suite starts dozens of them (nbval's notebooks, the answer banks, the learner's walks); a lab's first forward
on the meta device then imports torch._dynamo, about one more second (a decomposition of PyTorch's that the meta
device runs is wrapped to disable dynamo, and that wrapper imports it on first use). Here, each test process starts
one *server* that has imported those modules and nothing else; each kernel is then a fork of it, which runs
`ipykernel` exactly as `python -m ipykernel_launcher -f CONNECTION_FILE` would.

How a kernel is started (`install()` patches jupyter_client's launcher in the test process):

- jupyter_client is given a *client* command in place of `python -m ipykernel_launcher -f FILE`. The client
  (`python -S warm_kernels.py client SOCKET -- ORIGINAL COMMAND`) is the process jupyter_client manages: it
  sends the server its folder, environment and standard streams, and gets the kernel's process id back.
- Signals jupyter_client sends the client (interrupt, terminate) are passed on to the kernel; when the kernel
  ends, the server tells the client its exit status and the client exits with it; when the client is killed,
  the server kills the kernel.
- The client runs the original command instead (`execv`) when the server cannot be reached, or when the
  kernel's environment differs from the server's in a variable read while importing those modules
  (`PYTHON*`, `OMP_*`, `CUDA_*`, ...): a fork could not honour it.

Only the exact command `SAME_PYTHON [-X...] -m ipykernel_launcher -f FILE` is replaced; the grader's sandboxed
kernels (`python -s ...`, bubblewrap) start as before. `DEVICELAB_FRESH_KERNELS=1` turns the whole thing off.
"""

from __future__ import annotations

import os
import signal
import socket
import sys

# Environment variables read while torch, NumPy or Python itself start: a kernel asked for with other values
# than the server's starts fresh.
SENSITIVE = ("PYTHON", "OMP_", "MKL_", "KMP_", "OPENBLAS", "GOTO", "CUDA", "TORCH", "PYTORCH", "NVIDIA", "LD_",
             "MPLBACKEND", "NUMEXPR", "XLA", "HIP", "ROCM")


def _grading_warm():  # noqa: ANN202 - a module
    """The grader's warm kernels (devicelab/grading/warm.py), loaded by path (this file runs with `python -S`, where
    the installed package may not be found): its messages are this file's too."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "devicelab", "grading",
                        "warm.py")
    spec = importlib.util.spec_from_file_location("devicelab_grading_warm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_protocol = _grading_warm()
_send, _recv = _protocol.send, _protocol.recv
PRELOAD = _protocol.PRELOAD


def _sensitive(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(SENSITIVE)}


# --- the server ---------------------------------------------------------------------------------------------


def serve(path: str) -> dict | None:
    """Preload, then fork a kernel per request. Returns (in the fork only) the request the fork must run."""
    import importlib
    import selectors

    for name in PRELOAD:
        importlib.import_module(name)
    baseline = _sensitive(dict(os.environ))
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    stopping: list[bool] = []
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.set_wakeup_fd(wake_w)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "listen")
    selector.register(wake_r, selectors.EVENT_READ, "wake")
    kernels: dict[int, socket.socket] = {}  # kernel pid -> its client's connection
    print("ready", flush=True)
    while True:
        if stopping or os.getppid() != parent:  # the test process is done or gone: so are its kernels
            for pid in kernels:
                _kill(pid)
            while True:
                try:
                    os.wait()
                except ChildProcessError:
                    return None
        for key, _ in selector.select(timeout=1.0):
            if key.data == "listen":
                conn, _ = listener.accept()
                request, fds = _recv(conn, with_fds=3)
                if request is None or len(fds) != 3:
                    for fd in fds:
                        os.close(fd)
                    conn.close()
                    continue
                if _sensitive(request["env"]) != baseline:
                    _send(conn, {"pid": None})
                    conn.close()
                    for fd in fds:
                        os.close(fd)
                    continue
                pid = os.fork()
                if pid == 0:  # the kernel: leave every server resource behind
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    selector.close()
                    for other in (listener, conn, *kernels.values()):
                        other.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    for target, fd in enumerate(fds):
                        os.dup2(fd, target)
                        os.close(fd)
                    return request
                for fd in fds:
                    os.close(fd)
                kernels[pid] = conn
                selector.register(conn, selectors.EVENT_READ, pid)
                _send(conn, {"pid": pid})
            elif key.data == "wake":
                try:
                    os.read(wake_r, 4096)
                except BlockingIOError:
                    pass
                _reap(kernels, selector)
            else:  # a client's connection: it never writes again, so this is its end
                pid = key.data
                selector.unregister(key.fileobj)
                key.fileobj.close()
                kernels.pop(pid, None)
                _kill(pid)
                _reap(kernels, selector)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap(kernels: dict[int, socket.socket], selector) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = kernels.pop(pid, None)
        if conn is not None:
            selector.unregister(conn)
            try:
                _send(conn, {"status": os.waitstatus_to_exitcode(status)})
            except OSError:
                pass
            conn.close()


def run_kernel(request: dict) -> None:
    """In the fork: become `python -m ipykernel_launcher ARGS` started in the request's folder and environment."""
    import random

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["ipykernel_launcher", *request["args"]]
    sys.path[0] = request["cwd"]  # what `python -m` puts first
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


# --- the client -----------------------------------------------------------------------------------------------


def client(path: str, command: list[str]) -> None:
    """Ask the server for a kernel; stand for it until it ends. Without a server, run `command` itself."""
    args = command[command.index("-f"):]
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
        _send(conn, {"cwd": os.getcwd(), "env": dict(os.environ), "args": args}, fds=[0, 1, 2])
        answer, _ = _recv(conn)
    except OSError:
        answer = None
    if not answer or not answer.get("pid"):
        os.execv(command[0], command)
    pid = answer["pid"]

    def forward(signum, _frame) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, forward)
    while True:
        try:
            answer, _ = _recv(conn)
            break
        except InterruptedError:
            continue
    status = answer["status"] if answer else 1
    if status < 0:  # ended by a signal: end the same way
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


# --- the test process's side ------------------------------------------------------------------------------------

_server = None


def _socket_path() -> str:
    import tempfile

    return os.path.join(tempfile.mkdtemp(prefix="devicelab-kernels-"), "server.sock")


def _start_server() -> str | None:
    global _server
    import atexit
    import subprocess

    if _server is not None:
        return _server[1] if _server[0].poll() is None else None  # one server a process: never a second
    path = _socket_path()
    process = subprocess.Popen([sys.executable, __file__, "serve", path], stdout=subprocess.PIPE,
                               stdin=subprocess.DEVNULL)
    ready = process.stdout.readline().strip() == b"ready"
    _server = (process, path)
    atexit.register(stop)
    return path if ready else None


def stop() -> None:
    """End the server and every kernel it still has (each is waited for, so its CPU time counts here)."""
    import shutil
    import subprocess

    if _server is not None and _server[0].returncode is None:
        process, path = _server
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def _is_plain_kernel(cmd: list[str]) -> bool:
    """`SAME_PYTHON [-X...] -m ipykernel_launcher -f FILE`, and nothing else."""
    if len(cmd) < 5 or os.path.realpath(cmd[0]) != os.path.realpath(sys.executable):
        return False
    rest = cmd[1:]
    while rest and rest[0].startswith("-X"):
        rest = rest[1:]
    return len(rest) == 4 and rest[:2] == ["-m", "ipykernel_launcher"] and rest[2] == "-f"


def install() -> None:
    """Patch jupyter_client so that this process's plain kernels start as forks of a warm server."""
    if os.environ.get("DEVICELAB_FRESH_KERNELS") == "1" or not hasattr(os, "fork") or not hasattr(socket, "AF_UNIX"):
        return
    from jupyter_client.provisioning import local_provisioner

    original = local_provisioner.launch_kernel

    def launch_kernel(cmd, *args, **kwargs):
        if _is_plain_kernel(list(cmd)):
            path = _start_server()
            if path is not None:
                cmd = [sys.executable, "-S", __file__, "client", path, "--", *cmd]
        return original(cmd, *args, **kwargs)

    local_provisioner.launch_kernel = launch_kernel


def main() -> None:
    if sys.argv[1] == "serve":
        request = serve(sys.argv[2])
        if request is not None:
            sys.argv = sys.argv[:1]
            run_kernel(request)
    elif sys.argv[1] == "client":
        at = sys.argv.index("--")
        client(sys.argv[2], sys.argv[at + 1:])


if __name__ == "__main__":
    main()
