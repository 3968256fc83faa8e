"""The CPU report of `make test` (DEVICELAB_CPU, tools/timeline.py --cpu): the whole machine's figure beside the
tests' own."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path):  # noqa: ANN202 - a module
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _root_conftest():  # noqa: ANN202 - a module
    """The course's root conftest.py (here, `import conftest` finds tests/unit/conftest.py)."""
    return _load("devicelab_root_conftest", ROOT / "conftest.py")


def _timeline():  # noqa: ANN202 - a module
    """tools/timeline.py, which imports the root conftest by the name `conftest`."""
    shadowed = sys.modules.get("conftest")
    sys.modules["conftest"] = _root_conftest()
    try:
        return _load("devicelab_timeline", ROOT / "tools" / "timeline.py")
    finally:
        if shadowed is None:
            del sys.modules["conftest"]
        else:
            sys.modules["conftest"] = shadowed


def test_the_machines_busy_seconds_grow_with_work_done_in_any_process():
    conftest = _root_conftest()

    if not Path("/proc/stat").exists():
        assert conftest.machine_busy_seconds() == 0.0
        return
    before = conftest.machine_busy_seconds()
    start = time.process_time()
    while time.process_time() - start < 0.3:
        pass
    assert conftest.machine_busy_seconds() - before >= 0.25


def test_the_report_keeps_the_whole_machine_out_of_the_groups_and_says_what_it_saw_beside_them():
    timeline = _timeline()
    records = [
        {"id": "tests/test_grading.py::test_a", "group": "grading", "cpu": 10.0, "wall": 30.0, "worker": "gw0"},
        {"id": "tests/unit/test_b.py::test_b", "group": "unit", "cpu": 5.0, "wall": 5.0, "worker": "gw1"},
        {"id": "(start-up, collection and session teardown)", "group": "session", "cpu": 5.0, "wall": 0.0,
         "worker": "gw1"},
        {"id": "(the whole machine while the run lasted)", "group": "machine", "cpu": 12.0, "wall": 3.0,
         "worker": "(machine)"},  # a pytest that a test started
        {"id": "(the whole machine while the run lasted)", "group": "machine", "cpu": 70.0, "wall": 40.0,
         "worker": "(machine)"},
    ]
    assert timeline.cpu_groups(records) == {"grading": (10.0, 1), "unit": (5.0, 1), "session": (5.0, 0)}
    assert timeline.machine(records)["cpu"] == 70.0
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        assert timeline.cpu_report(records, top=3) == 0
    lines = shown.getvalue().splitlines()
    assert lines[0] == "CPU seconds of the tests: 20 s in 2 tests"
    assert "busy 70 CPU-s in the 40 s the run lasted; 50 s are not counted above" in lines[1]
    assert timeline.machine(records[:3]) is None


def test_a_run_with_a_cpu_file_writes_the_whole_machine_once_from_the_process_that_started_it(tmp_path):
    import subprocess

    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n", encoding="utf-8")
    cpu_file = tmp_path / "cpu.jsonl"
    env = {"DEVICELAB_CPU": str(cpu_file), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    # The root conftest as a plugin of a pytest outside the course's folder (no torch test, no kernel started).
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
                           str(tmp_path / "test_one.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    records = _timeline().read(cpu_file)
    whole = [r for r in records if r["group"] == "machine"]
    assert len(whole) == 1 and whole[0]["cpu"] > 0 and whole[0]["wall"] > 0
    assert any(r["id"].endswith("test_one") for r in records)


BURN = "import time\nstart = time.process_time()\nwhile time.process_time() - start < {s}:\n    pass\n"


def _linux() -> bool:
    return Path("/proc/self/task").exists()


def test_a_running_childs_cpu_counts_before_it_ends():
    """A browser or kernel server that runs for the whole session is charged to the tests that make it work."""
    import subprocess

    conftest = _root_conftest()
    child = subprocess.Popen([sys.executable, "-c", BURN.format(s=0.6) + "import time\ntime.sleep(30)\n"])
    try:
        before = conftest._cpu_seconds()
        time.sleep(2.0)  # the child burns its 0.6 s, then sleeps: it is still running when measured
        assert child.poll() is None
        grew = conftest._cpu_seconds() - before
        if _linux():
            assert grew >= 0.4, grew
        else:  # no /proc: counted when it ends, as before
            assert grew < 0.4, grew
    finally:
        child.kill()
        child.wait()


def test_a_grandchild_left_by_its_parent_is_not_taken_back_from_the_count():
    """A parent that ends before its child (a closed browser's renderers, a killed torchrun's ranks) leaves the child
    to a process no test waits for: the CPU seconds it was seen to spend stay counted, no later test goes negative."""
    import subprocess

    conftest = _root_conftest()
    if not _linux():
        return
    script = ("import subprocess, sys, time\n"
              f"subprocess.Popen([sys.executable, '-c', {BURN.format(s=0.5)!r} + 'import time\\ntime.sleep(1.5)\\n'])\n"
              "time.sleep(1.0)\n")  # ends while its child still sleeps: the child is orphaned
    first = conftest._cpu_seconds()
    parent = subprocess.Popen([sys.executable, "-c", script])
    time.sleep(0.8)
    seen = conftest._cpu_seconds()  # the grandchild has burnt its 0.5 s and is seen running
    parent.wait()
    time.sleep(1.5)  # the orphan ends, reaped by a process that is not ours
    after = conftest._cpu_seconds()
    assert seen - first >= 0.4, seen - first
    assert after >= seen, (seen, after)
