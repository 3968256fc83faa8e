"""The grader trusts nothing a submission made: values it made, processes it started, files it could see.

Submissions are kept outside /tmp, as an instructor's are, and graded by the `devicelab grade` command (a real
command line, which a submission may look for in /proc), with the sandbox on and off. Beside the forgeries, an
honest notebook must be graded right.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from devicelab.grading import world as worlds

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_grading import EXERCISES, FORGE_PRIVATE_COPY, notebook, plant  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MARK = f"devicelab-forgery-{uuid.uuid4().hex[:12]}"  # in every process a forgery starts: how the test finds them

# 1. A tensor whose `device` says what it was asked, returned by to_device without moving anything.
LYING_TO_DEVICE = '''\
import torch


class Here(torch.Tensor):
    claimed = None

    @property
    def device(self):
        return self.claimed if self.claimed is not None else torch.Tensor.device.__get__(self)


def to_device(model, inputs, labels, device):
    model.to(device)
    def claim(tensor):
        fake = tensor.as_subclass(Here)
        fake.claimed = torch.device(device)
        return fake
    return model, claim(inputs), claim(labels)
'''

# 2. A process that outlives its kernel, waits for the gradebook named on the grader's command line and rewrites
#    its own row to full marks.
OUTLIVING = f'''\
import subprocess, sys
waiter = r"""
import csv, os, sys, time
deadline = time.time() + 300
while time.time() < deadline:
    for pid in os.listdir("/" + "pr" + "oc"):
        try:
            with open("/" + "pr" + "oc/" + pid + "/cmd" + "line", "rb") as f:
                argv = f.read().split(bytes(1))
        except OSError:
            continue
        if b"--out" in argv:
            out = argv[argv.index(b"--out") + 1].decode()
            if os.path.exists(out):
                rows = list(csv.DictReader(open(out)))
                if rows and any("forge-outlive" in r["submission"] for r in rows):
                    for r in rows:
                        if "forge-outlive" in r["submission"]:
                            r.update({{k: "correct" for k in {EXERCISES!r}}}, tampered="")
                    with open(out, "w", newline="") as f:
                        w = csv.DictWriter(f, fieldnames=list(rows[0]))
                        w.writeheader()
                        w.writerows(rows)
                    sys.exit(0)
    time.sleep(0.2)
