"""Grade submitted lab notebooks in one command and write a gradebook.

    python -m devicelab.grading SUBMISSIONS... [--out gradebook.csv] [--timeout 300]

SUBMISSIONS are notebooks or folders of notebooks (searched recursively). Each one runs in a kernel
of its own, so a broken or endless submission is recorded and the others are still graded. Every
exercise is judged by the same checks the learner saw. Submissions are code: grade them inside a
container or a throwaway machine.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .chapters import MODULES, exercises_for
from .checks import CORRECT

NOT_GRADED = "not_graded"  # the notebook stopped before its exercises could be judged
MARKER = "DEVICELAB-GRADE "
LAB_LINE = re.compile(r'^LAB = "([\w-]+)"', re.M)
GRADE_CELL = f"""\
import json as _json
try:
    _grades = {{ex.name: ex.evaluate(globals()).status for ex in lab.exercises}}
except NameError:
    _grades = {{}}
print({MARKER!r} + _json.dumps(_grades))
"""


@dataclass
class Grade:
    """One submission's row in the gradebook."""

    path: Path
    lab: str = "?"
    verdicts: dict[str, str] = field(default_factory=dict)
    problem: str = ""

    @property
    def score(self) -> int:
        """How many exercises are correct."""
        return sum(v == CORRECT for v in self.verdicts.values())


def find_notebooks(paths: list[Path]) -> list[Path]:
    """The notebooks named, and those inside the folders named, in a stable order."""
    found: list[Path] = []
    for path in paths:
        found += sorted(path.rglob("*.ipynb")) if path.is_dir() else [path]
    return [p for p in found if ".ipynb_checkpoints" not in p.parts]


def _first_error(nb: nbformat.NotebookNode) -> str:
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                return f"{output.get('ename')}: {output.get('evalue')}"[:200]
    return ""


def grade(path: Path, timeout: int = 300) -> Grade:
    """Run one submission in a fresh kernel and judge its exercises."""
    from nbclient import NotebookClient

    result = Grade(path)
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as error:  # noqa: BLE001 - an unreadable file is one bad row
        result.problem = f"unreadable notebook: {error}"[:200]
        return result
    found = next((LAB_LINE.search(c.source) for c in nb.cells if c.cell_type == "code" and LAB_LINE.search(c.source)),
                 None)
    result.lab = found.group(1) if found else "?"
    nb.cells.append(nbformat.v4.new_code_cell(GRADE_CELL))
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except Exception as error:  # noqa: BLE001 - timeouts and dead kernels are recorded, not fatal
        result.problem = f"{type(error).__name__}: {error}".splitlines()[0][:200]
    if result.lab in MODULES:
        result.verdicts = {ex.name: NOT_GRADED for ex in exercises_for(result.lab)}
    for output in nb.cells[-1].get("outputs", []):
        text = output.get("text", "")
        if output.get("name") == "stdout" and MARKER in text:
            result.verdicts.update(json.loads(text.split(MARKER, 1)[1].splitlines()[0]))
    result.problem = result.problem or _first_error(nb)
    return result


def write_gradebook(grades: list[Grade], out: Path) -> None:
    """One CSV row per submission: its exercises' verdicts, the score and the first problem seen."""
    names = sorted({name for g in grades for name in g.verdicts}, key=lambda n: (len(n), n))
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["submission", "lab", *names, "correct", "out_of", "problem"])
        for g in grades:
            writer.writerow([str(g.path), g.lab, *(g.verdicts.get(n, "-") for n in names), g.score,
                             len(g.verdicts), g.problem])


def main(argv: list[str] | None = None) -> int:
    """Grade every submission named on the command line and write the gradebook."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submissions", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=Path("gradebook.csv"))
    parser.add_argument("--timeout", type=int, default=300, help="seconds a cell may run")
    args = parser.parse_args(argv)
    grades = []
    for path in find_notebooks(args.submissions):
        g = grade(path, args.timeout)
        grades.append(g)
        print(f"{g.score}/{len(g.verdicts) or '?'}  {path}  {g.problem}")
    write_gradebook(grades, args.out)
    print(f"gradebook: {args.out} ({len(grades)} submissions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
