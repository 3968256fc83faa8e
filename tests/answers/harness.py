"""Run a bank of learners' answers through the real solution notebooks and collect each check's verdict.

A bank is a module `tests/answers/bank_NN.py` with `LAB = "NN-slug"` and `ANSWERS = [Answer(...), ...]`:
plausible wrong answers a learner might write, right answers written differently from the solution, and a
few hostile ones. An answer is the whole text of the exercise's answer cell (the cell the student version
leaves with `____`, the last such cell before `exN.check()`).

Two ways an answer goes through a notebook, both in real kernels, in the notebook's own folder:
- `verdicts(lab)`: one kernel runs the solution notebook cell by cell; before each `exN.check()` cell it
  runs every bank answer of exN in turn (each after the student version's cell, so that nothing of the
  solution's answer lingers), asks the lab's check for its verdict, then runs the solution's own
  cell again (answers marked `fresh=True` get a new kernel that replays the notebook up to that point).
- `run_with(lab, answers)`: one kernel runs the whole notebook with the given answers in place of the
  solution's; every cell must run (the proof's assertions included) and the checks are asked at the end.

    python tests/answers/harness.py            # the table: exercise | answers | wrong accepted | right rejected
"""

from __future__ import annotations

import importlib
import json
import queue
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARK = "DEVICELAB-ANSWER "
CORRECT, INCORRECT = "correct", "incorrect"


@dataclass(frozen=True)
class Answer:
    """One answer to one exercise: the answer cell's whole text and the verdict it deserves."""

    exercise: str  # "ex1", "ex2", ...
    name: str  # what the answer does, e.g. "wrong: moves to a global device"
    code: str
    expect: str  # "correct" or "incorrect"
    fresh: bool = False  # it damages the notebook's state: judge it in a kernel of its own

    def __post_init__(self) -> None:
        if self.expect not in (CORRECT, INCORRECT):
            raise ValueError(f"expect must be 'correct' or 'incorrect', not {self.expect!r}")


def banks() -> list[str]:
    """The bank modules, by lab id order."""
    return sorted(p.stem for p in Path(__file__).parent.glob("bank_*.py"))


def load_bank(module: str) -> tuple[str, list[Answer]]:
    """A bank's lab id and its answers."""
    sys.path.insert(0, str(Path(__file__).parent))
    bank = importlib.import_module(module)
    return bank.LAB, list(bank.ANSWERS)


def _cells(version: str, lab: str, lang: str = "en") -> list[dict]:
    nb = json.loads((ROOT / version / lang / f"{lab}.ipynb").read_text(encoding="utf-8"))
    return nb["cells"]


def code_cells(lab: str, lang: str = "en") -> list[str]:
    """The solution notebook's code cells, in order."""
    return ["".join(c["source"]) for c in _cells("solutions", lab, lang) if c["cell_type"] == "code"]


def answer_cells(lab: str, lang: str = "en") -> dict[str, int]:
    """For each exercise, the index (among code cells) of its answer cell."""
    solution = code_cells(lab, lang)
    student = ["".join(c["source"]) for c in _cells("labs", lab, lang) if c["cell_type"] == "code"]
    found: dict[str, int] = {}
    for index, cell in enumerate(solution):
        for line in cell.splitlines():
            stripped = line.strip()
            if stripped.endswith(".check()") and stripped[: -len(".check()")].isidentifier():
                name = stripped[: -len(".check()")]
                earlier = [i for i in range(index) if solution[i] != student[i]]
                if name not in found and earlier:
                    found[name] = earlier[-1]
    return found


def check_cells(lab: str, lang: str = "en") -> dict[str, int]:
    """For each exercise, the index (among code cells) of the cell that calls its check."""
    found: dict[str, int] = {}
    for index, cell in enumerate(code_cells(lab, lang)):
        for line in cell.splitlines():
            stripped = line.strip()
            if stripped.endswith(".check()") and stripped[: -len(".check()")].isidentifier():
                found.setdefault(stripped[: -len(".check()")], index)
    return found


