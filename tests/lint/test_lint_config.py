"""Each file is linted with its own project's configuration, as ruff finds it: the nearest pyproject.toml above the
file, not above the current folder; --config overrides it; the course's own settings stay in the course."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devicelab.lint import Configs, lint_paths, load_config, main

ROOT = Path(__file__).resolve().parents[2]
BOTH = ("import torch\nx = torch.zeros(3)\nx.to('cuda')\nstate = torch.load('ckpt.pt')\n"  # DL101 and DL701
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n")


def project(folder: Path, table: str | None, files: list[str]) -> Path:
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text(f"[project]\nname = '{folder.name}'\n"
                                           + (f"\n[tool.devicelab.lint]\n{table}\n" if table is not None else ""),
                                           encoding="utf-8")
    for name in files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(BOTH, encoding="utf-8")
    return folder


@pytest.fixture
def two_projects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Two projects beside each other, linted from the course's folder (whose pyproject leaves out labs/ and
    tests/)."""
    only_07 = project(tmp_path / "only07", 'select = ["DL7"]\nexclude = ["generated"]',
                      ["train.py", "generated/big.py", "tests/test_train.py", "src/deep/model.py"])
    no_07 = project(tmp_path / "no07", 'ignore = ["DL7"]', ["train.py", "labs/lab.py"])
    monkeypatch.chdir(ROOT)
    return only_07, no_07


def found(capsys: pytest.CaptureFixture, base: Path, *args: str) -> dict[str, list[str]]:
    main([*args, "--format", "json"])
    out: dict[str, list[str]] = {}
    for entry in json.loads(capsys.readouterr().out):
        out.setdefault(Path(entry["path"]).resolve().relative_to(base).as_posix(), []).append(entry["code"])
    return out


def test_each_file_uses_its_own_projects_pyproject(two_projects, capsys) -> None:
    only_07, no_07 = two_projects
    base = only_07.parent
    assert found(capsys, base, str(only_07), str(no_07)) == {
        "only07/train.py": ["DL701"], "only07/tests/test_train.py": ["DL701"], "only07/src/deep/model.py": ["DL701"],
        "no07/train.py": ["DL101"], "no07/labs/lab.py": ["DL101"],
    }  # generated/ excluded by its own project; the course's exclude of labs/ and tests/ applies to neither


def test_exclude_is_relative_to_the_projects_folder_and_a_path_named_is_read(two_projects, capsys) -> None:
    only_07, _ = two_projects
    base = only_07.parent
    assert found(capsys, base, str(only_07 / "generated" / "big.py")) == {"only07/generated/big.py": ["DL701"]}
    assert found(capsys, base, str(only_07 / "generated")) == {"only07/generated/big.py": ["DL701"]}
    assert "only07/generated/big.py" not in found(capsys, base, str(only_07 / "src"), str(only_07))


def test_config_overrides_every_files_own(two_projects, capsys) -> None:
    only_07, no_07 = two_projects
    base = only_07.parent
    given = found(capsys, base, str(only_07), "--config", str(no_07 / "pyproject.toml"))
    assert given["only07/train.py"] == ["DL101"] and given["only07/generated/big.py"] == ["DL101"]
    selected = found(capsys, base, str(only_07), str(no_07), "--select", "DL1")
    assert selected["only07/train.py"] == ["DL101"] and selected["no07/train.py"] == ["DL101"]


def test_a_pyproject_without_the_table_is_a_project_with_the_defaults(tmp_path: Path) -> None:
    outer = project(tmp_path / "outer", 'select = ["DL7"]', [])
    inner = project(outer / "vendored", None, ["train.py"])
    assert sorted(p.code for p in lint_paths([outer])) == ["DL101", "DL701"]
    assert load_config(inner / "train.py").select == ("DL",) and load_config(outer).select == ("DL7",)


def test_the_course_keeps_its_own_settings_when_linted_from_elsewhere(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    configs = Configs()
    course = configs.for_file(ROOT / "labs" / "en" / "01-devices.ipynb")
    assert course.root == ROOT and "labs" in course.exclude
    assert configs.for_file(tmp_path / "train.py").exclude == ()