"""
subprocess.Popen([sys.executable, "-c", waiter, "{MARK}"], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
'''

# 3. Reading a classmate's submission (found through the grader's command line) and taking its answers.
PEEKING = '''\
import ast, glob, json, os
answers = {}
for pid in os.listdir("/" + "pr" + "oc"):
    try:
        with open("/" + "pr" + "oc/" + pid + "/cmd" + "line", "rb") as f:
            argv = f.read().decode(errors="replace").split(chr(0))
    except OSError:
        continue
    for arg in argv:
        for path in glob.glob(os.path.join(arg, "*honest*")) if os.path.isdir(arg) else []:
            for cell in json.load(open(path))["cells"]:
                for line in "".join(cell["source"]).splitlines():
                    if line.startswith("answer_") and " = " in line:
                        name, value = line.split(" = ", 1)
                        answers[name] = ast.literal_eval(value.split("#")[0].strip())
globals().update(answers)
'''


def forgeries() -> dict[str, dict]:
    solved, untouched = notebook("solutions"), notebook("labs")
    return {
        "honest.ipynb": solved,
        "forge-subclass.ipynb": plant(solved, replace={"def to_device(": LYING_TO_DEVICE}),
        "forge-outlive.ipynb": plant(untouched, after={"ex1, ex2 = lab.exercises": OUTLIVING}),
        "forge-peek.ipynb": plant(untouched, replace={"answer_1 =": PEEKING}),
        "forge-private-copy.ipynb": plant(untouched, after={"ex1, ex2 = lab.exercises": FORGE_PRIVATE_COPY}),
    }


def alive_with_mark() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and MARK.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                found.append(int(entry))
        except OSError:
            continue
    return found


@pytest.fixture(scope="module", params=["--sandbox", "--no-sandbox"])
def isolation(request):
    """The forgeries graded in the sandbox with cold kernels (test_grading.py's `graded` grades them warm, the
    default) and without the sandbox."""
    if request.param == "--sandbox" and worlds.sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {worlds.sandbox_problem()}")
    folder = ROOT / ".cache" / f"submissions-{uuid.uuid4().hex[:8]}"  # outside /tmp, as an instructor's are
    folder.mkdir(parents=True)
    try:
        for name, nb in forgeries().items():
            (folder / name).write_text(json.dumps(nb), encoding="utf-8")
        out, feedback = folder.parent / f"{folder.name}.csv", folder.parent / f"{folder.name}-feedback"
        done = subprocess.run([sys.executable, "-m", "devicelab", "grade", str(folder), "--out", str(out), "-j", "2",
                               "--timeout", "120", "--feedback", str(feedback), request.param, "--no-warm-kernels"],
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-2000:]
        survivors = alive_with_mark()
        time.sleep(2)  # what a forged process would do after the grader wrote the gradebook
        rows = {Path(r["submission"]).stem: r for r in csv.DictReader(out.open(encoding="utf-8"))}
        findings = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in feedback.rglob("*.json")}
        yield request.param, rows, findings, survivors
    finally:
        for pid in alive_with_mark():
            os.kill(pid, 9)
        shutil.rmtree(folder, ignore_errors=True)
        for leftover in folder.parent.glob(f"{folder.name}*"):
            shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink()


def verdicts(row: dict) -> list[str]:
    return [row[name] for name in EXERCISES]


def test_the_honest_notebook_is_graded_right_beside_the_forgeries(isolation):
    _, rows, _, _ = isolation
    row = rows["honest"]
    assert verdicts(row) == ["correct"] * len(EXERCISES) and not row["tampered"], (row["problem"], row["tampered"])


def test_a_tensor_that_lies_about_its_device_earns_nothing_and_is_flagged(isolation):
    _, rows, findings, _ = isolation
    row = rows["forge-subclass"]
    assert row["ex2"] != "correct" and row["tampered"], row
    assert any("tensor class of its own: Here" in f for f in findings["forge-subclass"]["tampered"])
    assert "cannot trust" in findings["forge-subclass"]["messages"]["ex2"]


def test_no_process_a_submission_started_outlives_the_run(isolation):
    mode, rows, findings, survivors = isolation
    assert not survivors and not alive_with_mark()
    row = rows["forge-outlive"]
    assert "correct" not in verdicts(row) and row["tampered"], row  # the gradebook was not rewritten
    said = " ".join(findings["forge-outlive"]["tampered"])
    assert "still running when it was judged" in said
    if mode == "--no-sandbox":
        assert "outlived its kernel" in said


def test_a_submission_cannot_take_a_classmates_answers(isolation):
    mode, rows, findings, _ = isolation
    row = rows["forge-peek"]
    if mode == "--sandbox":  # it sees neither the grader's command line nor the submissions folder
        assert row["ex1"] != "correct", row
    else:  # the same account can read the files: the scan flags the attempt, and a flagged row earns nothing
        assert row["tampered"] and "keeps from submissions" in " ".join(findings["forge-peek"]["tampered"])


def test_a_submission_that_rewrites_its_copy_of_the_checks_harms_no_other(isolation):
    """Each run has a private copy of the checks: one a submission rewrote is noticed (without the sandbox, where
    it can be written; in the sandbox it is read-only) and earns nothing, and the honest notebook graded in the same
    run loads its own copy, untouched."""
    mode, rows, findings, _ = isolation
    assert verdicts(rows["forge-private-copy"]) != ["correct"] * len(EXERCISES)
    if mode == "--no-sandbox":
        assert any("private copy" in f for f in findings["forge-private-copy"]["tampered"])
    assert verdicts(rows["honest"]) == ["correct"] * len(EXERCISES)
    assert not any("private copy" in f or "could not load" in f for f in findings["honest"]["tampered"])


def test_in_the_sandbox_another_submission_and_the_checkout_cannot_be_read(tmp_path):
    if worlds.sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {worlds.sandbox_problem()}")
    secret = ROOT / ".cache" / f"classmate-{uuid.uuid4().hex[:8]}.ipynb"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("answer_1 = 'cpu'", encoding="utf-8")
    world = worlds.new_world()
    try:
        world.write_package({"__init__.py": b""})
        probe = ("import os, sys\n"
                 f"paths = [{str(secret)!r}, {str(ROOT / 'README.md')!r}]\n"
                 "seen = [p for p in paths if os.path.exists(p)]\n"
                 "others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) > 3]\n"
                 "print(seen, len(others))\n")
        done = subprocess.run([*worlds.bwrap_prefix(world), sys.executable, "-s", "-c", probe], capture_output=True,
                              text=True, timeout=60, env=world.env())
        assert done.returncode == 0, done.stderr
        seen, others = done.stdout.rsplit(" ", 1)
        assert seen == "[]" and int(others) == 0, done.stdout  # nothing of theirs, no process but its own
    finally:
        world.remove()
        secret.unlink()


# --- warm kernels (devicelab/grading/warm.py) ------------------------------------------------------------------
@pytest.fixture(scope="module")
def warm_server():
    if worlds.sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {worlds.sandbox_problem()}")
    from devicelab.grading import package_files

    server = worlds.WarmServer()
    problem = server.problem(package_files())
    if problem is not None and "Operation not permitted" in problem:  # the machine's rule, not the grader's
        server.stop()
        pytest.skip(f"this machine does not let a process join a sandbox's namespaces: {problem}")
    yield server
    server.stop()


def probe_cold(world: worlds.World, hidden: list[str]) -> dict:
    """What a cold interpreter started in the world's sandbox sees (the probe of warm.py, from the private copy)."""
    warm = world.checks / "devicelab" / "grading" / "warm.py"
    done = subprocess.run([*worlds.bwrap_prefix(world), sys.executable, "-s", "-c",
                           f"exec(open({str(warm)!r}).read())", "probe", *hidden],
                          capture_output=True, text=True, timeout=60, env=world.env())
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def probe_warm(world: worlds.World, server: worlds.WarmServer, hidden: list[str]) -> dict:
    sandbox_args = worlds.bwrap_prefix(world)
    done = subprocess.run([sys.executable, "-I", "-S", str(worlds.WARM), "client", server.path,
                           str(len(sandbox_args)), *sandbox_args, "--probe", *hidden],
                          capture_output=True, text=True, timeout=60, env=world.env(), cwd=world.work)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_a_warm_kernel_sees_what_a_cold_one_sees_in_the_same_sandbox(warm_server):
    """The fork joins the sandbox bubblewrap made for its world: same processes, folder, network, capabilities,
    no-new-privileges flag, groups and user, and the grader's private copy of devicelab is what it imports. It
    cannot see the other worlds, the submissions or the checkout; its random state is its own."""
    from devicelab.grading import package_files

    secret = ROOT / ".cache" / f"classmate-{uuid.uuid4().hex[:8]}.ipynb"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("answer_1 = 'cpu'", encoding="utf-8")
    world, other = worlds.new_world(), worlds.new_world()
    try:
        world.write_package(package_files())
        hidden = [str(secret), str(ROOT / "README.md"), str(other.root), warm_server.path]
        cold, warm = probe_cold(world, hidden), probe_warm(world, warm_server, hidden)
        again = probe_warm(world, warm_server, hidden)
    finally:
        world.remove()
        other.remove()
        secret.unlink()
    assert warm["seen"] == [] and cold["seen"] == []
    for key in ("pid", "fds", "processes", "cwd", "devicelab", "interfaces", "status"):
        assert warm[key] == cold[key], (key, warm[key], cold[key])
    assert warm["processes"] == [1, 2] and warm["interfaces"] == ["lo"]
    assert warm["sys.path"] == [str(world.work), str(world.checks)]  # `python -m` from the world, then PYTHONPATH
    assert warm["random"] != again["random"]
    assert warm_server.problem(package_files()) is None


