"""The labs' setup cell, run as Colab would run it: it installs only the helper, never torch, from the repository
or, when the repository's host does not answer or the install fails, from the course's site; when both fail it
stops the lab at its first cell, in the notebook's language, with pip's own error and what to do (on Colab and
off it). tests/site/test_helper_wheel.py installs the helper for real from the built site."""

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_notebooks  # noqa: E402  (tools/build_notebooks.py: the setup cell's template and addresses)

LABS = sorted((ROOT / "labs").glob("*/*.ipynb"))

# Runs the setup cell in a fresh process (CASE_SERVER below) that looks like Colab without the helper installed:
# `google.colab` is importable, `devicelab` is not found, pip is replaced by a recorder that answers with
# PIP_CODES in turn (the last one from then on), and the hosts in ANSWERING accept a connection, no other.
HARNESS = """
import importlib.util, json, socket, subprocess, sys, types
sys.modules["google.colab"] = types.ModuleType("google.colab")
_find_spec = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name in ("devicelab", "timm") else _find_spec(name, *a)
calls, probed = [], []
def fake_run(args, **kwargs):
    calls.append(list(args))
    code = PIP_CODES[min(len(calls), len(PIP_CODES)) - 1]
    return subprocess.CompletedProcess(args, code, "", "ERROR: could not reach the package index")
subprocess.run = fake_run
def fake_connection(address, timeout=None, *rest):
    probed.append(list(address))
    if address[0] not in ANSWERING:
        raise OSError("Network is unreachable")
    return types.SimpleNamespace(close=lambda: None)
socket.create_connection = fake_connection
printed = []
try:
    exec(compile(SETUP, "setup-cell", "exec"), {"print": lambda *a, **k: printed.append(" ".join(map(str, a)))})
    outcome = "no error"
except RuntimeError as error:
    outcome = str(error)
except ModuleNotFoundError as error:
    outcome = "import: " + str(error)
print(json.dumps({"calls": calls, "probed": probed, "printed": printed, "outcome": outcome}))
"""
REPOSITORY_HOST = "github.com"
SITE_HOST = urlsplit(build_notebooks.helper_index_url()).hostname


