"""`--format sarif`: one SARIF 2.1.0 run that code-scanning tools read, every rule described, every finding placed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devicelab.lint import RULES, main


def sarif(capsys: pytest.CaptureFixture, *args: str) -> dict:
    main([*args, "--config", "/dev/null", "--format", "sarif"])
    return json.loads(capsys.readouterr().out)


def test_sarif_output_is_one_run_with_the_rules_and_each_finding_placed(tmp_path: Path, capsys) -> None:
    script = tmp_path / "train.py"
    script.write_text("import torch\nx = torch.zeros(3)\nx.to('cuda')\nstate = torch.load('ckpt.pt')\n"
                      "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n",
                      encoding="utf-8")
    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n", encoding="utf-8")
    log = sarif(capsys, str(tmp_path), "--lang", "en")
    assert log["version"] == "2.1.0" and "sarif-2.1.0" in log["$schema"]
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "devicelab lint" and driver["version"]
    rules = driver["rules"]
    assert [rule["id"] for rule in rules] == list(RULES)
    for rule in rules:
        assert rule["shortDescription"]["text"] and "{" not in rule["shortDescription"]["text"]
        assert rule["helpUri"].startswith("https://") and rule["helpUri"].endswith(f"/{RULES[rule['id']].chapter}/")
    results = run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("DL000", "error"), ("DL101", "warning"),
                                                             ("DL701", "warning")]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] and result["message"]["text"]
        [location] = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uri"].startswith("file:///")
        assert physical["region"]["startLine"] >= 1 and physical["region"]["startColumn"] >= 1
    where = results[2]["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"].endswith("/train.py") and where["region"] == {"startLine": 4,
                                                                                            "startColumn": 9}


def test_sarif_in_chinese_names_a_notebook_cell_and_a_relative_path(tmp_path: Path, capsys,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my nb.ipynb").write_text(json.dumps({"cells": [
        {"cell_type": "markdown", "source": "# notes", "metadata": {}},
        {"cell_type": "code", "source": "import torch\nstate = torch.load('c.pt')\n"
                   "device = 'cuda' if torch.cuda.is_available() else 'cpu'", "metadata": {}, "outputs": [],
         "execution_count": None}], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}), encoding="utf-8")
    log = sarif(capsys, "my nb.ipynb", "--lang", "zh")
    [result] = log["runs"][0]["results"]
    assert result["properties"] == {"cell": 2}
    assert result["message"]["text"].startswith("第 2 个单元格：torch.load 没有")
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "my%20nb.ipynb" and physical["region"]["startLine"] == 2
    assert log["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"].endswith("/zh/tools/")
