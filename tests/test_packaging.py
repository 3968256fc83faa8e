"""The helper package as Colab installs it: every subpackage and data file is in the wheel pip builds."""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_subpackage_is_listed() -> None:
    """A subpackage missing from pyproject.toml would be missing from a learner's install."""
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "devicelab").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert set(CONFIG["tool"]["setuptools"]["packages"]) == found


def test_every_data_file_is_covered() -> None:
    """Every non-Python file inside the package matches a package-data pattern."""
    patterns = CONFIG["tool"]["setuptools"].get("package-data", {}).get("devicelab", [])
    package = ROOT / "devicelab"
    data = [p for p in package.rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")]
    uncovered = [p for p in data if not any(p.relative_to(package).match(pattern) for pattern in patterns)]
    assert not uncovered, uncovered


# ------------------------------------------------------------------ the tools in anyone's project, without torch

import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

MISTAKE = "import torch\nx = torch.zeros(3)\nx.to('cuda')\n"
PASTE = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel a release builds (python -m build), from a copy of the checkout."""
    out = tmp_path_factory.mktemp("dist")
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "devicelab"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, source / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                            if (ROOT / name).is_dir() else {}))
    done = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out),
                           str(source)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return next(out.glob("devicelab-*.whl"))


def test_the_wheel_holds_the_index_data_and_declares_no_dependency(wheel):
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert "devicelab/data/gpu_captures.json" in names and "devicelab/cli.py" in names
    metadata = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert not [line for line in text.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert "Provides-Extra: grade" in text and "Provides-Extra: fix" in text


def test_in_a_fresh_environment_without_torch_devicelab_lint_and_explain_work(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python, command = venv / "bin" / "python", venv / "bin" / "devicelab"
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    assert subprocess.run([str(python), "-c", "import torch"], capture_output=True, env=env).returncode != 0
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(MISTAKE, encoding="utf-8")
    (project / "clean.py").write_text("print('no tensors here')\n", encoding="utf-8")
    found = subprocess.run([str(command), "lint", "train.py"], cwd=project, capture_output=True, text=True, env=env,
                           timeout=120)
    assert found.returncode == 1 and "DL101" in found.stdout, found.stdout + found.stderr
    clean = subprocess.run([str(command), "lint", "clean.py"], cwd=project, capture_output=True, text=True, env=env)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    (project / "error.txt").write_text(PASTE, encoding="utf-8")
    told = subprocess.run([str(command), "explain", "error.txt", "--lang", "zh"], cwd=project, capture_output=True,
                          text=True, env=env, timeout=120)
    assert told.returncode == 0 and "这是设备错误" in told.stdout and "01-devices" in told.stdout, told.stderr
    assert subprocess.run([str(command), "--version"], capture_output=True, text=True, env=env).stdout.startswith(
        "devicelab ")


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_pre_commit_try_repo_runs_the_hook_on_a_sample_project(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=env)
    (project / "train.py").write_text(MISTAKE, encoding="utf-8")
    subprocess.run(["git", "add", "train.py"], cwd=project, check=True, env=env)
    done = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "devicelab-lint",
                           "--files", "train.py"], cwd=project, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 1 and "DL101" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
