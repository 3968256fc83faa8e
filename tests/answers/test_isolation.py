"""An answer judged by the harness cannot change the verdict of the next one.

Two planted answers try: one replaces the exercise's `evaluate` (a class of a module) so that every later
answer is judged as if it were right, and rebinds a global and torch's default dtype; the other makes
`torch.Tensor.to` do nothing, so that every later answer that moves tensors fails. Judged between them, a
wrong answer must stay wrong and a right one right. The same four answers run one after the other in one plain
kernel show that the planted answers really do change what follows when nothing isolates them.
"""

import pytest
from harness import (
    CORRECT,
    INCORRECT,
    ROOT,
    Answer,
    Kernel,
    answer_cells,
    check_cells,
    code_cells,
    judge,
    student_cells,
)

LAB = "01-devices"

HIJACK_EVALUATE = """
import torch
_right = lambda model, inputs, labels, device: (model.to(device), inputs.to(device), labels.to(device))
_evaluate = type(ex2).evaluate
type(ex2).evaluate = lambda self, namespace=None, **given: _evaluate(self, namespace, to_device=_right)
torch.set_default_dtype(torch.float64)
device = "cpu"
def to_device(model, inputs, labels, device):
    return model, inputs, labels
"""

BREAK_TO = """
import torch
torch.Tensor.to = lambda self, *args, **kwargs: self
def to_device(model, inputs, labels, device):
    return model, inputs, labels
"""

WRONG = """
def to_device(model, inputs, labels, device):
    model.to(device)
    inputs.to(device)
    labels.to(device)
    return model, inputs, labels
"""

RIGHT = """
def to_device(model, inputs, labels, device):
    return model.to(device), inputs.to(device), labels.to(device)
"""

ANSWERS = [
    Answer("ex2", "hostile: hijacks evaluate, a global and the default dtype", HIJACK_EVALUATE, INCORRECT),
    Answer("ex2", "wrong: discards .to()'s results", WRONG, INCORRECT),
    Answer("ex2", "hostile: makes Tensor.to do nothing", BREAK_TO, INCORRECT),
    Answer("ex2", "right: reassigns all three", RIGHT, CORRECT),
]


def _unisolated_marks() -> list[str]:
    """The check's mark for each answer, run one after the other in one kernel with nothing in between."""
    cells, blanks = code_cells(LAB), student_cells(LAB)
    answer_at, check_at = answer_cells(LAB)["ex2"], check_cells(LAB)["ex2"]
    kernel = Kernel(ROOT / "solutions" / "en")
    marks = []
    try:
        for cell in cells[:check_at]:
            kernel.run(cell)
        for answer in ANSWERS:
            kernel.run(blanks[answer_at])
            kernel.run(answer.code)
            printed, _ = kernel.run("ex2.check()")
            marks.append(CORRECT if "✅" in printed else INCORRECT)
    finally:
        kernel.close()
    return marks


@pytest.mark.xdist_group("bank:isolation")
def test_no_answer_changes_the_verdict_of_the_next():
    # The planted answers forge their own verdicts (the grader, not this harness, is there to catch them);
    # what matters is that the answers judged after them get theirs.
    judged = judge(LAB, ANSWERS, proofs=False).verdicts
    assert [judged[1][1]["status"], judged[3][1]["status"]] == [INCORRECT, CORRECT], judged


@pytest.mark.xdist_group("bank:isolation")
def test_the_planted_answers_do_leak_when_nothing_isolates_them():
    marks = _unisolated_marks()
    assert [marks[1], marks[3]] != [INCORRECT, CORRECT], marks
