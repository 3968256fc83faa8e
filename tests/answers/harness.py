"""Run a bank of learners' answers through the real solution notebooks and collect each check's verdict.

A bank is a module `tests/answers/bank_NN.py` with `LAB = "NN-slug"` and `ANSWERS = [Answer(...), ...]`:
plausible wrong answers a learner might write, right answers written differently from the solution, and a
few hostile ones. An answer is the whole text of the exercise's answer cell (the cell the student version
leaves with `____`, the last such cell before `exN.check()`).

One kernel per bank (`judge(lab, answers)`) runs the solution notebook cell by cell, in the notebook's own
folder. Each answer is judged in a fork of that kernel taken right before its exercise's `exN.check()`
cell: the student version's cell, the answer, then the check, asked the way the notebook asks it. Each
round of right answers (at most one per exercise) runs, in a fork taken before the first cell it replaces,
the rest of the notebook with its answers in place of the solution's: every cell must run (the proof's
assertions included) and every check is asked at the end. A fork is thrown away after its report, so no
answer can change what the next one is judged on (tests/answers/test_isolation.py plants one that tries).

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
CORRECT, INCORRECT = "correct", "incorrect"


@dataclass(frozen=True)
class Answer:
    """One answer to one exercise: the answer cell's whole text and the verdict it deserves."""

    exercise: str  # "ex1", "ex2", ...
    name: str  # what the answer does, e.g. "wrong: moves to a global device"
    code: str
    expect: str  # "correct" or "incorrect"
    fresh: bool = False  # it damages the notebook's state (every answer is judged in a fork: kept for the record)
    # It never returns: judged with the check's time limit cut to LOOP_SECONDS (in its fork only), it must get the
    # "too slow" verdict. The limit's own length is not what such an answer tests, and a loop that burns the
    # check's whole 10-30 s would cost the suite minutes of CPU.
    loops: bool = False
    # The catalogue key of the sentence it must get (when given): a wrong answer whose raw error once reached the
    # learner is pinned to the sentence that now explains it, so that the bank fails if the raw error comes back.
    key: str = ""

    def __post_init__(self) -> None:
        if self.expect not in (CORRECT, INCORRECT):
            raise ValueError(f"expect must be 'correct' or 'incorrect', not {self.expect!r}")


def without_cuda(key: str) -> str:
    """`key` where this machine has no CUDA GPU (as CI has none), nothing where it has one: an answer that writes
    `.cuda()` gets the sentence about a missing GPU only where the GPU is missing."""
    import torch

    return "" if torch.cuda.is_available() else key


def pick(answers: list[Answer], exercise: str, expect: str) -> Answer:
    """The first answer of the bank for `exercise` with that verdict, neither hostile nor needing a fresh kernel: the
    one the learner's walk (tests/learner) types."""
    for answer in answers:
        if (answer.exercise == exercise and (answer.expect == CORRECT) == (expect == CORRECT)
                and not answer.fresh and not answer.name.startswith("hostile")):
            return answer
    raise LookupError(f"no {expect} answer for {exercise} in the bank")


def walked(answers: list[Answer]) -> list[Answer]:
    """The right answers the learner's walk types, one per exercise. The walk runs the whole student notebook with
    them in place, the proof included, in both languages, and runs it all again: it asserts that no cell raises and
    that every check still accepts its answer, which is what a proof round of `judge` asserts for them."""
    return [pick(answers, exercise, CORRECT) for exercise in sorted({a.exercise for a in answers})]


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

    def close(self) -> None:
        """Stop the kernel."""
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def student_cells(lab: str, lang: str = "en") -> list[str]:
    """The student notebook's code cells, in order."""
    return ["".join(c["source"]) for c in _cells("labs", lab, lang) if c["cell_type"] == "code"]


FORK_MARK = "DEVICELAB-FORK "
LOOP_SECONDS = 2.0  # the check's time limit for an answer that loops (see Answer.loops)


def _fork(kernel: Kernel, cells: list[tuple[int, str]], exercises: list[str], seconds: float | None = None) -> dict:
    """Run `cells` and ask `exercises` in a throwaway fork of `kernel` (see forked.py); the fork's report.
    `seconds`: the checks' time limit in the fork, if not their own."""
    call = f"__import__({_FORKED_MODULE!r}).run_in_fork({cells!r}, {exercises!r}, seconds={seconds!r})\n"
    printed, error = kernel.run(call, timeout=900)
    lines = [line for line in printed.splitlines() if line.startswith(FORK_MARK)]
    if error is not None or not lines:
        return {"errors": [f"harness: {error or 'no report from the fork'}"], "verdicts": {}}
    return json.loads(lines[-1][len(FORK_MARK):])


_FORKED_MODULE = "devicelab_answer_fork"