# Each case runs in a fresh process, as a new Colab runtime would: a fork of one interpreter that has imported
# torch and nothing else of the course's (the setup cell's last line imports the helper, which imports torch:
# paid once here instead of once per case). One line of JSON in per case, one line out.
CASE_SERVER = r"""
import json, os, sys, traceback
import torch  # noqa: F401
for line in sys.stdin:
    case = json.loads(line)
    read, write = os.pipe()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.chdir(case["cwd"])
        os.dup2(write, 1)
        code = 0
        try:
            exec(compile(case["script"], "<setup cell case>", "exec"), {"__name__": "__main__"})
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    os.close(write)
    with os.fdopen(read, encoding="utf-8") as pipe:
        printed = pipe.read()
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    print(json.dumps({"status": status, "stdout": printed}), flush=True)
"""


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """Runs one case of the harness below in a fresh fork; returns (exit status, what it printed, its stderr)."""
    errors = tmp_path_factory.mktemp("case-server") / "stderr.txt"
    with errors.open("w", encoding="utf-8") as stderr:
        server = subprocess.Popen([sys.executable, "-c", CASE_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=stderr, text=True, encoding="utf-8")

    def run(script: str, cwd: Path) -> tuple[int, str, str]:
        server.stdin.write(json.dumps({"script": script, "cwd": str(cwd)}) + "\n")
        server.stdin.flush()
        answer = server.stdout.readline()
        assert answer, errors.read_text(encoding="utf-8")[-4000:]
        done = json.loads(answer)
        return done["status"], done["stdout"], errors.read_text(encoding="utf-8")[-4000:]

    yield run
    server.stdin.close()
    server.wait(timeout=60)


def run_setup_cell(cases, notebook: Path, pip_codes: list[int], tmp_path: Path,
                   answering: tuple[str, ...] = (REPOSITORY_HOST, SITE_HOST)) -> dict:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    setup = "".join(next(c for c in cells if c["cell_type"] == "code")["source"])
    script = f"SETUP = {setup!r}\nPIP_CODES = {pip_codes!r}\nANSWERING = {list(answering)!r}\n{HARNESS}"
    status, printed, stderr = cases(script, tmp_path)
    assert status == 0, stderr
    return json.loads(printed.strip().splitlines()[-1])


def packages(call: list[str]) -> list[str]:
    """What a recorded pip call installs (its arguments that are neither options nor an option's value)."""
    found, skip = [], False
    for arg in call[4:]:
        if skip or arg.startswith("-"):
            skip = arg in ("--index-url", "--timeout", "--retries")
            continue
        found.append(arg)
    return found


@pytest.mark.parametrize("notebook", LABS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_on_colab_the_setup_cell_installs_the_helper_without_touching_torch(cases, notebook, tmp_path):
    result = run_setup_cell(cases, notebook, pip_codes=[0], tmp_path=tmp_path)
    helper, timm = result["calls"]  # the helper from the repository, then timm, which Colab lacks
    for call in (helper, timm):
        assert call[1:4] == ["-m", "pip", "install"] and "--no-deps" in call
        assert not any(p.split("=")[0].split("<")[0].split(">")[0] in ("torch", "torchvision") for p in packages(call))
        assert "-U" not in call and "--upgrade" not in call
    assert packages(helper) == [build_notebooks.SETUP.split('HELPER = "')[1].split('"')[0].format(
        repo=build_notebooks.repo_url())]
    assert packages(helper)[0].startswith("git+https://github.com/") and packages(timm) == ["timm"]
    assert result["outcome"] == "no error" and result["printed"] == []


@pytest.mark.parametrize("notebook", LABS[:1] + LABS[-1:], ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_when_github_does_not_answer_the_setup_cell_installs_the_helper_from_the_courses_site(cases, notebook,
                                                                                            tmp_path):
    result = run_setup_cell(cases, notebook, pip_codes=[0], tmp_path=tmp_path, answering=(SITE_HOST,))
    assert result["probed"][0] == [REPOSITORY_HOST, 443]  # asked first, and never handed to pip
    helper = result["calls"][0]
    assert helper[helper.index("--index-url") + 1] == build_notebooks.helper_index_url()
    assert packages(helper) == ["devicelab"] and "--no-deps" in helper
    assert result["outcome"] == "no error"
    said = {"en": "could not be installed from GitHub", "zh": "无法从 GitHub 安装"}[notebook.parent.name]
    assert len(result["printed"]) == 1 and said in result["printed"][0], result["printed"]


@pytest.mark.parametrize("notebook", LABS[:1] + LABS[-1:], ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_when_the_install_from_github_fails_the_setup_cell_installs_the_helper_from_the_courses_site(
        cases, notebook, tmp_path):
    result = run_setup_cell(cases, notebook, pip_codes=[1, 0], tmp_path=tmp_path)
    from_github, from_site = result["calls"][:2]
    assert packages(from_github)[0].startswith("git+") and packages(from_site) == ["devicelab"]
    assert "--index-url" in from_site and result["outcome"] == "no error"


@pytest.mark.parametrize("notebook", LABS[:1] + LABS[-1:], ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_without_network_the_setup_cell_says_what_failed_and_why(cases, notebook, tmp_path):
    result = run_setup_cell(cases, notebook, pip_codes=[1], tmp_path=tmp_path)
    lang = notebook.parent.name
    expected = {"en": "The course helper could not be installed", "zh": "无法安装课程辅助包"}[lang]
    assert result["outcome"].startswith(expected), result["outcome"]
    assert "could not reach the package index" in result["outcome"]
    result = run_setup_cell(cases, notebook, pip_codes=[0], tmp_path=tmp_path, answering=())
    assert result["calls"] == [] and result["outcome"].startswith(expected), result
    for host in (REPOSITORY_HOST, SITE_HOST):
        assert f"ERROR: {host} does not answer (Network is unreachable)" in result["outcome"]


# --- the two failure paths, in a real kernel, in both languages --------------------------------------------

# Makes a kernel look as if the helper were not installed. The setup cell is pointed at a local server that
# answers but holds neither the repository nor the site's index, so that the real git and the real pip both fail
# (the setup cell's "does not answer" path is the harness's above).
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


def what_to_do(lang: str, on_colab: bool, helper: str) -> str:
    return {
        ("en", True): "connect the runtime to the internet",
        ("en", False): f"run `pip install --no-deps {helper}`",
        ("zh", True): "让运行时连上网络",
        ("zh", False): f"在当前环境里运行 `pip install --no-deps {helper}`",
    }[lang, on_colab]


def setup_source(lang: str, helper: str, index: str) -> str:
    cells = json.loads((ROOT / "labs" / lang / "01-devices.ipynb").read_text(encoding="utf-8"))["cells"]
    setup = "".join(next(c for c in cells if c["cell_type"] == "code")["source"])
    for name, address in (("HELPER", helper), ("HELPER_INDEX", index)):
        url = next(line for line in setup.splitlines() if line.startswith(f"{name} = ")).split('"')[1]
        setup = setup.replace(f'{name} = "{url}"', f'{name} = "{address}"')
    return setup


@pytest.fixture
def empty_server(tmp_path):
    """The address of a local HTTP server that answers 404 to everything."""
    import functools
    import http.server
    import threading

    empty = tmp_path / "empty"
    empty.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(empty))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.mark.xdist_group("setup-cell-kernel")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_failed_install_stops_the_lab_at_its_first_cell_with_the_cause_and_what_to_do(lang, tmp_path, empty_server):
    from jupyter_client.manager import start_new_kernel

    helper, index = f"git+{empty_server}/labs", f"{empty_server}/simple/"

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
        # pip installs into a folder of its own, where the course environment's own devicelab does not count
        # as "already installed" and nothing can reach the environment itself
        assert run(f"import os; os.environ['PIP_TARGET'] = {str(tmp_path / 'target')!r}")["status"] == "ok"
        for on_colab in (True, False):
            colab = ("import types; sys.modules['google.colab'] = types.ModuleType('google.colab')" if on_colab
                     else "sys.modules.pop('google.colab', None)")
            assert run(colab)["status"] == "ok"
            outcome = run(setup_source(lang, helper, index))
            # The run stops here ("Run all" goes no further), with one localized message.
            assert outcome["status"] == "error" and outcome["error"]["ename"] == "RuntimeError", outcome
            message = outcome["error"]["evalue"]
            first = {"en": "The course helper could not be installed", "zh": "无法安装课程辅助包"}[lang]
            assert message.startswith(first), message
            # The cause as the installers themselves said it (git, then pip), not pip's boilerplate around it.
            assert f"fatal: repository '{empty_server}/labs/' not found" in message, message
            assert "ERROR: No matching distribution found for devicelab" in message, message
            assert "note: This error originates" not in message
            assert what_to_do(lang, on_colab, helper) in message, message
            if not on_colab:
                assert f"pip install --no-deps --index-url {index} devicelab" in message, message
            if lang == "zh":  # nothing but the quoted cause and the command in English
                prose = [line for line in message.splitlines() if not line.startswith("  ")]
                assert all(any("\u4e00" <= ch <= "\u9fff" for ch in line) for line in prose), prose
            assert run("print(LAB)")["text"].strip() == "01-devices"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
