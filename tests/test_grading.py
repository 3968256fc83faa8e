"""The instructor's grader: planted submissions built from the real notebooks, graded once with -j 2.

Every plant starts from chapter 01 (the fastest lab): its solution (all correct) or its student
version (untouched), with cells replaced or added the way a student (or a forger) would.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import json
import re
from pathlib import Path

import nbformat
import pytest

from devicelab import grading
from devicelab.chapters import exercises_for
from devicelab.messages import text

ROOT = Path(__file__).resolve().parent.parent
LAB = "01-devices"
EXERCISES = [ex.name for ex in exercises_for(LAB)]
TIMEOUT = 15  # seconds: the grading of the plants that loop (the slowest honest cell takes about 4 s)


def notebook(kind: str, lang: str = "en") -> dict:
    """The real notebook: 'solutions' (all correct) or 'labs' (untouched)."""
    return json.loads((ROOT / kind / lang / f"{LAB}.ipynb").read_text(encoding="utf-8"))


def find(nb: dict, snippet: str) -> int:
    """The index of the first code cell containing `snippet`."""
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code" and snippet in "".join(cell["source"]):
            return index
    raise AssertionError(f"no cell contains {snippet!r}")


def code(source: str) -> dict:
    """A code cell as a student would add it."""
    return {"cell_type": "code", "execution_count": None, "id": f"planted-{abs(hash(source)) % 10**8}",
            "metadata": {}, "outputs": [], "source": source}


def plant(base: dict, *, replace: dict[str, str] | None = None, after: dict[str, str] | None = None,
          append: list[str] | None = None) -> dict:
    """A copy of `base` with cells replaced (by a snippet they contain), inserted after a cell, or appended."""
    nb = copy.deepcopy(base)
    for snippet, source in (replace or {}).items():
        nb["cells"][find(nb, snippet)] = code(source)
    for snippet, source in (after or {}).items():
        nb["cells"].insert(find(nb, snippet) + 1, code(source))
    nb["cells"] += [code(source) for source in append or []]
    return nb


WRONG_TO_DEVICE = '''\
def to_device(model, inputs, labels, device):
    model.to(device)
    inputs.to(device)
    labels.to(device)
    return model, inputs, labels
'''
FORGE_EVALUATE = '''\
import devicelab.checks
devicelab.checks.Exercise.evaluate = lambda self, namespace=None, **given: devicelab.checks.Verdict("correct", "x")
devicelab.checks.CORRECT = "not_attempted"
'''
FORGE_LAB = '''\
class Always:
    def __init__(self, name):
        self.name = name
    def evaluate(self, namespace=None, **given):
        from devicelab.checks import Verdict
        return Verdict("correct", "ch01.ex1.ok")
lab.exercises = [Always(name) for name in ("ex1", "ex2")]
ex1, ex2 = lab.exercises
get_ipython().events.register("post_run_cell", lambda result: print('DEVICELAB-GRADE verdict {"name": "ex2"}'))
'''
FORGE_MARKER = '''\
for name in ("ex1", "ex2"):
    print('DEVICELAB-GRADE ' + '{"%s": "correct"}' % name)
'''
FORGE_TORCH = '''\
import sys, types
import torch
torch.Tensor.to = lambda self, *args, **kwargs: self
sys.modules["devicelab.checks"] = types.SimpleNamespace(CORRECT="correct")
'''
FORGE_HIDDEN = '''\
import importlib
name = "".join(["dev", "ice", "lab", ".", "checks"])
checks = importlib.import_module(name)
code = "checks.Exercise.evaluate = lambda self, *a, **k: checks.Verdict('correct', 'x')"
exec(code)
'''
KILLING_TO_DEVICE = '''\
def to_device(model, inputs, labels, device):
    import os
    os._exit(1)
'''
STUBBORN_LOOP = '''\
import time
while True:
    try:
        time.sleep(0.2)
    except KeyboardInterrupt:
        pass
'''


def grade_folder(folder: Path, plants: dict[str, dict], timeout: int) -> tuple[dict, Path, str]:
    """Write the plants under folder/group/, grade the folder with two workers; rows, feedback folder, stderr."""
    (folder / "group").mkdir()
    for name, nb in plants.items():
        (folder / "group" / name).write_text(json.dumps(nb), encoding="utf-8")
    out, feedback = folder.parent / f"{folder.name}.csv", folder.parent / f"{folder.name}-feedback"
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        assert grading.main([str(folder), "--out", str(out), "-j", "2", "--timeout", str(timeout),
                             "--feedback", str(feedback)]) == 0
    rows = {Path(r["submission"]).stem: r for r in csv.DictReader(out.open(encoding="utf-8"))}
    return rows, feedback, stderr.getvalue()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Plants that run to the end: graded once, with a timeout no honest cell reaches."""
    solved, untouched = notebook("solutions"), notebook("labs")
    folder = tmp_path_factory.mktemp("submissions")
    (folder / "unreadable.ipynb").write_text("not a notebook", encoding="utf-8")
    return grade_folder(folder, {
        "correct.ipynb": solved,
        "empty-zh.ipynb": notebook("labs", "zh"),
        "partly.ipynb": plant(solved, replace={"def to_device(": WRONG_TO_DEVICE}),
        "crashing.ipynb": plant(solved, after={"answer_1 =": "raise ValueError('boom')"}),
        "forge-evaluate.ipynb": plant(untouched, after={"ex1, ex2 = lab.exercises": FORGE_EVALUATE}),
        "forge-lab.ipynb": plant(untouched, after={"ex1, ex2 = lab.exercises": FORGE_LAB}),
        "forge-marker.ipynb": plant(untouched, append=[FORGE_MARKER]),
        "forge-torch.ipynb": plant(solved, replace={"def to_device(": WRONG_TO_DEVICE},
                                   after={"ex1, ex2 = lab.exercises": FORGE_TORCH}),
        "forge-hidden.ipynb": plant(untouched, after={"ex1, ex2 = lab.exercises": FORGE_HIDDEN}),
    }, timeout=300)


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """Plants that loop or kill their kernel, graded with a short timeout: exercise 1 solved, 2 untouched."""
    solved, untouched = notebook("solutions"), notebook("labs")
    answers = "".join(solved["cells"][find(solved, "answer_1 =")]["source"])
    half = plant(untouched, replace={"answer_1 =": answers})
    return grade_folder(tmp_path_factory.mktemp("stopping"), {
        "looping.ipynb": plant(half, after={"answer_1 =": "while True:\n    pass"}),
        "stubborn.ipynb": plant(half, after={"answer_1 =": STUBBORN_LOOP}),
        "dying.ipynb": plant(half, after={"answer_1 =": "import os\nos._exit(1)"}),
        "judge-killer.ipynb": plant(half, replace={"def to_device(": KILLING_TO_DEVICE}),
    }, timeout=TIMEOUT)