def _load_forked(kernel: Kernel) -> None:
    # By path, into sys.modules only: the notebook's namespace gains no name.
    code = (
        "import importlib.util as _u, sys as _s\n"
        f"_spec = _u.spec_from_file_location({_FORKED_MODULE!r}, {str(Path(__file__).with_name('forked.py'))!r})\n"
        "_m = _u.module_from_spec(_spec); _spec.loader.exec_module(_m); _s.modules[_spec.name] = _m\n"
        "_m.warm()\n"
        "del _u, _s, _spec, _m\n"
    )
    _, error = kernel.run(code)
    if error is not None:
        raise RuntimeError(f"the fork helper did not load: {error}")


@dataclass
class Judged:
    """What one pass of a bank through its notebook found."""

    verdicts: list[tuple[Answer, dict[str, str]]]  # each answer's verdict, in bank order
    proofs: list[tuple[list[Answer], list[str], dict[str, dict[str, str]]]]  # each round: errors, verdicts


def judge(lab: str, answers: list[Answer], lang: str = "en", proofs: bool = True,
          proven: list[Answer] | tuple[Answer, ...] = ()) -> Judged:
    """Judge every answer of a bank and run the rest of the notebook with every round of right answers.

    One kernel runs the solution notebook cell by cell. Right before each `exN.check()` cell, every bank
    answer of exN is judged in a fork of the kernel: the student version's cell, then the answer, then the
    check (answers marked `fresh` need nothing more: every fork starts from the same state). Right before
    the first cell a round of right answers replaces, a fork runs the rest of the notebook with the round's
    answers in place of the solution's (the proof's assertions included) and asks every check at the end.
    The kernel itself stops after the last fork: the solution's own proof is nbval's to run.
    With `proofs=False` only the verdicts are asked; right answers in `proven` (those another test already runs
    the whole notebook with: `walked`) get their verdict but no proof round.
    """
    cells = code_cells(lab, lang)
    blanks = student_cells(lab, lang)
    where = answer_cells(lab, lang)
    checks = check_cells(lab, lang)
    missing = {a.exercise for a in answers} - set(where)
    if missing:
        raise ValueError(f"{lab}: no answer cell found for {sorted(missing)}")
    groups = rounds([a for a in answers if a not in proven]) if proofs else []
    starts = [min(where[a.exercise] for a in group) for group in groups]
    judged_answers: dict[int, dict[str, str]] = {}
    ran: dict[int, tuple[list[str], dict[str, dict[str, str]]]] = {}
    last = max([*starts, *(checks[a.exercise] for a in answers)], default=-1)
    prefix_errors: list[str] = []
    kernel = Kernel(ROOT / "solutions" / lang)
    try:
        _load_forked(kernel)
        for index, cell in enumerate(cells[: last + 1]):
            for number, group in enumerate(groups):
                if starts[number] != index:
                    continue
                replaced = dict(enumerate(cells))
                for answer in group:
                    replaced[where[answer.exercise]] = answer.code
                rest = [(n, replaced[n]) for n in range(index, len(cells))]
                report = _fork(kernel, rest, sorted(checks))
                ran[number] = (prefix_errors + report["errors"], report["verdicts"])
            for position, answer in enumerate(answers):
                if checks.get(answer.exercise) != index:
                    continue
                at = where[answer.exercise]
                trial = [(at, blanks[at]), (at, answer.code)]
                report = _fork(kernel, trial, [answer.exercise], LOOP_SECONDS if answer.loops else None)
                verdict = report["verdicts"].get(answer.exercise)
                if verdict is None:
                    verdict = {"status": "raised", "key": "", "message": "; ".join(report["errors"])}
                judged_answers[position] = verdict
            _, error = kernel.run(cell)
            if error is not None:
                prefix_errors.append(f"code cell {index}: {error}")
    finally:
        kernel.close()
    return Judged(
        verdicts=[(answer, judged_answers[position]) for position, answer in enumerate(answers)],
        proofs=[(group, *ran[number]) for number, group in enumerate(groups)],
    )


def verdicts(lab: str, answers: list[Answer], lang: str = "en") -> list[tuple[Answer, dict[str, str]]]:
    """Each answer's verdict, judged in the real notebook right where the learner would write it."""
    return judge(lab, answers, lang, proofs=False).verdicts


def run_with(lab: str, answers: list[Answer], lang: str = "en") -> tuple[list[str], dict[str, dict[str, str]]]:
    """Run the whole notebook with `answers` (at most one per exercise) in place of the solution's.

    The errors raised (the proof's assertions included) and each check's verdict at the end."""
    if len({a.exercise for a in answers}) != len(answers):
        raise ValueError("run_with takes at most one answer per exercise")
    right = [Answer(a.exercise, a.name, a.code, CORRECT, a.fresh) for a in answers]
    [(_, errors, judged)] = judge(lab, right, lang).proofs
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
