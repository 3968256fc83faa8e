"""Generated notebooks stay in step: with their source, across languages, and student vs solution."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from build_notebooks import code_without_comments, parse  # noqa: E402

SOURCES = sorted((ROOT / "solutions" / "source").glob("*.md"))
LABS = [s.stem for s in SOURCES]
LANG_LINE = re.compile(r'^LANG = "(en|zh)"  # .*$', re.M)


def load(version: str, lang: str, lab: str) -> dict:
    return json.loads((ROOT / version / lang / f"{lab}.ipynb").read_text(encoding="utf-8"))


def code_cells(nb: dict) -> list[str]:
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def test_generated_notebooks_are_fresh():
    done = subprocess.run(
        [sys.executable, "tools/build_notebooks.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_chapter_has_four_notebooks():
    assert LABS, "no lab sources found"
    for lab in LABS:
        for version in ("labs", "solutions"):
            for lang in ("en", "zh"):
                assert (ROOT / version / lang / f"{lab}.ipynb").exists(), (version, lang, lab)


@pytest.mark.parametrize("lab", LABS)
@pytest.mark.parametrize("version", ["labs", "solutions"])
def test_code_cells_are_identical_in_both_languages(version, lab):
    en, zh = load(version, "en", lab), load(version, "zh", lab)
    assert [c["cell_type"] for c in en["cells"]] == [c["cell_type"] for c in zh["cells"]]
    # The one allowed difference: the line of the setup cell that chooses the language.
    # Comments, docstrings and assert messages may be translated: compare the code token by token without them.
    en_code = [code_without_comments(LANG_LINE.sub("LANG", c)) for c in code_cells(en)]
    zh_code = [code_without_comments(LANG_LINE.sub("LANG", c)) for c in code_cells(zh)]
    assert en_code == zh_code
    assert 'LANG = "en"' in code_cells(en)[0] and 'LANG = "zh"' in code_cells(zh)[0]


@pytest.mark.parametrize("lab", LABS)
def test_markdown_is_translated_not_copied(lab):
    en, zh = load("solutions", "en", lab), load("solutions", "zh", lab)
    for a, b in zip(en["cells"], zh["cells"]):
        if a["cell_type"] == "markdown":
            assert re.search(r"[\u4e00-\u9fff]", "".join(b["source"])), "a zh cell without Chinese"
            assert "".join(a["source"]) != "".join(b["source"])


@pytest.mark.parametrize("lab", LABS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_student_version_hides_every_solution(lang, lab):
    student, solution = code_cells(load("labs", lang, lab)), code_cells(load("solutions", lang, lab))
    assert len(student) == len(solution)
    changed = [(s, t) for s, t in zip(solution, student) if s != t]
    assert changed, "the student version should differ from the solution"
    for solved, todo in changed:
        assert "____" in todo and "TODO" in todo
        solved_only = set(solved.splitlines()) - set(todo.splitlines())
        assert solved_only and not (solved_only & set(todo.splitlines()))
    for cell in student + solution:
        assert "### BEGIN SOLUTION" not in cell and "#>" not in cell
    assert not any(re.search(r"= ____", cell) for cell in solution), "a solution left a blank"


def test_notebooks_are_committed_clean():
    for path in (ROOT / "labs").glob("*/*.ipynb"):
        for other in [path, ROOT / "solutions" / path.parent.name / path.name]:
            nb = json.loads(other.read_text(encoding="utf-8"))
            for cell in nb["cells"]:
                assert cell.get("outputs", []) == [] and cell.get("execution_count") is None
            text = other.read_text(encoding="utf-8")
            assert "/work/" not in text and "/home/" not in text and "/root/" not in text


def test_comparing_without_comments_still_sees_every_code_difference():
    base = "x = torch.zeros(3)  # on the CPU\ny = x.to(device)\n"
    translated = "x = torch.zeros(3)  # 在 CPU 上\n# 注释\ny = x.to(device)"
    assert code_without_comments(base) == code_without_comments(translated)
    for changed in ("x = torch.zeros(4)\ny = x.to(device)", "x = torch.zeros(3)\nx.to(device)",
                    "x = torch.zeros(3)\ny = x.to(device)\nprint(y)", 'x = torch.zeros(3)\ny = x.to("cpu")'):
        assert code_without_comments(base) != code_without_comments(changed), changed
    # A '#' inside a string is code, not a comment.
    assert code_without_comments('s = "a # b"') != code_without_comments('s = "a "')
    # What print() shows is translated; what it is given to compute is code.
    english, chinese = 'print(f"epoch {e}: loss {x:.3f}", x)', 'print(f"第 {e} 轮：损失 {x:.3f}", x)'
    assert code_without_comments(english) == code_without_comments(chinese)
    for base, changed in (('print("a", x)', 'print("a", y)'), ('print(f("a"))', 'print(f("b"))'),
                          ('print(d["a"])', 'print(d["b"])'), ('log.print("a")', 'log.print("b")'),
                          ('print("a")\ny = "b"', 'print("a")\ny = "c"'),
                          ('print(f"loss {x:.3f}")', 'print(f"损失 {y:.3f}")')):
        assert code_without_comments(base) != code_without_comments(changed), changed


def test_a_chinese_code_twin_must_hold_the_same_code(tmp_path):
    good = "%% code\nx = 1  # one\n%% code zh\nx = 1  # 一\n"
    (tmp_path / "good.md").write_text(good, encoding="utf-8")
    assert [k for k, _ in parse(tmp_path / "good.md")] == ["code", "code zh"]
    bad = "%% code\nx = 1  # one\n%% code zh\nx = 2  # 二\n"
    (tmp_path / "bad.md").write_text(bad, encoding="utf-8")
    with pytest.raises(SystemExit, match="differs from its English twin"):
        parse(tmp_path / "bad.md")
