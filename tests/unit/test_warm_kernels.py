"""The suite's kernels start as forks of a warm interpreter (tests/warm_kernels.py, installed by the root
conftest.py): each must behave as a fresh `python -m ipykernel_launcher` would, for every way a test uses one."""

from __future__ import annotations

import os
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("DEVICELAB_FRESH_KERNELS") == "1", reason="fresh kernels asked for")


def _warm():
    return sys.modules["devicelab_warm_kernels"]


def _run(client, code: str, timeout: float = 60) -> str:
    printed: list[str] = []
    client.execute_interactive(code, timeout=timeout, allow_stdin=False,
                               output_hook=lambda m: printed.append(m["content"].get("text", "")))
    return "".join(printed)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is an ended process
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:  # gone between the two looks: no file, or a read that ends in ESRCH once it is reaped
        return False


def _gone_within(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def kernel(tmp_path):
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    yield manager, client
    client.stop_channels()
    manager.shutdown_kernel(now=True)


def test_a_kernel_is_a_fork_of_the_warm_server_and_runs_where_and_as_a_fresh_one_would(kernel, tmp_path):
    manager, client = kernel
    (tmp_path / "local_module.py").write_text("VALUE = 41\n")
    out = _run(client, "import os, sys, local_module\n"
                       "print(os.getcwd()); print(sys.path[0]); print(os.getppid()); print(local_module.VALUE + 1)\n"
                       "print(os.environ.get('JPY_PARENT_PID')); print(type(get_ipython()).__name__)\n"
                       "print('torch' in sys.modules, 'ipykernel.kernelapp' in sys.modules)")
    cwd, path0, ppid, value, parent_pid, shell, modules = out.split("\n")[:7]
    assert cwd == str(tmp_path) and path0 == str(tmp_path) and value == "42"
    assert int(ppid) == _warm()._server[0].pid, "the kernel is not a fork of the server"
    assert int(ppid) != manager.provisioner.process.pid  # jupyter_client manages the client, not the kernel
    assert parent_pid == str(os.getpid()) and shell == "ZMQInteractiveShell"
    assert modules == "True True"


def test_an_interrupt_reaches_the_kernel_and_shutdown_ends_it(kernel):
    manager, client = kernel
    pid = int(_run(client, "import os; print(os.getpid())").strip())
    msg_id = client.execute("import time\ntry:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    print('stopped')")
    time.sleep(0.5)
    started = time.monotonic()
    manager.interrupt_kernel()
    printed = []
    while True:
        msg = client.get_iopub_msg(timeout=20)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    assert "".join(printed).strip() == "stopped" and time.monotonic() - started < 20
    client.stop_channels()
    manager.shutdown_kernel(now=False)
    assert not manager.is_alive() and _gone_within(pid)


def test_killing_the_managed_process_kills_the_kernel(kernel):
    manager, client = kernel
    pid = int(_run(client, "import os; print(os.getpid())").strip())
    manager.provisioner.process.kill()
    manager.provisioner.process.wait()
    assert _gone_within(pid), "the kernel outlived the process jupyter_client manages"


def test_a_kernel_asked_for_another_pythonpath_starts_fresh(tmp_path, monkeypatch):
    from jupyter_client.manager import KernelManager

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "only_here.py").write_text("WHERE = 'elsewhere'\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "elsewhere"))
    # Over Unix sockets in tmp_path, as the grader starts its kernels: TCP ports picked free can be taken by another
    # process's kernel before this one binds them ("Address already in use").
    manager = KernelManager(kernel_name="python3", transport="ipc", connection_file=str(tmp_path / "kernel.json"))
    manager.start_kernel(cwd=str(tmp_path))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        out = _run(client, "import os, only_here; print(only_here.WHERE, os.getppid())")
        where, ppid = out.split()
        assert where == "elsewhere"
        assert int(ppid) != _warm()._server[0].pid, "a fork cannot honour another PYTHONPATH"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_only_the_plain_launcher_command_is_replaced():
    plain = [sys.executable, "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", "k.json"]
    assert _warm()._is_plain_kernel(plain)
    assert not _warm()._is_plain_kernel([sys.executable, "-s", *plain[2:]])  # the grader's kernels
    assert not _warm()._is_plain_kernel(["bwrap", "--", *plain])
    assert not _warm()._is_plain_kernel(["/usr/bin/python2", *plain[1:]])
