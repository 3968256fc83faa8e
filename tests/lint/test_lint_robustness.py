"""Files the linter cannot read or parse: each is one DL000 finding, in both languages, and the run goes on;
what IPython adds to Python in a notebook (magics, `obj?`) and the older nbformat 3 are read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devicelab.lint import Config, lint_file, main

# a program that may run on the CPU (DL701 speaks only then)
LOAD = "import torch\nstate = torch.load('ckpt.pt')\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"


def notebook(path: Path, cells: object, **top: object) -> Path:
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5, **top}),
                    encoding="utf-8")
    return path


def code_cell(source: object) -> dict:
    return {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}


def codes(path: Path) -> list[tuple[int | None, int, str]]:
    return [(p.cell, p.line, p.code) for p in lint_file(path, Config())]


@pytest.mark.parametrize("cells, kind", [(None, "null"), ({"a": 1}, "object"), ("import torch", "string")])
def test_a_notebook_without_a_list_of_cells_is_one_finding(tmp_path: Path, cells: object, kind: str) -> None:
    [problem] = lint_file(notebook(tmp_path / "nb.ipynb", cells), Config())
    assert problem.code == "DL000" and (problem.line, problem.col) == (1, 1)
    assert problem.message("en") == f"not checked: a notebook without a list of cells (its cells are a JSON {kind})"
    assert problem.message("zh") == f"未检查：笔记本里没有单元格列表（它的 cells 是 JSON {kind}）"


def test_cells_that_are_not_cells_are_one_finding_and_the_others_are_checked(tmp_path: Path) -> None:
    path = notebook(tmp_path / "nb.ipynb", ["import torch", code_cell(LOAD), 3, code_cell(["torch.load('b')"])])
    assert codes(path) == [(1, 1, "DL000"), (2, 2, "DL701"), (4, 1, "DL701")]
    assert "cell 1 is not a notebook cell (a JSON string)" in lint_file(path, Config())[0].message("en")


@pytest.mark.parametrize("source", [42, None, {"text": "x"}, ["import torch\n", 7]])
def test_a_cell_source_that_is_not_text_is_one_finding(tmp_path: Path, source: object) -> None:
    path = notebook(tmp_path / "nb.ipynb", [code_cell(LOAD), code_cell(source)])
    problems = lint_file(path, Config())
    assert [(p.cell, p.code) for p in problems] == [(2, "DL000"), (1, "DL701")]
    assert "第 2 个单元格的源码" in problems[0].message("zh")


def test_a_file_that_is_not_json_is_one_finding(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_text('{"cells": [\n  oops', encoding="utf-8")
    [problem] = lint_file(path, Config())
    assert (problem.code, problem.line) == ("DL000", 2) and "not valid JSON" in problem.message("en")


@pytest.mark.parametrize("terms", [1_000, 100_000])
def test_a_very_long_expression_is_one_finding(tmp_path: Path, terms: int) -> None:
    """1,000 terms parse and nest too deeply for the analysis; 100,000 too deeply for Python's parser."""
    path = tmp_path / "long.py"
    path.write_text("import torch\nx = " + " + ".join(["torch.zeros(1)"] * terms) + "\n", encoding="utf-8")
    [problem] = lint_file(path, Config())
    assert problem.code == "DL000" and "nested too deeply" in problem.message("en")
    assert "嵌套太深" in problem.message("zh")


def test_a_utf8_bom_is_read_not_unparseable(tmp_path: Path) -> None:
    script, nb = tmp_path / "bom.py", tmp_path / "bom.ipynb"
    script.write_bytes(b"\xef\xbb\xbf" + LOAD.encode("utf-8"))
    nb.write_bytes(b"\xef\xbb\xbf" + json.dumps({"cells": [code_cell(LOAD)], "nbformat": 4}).encode("utf-8"))
    assert codes(script) == [(None, 2, "DL701")] and codes(nb) == [(1, 2, "DL701")]
    assert lint_file(script, Config())[0].col == 9  # the BOM is no column


