"""A learner's path through one lab, walked in a real kernel, and the rules it must satisfy.

The walk runs the student notebook cell by cell, as a learner would. At each exercise's check it asks the
check about the placeholder, types a plausible wrong answer (from the lab's answer bank), asks for every
hint and the solution, types a right answer written differently from the solution (also from the bank), and
goes on; at the end it reads what the proof plotted. Then it runs the whole notebook again from the top, the
learner's answers in place ("Run all" a second time): nothing may raise, every check must still accept its
answer, and the proof must train again or say which cell builds a fresh model.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "answers"))

import harness  # noqa: E402  (the answer banks and their kernel, shared with tests/answers)
from harness import CORRECT, load_bank, pick  # noqa: E402

MARK = "DEVICELAB-LEARNER "


def _cells(version: str, lab: str, lang: str) -> list[str]:
    nb = json.loads((ROOT / version / lang / f"{lab}.ipynb").read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def _check_name(line: str) -> str | None:
    stripped = line.strip()
    name = stripped[: -len(".check()")]
    return name if stripped.endswith(".check()") and name.isidentifier() else None


def check_cells(solution: list[str]) -> dict[str, int]:
    """For each exercise, the index (among code cells) of the cell that calls its check."""
    found: dict[str, int] = {}
    for index, cell in enumerate(solution):
        for line in cell.splitlines():
            if _check_name(line):
                found.setdefault(_check_name(line), index)
    return found


def answer_cells(solution: list[str], student: list[str]) -> dict[str, int]:
    """For each exercise, the index of its answer cell: the last cell before its check that the student lacks."""
    return {name: max(i for i in range(at) if solution[i] != student[i]) for name, at in check_cells(solution).items()}


class Kernel(harness.Kernel):
    """The answer harness's kernel, which can also ask a check for its verdict."""

    def verdict(self, exercise: str) -> dict[str, str]:
        """The check's verdict on the kernel's state: its status and the message `exN.check()` prints."""
        code = (f"import json as _json\n_v = {exercise}.evaluate(globals())\n"
                f"print({MARK!r} + _json.dumps({{'status': _v.status, 'message': _v.message()}}))\n")
        printed, error = self.run(code)
        if error is not None:
            return {"status": "raised", "message": error}
        line = next(line for line in printed.splitlines() if line.startswith(MARK))
        return json.loads(line[len(MARK):])


BLANK = "____"


@dataclass
class Step:
    """What the learner saw at one exercise."""

    exercise: str
    placeholder: dict[str, str] = field(default_factory=dict)
    wrong: dict[str, str] = field(default_factory=dict)
    wrong_name: str = ""
    hints: list[str] = field(default_factory=list)
    solution: str = ""
    right: dict[str, str] = field(default_factory=dict)
    right_name: str = ""
    answer_lines: list[str] = field(default_factory=list)


@dataclass
class Path_:
    """The whole walk: each exercise's step, the cells that raised, and what the proof plotted."""

    lab: str
    lang: str
    steps: list[Step] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    training: dict | None = None
    rerun_errors: list[str] = field(default_factory=list)
    rerun_verdicts: dict[str, dict[str, str]] = field(default_factory=dict)
    rerun_training: dict | None = None
    rerun_proof_output: str = ""


def _strip_comment(line: str) -> str:
    return re.sub(r"\s+#\s.*$", "", line).rstrip()


def answer_lines(solution_cell: str, student_cell: str) -> list[str]:
    """The solution's own lines (those the student version does not have), comments and scaffolding removed."""
    given = {line.strip() for line in student_cell.splitlines()}
    kept = []
    for line in solution_cell.splitlines():
        code = _strip_comment(line).strip()
        if not code or code in given or code.startswith(("def ", "class ", '"""', "#")) or code == "super().__init__()":
            continue
        kept.append(code)
    return kept


def _normal(text: str) -> str:
    """Code as compared with a hint: no backticks or spaces, no leading `return`, no True/False/None keywords."""
    text = re.sub(r"\s+", "", text.replace("`", ""))
    text = re.sub(r"^return", "", text)
    return re.sub(r"(?<=[(,])\w+=(True|False|None)(?=[,)])", "", text).replace(",)", ")")


def gives_the_answer(hint: str, lines: list[str]) -> bool:
    """True when the hint holds every line of the solution's answer (so that solution() would add nothing)."""
    substantive = [_normal(line) for line in lines if len(_normal(line)) >= 6]
    flat = _normal(hint).replace("return", "")
    return bool(substantive) and all(line.replace("return", "") in flat for line in substantive)


def _training(kernel: Kernel) -> dict | None:
    """What the proof plotted last (lab.last_training), or None."""
    printed, _ = kernel.run(f"import json as _json\nprint({MARK!r} + _json.dumps(lab.last_training))")
    line = next((line for line in printed.splitlines() if line.startswith(MARK)), None)
    return json.loads(line[len(MARK):]) if line else None


def walk(lab: str, lang: str = "en") -> Path_:
    """Walk `lab`'s student notebook in `lang` the way a learner would."""
    number = lab.split("-")[0]
    _, answers = load_bank(f"bank_{number}")
    solution, student = _cells("solutions", lab, lang), _cells("labs", lab, lang)
    where, checks = answer_cells(solution, student), check_cells(solution)
    path = Path_(lab, lang)
    kernel = Kernel(ROOT / "labs" / lang)
    rights: dict[str, str] = {}
    try:
        for index, cell in enumerate(student):
            for exercise, check_index in checks.items():
                if check_index != index:
                    continue
                step = Step(exercise)
                step.answer_lines = answer_lines(solution[where[exercise]], student[where[exercise]])
                step.placeholder = kernel.verdict(exercise)
                wrong, right = pick(answers, exercise, "incorrect"), pick(answers, exercise, CORRECT)
                step.wrong_name, step.right_name = wrong.name, right.name
                kernel.run(wrong.code)
                step.wrong = kernel.verdict(exercise)
                hints = int(kernel.run(f"print(len({exercise}.hints))")[0].split()[-1])
                for _ in range(hints):
                    printed, error = kernel.run(f"{exercise}.hint()")
                    step.hints.append(printed.strip() if error is None else f"raised {error}")
                step.solution = kernel.run(f"{exercise}.solution()")[0]
                kernel.run(right.code)
                rights[exercise] = right.code
                step.right = kernel.verdict(exercise)
                path.steps.append(step)
            _, error = kernel.run(cell)
            if error is not None:
                path.errors.append(f"code cell {index}: {error}")
        path.training = _training(kernel)
        # "Run all" once more, the learner's answers in place: every cell again, in order, each right answer
        # typed again where the learner typed it (before its check, as above).
        kernel.run("lab.last_training = None")
        for index, cell in enumerate(student):
            for exercise, check_index in checks.items():
                if check_index == index:
                    kernel.run(rights[exercise])
            printed, error = kernel.run(cell)
            if error is not None:
                path.rerun_errors.append(f"code cell {index}, run again: {error}")
            if "lab.all_correct()" in cell:
                path.rerun_proof_output += printed
        path.rerun_verdicts = {exercise: kernel.verdict(exercise) for exercise in checks}
        path.rerun_training = _training(kernel)
    finally:
        kernel.close()
    return path
