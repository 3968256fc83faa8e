"""Warm grading kernels: forks of one interpreter that has imported torch, each inside a sandbox of its own.

A fresh kernel spends about four CPU-seconds importing torch, torch._dynamo (the first optimizer or meta-device
operation imports it) and ipykernel before the first cell of a submission runs; a class's grading pays that once
a submission and once again a rerun. With warm kernels the grader pays it once: it starts one *server* that has
imported those modules and nothing else (no devicelab, no submission, no notebook), and each kernel is a fork of
it that joins a sandbox bubblewrap has just made for its world.

How one kernel starts (this file is run by path, with the standard library only; never imported by a kernel):

- jupyter_client starts the *client* (`python -I -S warm.py client SOCKET N BWRAP... ARGS...`) as the kernel's
  process. The client starts bubblewrap exactly as the cold path would (the same arguments from
  `world.bwrap_prefix`), with a placeholder process in place of the kernel (`--as-pid-1`, so that the sandbox
  ends when the placeholder does), learns its process id (`--info-fd`), and waits until the placeholder runs:
  bubblewrap tells the id before it has made the sandbox (mounts, root, capabilities).
- The client sends the server that process id, the kernel's folder, environment and arguments, and its own
  standard streams. The server forks; the fork joins the placeholder's namespaces (user where it is another
  one, IPC, UTS, network, PID, mount), takes its root folder, and forks once more to be inside the PID
  namespace. That second fork takes the placeholder's capability sets, groups and no-new-privileges flag, checks
  that it has them, and only then becomes `python -s -m ipykernel_launcher ARGS` in the kernel's folder and
  environment, with the sys.path a fresh interpreter would have there (the world's working folder, then the
  grader's private copy of devicelab, then the interpreter's own).
- The client stands for the kernel: it passes on the signals it is sent, and exits with the kernel's status
  when the kernel ends. When the client ends, for any reason, its sandbox ends (`--die-with-parent`), and every
  process of the kernel's with it (the PID namespace's first process is gone).
- Wherever a step fails (no server, a namespace that cannot be joined, capabilities that do not match), the
  client starts the cold kernel instead, in a sandbox of its own: nothing runs outside a sandbox.

The server's children never see another kernel's world: each joins only its own sandbox, and the server never
runs code of a submission. What a warm kernel shares with the others is what a fresh interpreter would have
computed the same way (imported modules); the random generators of Python and NumPy are seeded anew in each.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import struct
import sys

# What a kernel imports before its first cell. Not ipykernel.kernelapp: it reads JPY_PARENT_PID when it is imported.
PRELOAD = ("numpy", "torch", "torch._dynamo", "ipykernel.ipkernel", "ipykernel.zmqshell", "ipykernel.iostream",
           "jupyter_client.session")
NAMESPACES = ("user", "ipc", "uts", "net", "pid", "mnt")  # the user namespace first: it grants the rest
CLONE_FLAGS = {"user": 0x10000000, "ipc": 0x08000000, "uts": 0x04000000, "net": 0x40000000, "pid": 0x20000000,
               "mnt": 0x00020000}  # linux/sched.h
CAP_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
ENTER_FAILED = 97  # the exit status of a fork that could not enter its sandbox (no kernel ran: the client starts cold)
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36  # linux/prctl.h
# The sandbox's first process while a warm kernel runs in it (bubblewrap's --as-pid-1): it says when it runs (only
# then has bubblewrap finished the sandbox: its mounts, its root, the capabilities it keeps), lives until the client
# closes its standard input, and reaps what the kernel's processes leave behind (orphans inside a PID namespace come
# to its first process, as they would to bubblewrap's own init around a cold kernel).
PLACEHOLDER = """import os, signal
def reap(*_):
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
signal.signal(signal.SIGCHLD, reap)
os.write(1, b"r")
os.close(1)
while os.read(0, 1):
    pass
