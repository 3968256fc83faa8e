"""Write a ready nbgrader course folder from the labs' bilingual sources.

    python tools/nbgrader_course.py [--out nbgrader-course] [--lab 01-devices] [--lang en]

For every lab and language it writes `source/<lab>-<lang>/<lab>.ipynb`, the instructor version that
nbgrader expects: the cells of the solution notebook that tools/build_notebooks.py builds, with the
answer regions of the source kept, and nbgrader's cell metadata:

- each code cell holding a `### BEGIN SOLUTION` … `### END SOLUTION` region is an answer cell
  (nbgrader "solution"); the student version of the cell (the `#> ` lines instead of the answer,
  as in labs/) is kept in the cell's metadata, and `devicelab_scaffold.StudentScaffold`, a step added
  to `nbgrader generate_assignment`, puts it in the released notebook in place of nbgrader's stub;
- after each `exN.check()` cell comes an autograded test cell worth one point, which runs the same
  check: `assert verdict.status == "correct", verdict.message()`;
- every other cell is read-only (nbgrader "locked").

Next to it: `nbgrader_config.py` (course id, the scaffold step, execution timeout) and
`devicelab_scaffold.py`. The grading machine needs the devicelab package installed
(`pip install -e .` in a clone), exactly like `python -m devicelab.grading`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from build_notebooks import LANGS, SOURCES, build, parse, split_solution  # noqa: E402

CHECK_CELL = re.compile(r"^(ex\d+)\.check\(\)", re.M)
POINTS = 1  # per exercise
TEST_CELL = '''\
# Autograded: the same check as `{name}.check()` above ({points} point).
verdict = {name}.evaluate(globals())
assert verdict.status == "correct", verdict.message()
'''

CONFIG = '''\
"""nbgrader configuration for the PyTorch device-errors labs (written by tools/nbgrader_course.py)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from devicelab_scaffold import AdoptSiteNotebook, StudentScaffold  # noqa: E402
from nbgrader.converters import Autograde, GenerateAssignment  # noqa: E402
from nbgrader.preprocessors import ClearSolutions  # noqa: E402

c = get_config()  # noqa: F821 - provided by nbgrader when it reads this file
c.CourseDirectory.course_id = "pytorch-device-errors"
# Released notebooks show the labs' own scaffold (`____` and TODOs) instead of nbgrader's stub.
steps = list(GenerateAssignment.class_traits()["preprocessors"].default())
steps.insert(steps.index(ClearSolutions) + 1, StudentScaffold)
c.GenerateAssignment.preprocessors = steps
# A notebook downloaded from the site is rebuilt on the source notebook first (or refused with what to do).
c.Autograde.sanitize_preprocessors = [AdoptSiteNotebook, *Autograde.class_traits()["sanitize_preprocessors"].default()]
# A cell may run this long (seconds) while autograding; the labs' proof cells train a small model.
c.ExecutePreprocessor.timeout = 600
c.Execute.timeout = 600
'''

SCAFFOLD = '''\
"""nbgrader steps for the device-errors labs (written by tools/nbgrader_course.py).

- StudentScaffold (generate_assignment): released answer cells show the lab's scaffold, not nbgrader's stub.
- AdoptSiteNotebook (autograde, first): a lab notebook downloaded from the site has no nbgrader metadata;
  it is rebuilt on the assignment's source notebook (the student's answer cells in place, the test cells
  added), so that it is graded like a released one, or refused with what to do. Never a silent 0.
"""

import json
import os
import re

from nbformat import from_dict
from nbgrader.preprocessors import NbGraderPreprocessor

HERE = os.path.dirname(os.path.abspath(__file__))


class NotAReleasedNotebook(ValueError):
    """A submission nbgrader cannot grade as it is: the message says what to do."""


def _is_test(cell):
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("grade")) and not meta.get("solution")


