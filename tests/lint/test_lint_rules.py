"""Every rule on scripts written like real ones: each `# expect: CODE` line is found, nothing else is."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from devicelab.lint import RULES, Config, config_from_toml, lint_file, lint_text, main
from devicelab.lint.core import cells_source, lint_source
from devicelab.lint.vocabulary import DEPRECATED_AMP

FIXTURES = Path(__file__).parent / "fixtures"
PREVIEW = tuple(code for code, rule in RULES.items() if rule.preview)  # run here by their full codes
EXPECT = re.compile(r"#\s*expect:\s*(DL\d+)")


def expected(path: Path) -> set[tuple[int, str]]:
    return {(n, m.group(1)) for n, line in enumerate(path.read_text().splitlines(), 1) if (m := EXPECT.search(line))}


def fixtures(kind: str) -> list[str]:
    """The fixture files of one kind: scripts, and the modules of a package (`package/`, an `__init__.py` beside
    them: library code, whose functions are called by code not in sight)."""
    return sorted(str(p.relative_to(FIXTURES)) for pattern in (f"{kind}_*.py", f"package/{kind}_*.py")
                  for p in FIXTURES.glob(pattern))


@pytest.mark.parametrize("name", fixtures("bad"))
def test_every_planted_mistake_is_found_and_nothing_else(name: str) -> None:
    path = FIXTURES / name
    found = {(p.line, p.code) for p in lint_file(path, Config(select=("DL", *PREVIEW)))}
    assert found == expected(path)


@pytest.mark.parametrize("name", fixtures("good"))
def test_clean_look_alikes_are_not_flagged(name: str) -> None:
    assert lint_file(FIXTURES / name, Config(select=("DL", *PREVIEW))) == []


def test_every_rule_has_a_positive_fixture_and_both_languages() -> None:
    planted = {code for name in fixtures("bad") for _, code in expected(FIXTURES / name)}
    assert planted == set(RULES) - {"DL000"}  # DL000, a file not checked: tests/lint/test_lint_robustness.py
    for rule in RULES.values():
        assert set(rule.message) == set(rule.summary) == {"en", "zh"}
        assert rule.message["en"] and rule.message["zh"] and rule.summary["en"] and rule.summary["zh"]


NOTEBOOK_CELLS = [
    ("markdown", "# My experiment"),
    ("code", "%pip install timm\nimport torch\nimport torch.nn as nn\n"
             "device = 'cuda' if torch.cuda.is_available() else 'cpu'"),
    ("code", "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n"
             "        return self.fc(x + torch.randn(x.shape[0], 4))"),
    ("markdown", "Now load the weights"),
    ("code", "!ls\nnet = Net().to(device)\nweights = torch.load('w.pt')\nx = torch.zeros(3)\n"
             "x.to('cuda')  # noqa: DL101"),
    ("code", "with torch.cuda.amp.autocast():\n    pass"),
]


def write_notebook(path: Path, cells: list[tuple[str, str]]) -> Path:
    path.write_text(json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": text.splitlines(True),
                                           **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                                          for kind, text in cells],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


def test_a_notebook_is_read_cell_by_cell_with_aliases_from_earlier_cells(tmp_path: Path) -> None:
    notebook = write_notebook(tmp_path / "experiment.ipynb", NOTEBOOK_CELLS)
    problems = lint_file(notebook, Config())
    assert [(p.cell, p.line, p.code) for p in problems] == [(3, 7, "DL501"), (5, 3, "DL701"), (6, 1, "DL801")]
    assert problems[0].location() == f"{notebook}:cell_3:7:28"


def test_a_broken_cell_does_not_hide_the_others() -> None:
    source = cells_source([(1, "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'"),
                           (2, "def broken(:\n    pass"),
                           (3, "torch.load('x.pt')")])
    found = lint_source(source, "nb.ipynb")
    assert [(p.cell, p.line, p.code) for p in found] == [(2, 1, "DL000"), (3, 1, "DL701")]  # the broken one named
    assert "does not parse as Python" in found[0].message("en") and "Python 语法" in found[0].message("zh")


def test_noqa_silences_the_codes_it_names_and_only_those() -> None:
    code = ("import torch\ntorch.load('a.pt')  # noqa: DL701\ntorch.load('b.pt')  # noqa: DL102\n"
            "torch.load('c')  # noqa\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    assert [p.line for p in lint_text(code)] == [3]


def test_select_and_ignore_from_pyproject() -> None:
    code = "import torch\nx = torch.zeros(3)\nx.to('cuda')\ntorch.load('a.pt')\n"\
           "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
    assert {p.code for p in lint_text(code)} == {"DL101", "DL701"}
    only_07 = config_from_toml('[tool.devicelab.lint]\nselect = ["DL7"]\n')
    assert {p.code for p in lint_text(code, config=only_07)} == {"DL701"}
    no_701 = config_from_toml('[tool.devicelab.lint]\nignore = ["DL701"]\n')
    assert {p.code for p in lint_text(code, config=no_701)} == {"DL101"}
    back = config_from_toml('[tool.devicelab.lint]\nselect = ["DL", "DL701"]\nignore = ["DL7"]\n')
    assert {p.code for p in lint_text(code, config=back)} == {"DL101", "DL701"}  # the longer prefix wins


def test_the_command_line_text_json_languages_and_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    script = tmp_path / "train.py"
    script.write_text("import torch\nstate = torch.load('ckpt.pt')\n"
                      "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n",
                      encoding="utf-8")
    assert main([str(script), "--config", "/dev/null", "--lang", "en"]) == 1
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{script}:2:9 DL701 torch.load without map_location")
    assert line.endswith("— https://devicelab-course.github.io/pytorch-device-errors/07-checkpoints/")
    assert main([str(script), "--config", "/dev/null", "--lang", "zh", "--format", "json"]) == 1
    [entry] = json.loads(capsys.readouterr().out)
    assert entry["code"] == "DL701" and entry["line"] == 2 and entry["column"] == 9 and entry["fixable"]
    assert "map_location" in entry["message"] and "没有" in entry["message"]
    assert entry["url"] == "https://devicelab-course.github.io/pytorch-device-errors/zh/07-checkpoints/"
    script.write_text("import torch\nstate = torch.load('ckpt.pt', map_location='cpu')\n", encoding="utf-8")
    assert main([str(script), "--config", "/dev/null"]) == 0
    assert capsys.readouterr().out == ""


def test_chapter_links_use_the_site_address_of_mkdocs_yml(monkeypatch: pytest.MonkeyPatch) -> None:
    from devicelab.lint import chapter_url

    mkdocs = (Path(__file__).resolve().parents[2] / "mkdocs.yml").read_text(encoding="utf-8")
    default = re.search(r'^site_url: .*"(.+)"', mkdocs, re.MULTILINE).group(1)
    monkeypatch.delenv("DEVICELAB_SITE_URL", raising=False)
    assert chapter_url("05-inside", "en") == default.rstrip("/") + "/05-inside/"
    assert chapter_url("05-inside", "zh") == default.rstrip("/") + "/zh/05-inside/"
    monkeypatch.setenv("DEVICELAB_SITE_URL", "https://example.org/course")
    assert chapter_url("07-checkpoints", "en") == "https://example.org/course/07-checkpoints/"


@pytest.mark.parametrize("name", sorted(DEPRECATED_AMP))
def test_every_spelling_dl801_names_is_deprecated_in_the_installed_torch(name: str) -> None:
    import functools
    import warnings

    import torch

    target = functools.reduce(getattr, name.split(".")[1:], torch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        target(lambda ctx, x: x) if name.endswith(("custom_fwd", "custom_bwd")) else target()
    assert any(issubclass(w.category, FutureWarning) and "torch.amp" in str(w.message) for w in caught)


def test_exclude_applies_below_the_folder_named(tmp_path: Path) -> None:
    from devicelab.lint.core import iter_files

    for folder in ("labs", "src"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "train.py").write_text("import torch\ntorch.load('a.pt')\n", encoding="utf-8")
    config = config_from_toml('[tool.devicelab.lint]\nexclude = ["labs"]\n')
    assert [p.relative_to(tmp_path).as_posix() for p in iter_files([tmp_path], config)] == ["src/train.py"]
    assert [p.name for p in iter_files([tmp_path / "labs"], config)] == ["train.py"]  # named: linted


def test_a_cells_last_expression_is_displayed_not_thrown_away(tmp_path: Path) -> None:
    notebook = write_notebook(tmp_path / "show.ipynb", [
        ("code", "import torch\nx = torch.zeros(3)\nx.to('cuda')\nprint(x.device)"),
        ("code", "x.to('cuda')\n# Jupyter shows the moved copy"),
    ])
    assert [(p.cell, p.line, p.code) for p in lint_file(notebook, Config())] == [(1, 3, "DL101")]


def test_a_script_that_does_not_parse_is_reported_not_passed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    script = tmp_path / "broken.py"
    script.write_text("import torch\ndef train(:\n", encoding="utf-8")
    assert main([str(script), "--config", "/dev/null", "--lang", "en"]) == 1
    [line] = capsys.readouterr().out.splitlines()
    assert line.startswith(f"{script}:2:11 DL000 not checked: it does not parse as Python")


def test_the_linter_itself_needs_no_torch() -> None:
    """It reads code: none of its modules imports torch (libcst only in --fix, imported there)."""
    import ast as python_ast

    package = Path(__file__).resolve().parents[2] / "devicelab" / "lint"
    for module in package.rglob("*.py"):
        tree = python_ast.parse(module.read_text(encoding="utf-8"))
        imported = {alias.name.split(".")[0] for node in python_ast.walk(tree) if isinstance(node, python_ast.Import)
                    for alias in node.names}
        imported |= {(node.module or "").split(".")[0] for node in python_ast.walk(tree)
                     if isinstance(node, python_ast.ImportFrom) and not node.level}
        assert "torch" not in imported, module.name
        top_level = {alias.name for node in tree.body if isinstance(node, (python_ast.Import, python_ast.ImportFrom))
                     for alias in node.names}
        assert "libcst" not in top_level, module.name


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_tools_page_lists_every_rule_in_its_table(lang: str) -> None:
    page = (Path(__file__).parents[2] / "docs" / lang / "tools.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| (DL\d{3})(?: \*[^|]*\*)? \|", page, flags=re.M))
    marked = set(re.findall(r"^\| (DL\d{3}) \*[^|]*\* \|", page, flags=re.M))
    assert marked == {code for code, rule in RULES.items() if rule.preview}  # the preview rules say so
    assert listed == set(RULES)


def test_list_rules_marks_the_preview_rules_and_how_to_select_them(capsys) -> None:
    assert main(["--list-rules", "--lang", "en"]) == 0
    lines = {line.split(" ", 1)[0]: line for line in capsys.readouterr().out.splitlines()}
    for code, rule in RULES.items():
        assert (f"[preview: --select {code}]" in lines[code]) is rule.preview