"""
PROBE = "--probe"  # kernel arguments that ask for the grader's check of a warm kernel's sandbox instead


# --- messages: a length, then JSON; the first one of a client carries its three standard streams -----------
def send(conn: socket.socket, payload: dict, fds: list[int] | None = None) -> None:
    data = json.dumps(payload).encode()
    message = struct.pack("!I", len(data)) + data
    if fds:
        socket.send_fds(conn, [message], fds)
    else:
        conn.sendall(message)


def recv(conn: socket.socket, with_fds: int = 0) -> tuple[dict | None, list[int]]:
    fds: list[int] = []
    if with_fds:
        head, fds, _, _ = socket.recv_fds(conn, 4, with_fds)
    else:
        head = conn.recv(4)
    while head and len(head) < 4:
        more = conn.recv(4 - len(head))
        if not more:
            return None, fds
        head += more
    if len(head) < 4:
        return None, fds
    (size,) = struct.unpack("!I", head)
    data = b""
    while len(data) < size:
        more = conn.recv(size - len(data))
        if not more:
            return None, fds
        data += more
    return json.loads(data), fds


# --- the server -----------------------------------------------------------------------------------------------
def serve(path: str) -> dict | None:
    """Preload, then fork per request. Returns (in a fork only) the request that fork must run."""
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    # A kernel is a grandchild of the server (its fork waits for it from outside the sandbox). Should that fork
    # end first, the kernel comes to the server, which reaps it: a kernel nobody reaps keeps its PID in the
    # sandbox's namespace, and the namespace's first process cannot finish ending until that PID is freed.
    _libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
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
    forks: dict[int, socket.socket] = {}  # the fork that entered a sandbox -> its client's connection
    print("ready", flush=True)
    while True:
        if stopping or os.getppid() != parent:  # the grader is done or gone: so are its kernels
            _kill(*forks)
            while True:
                try:
                    os.wait()
                except ChildProcessError:
                    return None
        for key, _ in selector.select(timeout=1.0):
            if key.data == "listen":
                request = _accept(listener, selector, forks, (wake_r, wake_w))
                if request is not None:  # in the new fork
                    return request
            elif key.data == "wake":
                try:
                    os.read(wake_r, 4096)
                except BlockingIOError:
                    pass
                _reap(forks, selector)
            else:  # a client's connection: it never writes again, so this is its end
                _drop(key.data, forks, selector)
                _reap(forks, selector)


def _accept(listener: socket.socket, selector, forks: dict[int, socket.socket],  # noqa: ANN001
            own: tuple[int, int]) -> dict | None:
    """Take one client's request and fork the process that enters its sandbox; returns the request in that fork
    (None in the server). A client that leaves before its answer (killed while it starts, say) ends only its own
    kernel: never the server, nor the others'."""
    try:
        conn, _ = listener.accept()
    except OSError:
        return None
    try:
        request, fds = recv(conn, with_fds=3)
    except (OSError, ValueError):
        conn.close()
        return None
    if request is None or len(fds) != 3 or not isinstance(request.get("sandbox"), int):
        for fd in fds:
            os.close(fd)
        conn.close()
        return None
    told_r, told_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # leave every server resource behind
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        selector.close()
        for other in (listener, conn, *forks.values()):
            other.close()
        for fd in (*own, told_r):
            os.close(fd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.closerange(3, told_w)  # nothing the server opened (torch's included) goes into a sandbox
        os.closerange(told_w + 1, os.sysconf("SC_OPEN_MAX"))
        request["told"] = told_w
        return request
    os.close(told_w)
    for fd in fds:
        os.close(fd)
    with os.fdopen(told_r, "rb") as told:  # the kernel's process id, or nothing: it could not enter
        said = told.read(32).strip()
    forks[pid] = conn
    selector.register(conn, selectors.EVENT_READ, pid)
    try:
        send(conn, {"pid": int(said) if said.isdigit() else None})
    except OSError:  # the client has left: so does its kernel
        _drop(pid, forks, selector)
    return None


def _drop(pid: int, forks: dict[int, socket.socket], selector) -> None:  # noqa: ANN001
    """A client has gone: end its fork, and with the fork its kernel (which dies with its parent, PR_SET_PDEATHSIG).
    Only the fork is signalled: it is the server's own unreaped child, so its process id cannot be another's yet,
    whereas the kernel's could be, once its fork has reaped it."""
    conn = forks.pop(pid, None)
    if conn is None:  # reaped already (its client was told): its id may be another process's by now
        return
    selector.unregister(conn)
    conn.close()
    _kill(pid)


def _kill(*pids: int | None) -> None:
    for pid in pids:
        try:
            if pid is not None:
                os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _reap(forks: dict[int, socket.socket], selector) -> None:  # noqa: ANN001
    """Reap every ended child (forks, and kernels whose fork ended first); tell each fork's client its status."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = forks.pop(pid, None)
        if conn is not None:
            selector.unregister(conn)
            try:
                send(conn, {"status": os.waitstatus_to_exitcode(status)})
            except OSError:
                pass
            conn.close()


# --- in the fork: enter the sandbox, then become the kernel ----------------------------------------------------
def _libc():  # noqa: ANN202 - a ctypes.CDLL
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _status(pid: int | str) -> dict[str, str]:
    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as file:
        return dict(line.split(":\t", 1) for line in file.read().splitlines() if ":\t" in line)


def enter(request: dict) -> None:
    """The fork of the server: join the sandbox, fork the kernel inside it, wait for it and exit with its status.
    Tells the server the kernel's process id (or nothing, when the sandbox could not be entered)."""
    import ctypes

    told = request.pop("told")
    sandbox = request["sandbox"]
    try:
        wanted = _status(sandbox)
        libc = _libc()
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # ends with the server
        root = os.open(f"/proc/{sandbox}/root", os.O_RDONLY | os.O_DIRECTORY)
        joined = [ns for ns in NAMESPACES
                  if os.readlink(f"/proc/{sandbox}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}")]
        if "mnt" not in joined or "pid" not in joined:
            raise OSError("the sandbox has no mount or PID namespace of its own")
        # All at once, through a descriptor of the process (Linux 5.8): an unprivileged account that owns the
        # sandbox's user namespace may join the others only this way. One at a time where that is refused.
        pidfd = os.pidfd_open(sandbox)
        if libc.setns(pidfd, sum(CLONE_FLAGS[ns] for ns in joined)) != 0:
            for ns in joined:
                fd = os.open(f"/proc/{sandbox}/ns/{ns}", os.O_RDONLY)
                if libc.setns(fd, 0) != 0:
                    raise OSError(ctypes.get_errno(), f"setns({ns}): {os.strerror(ctypes.get_errno())}")
                os.close(fd)
        os.close(pidfd)
        os.fchdir(root)
        os.chroot(".")
        os.close(root)
        os.chdir(request["cwd"])
    except (OSError, ValueError, KeyError) as error:
        _failed("could not enter the sandbox", error)
    ready_r, ready_w = os.pipe()
    life_r, life_w = os.pipe()  # its write end is open as long as this fork lives
    kernel = os.fork()
    if kernel == 0:
        os.close(told)
        os.close(ready_r)
        os.close(life_w)
        become(request, wanted, ready_w, life_r)
        return
    os.close(ready_w)
    os.close(life_r)
    with os.fdopen(ready_r, "rb") as ready:
        entered = ready.read(1) == b"1"  # nothing: it could not take the sandbox's privileges, and ended
    if not entered:
        os._exit(ENTER_FAILED)
    os.write(told, str(kernel).encode())
    os.close(told)
    while True:
        try:
            _, status = os.waitpid(kernel, 0)
            break
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


def _failed(what: str, error: BaseException) -> None:
    """End a fork that could not become a kernel, saying why on the client's standard error (a line the grader
    shows when its check of warm kernels fails; a kernel's is thrown away)."""
    print(f"warm kernel: {what}: {error}", file=sys.stderr, flush=True)
    os._exit(ENTER_FAILED)


def _drop_to(wanted: dict[str, str], life: int) -> None:
    """End with the fork that waits for it; take the placeholder's groups, capability sets and no-new-privileges
    flag; check that they are ours."""
    import ctypes
    import select

    libc = _libc()
    pr_capbset_read, pr_capbset_drop, pr_cap_ambient, clear_all, no_new_privs = 23, 24, 47, 4, 38
    # The server ends a kernel by killing its fork: the kernel must die with it, even if the fork died before this.
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if select.select([life], [], [], 0)[0]:  # end of file: the fork is gone already
        os._exit(ENTER_FAILED)
    os.close(life)
    if not wanted.get("Groups", "").strip():
        try:
            os.setgroups([])
        except OSError:
            pass
    bounding = int(wanted["CapBnd"], 16)
    for cap in range(64):
        if not bounding >> cap & 1 and libc.prctl(pr_capbset_read, cap, 0, 0, 0) == 1:
            libc.prctl(pr_capbset_drop, cap, 0, 0, 0)
    libc.prctl(pr_cap_ambient, clear_all, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    eff, prm, inh = (int(wanted[k], 16) for k in ("CapEff", "CapPrm", "CapInh"))
    data = (Data * 2)(Data(eff & 0xFFFFFFFF, prm & 0xFFFFFFFF, inh & 0xFFFFFFFF),
                      Data(eff >> 32, prm >> 32, inh >> 32))
    libc.capset(ctypes.byref(Header(0x20080522, 0)), data)  # _LINUX_CAPABILITY_VERSION_3
    if wanted.get("NoNewPrivs", "0").strip() == "1":
        libc.prctl(no_new_privs, 1, 0, 0, 0)
    mine = _status("self")
    for key in (*CAP_SETS, "NoNewPrivs", "Groups", "Uid", "Gid"):
        if mine.get(key, "").split() != wanted.get(key, "").split():
            raise OSError(f"{key} is {mine.get(key)!r}, not the sandbox's {wanted.get(key)!r}")


def become(request: dict, wanted: dict[str, str], ready: int, life: int) -> None:
    """The kernel, inside the sandbox: become what `python -s -m ipykernel_launcher ARGS` would be there."""
    import random
    import tempfile

    try:
        os.setsid()  # bubblewrap's --new-session
        _drop_to(wanted, life)
    except (OSError, ValueError, KeyError) as error:
        _failed("could not take the sandbox's privileges", error)
    os.write(ready, b"1")
    os.close(ready)
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # found again from TMPDIR
    sys.path[:1] = [request["cwd"], *request["path"]]  # `python -m`'s folder, then PYTHONPATH's
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    if request["args"][:1] == [PROBE]:
        _probe(request["args"][1:])
        os._exit(0)
    import importlib.util

    sys.argv = [importlib.util.find_spec("ipykernel_launcher").origin, *request["args"]]
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


def _probe(hidden: list[str]) -> None:
    """What the grader checks before it trusts warm kernels: where this process is and what it can see."""
    import importlib.util

    spec = importlib.util.find_spec("devicelab")
    with open("/proc/self/net/dev", encoding="ascii") as file:
        interfaces = sorted(line.split(":")[0].strip() for line in file.read().splitlines()[2:])
    print(json.dumps({
        "pid": os.getpid(), "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
        "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
        "cwd": os.getcwd(), "sys.path": sys.path[:2], "devicelab": spec.origin if spec else None,
        "seen": [p for p in hidden if os.path.exists(p)], "interfaces": interfaces,
        "status": {k: v for k, v in _status("self").items() if k in (*CAP_SETS, "NoNewPrivs", "Groups", "Uid")},
        "random": random_token(),
    }), flush=True)


def random_token() -> str:
    import random

    return f"{random.random():.17f}"


# --- the client -------------------------------------------------------------------------------------------------
def _sandbox_settings(bwrap: list[str]) -> tuple[dict[str, str | None], str | None]:
    """The environment changes and the working folder bubblewrap's arguments ask for."""
    changes: dict[str, str | None] = {}
    cwd = None
    i = 0
    while i < len(bwrap):
        if bwrap[i] == "--setenv":
            changes[bwrap[i + 1]] = bwrap[i + 2]
            i += 3
        elif bwrap[i] == "--unsetenv":
            changes[bwrap[i + 1]] = None
            i += 2
        elif bwrap[i] == "--chdir":
            cwd = bwrap[i + 1]
            i += 2
        else:
            i += 1
    return changes, cwd


def client(path: str, bwrap: list[str], args: list[str]) -> None:
    """Start the sandbox, ask the server for a kernel inside it, stand for that kernel until it ends. Where that
    cannot be done, run the cold kernel in a sandbox of its own instead."""
    import subprocess

    cold = [*bwrap, sys.executable, "-s", "-m", "ipykernel_launcher", *args]
    try:
        _libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # ends with whoever started it, as bwrap would
    except (OSError, AttributeError):
        pass
    changes, cwd = _sandbox_settings(bwrap)
    env = {k: v for k, v in os.environ.items() if changes.get(k, v) is not None}
    env.update({k: v for k, v in changes.items() if v is not None})
    info_r, info_w = os.pipe()
    placeholder = [sys.executable, "-I", "-S", "-c", PLACEHOLDER]
    try:
        sandbox = subprocess.Popen([*bwrap[:-1], "--as-pid-1", "--info-fd", str(info_w), "--", *placeholder],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   pass_fds=[info_w])
    except OSError:
        os.execv(cold[0], cold)
    os.close(info_w)
    with os.fdopen(info_r, "rb") as info:
        said = info.read(4096)
    # bubblewrap tells the process id as soon as the process exists, before it has made the sandbox: joining then
    # would take the machine's root and /proc and bubblewrap's capabilities. Wait until the placeholder runs.
    started = sandbox.stdout.read(1) == b"r"
    sandbox.stdout.close()
    answer = None
    try:
        if not started:
            raise OSError("the sandbox's first process did not start")
        inside = json.loads(said.decode().split("}")[0] + "}")["child-pid"]
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
        request = {"sandbox": inside, "cwd": cwd or os.getcwd(), "env": env, "args": args,
                   "path": [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]}
        send(conn, request, fds=[0, 1, 2])
        answer, _ = recv(conn)
    except (OSError, ValueError, KeyError, IndexError):
        answer = None
    if not answer or not answer.get("pid"):
        sandbox.kill()
        sandbox.wait()
        if args[:1] == [PROBE]:  # the grader's check: a cold kernel would wait for a connection for ever
            sys.exit(ENTER_FAILED)
        os.execv(cold[0], cold)
    try:  # a descriptor of the kernel: a signal passed on can never reach another process that took its id
        kernel = os.pidfd_open(answer["pid"])
    except OSError:
        kernel = None

    def forward(signum, _frame) -> None:  # noqa: ANN001 - a signal handler's frame
        try:
            if kernel is not None:
                signal.pidfd_send_signal(kernel, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, forward)
    while True:
        try:
            answer, _ = recv(conn)
            break
        except InterruptedError:
            continue
    status = answer["status"] if answer else 1
    sandbox.stdin.close()  # the placeholder ends, and with it whatever the kernel left in its PID namespace
    sandbox.kill()
    sandbox.wait()
    sys.exit(status)


def main(argv: list[str]) -> None:
    if argv[:1] == ["serve"]:
        request = serve(argv[1])
        if request is not None:  # a fork of the server
            enter(request)
            sys.exit(0)
        return
    if argv[:1] == ["probe"]:  # what a cold interpreter sees, for comparison
        _probe(argv[1:])
        return
    if argv[:1] == ["client"]:
        count = int(argv[2])
        client(argv[1], argv[3:3 + count], argv[3 + count:])
        return
    raise SystemExit("usage: warm.py serve SOCKET | client SOCKET N BWRAP_ARGS... KERNEL_ARGS... | probe PATHS...")


if __name__ == "__main__":
    main(sys.argv[1:])