def start_kernel(world: worlds.World, argv: list[str]):  # noqa: ANN201 - a jupyter_client KernelManager
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import KernelManager

    manager = KernelManager(kernel_name="python3", transport="ipc", connection_file=str(world.runtime / "kernel.json"))
    manager._kernel_spec = KernelSpec(argv=argv, display_name="test", language="python", interrupt_mode="message")
    manager.start_kernel(cwd=str(world.work), env=world.env())
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    return manager, client


def run(client, code: str) -> str:  # noqa: ANN001 - a jupyter_client BlockingKernelClient
    said = []
    client.execute_interactive(code, timeout=60, output_hook=lambda m: said.append(m["content"].get("text", "")))
    return "".join(said)


def test_a_warm_kernel_runs_cells_and_its_death_ends_its_client_with_its_status(warm_server):
    world = worlds.new_world()
    world.write_package({"__init__.py": b""})
    manager, client = start_kernel(world, worlds.kernel_argv(world, True, warm_server.path))
    try:
        said = run(client, "import os, sys, torch\nprint(os.getpid(), 'torch' in sys.modules, os.getcwd())")
        assert said.split() == ["2", "True", str(world.work)]  # the PID namespace's second process, in its world
        client.execute("import os; os._exit(3)")
        deadline = time.monotonic() + 30
        while manager.is_alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not manager.is_alive() and manager.provisioner.process.returncode == 3
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        world.remove()


