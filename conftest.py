"""Keep together, on one pytest-xdist worker, the tests that share one kernel, process or expensive fixture.

`make test` runs the suite with `-n 2 --dist loadgroup`: tests are spread over both cores one by one, except
those carrying an `xdist_group` mark, which go to one worker as a unit. Marking by hand is easy to forget, so
the marks are added here, before pytest-xdist reads them:

- every cell of a notebook run by nbval (the cells share one kernel and run in order): one group per notebook
  (nbval's cells keep their own node ids, so the scheduler below groups them by notebook file);
- the tests of one file that use the same module-scoped fixtures (a graded class, a started job): one group, so
  that each fixture is built once, not once per worker, while a file's other fixtures go to the other worker.

Session-scoped fixtures that are expensive (the built site) are shared between workers through a file lock
instead (tests/site/conftest.py).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time
from pathlib import Path

import pytest

# What each scheduling unit cost in a past run (tools/timeline.py --write): the costliest are handed out first.
DURATIONS = Path(__file__).resolve().parent / "tests" / "durations.json"
UNKNOWN_COST = 0.3  # seconds: a unit the file does not know (a new test); most tests take less


def scope_of(nodeid: str) -> str:
    """The unit the scheduler hands out whole: a notebook's file, an xdist group, or the test itself."""
    path = nodeid.split("::", 1)[0]
    if path.endswith(".ipynb"):
        return path
    if "@" in nodeid:
        return nodeid.rsplit("@", 1)[-1]
    return nodeid


