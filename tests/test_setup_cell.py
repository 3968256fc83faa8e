"""The labs' setup cell, run as Colab would run it: it installs only the helper, never torch, and when the
install fails it stops the lab at its first cell, in the notebook's language, with pip's own error and what to do
(on Colab and off it)."""

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
def test_without_network_the_setup_cell_says_what_failed_and_why(notebook, tmp_path):
    result = run_setup_cell(notebook, pip_code=1, tmp_path=tmp_path)
    lang = notebook.parent.name
    expected = {"en": "The course helper could not be installed", "zh": "无法安装课程辅助包"}[lang]
    assert result["outcome"].startswith(expected), result["outcome"]
    assert "could not reach the package index" in result["outcome"]


# --- the two failure paths, in a real kernel, in both languages --------------------------------------------

# Makes a kernel look as if the helper were not installed, and points the setup cell at an address that
# cannot resolve (`.invalid` never does), so that the real pip fails the way it fails without network.
HIDE_HELPER = """
import importlib.util, sys
_find_spec = importlib.util.find_spec
HIDDEN = ("devicelab", "timm")
importlib.util.find_spec = lambda name, *a: None if name.split(".")[0] in HIDDEN else _find_spec(name, *a)

class _NoHelper:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "devicelab":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoHelper())
"""
UNREACHABLE = "git+https://course-helper.invalid/labs"

WHAT_TO_DO = {
    ("en", True): "connect the runtime to the internet",
    ("en", False): f"run `pip install --no-deps {UNREACHABLE}`",
    ("zh", True): "让运行时连上网络",
    ("zh", False): f"在当前环境里运行 `pip install --no-deps {UNREACHABLE}`",
}


def setup_source(lang: str) -> str:
    cells = json.loads((ROOT / "labs" / lang / "01-devices.ipynb").read_text(encoding="utf-8"))["cells"]
    setup = "".join(next(c for c in cells if c["cell_type"] == "code")["source"])
    url = next(line for line in setup.splitlines() if line.startswith("HELPER = ")).split('"')[1]
    return setup.replace(url, UNREACHABLE)


@pytest.mark.xdist_group("setup-cell-kernel")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_failed_install_stops_the_lab_at_its_first_cell_with_the_cause_and_what_to_do(lang, tmp_path):
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))  # not inside a clone
    try:
        def run(code: str) -> dict:
            found: dict = {"error": None, "text": ""}

            def hook(msg: dict) -> None:
                if msg["msg_type"] == "error":
                    found["error"] = msg["content"]
                elif msg["msg_type"] == "stream":
                    found["text"] += msg["content"]["text"]

            reply = client.execute_interactive(code, output_hook=hook, timeout=120)
            found["status"] = reply["content"]["status"]
            return found

        assert run(HIDE_HELPER)["status"] == "ok"
        for on_colab in (True, False):
            colab = ("import types; sys.modules['google.colab'] = types.ModuleType('google.colab')" if on_colab
                     else "sys.modules.pop('google.colab', None)")
            assert run(colab)["status"] == "ok"
            outcome = run(setup_source(lang))
            # The run stops here ("Run all" goes no further), with one localized message.
            assert outcome["status"] == "error" and outcome["error"]["ename"] == "RuntimeError", outcome
            message = outcome["error"]["evalue"]
            first = {"en": "The course helper could not be installed", "zh": "无法安装课程辅助包"}[lang]
            assert message.startswith(first), message
            # The cause as the installer itself said it, not pip's boilerplate around it.
            assert "fatal: unable to access 'https://course-helper.invalid/labs/'" in message, message
            assert "note: This error originates" not in message
            assert WHAT_TO_DO[lang, on_colab] in message, message
            if lang == "zh":  # nothing but the quoted cause and the command in English
                prose = [line for line in message.splitlines() if not line.startswith("  ")]
                assert all(any("\u4e00" <= ch <= "\u9fff" for ch in line) for line in prose), prose
            assert run("print(LAB)")["text"].strip() == "01-devices"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