def verdicts(row: dict) -> list[str]:
    """The row's verdicts, in exercise order."""
    return [row[name] for name in EXERCISES]


def test_paths_are_relative_to_the_folder_given_and_progress_goes_to_stderr(graded):
    rows, _, stderr = graded
    submissions = {r["submission"] for r in rows.values()}
    assert "group/correct.ipynb" in submissions and "unreadable.ipynb" in submissions
    assert f"[{len(rows)}/{len(rows)}]" in stderr
    assert "correct.ipynb 2/2" in stderr


def test_a_solved_notebook_gets_full_marks_and_no_tamper_flag(graded):
    row = graded[0]["correct"]
    assert verdicts(row) == ["correct"] * len(EXERCISES)
    assert row["correct"] == row["out_of"] == str(len(EXERCISES))
    assert row["problem"] == "" and row["tampered"] == ""


def test_an_untouched_notebook_is_not_attempted(graded):
    row = graded[0]["empty-zh"]
    assert verdicts(row) == ["not_attempted"] * len(EXERCISES) and row["tampered"] == ""


def test_one_wrong_answer_costs_one_exercise(graded):
    assert verdicts(graded[0]["partly"]) == ["correct", "incorrect"]


def test_a_raising_cell_is_recorded_and_the_rest_is_graded(graded):
    row = graded[0]["crashing"]
    assert verdicts(row) == ["correct", "correct"] and "ValueError: boom" in row["problem"]


def test_an_endless_loop_is_interrupted_and_the_rest_is_graded(stopped):
    row = stopped[0]["looping"]
    assert verdicts(row) == ["correct", "not_attempted"] and f"ran past {TIMEOUT} s" in row["problem"]


def test_a_loop_that_ignores_interrupts_is_skipped_on_a_second_run(stopped):
    row = stopped[0]["stubborn"]
    assert verdicts(row) == ["correct", "not_attempted"] and "would not stop" in row["problem"]


def test_a_cell_that_kills_the_kernel_is_skipped_on_a_second_run(stopped):
    row = stopped[0]["dying"]
    assert verdicts(row) == ["correct", "not_attempted"] and "DeadKernelError" in row["problem"]


def test_an_answer_that_kills_the_kernel_while_judged_costs_only_its_exercise(stopped):
    row = stopped[0]["judge-killer"]
    assert verdicts(row) == ["correct", "incorrect"] and "judging ex2 stopped the kernel" in row["problem"]