def test_a_declared_encoding_is_honoured_and_an_unknown_one_is_one_finding(tmp_path: Path) -> None:
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + LOAD.encode("ascii"))
    assert codes(latin) == [(None, 4, "DL701")]
    unknown = tmp_path / "unknown.py"
    unknown.write_bytes(b"# -*- coding: klingon -*-\n" + LOAD.encode("ascii"))
    [problem] = lint_file(unknown, Config())
    assert problem.code == "DL000" and "encoding" in problem.message("en")


@pytest.mark.parametrize("line", ["torch.load?", "torch.load??", "?torch.load", "??torch", "torch.*load*?",
                                  "%time y = 1", "%timeit -n1 torch.zeros(1)", "!pip install timm",
                                  "files = !ls", "    %debug"])
def test_ipython_help_magics_and_shell_lines_keep_the_cells_other_findings(tmp_path: Path, line: str) -> None:
    cell = f"import torch\nif True:\n{line if line.startswith(' ') else '    ' + line}\n{line.strip()}\n" \
           "state = torch.load('ckpt.pt')\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
    path = notebook(tmp_path / "nb.ipynb", [code_cell(cell)])
    assert codes(path) == [(1, 5, "DL701")]


def test_a_question_mark_inside_python_is_not_taken_for_help(tmp_path: Path) -> None:
    path = notebook(tmp_path / "nb.ipynb", [code_cell('import torch\nwhy = "why?"\n"""is it?\nthis?\n"""\n' + LOAD)])
    assert codes(path) == [(1, 7, "DL701")]


def test_a_line_that_continues_an_expression_with_percent_is_python_not_a_magic(tmp_path: Path) -> None:
    cell = 'import torch\nname = ("epoch %d"\n% 3)\nlabel = "%s"\\\n  % name\n' + LOAD.split("\n", 1)[1]
    path = notebook(tmp_path / "nb.ipynb", [code_cell(cell)])
    assert codes(path) == [(1, 6, "DL701")]


def test_an_nbformat_3_notebook_is_read(tmp_path: Path) -> None:
    path = tmp_path / "old.ipynb"
    path.write_text(json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": [
        {"cell_type": "heading", "level": 1, "source": ["Old"]},
        {"cell_type": "code", "language": "python", "input": ["import torch\n", "torch.load('a.pt')\n",
                                                           "device = 'cuda' if torch.cuda.is_available() else 'cpu'"],
         "outputs": []},
    ]}]}), encoding="utf-8")
    assert codes(path) == [(2, 2, "DL701")]


def test_a_folder_run_goes_on_past_every_unreadable_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    notebook(tmp_path / "a_null.ipynb", None)
    (tmp_path / "b_broken.py").write_text("import torch\ndef f(:\n", encoding="utf-8")
    (tmp_path / "c_binary.py").write_bytes(b"\x00\xff\xfe\x00")
    (tmp_path / "d_train.py").write_text(LOAD, encoding="utf-8")
    assert main([str(tmp_path), "--config", "/dev/null", "--lang", "en", "--format", "json"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert [(Path(f["path"]).name, f["code"]) for f in found] == [
        ("a_null.ipynb", "DL000"), ("b_broken.py", "DL000"), ("c_binary.py", "DL000"), ("d_train.py", "DL701")]
    assert found[0]["url"].endswith("/tools/") and not found[0]["fixable"]


def test_dl000_is_reported_whatever_is_selected_unless_ignored_by_name(tmp_path: Path) -> None:
    from devicelab.lint import config_from_toml

    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n", encoding="utf-8")
    only_05 = config_from_toml('[tool.devicelab.lint]\nselect = ["DL5"]\n')
    assert [p.code for p in lint_file(tmp_path / "broken.py", only_05)] == ["DL000"]
    ignored = config_from_toml('[tool.devicelab.lint]\nignore = ["DL000"]\n')
    assert lint_file(tmp_path / "broken.py", ignored) == []