class AdoptSiteNotebook(NbGraderPreprocessor):
    """Rebuild a site-downloaded lab notebook (no nbgrader metadata) on the assignment's source notebook."""

    def preprocess(self, nb, resources):
        if any("nbgrader" in cell.get("metadata", {}) for cell in nb.cells):
            return nb, resources
        info = resources.get("nbgrader", {})
        assignment, name = info.get("assignment", "?"), info.get("notebook", "?")
        where = f"{info.get('student', '?')}/{assignment}/{name}.ipynb"
        advice = ("Ask the student to copy their answers into the notebook released by nbgrader, or grade the file "
                  "as it is with: python -m devicelab.grading <file> --feedback <folder>")
        path = os.path.join(HERE, "source", assignment, f"{name}.ipynb")
        if not os.path.isfile(path):
            raise NotAReleasedNotebook(f"{where} has no nbgrader metadata and no source notebook {path}. {advice}")
        with open(path, encoding="utf-8") as handle:
            source = json.load(handle)
        lang = assignment.rsplit("-", 1)[-1]
        said = re.search(r\'^LANG = "(\\w+)"\', "\\n".join(c.source for c in nb.cells if c.cell_type == "code"), re.M)
        kept = [c for c in source["cells"] if not _is_test(c)]
        if said is None or said.group(1) != lang or len(kept) != len(nb.cells) or any(
                a["cell_type"] != b.cell_type for a, b in zip(kept, nb.cells)):
            raise NotAReleasedNotebook(
                f"{where} has no nbgrader metadata and is not this assignment's lab notebook "
                f"(language {said.group(1) if said else '?'} for {lang}, {len(nb.cells)} cells for {len(kept)}). "
                f"{advice}")
        answers = iter(nb.cells)
        cells = []
        for cell in source["cells"]:
            if _is_test(cell):
                cells.append(cell)
                continue
            theirs = next(answers)
            if cell["metadata"]["nbgrader"].get("solution"):
                cell = {**cell, "source": theirs.source}
            cells.append(cell)
        self.log.warning("%s came from the site (no nbgrader metadata): graded on the source notebook's cells", where)
        nb.cells = [from_dict(c) for c in cells]
        return nb, resources


class StudentScaffold(NbGraderPreprocessor):
    """Replace each answer cell's source with the student version kept in its `devicelab` metadata."""

    def preprocess_cell(self, cell, resources, index):
        student = cell.metadata.get("devicelab", {}).get("student")
        if student is not None and cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = student
        return cell, resources
'''


def nbgrader_meta(grade_id: str, *, solution: bool = False, grade: bool = False, locked: bool = False,
                  points: int | None = None) -> dict:
    """The `nbgrader` metadata of one cell (schema version 3)."""
    meta: dict = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
                  "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return meta


def cell(kind: str, text: str, meta: dict, extra: dict | None = None) -> dict:
    """A notebook cell with nbgrader metadata."""
    built: dict = {"cell_type": kind, "id": meta["grade_id"], "metadata": {"nbgrader": meta, **(extra or {})},
                   "source": text}
    if kind == "code":
        built.update(execution_count=None, outputs=[])
    return built


def instructor_notebook(source: Path, lang: str) -> dict:
    """The nbgrader source version of one lab in one language."""
    built = build(source)
    solved = json.loads(built[ROOT / "solutions" / lang / f"{source.stem}.ipynb"])["cells"]
    student = json.loads(built[ROOT / "labs" / lang / f"{source.stem}.ipynb"])["cells"]
    parsed = parse(source)
    cells: list[dict] = []
    for answer, scaffold in zip(solved, student):
        text, index = "".join(answer["source"]), int(answer["id"].split("-")[-1])
        if answer["cell_type"] == "markdown":
            cells.append(cell("markdown", text, nbgrader_meta(f"text-{index:02d}", locked=True)))
            continue
        if answer["source"] != scaffold["source"]:  # an answer cell: nbgrader's markers, the scaffold in metadata
            twin = index + 1 < len(parsed) and parsed[index + 1][0] == "code zh" and lang == "zh"
            body = parsed[index + 1 if twin else index][1]
            assert split_solution(body, source)[0] == text, f"{source}: cell {index} is not built from its source"
            cells.append(cell("code", body, nbgrader_meta(f"answer-{index:02d}", solution=True),
                              {"devicelab": {"student": "".join(scaffold["source"])}}))
            continue
        cells.append(cell("code", text, nbgrader_meta(f"code-{index:02d}", locked=True)))
        for name in CHECK_CELL.findall(text):
            test = TEST_CELL.format(name=name, points=POINTS)
            cells.append(cell("code", test, nbgrader_meta(f"{name}-test", grade=True, locked=True, points=POINTS)))
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def write_course(out: Path, labs: list[str] | None = None, langs: tuple[str, ...] = LANGS) -> list[Path]:
    """Write the course folder; return the notebooks written."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "nbgrader_config.py").write_text(CONFIG, encoding="utf-8")
    (out / "devicelab_scaffold.py").write_text(SCAFFOLD, encoding="utf-8")
    written = []
    for source in sorted(SOURCES.glob("*.md")):
        if labs and source.stem not in labs:
            continue
        for lang in langs:
            target = out / "source" / f"{source.stem}-{lang}" / f"{source.stem}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(instructor_notebook(source, lang), indent=1, ensure_ascii=False) + "\n"
            target.write_text(text, encoding="utf-8")
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    """Write the nbgrader course folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "nbgrader-course")
    parser.add_argument("--lab", action="append", help="only this lab (repeatable), e.g. 01-devices")
    parser.add_argument("--lang", choices=LANGS, action="append", help="only this language (repeatable)")
    args = parser.parse_args(argv)
    written = write_course(args.out, args.lab, tuple(args.lang or LANGS))
    print(f"wrote {len(written)} assignments under {args.out / 'source'}; then, in {args.out}:")
    print("  nbgrader generate_assignment 01-devices-en   # release/: the student version")
    print("  nbgrader autograde 01-devices-en             # after collecting into submitted/<student>/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
