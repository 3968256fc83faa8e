"""The `devicelab` command: one entry point for explain, lint and grade, the `python -m` forms kept."""

from __future__ import annotations

import subprocess
import sys

from devicelab import cli

MESSAGE = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "devicelab", *args], input=stdin, capture_output=True, text=True,
                          timeout=120)


def test_explain_reads_stdin_like_python_m_devicelab_explain():
    done = run("explain", "--lang", "en", stdin=MESSAGE)
    direct = subprocess.run([sys.executable, "-m", "devicelab.explain", "--lang", "en"], input=MESSAGE,
                            capture_output=True, text=True, timeout=120)
    assert done.returncode == direct.returncode == 0 and done.stdout == direct.stdout
    assert "cuda:0" in done.stdout


def test_explain_takes_the_message_itself_as_its_argument_or_a_file_holding_it(tmp_path):
    given = run("explain", "--lang", "en", MESSAGE)
    saved = tmp_path / "error.txt"
    saved.write_text(MESSAGE, encoding="utf-8")
    read = run("explain", "--lang", "en", str(saved))
    piped = run("explain", "--lang", "en", stdin=MESSAGE)
    assert given.returncode == read.returncode == 0 and not given.stderr
    assert given.stdout == read.stdout == piped.stdout and "cuda:0" in given.stdout


def test_lint_finds_a_mistake_and_sets_its_exit_status(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch\nx = torch.zeros(3)\nx.to('cuda')\n", encoding="utf-8")
    done = run("lint", str(script))
    assert done.returncode == 1 and "DL101" in done.stdout


def test_version_help_and_an_unknown_command():
    assert run("--version").stdout.startswith("devicelab ")
    helped = run("--help")
    assert helped.returncode == 0 and all(name in helped.stdout for name in cli.COMMANDS)
    unknown = run("frobnicate")
    assert unknown.returncode == 2 and "unknown command" in unknown.stderr
    assert run().returncode == 2


def test_the_package_declares_the_console_script():
    from pathlib import Path

    import tomllib

    project = tomllib.loads((Path(cli.__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["devicelab"] == "devicelab.cli:main"


def test_help_follows_the_users_locale():
    import os

    zh = subprocess.run([sys.executable, "-m", "devicelab", "--help"], capture_output=True, text=True,
                        env={**os.environ, "LANG": "zh_CN.UTF-8", "LC_ALL": ""}, timeout=120)
    assert zh.stdout.startswith("用法") and "解读" in zh.stdout


def test_github_format_is_one_annotation_per_finding_on_its_line(tmp_path):
    script = tmp_path / "train, v2.py"  # a comma in the name must be escaped in the annotation's properties
    script.write_text("import torch\nx = torch.zeros(3)\nx.to('cuda')\n", encoding="utf-8")
    done = run("lint", str(script), "--format", "github")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("::warning file=") and ",line=3," in lines[0]
    assert "train%2C v2.py" in lines[0] and "title=DL101" in lines[0] and "01-devices" in lines[0]