def test_without_its_server_a_warm_kernel_starts_cold_inside_the_sandbox():
    if worlds.sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {worlds.sandbox_problem()}")
    world = worlds.new_world()
    world.write_package({"__init__.py": b""})
    manager, client = start_kernel(world, worlds.kernel_argv(world, True, str(world.root / "no-server.sock")))
    try:
        said = run(client, "import os\nprint(os.getpid(), len([p for p in os.listdir('/proc') if p.isdigit()]))")
        assert said.split() == ["2", "2"]  # bubblewrap's first process and the kernel: nothing else is visible
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        world.remove()


def test_a_warm_kernel_shut_down_at_once_leaves_nothing_behind(warm_server):
    """The grader ends a kernel by killing the process it started (the client): the sandbox ends with it, and the
    kernel, whose parent is outside the sandbox, is reaped, so that the sandbox's first process can finish ending
    and nothing is left for the grader to find (it would mark an honest row)."""
    world = worlds.new_world()
    world.write_package({"__init__.py": b""})
    worlds.become_subreaper()  # as the grader is: orphans of the sandbox come here
    before = worlds.children()
    manager, client = start_kernel(world, worlds.kernel_argv(world, True, warm_server.path))
    try:
        kernel = manager.provisioner.pid
        assert run(client, "print(6 * 7)").strip() == "42"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        left = worlds.end_leftovers(world, before, kernel)
        world.remove()
    assert left == []


def test_a_client_that_leaves_before_its_answer_ends_neither_the_server_nor_another_kernel(warm_server):
    """A kernel whose start is given up (its client killed while the server is still answering) must not take the
    server down: every warm kernel of the run is a child of the server's and would die with it."""
    from warm_kernels import _protocol as protocol  # warm.py, loaded by path
    world = worlds.new_world()
    world.write_package({"__init__.py": b""})
    manager, client = start_kernel(world, worlds.kernel_argv(world, True, warm_server.path))
    try:
        assert run(client, "x = 6 * 7\nprint(x)").strip() == "42"
        for _ in range(8):
            import socket

            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.connect(warm_server.path)
            # a sandbox it cannot enter: the server answers at once, to a client that has already gone
            protocol.send(conn, {"sandbox": os.getpid(), "cwd": "/", "env": {}, "args": [], "path": []},
                          fds=[0, 1, 2])
            conn.close()
            time.sleep(0.2)
            assert warm_server.process.poll() is None, "the warm kernel server ended"
        assert run(client, "print(x)").strip() == "42"  # the same kernel, still alive
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        world.remove()


