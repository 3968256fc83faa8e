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

import pytest


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
    """`--dist loadgroup`, where a notebook's cells (whatever their node id says) form one group."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class CourseScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            if path.endswith(".ipynb"):
                return path
            return super()._split_scope(nodeid)

    return CourseScheduling(config, log)
