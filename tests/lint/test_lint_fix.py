"""--fix and --diff: the safe fixes keep the formatting, leave the rest alone, and make the findings go away."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devicelab.lint import Config, lint_file, main

pytest.importorskip("libcst")

BEFORE = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        noise = torch.randn(x.shape[0], 4)  # jitter
        h = torch.zeros(
            x.shape[0],
            4,
        )
        return self.fc(x + noise + h)


state = torch.load("ckpt.pt")
scaler = torch.cuda.amp.GradScaler(init_scale=1024.0)
with torch.cuda.amp.autocast(dtype=torch.float16):
    pass
legacy = torch.cuda.amp.GradScaler(1024.0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = Net().to(device)
'''
AFTER = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        noise = torch.randn(x.shape[0], 4, device=x.device)  # jitter
        h = torch.zeros(
            x.shape[0],
            4,
            device=x.device,
        )
        return self.fc(x + noise + h)


state = torch.load("ckpt.pt", map_location="cpu")
scaler = torch.amp.GradScaler("cuda", init_scale=1024.0)
with torch.amp.autocast("cuda", dtype=torch.float16):
    pass
legacy = torch.cuda.amp.GradScaler(1024.0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = Net().to(device)
'''


def test_fix_rewrites_only_the_safe_cases_and_keeps_the_layout(tmp_path: Path, capsys) -> None:
    script = tmp_path / "train.py"
    script.write_text(BEFORE, encoding="utf-8")
    assert main([str(script), "--config", "/dev/null", "--fix"]) == 1  # the positional GradScaler(1024.0) stays
    assert script.read_text(encoding="utf-8") == AFTER
    left = [(p.line, p.code) for p in lint_file(script, Config())]
    assert left == [(24, "DL801")]
    assert "DL801" in capsys.readouterr().out


def test_diff_shows_the_fixes_and_changes_nothing(tmp_path: Path, capsys) -> None:
    script = tmp_path / "train.py"
    script.write_text(BEFORE, encoding="utf-8")
    assert main([str(script), "--config", "/dev/null", "--diff"]) == 1
    out = capsys.readouterr().out
    assert '+state = torch.load("ckpt.pt", map_location="cpu")' in out
    assert "-        noise = torch.randn(x.shape[0], 4)  # jitter" in out
    assert script.read_text(encoding="utf-8") == BEFORE


def test_fix_in_a_notebook_changes_the_cell_and_keeps_the_rest(tmp_path: Path) -> None:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# Resume\n"]},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": ["import torch\n", "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n",
                         "%matplotlib inline"]},
             {"cell_type": "code", "metadata": {"tags": ["keep"]}, "outputs": [], "execution_count": None,
              "source": ["state = torch.load('w.pt')  # the weights\n", "print(state)"]}]
    notebook = tmp_path / "resume.ipynb"
    notebook.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert main([str(notebook), "--config", "/dev/null", "--fix"]) == 0
    fixed = json.loads(notebook.read_text(encoding="utf-8"))
    assert fixed["cells"][2]["source"] == ["state = torch.load('w.pt', map_location=\"cpu\")  # the weights\n",
                                           "print(state)"]
    assert fixed["cells"][:2] == cells[:2] and fixed["cells"][2]["metadata"] == {"tags": ["keep"]}