def test_a_warm_kernels_sandbox_reaps_the_processes_its_kernel_orphans(warm_server):
    """Inside a PID namespace an orphan comes to the namespace's first process; around a warm kernel that is the
    placeholder, which must reap it as bubblewrap's init does around a cold kernel (no zombie stays)."""
    world = worlds.new_world()
    world.write_package({"__init__.py": b""})
    manager, client = start_kernel(world, worlds.kernel_argv(world, True, warm_server.path))
    code = """import os, subprocess, sys, time
orphan = "import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(0.3)'])"
subprocess.run([sys.executable, "-c", orphan], check=True)  # its child outlives it, then ends
def states():
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            found.append(open(f"/proc/{pid}/stat").read().rsplit(") ", 1)[1][0])
        except OSError:
            pass
    return found
deadline = time.monotonic() + 10
while time.monotonic() < deadline and (len(states()) > 2 or "Z" in states()):
    time.sleep(0.1)
print(os.getppid(), sorted(states()))
"""
    try:
        parent, said = run(client, code).strip().split(" ", 1)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        world.remove()
    assert parent == "0"  # a warm kernel: its parent is outside the sandbox (a cold one's is bubblewrap's init, 1)
    assert "Z" not in said and said.count("'") == 4, said  # the placeholder and the kernel, neither a zombie


def test_a_fork_reaped_and_its_client_gone_in_the_same_wake_up_is_dropped_once_and_never_signalled():
    """The server sees a fork end (it reaps it and tells its client) and that client's connection close in one
    wake-up: the second event must neither fail (the connection is no longer watched) nor signal the process id,
    which the fork no longer holds. (In a process of its own: the server's reaping takes any child.)"""
    script = f"""
import importlib.util, os, selectors, socket
spec = importlib.util.spec_from_file_location("warm", {str(worlds.WARM)!r})
protocol = importlib.util.module_from_spec(spec)
spec.loader.exec_module(protocol)
signalled = []
protocol._kill = lambda *pids: signalled.extend(pids)
pid = os.fork()
if pid == 0:
    os._exit(0)
ours, theirs = socket.socketpair()
selector = selectors.DefaultSelector()
selector.register(ours, selectors.EVENT_READ, pid)
forks = {{pid: ours}}
theirs.close()
os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped yet
protocol._reap(forks, selector)
protocol._drop(pid, forks, selector)
print(forks, signalled, dict(selector.get_map()))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["{}", "[]", "{}"]


SLOW_BWRAP = """#!{python}
# bubblewrap, made slow to build its sandbox: thousands of folders to create after it has told the process id
import os, shutil, sys
args = sys.argv[1:]
at = args.index("--as-pid-1")
slow = [x for i in range(4000) for x in ("--dir", f"/tmp/slow/{{i}}")]
os.execv(shutil.which("bwrap"), ["bwrap", *args[:at], *slow, *args[at:]])
"""


def test_a_warm_kernel_waits_until_bubblewrap_has_made_its_sandbox(warm_server, tmp_path):
    """bubblewrap tells the sandbox's process id (--info-fd) as soon as that process exists, before its mounts, root
    and capabilities are made: a kernel that joined then would see the machine. It joins once the placeholder runs."""
    from devicelab.grading import package_files

    slow = tmp_path / "bwrap"
    slow.write_text(SLOW_BWRAP.format(python=sys.executable), encoding="utf-8")
    slow.chmod(0o755)
    world = worlds.new_world()
    try:
        world.write_package(package_files())
        hidden = [str(ROOT / "README.md"), warm_server.path]
        cold = probe_cold(world, hidden)
        sandbox_args = worlds.bwrap_prefix(world)
        sandbox_args[0] = str(slow)
        for _ in range(2):
            done = subprocess.run([sys.executable, "-I", "-S", str(worlds.WARM), "client", warm_server.path,
                                   str(len(sandbox_args)), *sandbox_args, "--probe", *hidden],
                                  capture_output=True, text=True, timeout=120, env=world.env(), cwd=world.work)
            assert done.returncode == 0, done.stderr[-2000:]
            warm = json.loads(done.stdout)
            assert warm["seen"] == [] and warm["processes"] == [1, 2] and warm["status"] == cold["status"]
            assert warm["cwd"] == str(world.work)
    finally:
        world.remove()