class Kernel:
    """A Python kernel started in a folder, which runs code and returns its output and error."""

    def __init__(self, cwd: Path) -> None:
        from jupyter_client.manager import start_new_kernel

        self.manager, self.client = start_new_kernel(kernel_name="python3", cwd=str(cwd))

    def run(self, code: str, timeout: float = 300) -> tuple[str, str | None]:
        """Run `code`; return its printed text and the error it raised (`Name: value`) or None."""
        printed: list[str] = []
        error: list[str] = []

        def hook(msg: dict) -> None:
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                printed.append(content["text"])
            elif kind in ("execute_result", "display_data"):
                printed.append(content.get("data", {}).get("text/plain", "") + "\n")
            elif kind == "error":
                error.append(f"{content['ename']}: {content['evalue']}")

        try:
            self.client.execute_interactive(code, output_hook=hook, timeout=timeout, allow_stdin=False)
        except (TimeoutError, queue.Empty):
            self.manager.interrupt_kernel()
            error.append(f"TimeoutError: the cell ran longer than {timeout} s")
        return "".join(printed), (error[0] if error else None)

    def verdict(self, exercise: str) -> dict[str, str]:
        """The verdict of `exercise` on the kernel's current state, asked the way the notebook asks it."""
        code = (
            "import json as _json\n"
            f"_v = {exercise}.evaluate(globals())\n"
            f"print({MARK!r} + _json.dumps({{'status': _v.status, 'key': _v.key, 'message': _v.message()}}))\n"
            f"{exercise}.check()\n"
        )
        printed, error = self.run(code, timeout=600)
        if error is not None:
            return {"status": "raised", "key": "", "message": error}
        line = next(line for line in printed.splitlines() if line.startswith(MARK))
        return json.loads(line[len(MARK):])

    def close(self) -> None:
        """Stop the kernel."""
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def student_cells(lab: str, lang: str = "en") -> list[str]:
    """The student notebook's code cells, in order."""
    return ["".join(c["source"]) for c in _cells("labs", lab, lang) if c["cell_type"] == "code"]


def _replay(kernel: Kernel, cells: list[str], upto: int) -> None:
    for cell in cells[:upto]:
        kernel.run(cell)


def verdicts(lab: str, answers: list[Answer], lang: str = "en") -> list[tuple[Answer, dict[str, str]]]:
    """Each answer's verdict, judged in the real notebook right where the learner would write it."""
    cells = code_cells(lab, lang)
    blanks = student_cells(lab, lang)
    where = answer_cells(lab, lang)
    checks = check_cells(lab, lang)
    missing = {a.exercise for a in answers} - set(where)
    if missing:
        raise ValueError(f"{lab}: no answer cell found for {sorted(missing)}")
    results: list[tuple[Answer, dict[str, str]]] = []
    folder = ROOT / "solutions" / lang
    kernel = Kernel(folder)
    try:
        for index, cell in enumerate(cells):
            for exercise, check_index in checks.items():
                if check_index != index:
                    continue
                for answer in (a for a in answers if a.exercise == exercise):
                    judge = kernel
                    if answer.fresh:
                        judge = Kernel(folder)
                        _replay(judge, cells, where[exercise])
                    judge.run(blanks[where[exercise]])  # the learner starts from the student version's cell
                    judge.run(answer.code)
                    results.append((answer, judge.verdict(exercise)))
                    if answer.fresh:
                        judge.close()
                    else:
                        kernel.run(cells[where[exercise]])  # the solution's own cell, as before
            kernel.run(cell)
    finally:
        kernel.close()
    return results


def run_with(lab: str, answers: list[Answer], lang: str = "en") -> tuple[list[str], dict[str, dict[str, str]]]:
    """Run the whole notebook with `answers` in place of the solution's: the errors raised, and each verdict."""
    cells = code_cells(lab, lang)
    where = answer_cells(lab, lang)
    for answer in answers:
        cells[where[answer.exercise]] = answer.code
    kernel = Kernel(ROOT / "solutions" / lang)
    errors: list[str] = []
    try:
        for number, cell in enumerate(cells):
            _, error = kernel.run(cell)
            if error is not None:
                errors.append(f"code cell {number}: {error}")
        judged = {name: kernel.verdict(name) for name in check_cells(lab, lang)}
    finally:
        kernel.close()
    return errors, judged


def rounds(answers: list[Answer]) -> list[list[Answer]]:
    """The right answers grouped so that each group holds at most one answer per exercise."""
    groups: list[list[Answer]] = []
    for answer in (a for a in answers if a.expect == CORRECT):
        for group in groups:
            if all(other.exercise != answer.exercise for other in group):
                group.append(answer)
                break
        else:
            groups.append([answer])
    return groups


def table() -> str:
    """exercise | answers tried | wrong accepted | right rejected, over every bank."""
    lines = ["| exercise | answers tried | wrong accepted | right rejected |", "|---|---|---|---|"]
    for module in banks():
        lab, answers = load_bank(module)
        judged = verdicts(lab, answers)
        for exercise in sorted({a.exercise for a in answers}):
            mine = [(a, v) for a, v in judged if a.exercise == exercise]
            wrong_ok = sum(a.expect == INCORRECT and v["status"] == CORRECT for a, v in mine)
            right_no = sum(a.expect == CORRECT and v["status"] != CORRECT for a, v in mine)
            lines.append(f"| {lab} {exercise} | {len(mine)} | {wrong_ok} | {right_no} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
