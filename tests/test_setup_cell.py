"""The labs' setup cell, run as Colab would run it: it installs only the helper, never torch, and says
clearly when the install fails."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LABS = sorted((ROOT / "labs").glob("*/*.ipynb"))

# Runs the setup cell in a fresh interpreter that looks like Colab without the helper installed:
# `google.colab` is importable, `devicelab` is not found, and pip is replaced by a recorder.
HARNESS = """
import importlib.util, json, subprocess, sys, types
sys.modules["google.colab"] = types.ModuleType("google.colab")
_find_spec = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name in ("devicelab", "timm") else _find_spec(name, *a)
calls = []
def fake_run(args, **kwargs):
    calls.append(list(args))
    return subprocess.CompletedProcess(args, PIP_CODE, "", "ERROR: could not reach the package index")
subprocess.run = fake_run
try:
    exec(compile(SETUP, "setup-cell", "exec"), {})
    outcome = "no error"
except RuntimeError as error:
    outcome = str(error)
except ModuleNotFoundError as error:
    outcome = "import: " + str(error)
print(json.dumps({"calls": calls, "outcome": outcome}))
"""


def run_setup_cell(notebook: Path, pip_code: int, tmp_path: Path) -> dict:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    setup = "".join(next(c for c in cells if c["cell_type"] == "code")["source"])
    script = f"SETUP = {setup!r}\nPIP_CODE = {pip_code}\n{HARNESS}"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("notebook", LABS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_on_colab_the_setup_cell_installs_the_helper_without_touching_torch(notebook, tmp_path):
    result = run_setup_cell(notebook, pip_code=0, tmp_path=tmp_path)
    [call] = result["calls"]
    assert call[1:4] == ["-m", "pip", "install"] and "--no-deps" in call
    packages = [arg for arg in call[4:] if not arg.startswith("-")]
    assert packages[0].startswith("git+https://github.com/")
    assert not any(p.split("=")[0].split("<")[0].split(">")[0] in ("torch", "torchvision") for p in packages)
    assert "-U" not in call and "--upgrade" not in call


@pytest.mark.parametrize("notebook", LABS[:1] + LABS[-1:], ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_without_network_the_setup_cell_says_what_failed_and_what_still_works(notebook, tmp_path):
    result = run_setup_cell(notebook, pip_code=1, tmp_path=tmp_path)
    lang = notebook.parent.name
    expected = {"en": "Could not install the course helper", "zh": "无法安装课程辅助包"}[lang]
    assert result["outcome"].startswith(expected), result["outcome"]
    assert "could not reach the package index" in result["outcome"]
