"""Every make target installs what it uses: from a clean checkout, with no environment yet, it works.

`make -n` shows each target's first command: the shared install step (tools/install.sh). Then, in a copy of
the checkout holding only the files git tracks, with a new, empty environment, `make install` really runs the
install step (the packages themselves come from this test's environment, which the new one is pointed at, so
that no wheel is downloaded again), a second `make install` returns at once, and the targets that take seconds
(`make notebooks`, `make nbgrader`; `make outputs` only lists what is stale) run for real.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TARGETS_WITH_INSTALL = ["build", "check", "notebooks", "outputs", "nbgrader", "bench", "gpu-wheels"]


def _clean_copy(folder: Path) -> Path:
    """The files git tracks (as they are in the working tree), nothing else: what a fresh clone holds."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    copy = folder / "course"
    for name in filter(None, tracked.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            target = copy / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return copy


def _make(copy: Path, *args: str, venv: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    # Run under `make test`, the outer make's variables would make this one print "Entering directory" lines.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "VIRTUAL_ENV", "MAKE", "MFLAGS")) and k != "MAKELEVEL"}
    if venv is not None:
        env["VENV"] = str(venv)
    return subprocess.run(["make", *args], cwd=copy, capture_output=True, text=True, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def clean_copy(tmp_path_factory) -> Path:
    return _clean_copy(tmp_path_factory.mktemp("clean"))


@pytest.mark.parametrize("target", [*TARGETS_WITH_INSTALL, "import-gpu-run"])
def test_each_target_runs_the_install_step_first(clean_copy, tmp_path, target):
    shown = _make(clean_copy, "-n", target, "ARCHIVE=run.zip", venv=tmp_path / "no-env-yet")
    assert shown.returncode == 0, shown.stderr
    commands = [line for line in shown.stdout.splitlines() if line.strip()]
    assert commands[0].startswith("bash tools/install.sh"), commands


@pytest.mark.parametrize("script", ["tools/test.sh", "tools/serve.sh"])
def test_the_scripts_behind_test_and_serve_install_first(script):
    lines = (ROOT / script).read_text().splitlines()
    first_use = next(i for i, line in enumerate(lines) if "/bin/python" in line and "install.sh" not in line)
    assert any("bash tools/install.sh" in line for line in lines[:first_use]), script


def test_from_a_clean_checkout_the_targets_install_and_run(tmp_path):
    copy = _clean_copy(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # The new environment sees this one's packages, so pip finds them installed and downloads nothing.
    purelib = sysconfig.get_paths()["purelib"]
    (next(venv.glob("lib/python*/site-packages")) / "course_packages.pth").write_text(purelib + "\n")

    first = _make(copy, "install", venv=venv)
    assert first.returncode == 0, first.stdout + first.stderr
    # the lock fits this checkout (tests/test_install_lock.py) and installs as it is: nothing resolved again
    assert "resolving" not in first.stdout, first.stdout
    assert list(venv.glob(".devicelab-installed-dev"))
    assert (venv / "share" / "jupyter" / "kernels" / "python3").is_dir(), "no python3 kernel installed"

    start = time.monotonic()
    again = _make(copy, "install", venv=venv)
    assert again.returncode == 0 and time.monotonic() - start < 5, again.stderr

    for target in ("notebooks", "nbgrader"):
        done = _make(copy, target, venv=venv)
        assert done.returncode == 0, f"make {target}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert (copy / "nbgrader-course").is_dir()
    # Executing stale solutions takes minutes: here the target only lists them (its exit status says whether
    # there are any; the store's freshness has its own test). What matters is that it ran.
    listed = _make(copy, "outputs", "ARGS=--check", venv=venv)
    assert "No such file" not in listed.stderr, listed.stderr
    assert listed.returncode == 0 or "run: make outputs" in listed.stdout, listed.stdout


def test_make_serve_installs_the_site_alone_and_the_site_builds_without_torch(tmp_path):
    """`make serve` installs requirements-site.txt (no torch) and the helper without dependencies; the hooks
    import no torch, and a stale stored run is shown as it is instead of being executed."""
    lines = (ROOT / "requirements-site.txt").read_text(encoding="utf-8").splitlines()
    site = " ".join(line.split("#")[0] for line in lines)  # the requirements, not their comments
    assert "mkdocs" in site and not any(word in site for word in ("torch", "timm", "ipykernel"))
    assert "-r requirements-site.txt" in (ROOT / "requirements.txt").read_text(encoding="utf-8")
    serve = (ROOT / "tools" / "serve.sh").read_text(encoding="utf-8")
    assert "install.sh serve" in serve and "DEVICELAB_OUTPUTS" in serve
    install = (ROOT / "tools" / "install.sh").read_text(encoding="utf-8")
    assert '"${pip_install[@]}" -r requirements-site.txt' in install and "--no-deps -e ." in install
    probe = ("import sys\n"
             "for name in ('torch', 'torchvision', 'timm', 'nbclient', 'ipykernel', 'matplotlib'):\n"
             "    sys.modules[name] = None  # importing any of them now fails\n"
             f"sys.path[:0] = [{str(ROOT / 'tools')!r}, {str(ROOT)!r}]\n"
             "import mkdocs_hooks, explain_hook, reader_hooks, execute_solutions\n"
             "from pathlib import Path\n"
             f"notebook = Path({str(ROOT / 'solutions' / 'en' / '01-devices.ipynb')!r})\n"
             "shown = mkdocs_hooks.stored_outputs(notebook, mode='stored')\n"
             "print('cells', len(shown['cells']))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("cells "), done.stdout + done.stderr