def pytest_configure(config: pytest.Config) -> None:
    """In each test process, import the parts of torch that torch imports lazily on first use: the first failing
    `torch._check` imports torch.fx's symbolic shapes (and sympy), the first optimizer imports torch._dynamo, about
    a second together. The checks' unit tests run learners' code under time limits of a second; a limit that fires
    in the middle of such an import leaves a half-imported sympy behind ("module 'sympy' has no attribute
    'logic'"), and every later test of that process fails. Which test pays for the import would depend on the
    order the scheduler happens to choose."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        _MACHINE["start"] = (machine_busy_seconds(), time.monotonic())
    if not os.environ.get("PYTEST_XDIST_WORKER") and config.getoption("numprocesses", default=None):
        return  # the controller of a parallel run runs no test
    _warm_kernels().install()
    try:
        import torch._dynamo  # noqa: F401
        import torch.fx.experimental.symbolic_shapes  # noqa: F401
    except Exception:  # noqa: BLE001, S110 - without torch there is nothing to load early
        pass


_MACHINE: dict[str, tuple[float, float]] = {}


def machine_busy_seconds() -> float:
    """The CPU seconds every core of this machine has spent busy since it started (Linux's /proc/stat; 0 elsewhere):
    everything that ran counts, the kernels of the grader's sandbox and the browsers too, whose CPU time no test
    process is told about (a process killed before its parent waited for it takes its children's time with it),
    and so does any other work on the machine."""
    try:
        fields = Path("/proc/stat").read_text(encoding="ascii").splitlines()[0].split()[1:]
        user, nice, system, _idle, _iowait, irq, softirq = (int(f) for f in fields[:7])
    except (OSError, ValueError, IndexError):
        return 0.0
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _warm_kernels():
    """tests/warm_kernels.py: this process's kernels start as forks of one interpreter that has imported torch."""
    import importlib.util
    import sys

    module = sys.modules.get("devicelab_warm_kernels")
    if module is None:
        spec = importlib.util.spec_from_file_location("devicelab_warm_kernels",
                                                      Path(__file__).resolve().parent / "tests" / "warm_kernels.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return module


def _module_scoped_fixtures(item: pytest.Item) -> list[str]:
    """The names of the module-, class- or package-scoped fixtures a test uses."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    return sorted(name for name, definitions in info.name2fixturedefs.items()
                  if any(d.scope in ("module", "package", "class") for d in definitions))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add an `xdist_group` mark to the notebooks' cells and to tests sharing a module-scoped fixture."""
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        path = item.path
        if path.suffix == ".ipynb":
            item.add_marker(pytest.mark.xdist_group(f"notebook:{path.parent.parent.name}/{path.parent.name}/{path.name}"))
        else:
            shared = _module_scoped_fixtures(item)
            if shared:  # the tests of one file that share the same fixtures: built once, on one worker
                item.add_marker(pytest.mark.xdist_group(f"module:{path.name}:{'+'.join(shared)}"))


def pytest_xdist_make_scheduler(config: pytest.Config, log):  # noqa: ANN001 - xdist's Producer
    """`--dist loadgroup`, where a notebook's cells (whatever their node id says) form one group, and the units
    are handed out costliest first (longest-processing-time first), so the run does not end with one worker
    alone on a long unit that happened to come last in collection order."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    try:
        costs = json.loads(DURATIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        costs = {}

    class CourseScheduling(LoadGroupScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

        def _assign_work_unit(self, node) -> None:  # noqa: ANN001 - xdist's WorkerController
            if not self.ordered:  # the queue is complete the first time work is handed out
                units = sorted(self.workqueue.items(),
                               key=lambda unit: -costs.get(unit[0], UNKNOWN_COST * len(unit[1])))
                self.workqueue.clear()
                self.workqueue.update(units)
                self.ordered = True
            super()._assign_work_unit(node)

    return CourseScheduling(config, log)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """With DEVICELAB_TIMELINE=file, write each phase of each test (worker, start, stop) as a JSON line: the
    data `tools/timeline.py` reads to show where the two workers wait and to refresh tests/durations.json."""
    path = os.environ.get("DEVICELAB_TIMELINE")
    if not path or os.environ.get("PYTEST_XDIST_WORKER"):  # written once, by the controller
        return
    node = getattr(report, "node", None)
    worker = node.gateway.id if node is not None else "main"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": report.nodeid, "worker": worker, "when": report.when,
                                 "start": report.start, "stop": report.stop}) + "\n")


# --------------------------------------------------------------------- CPU seconds, per test and per group

# Where each test's CPU time is counted (tools/timeline.py --cpu): the first rule whose path prefix matches.
GROUPS = (
    ("tests/answers/", "answer banks"), ("tests/test_grading", "grading"), ("tests/test_nbgrader", "grading"),
    ("tests/site/", "site"), ("tests/learner/", "learner walks"), ("tests/unit/", "unit"),
    ("tests/claims/", "claims"), ("tests/errors/", "error index"), ("tests/lint/", "lint"),
    ("labs/", "notebooks"), ("solutions/", "notebooks"),
)


def group_of(nodeid: str) -> str:
    """The group a test's CPU seconds are reported under (GROUPS; "other" for the rest)."""
    return next((name for prefix, name in GROUPS if nodeid.startswith(prefix)), "other")


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _descendants() -> dict[int, tuple[int, int]]:
    """{pid: (its own CPU ticks, the ticks of its children that it has reaped)} for each running
    descendant of this process: a browser and its renderers, a kernel server and its kernels, torchrun and its
    ranks. (Children started from a thread other than a process's main one are counted when their parent reaps them.)"""
    found, stack = {}, [os.getpid()]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as handle:
                kids = handle.read().split()
        except OSError:  # gone, or no /proc (not Linux): counted when it ends, as before
            continue
        for kid in map(int, kids):
            try:
                with open(f"/proc/{kid}/stat", encoding="ascii", errors="replace") as handle:
                    stat = handle.read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": fields 3 on of proc(5)
            utime, stime, cutime, cstime = (int(value) for value in fields[11:15])  # fields 14-17
            found[kid] = (utime + stime, cutime + cstime)
            stack.append(kid)
    return found


_TREE: dict[str, object] = {"last": {}, "ended": 0.0, "lost": 0.0}


def _cpu_seconds(children: bool = True) -> float:
    """This process's CPU seconds, those of its children that have ended, and those of its running descendants
    (kernels, builds, browsers) so far: a browser's CPU counts in the tests that drive it, not at its end.

    A descendant that ends is reaped by its parent (its ticks move into the parent's reaped ticks) or by this process
    (RUSAGE_CHILDREN), so the sum stays whole. One whose parent ended first (a browser's renderers when the browser
    is closed, ranks left by a killed torchrun) is reaped by no one we see: what it had spent when last seen, beyond
    what the reaped ticks grew by, is kept as "lost" so that no test is charged a negative amount."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    spent = own.ru_utime + own.ru_stime
    if not children:
        return spent
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    ended_now = ended.ru_utime + ended.ru_stime
    now, last = _descendants(), _TREE["last"]
    gone = sum(mine + reaped for pid, (mine, reaped) in last.items() if pid not in now) / _TICK
    if gone:
        grew = sum(now[pid][1] - reaped for pid, (_, reaped) in last.items() if pid in now) / _TICK
        _TREE["lost"] += max(0.0, gone - grew - (ended_now - _TREE["ended"]))
    _TREE["last"], _TREE["ended"] = now, ended_now
    running = sum(mine + reaped for mine, reaped in now.values()) / _TICK
    return spent + ended_now + running + _TREE["lost"]


_CPU = {"last": None}


def _record_cpu(record: dict) -> None:
    with open(os.environ["DEVICELAB_CPU"], "a", encoding="utf-8") as handle:  # one short line: appended whole
        handle.write(json.dumps(record) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):  # noqa: ANN001 - pytest's signature
    """With DEVICELAB_CPU=file, write the CPU seconds each test cost in its process (setup, call and teardown,
    the kernels and subprocesses it waited for included) as a JSON line: CPU time shows what a change costs even
    on a busy machine, where wall time does not. A kernel or browser that outlives its test is counted when
    it ends: with the notebook's last cell, or the session's end ("session" below)."""
    if not os.environ.get("DEVICELAB_CPU"):
        yield
        return
    before, started = _cpu_seconds(), time.monotonic()
    if _CPU["last"] is not None and before - _CPU["last"] > 0.05:  # between tests: a fixture's end, the scheduler
        _record_cpu({"id": "(between tests)", "group": "session", "cpu": round(before - _CPU["last"], 3),
                     "wall": 0.0, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main")})
    yield
    # A subprocess whose Popen object was dropped before it ended is reaped (and its CPU time counted) only when
    # the next one starts, in whichever test that is: reap the ones that have ended now, so that they count here.
    # (No gc.collect() here: over a heap holding torch it costs a tenth of a second a test, minutes a run.)
    getattr(subprocess, "_cleanup", lambda: None)()
    after = _cpu_seconds()
    _CPU["last"] = after
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    # The last test of a process also tears down the session's fixtures (its browser, its kernels, the site's
    # server): their CPU seconds are the session's, not this test's.
    session_teardown = _CPU.pop("session_teardown", 0.0) if nextitem is None else 0.0
    _record_cpu({"id": item.nodeid, "group": group_of(item.nodeid), "cpu": round(after - before - session_teardown, 3),
                 "wall": round(time.monotonic() - started, 3), "worker": worker})
    if session_teardown:
        _record_cpu({"id": "(fixtures the last test ended: browsers, kernels, servers)", "group": "session",
                     "cpu": round(session_teardown, 3), "wall": 0.0, "worker": worker})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem):  # noqa: ANN001 - pytest's signature
    """With DEVICELAB_CPU=file, the CPU seconds of the last test's teardown, which ends the session's fixtures."""
    if not os.environ.get("DEVICELAB_CPU") or nextitem is not None:
        yield
        return
    before = _cpu_seconds()
    yield
    getattr(subprocess, "_cleanup", lambda: None)()
    _CPU["session_teardown"] = _cpu_seconds() - before


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The CPU seconds of each process outside its tests: start-up, collection, session teardown."""
    _warm_kernels().stop()  # its kernels' CPU seconds are this process's from here on
    if os.environ.get("DEVICELAB_CPU"):
        # The controller of a parallel run counts itself only: its children are the workers, which count theirs.
        controller = not os.environ.get("PYTEST_XDIST_WORKER") and bool(
            session.config.getoption("numprocesses", default=None))
        _record_cpu({"id": "(start-up, collection and session teardown)", "group": "session",
                     "cpu": round(_cpu_seconds(children=not controller) - sum_recorded(), 3), "wall": 0.0,
                     "worker": os.environ.get("PYTEST_XDIST_WORKER", "main")})
        if "start" in _MACHINE:  # the process that started the run: the whole machine from its start to its end
            busy, started = _MACHINE["start"]
            _record_cpu({"id": "(the whole machine while the run lasted)", "group": "machine",
                         "cpu": round(machine_busy_seconds() - busy, 3), "wall": round(time.monotonic() - started, 3),
                         "worker": "(machine)"})


def sum_recorded() -> float:
    """The CPU seconds this process has already written to the DEVICELAB_CPU file."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    try:
        lines = Path(os.environ["DEVICELAB_CPU"]).read_text(encoding="utf-8").splitlines()
    except OSError:
        return 0.0
    return sum(r["cpu"] for r in map(json.loads, filter(None, lines)) if r.get("worker") == worker)
