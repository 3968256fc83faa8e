"""`make nbgrader`'s course folder works with real nbgrader, and grades as devicelab.grading does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from devicelab import grading

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from build_notebooks import split_solution  # noqa: E402
from nbgrader_course import write_course  # noqa: E402

pytest.importorskip("nbgrader")
LAB, ASSIGNMENT = "01-devices", "01-devices-en"
WRONG_TO_DEVICE = '''\
def to_device(model, inputs, labels, device):
    model.to(device)
    inputs.to(device)
    labels.to(device)
    return model, inputs, labels
'''


def nbgrader(course: Path, *args: str, check: bool = True) -> str:
    """Run the nbgrader command line in the course folder (its tools on PATH, as in a venv); its output."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0 or not check, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def answer_cells(nb: dict) -> dict[str, dict]:
    """The answer cells of a notebook, by nbgrader grade id."""
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in nb["cells"]
            if c["metadata"].get("nbgrader", {}).get("solution")}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course folder with chapter 01 in English, released, two submissions collected and autograded."""
    folder = tmp_path_factory.mktemp("course")
    write_course(folder, [LAB], ("en",))
    nbgrader(folder, "generate_assignment", ASSIGNMENT, "--force")
    source = json.loads((folder / "source" / ASSIGNMENT / f"{LAB}.ipynb").read_text(encoding="utf-8"))
    released = json.loads((folder / "release" / ASSIGNMENT / f"{LAB}.ipynb").read_text(encoding="utf-8"))
    partly = json.loads(json.dumps(released))
    for grade_id, cell in answer_cells(partly).items():  # every answer solved, but to_device left wrong
        solved, _ = split_solution("".join(answer_cells(source)[grade_id]["source"]), Path("source"))
        cell["source"] = WRONG_TO_DEVICE if "def to_device(" in solved else solved
    site = json.loads((ROOT / "solutions" / "en" / f"{LAB}.ipynb").read_text(encoding="utf-8"))  # no metadata
    for student, nb in (("alice", partly), ("bob", released), ("carol", site)):
        target = folder / "submitted" / student / ASSIGNMENT / f"{LAB}.ipynb"
        target.parent.mkdir(parents=True)
        target.write_text(json.dumps(nb), encoding="utf-8")
    nbgrader(folder, "autograde", ASSIGNMENT, "--force")
    return folder, released


def test_the_released_notebook_shows_the_labs_scaffold_not_nbgraders_stub(course):
    _, released = course
    student = json.loads((ROOT / "labs" / "en" / f"{LAB}.ipynb").read_text(encoding="utf-8"))
    scaffolds = {"".join(c["source"]) for c in student["cells"] if c["cell_type"] == "code"}
    answers = answer_cells(released)
    assert answers and all("".join(c["source"]) in scaffolds for c in answers.values())
    assert not any("NotImplementedError" in "".join(c["source"]) for c in released["cells"])
    assert not any("### BEGIN SOLUTION" in "".join(c["source"]) for c in released["cells"])


def test_every_check_has_an_autograded_test_worth_one_point(course):
    _, released = course
    tests = [c["metadata"]["nbgrader"] for c in released["cells"] if c["metadata"]["nbgrader"].get("grade")]
    assert [(t["grade_id"], t["points"], t["locked"]) for t in tests] == [("ex1-test", 1, True), ("ex2-test", 1, True)]
    others = [c for c in released["cells"] if not c["metadata"]["nbgrader"].get("solution")]
    assert all(c["metadata"]["nbgrader"]["locked"] for c in others)


def test_nbgrader_gives_the_grades_devicelab_grading_gives(course):
    from nbgrader.api import Gradebook

    folder, _ = course
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gradebook:
        scores = {student: {g.name.removesuffix("-test"): g.score for g in
                            gradebook.find_submission_notebook(LAB, ASSIGNMENT, student).grades}
                  for student in ("alice", "bob")}
    assert scores["alice"] == {"ex1": 1, "ex2": 0} and scores["bob"] == {"ex1": 0, "ex2": 0}
    for student, expected in scores.items():
        shown = f"submitted/{student}/{ASSIGNMENT}/{LAB}.ipynb"
        ours = grading.grade(folder / shown, timeout=300, shown=shown)
        assert {name: int(status == "correct") for name, status in ours.verdicts.items()} == expected
        assert ours.tampered == [] and ours.student == student and ours.problem == ""


def test_a_notebook_downloaded_from_the_site_is_graded_on_the_source_notebook(course):
    from nbgrader.api import Gradebook

    folder, _ = course
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gradebook:
        grades = gradebook.find_submission_notebook(LAB, ASSIGNMENT, "carol").grades
        assert {g.name.removesuffix("-test"): g.score for g in grades} == {"ex1": 1, "ex2": 1}


def test_a_site_notebook_of_another_language_is_refused_with_what_to_do(course):
    folder, _ = course
    target = folder / "submitted" / "dave" / ASSIGNMENT / f"{LAB}.ipynb"
    target.parent.mkdir(parents=True)
    target.write_text((ROOT / "labs" / "zh" / f"{LAB}.ipynb").read_text(encoding="utf-8"), encoding="utf-8")
    said = nbgrader(folder, "autograde", ASSIGNMENT, "--student", "dave", "--force", check=False)
    assert "has no nbgrader metadata and is not this assignment's lab notebook" in said
    assert "python -m devicelab.grading" in said
