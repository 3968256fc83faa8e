"""The flake8 plugin reports what `python -m devicelab.lint` reports, and flake8's own noqa applies."""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from devicelab.lint.flake8_plugin import Plugin

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]


def test_the_plugin_yields_flake8_tuples() -> None:
    source = (FIXTURES / "bad_resume.py").read_text(encoding="utf-8")
    results = list(Plugin(ast.parse(source), source.splitlines(True)).run())
    assert [(line, col, text.split()[0]) for line, col, text, _ in results] == [(8, 17, "DL701"), (12, 4, "DL702")]
    assert results[0][2].endswith("/07-checkpoints/")


def test_the_entry_point_is_declared_in_pyproject() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["project"]["entry-points"]["flake8.extension"] == {"DL": "devicelab.lint.flake8_plugin:Plugin"}


def test_flake8_runs_the_plugin(tmp_path: Path) -> None:
    pytest.importorskip("flake8")
    script = tmp_path / "resume.py"
    script.write_text("import torch\nstate = torch.load('a.pt')\nother = torch.load('b.pt')  # noqa: DL701\n"
                      "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    config = tmp_path / "setup.cfg"
    config.write_text("[flake8]\n")
    installed = any(e.value == "devicelab.lint.flake8_plugin:Plugin"
                    for e in metadata.entry_points(group="flake8.extension"))
    if not installed:  # an install older than the entry point: register the plugin the local way
        config.write_text("[flake8:local-plugins]\nextension =\n    DL = devicelab.lint.flake8_plugin:Plugin\n"
                          f"paths = {ROOT}\n")
    done = subprocess.run([sys.executable, "-m", "flake8", "--config", str(config), "--select", "DL", str(script)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.stdout.startswith(f"{script}:2:9: DL701 torch.load without map_location"), done.stdout + done.stderr
    assert len(done.stdout.strip().splitlines()) == 1


def test_the_plugin_fills_a_rules_variant_and_leaves_the_preview_rules_out() -> None:
    source = ("import torch\nimport torch.nn as nn\nDEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'\n\n\n"
              "class Policy(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.log_std = nn.Parameter(torch.zeros(2))\n\n"
              "    def std(self, n):\n        return torch.ones(n, 1) * self.log_std.exp()\n\n\n"
              "def pad(mask, n):\n    f = torch.zeros(mask.size(0), n)\n    if mask.is_cuda:\n        f = f.cuda()\n"
              "    return torch.cat([mask, f], 1)\n\n\npolicy = Policy().to(DEVICE)\n")
    results = list(Plugin(ast.parse(source), source.splitlines(True)).run())
    assert [text.split()[0] for _, _, text, _ in results] == ["DL505"]  # DL106 here is a preview rule
    assert "which then meets `self.log_std` (`*`), where the model is" in results[0][2]