def test_an_unreadable_file_is_one_row(graded):
    row = graded[0]["unreadable"]
    assert row["problem"].startswith("unreadable notebook") and row["lab"] == "?"


@pytest.mark.parametrize(("name", "evidence"), [
    ("forge-evaluate", ["devicelab.checks.Exercise.evaluate", "devicelab.checks.CORRECT"]),
    ("forge-lab", ["`lab.exercises` was replaced", "post_run_cell", "assigns lab.exercises"]),
    ("forge-marker", ["grade marker"]),
    ("forge-torch", ["torch.Tensor.to", "sys.modules"]),
    ("forge-hidden", ["calls exec()", "changed: devicelab.checks.Exercise.evaluate"]),
])
def test_a_forging_submission_gets_no_forged_grade_and_is_marked(graded, name, evidence):
    row = graded[0][name]
    assert "correct" not in verdicts(row)[1:], row  # ex2 is never solved in a forging plant
    if name != "forge-torch":
        assert verdicts(row) == ["not_attempted"] * len(EXERCISES)
    for piece in evidence:
        assert piece in row["tampered"], (piece, row["tampered"])


def test_feedback_is_in_the_notebook_language_with_first_hints_and_no_solution(graded):
    rows, feedback, _ = graded
    assert sorted(p.relative_to(feedback).as_posix() for p in feedback.rglob("*.md")) == sorted(
        Path(r["submission"]).with_suffix(".md").as_posix() for r in rows.values())
    zh = (feedback / "group" / "empty-zh.md").read_text(encoding="utf-8")
    en = (feedback / "group" / "partly.md").read_text(encoding="utf-8")
    for exercise in exercises_for(LAB):
        assert text(exercise.hints[0], "zh") in zh
        assert text(exercise.hints[1], "zh") not in zh
        assert text(exercise.solution_key, "zh") not in zh and text(exercise.solution_key, "en") not in en
    assert "未作答" in zh and "not yet" in en
    assert text(exercises_for(LAB)[1].hints[0], "en") in en and text(exercises_for(LAB)[0].hints[0], "en") not in en


COURSE_NOTEBOOKS = sorted((ROOT / "solutions").glob("*/*.ipynb")) + sorted((ROOT / "labs").glob("*/*.ipynb"))


@pytest.mark.parametrize("path", COURSE_NOTEBOOKS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.stem}")
def test_the_static_scan_finds_nothing_in_the_course_notebooks(path):
    assert grading.static_findings(nbformat.read(path, as_version=4)) == []


def test_the_static_scan_reads_forging_code():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in (
        FORGE_EVALUATE, FORGE_LAB, FORGE_MARKER, FORGE_TORCH, FORGE_HIDDEN,
        "import torch\ntorch.backends.cudnn.benchmark = True\nimport sys\nsys.path.insert(0, '.')",
        "from devicelab.checks import Exercise\nsetattr(Exercise, 'evaluate', None)",
        "import gc\nobjects = gc.get_objects()\n!pip list",
    )])
    found = grading.static_findings(nb)
    assert "assigns devicelab.checks.Exercise.evaluate" in found
    assert "assigns torch.Tensor.to" in found
    assert any("sys.modules" in f for f in found)
    assert "calls setattr()" in found and "calls gc.get_objects()" in found
    assert not any("backends" in f or "sys.path" in f for f in found)


def test_honest_notebooks_of_every_lab_raise_no_tamper_flag(tmp_path):
    """Every lab's solution (zh) and untouched student version (en): full marks or not attempted, never 'tampered'.

    (Chapter 07 pickles tensors for real: copyreg then caches `__slotnames__` on torch's classes.)
    """
    plants = {}
    for source in sorted((ROOT / "solutions" / "source").glob("*.md")):
        lab = source.stem
        plants[f"{lab}-solved.ipynb"] = json.loads((ROOT / "solutions" / "zh" / f"{lab}.ipynb").read_text("utf-8"))
        plants[f"{lab}-untouched.ipynb"] = json.loads((ROOT / "labs" / "en" / f"{lab}.ipynb").read_text("utf-8"))
    (tmp_path / "honest").mkdir()
    rows, _, _ = grade_folder(tmp_path / "honest", plants, timeout=300)
    for name, row in rows.items():
        assert row["tampered"] == "", (name, row["tampered"])
        assert row["problem"] == "", (name, row["problem"])
        wanted = "correct" if name.endswith("-solved") else "not_attempted"
        statuses = [row[k] for k in row if re.fullmatch(r"ex\d+", k) and row[k] != "-"]
        assert statuses and set(statuses) == {wanted}, (name, statuses)
