"""Every bank answer gets the verdict it deserves in the real notebook, and every right answer lets the proof pass.

Both tests of a bank read one pass of the bank through its notebook (`harness.judge`), made once per worker
process: the two run on the same pytest-xdist worker (one `xdist_group` per bank). The right answers the learner's
walk types (`harness.walked`, one per exercise) get no proof round here: tests/learner runs the whole notebook with
them in place, in both languages, and fails on any cell that raises or any check that no longer accepts them.
"""

import functools

import pytest
from harness import CORRECT, Judged, banks, judge, load_bank, walked

BANKS = [pytest.param(module, marks=pytest.mark.xdist_group(f"bank:{module}")) for module in banks()]


@functools.cache
def judged(module: str) -> Judged:
    lab, answers = load_bank(module)
    return judge(lab, answers, proven=walked(answers))


@pytest.mark.parametrize("module", banks())
def test_bank_is_big_enough(module):
    lab, answers = load_bank(module)
    for exercise in sorted({a.exercise for a in answers}):
        mine = [a for a in answers if a.exercise == exercise]
        assert sum(a.expect == CORRECT for a in mine) >= 2, f"{lab} {exercise}: fewer than 2 right answers"
        assert sum(a.expect != CORRECT for a in mine) >= 5, f"{lab} {exercise}: fewer than 5 wrong answers"


@pytest.mark.parametrize("module", BANKS)
def test_every_answer_gets_the_verdict_it_deserves(module):
    wrong = [
        f"{a.exercise} [{a.name}]: expected {a.expect}, got {v['status']}: {v['message']}"
        for a, v in judged(module).verdicts
        if (v["status"] == CORRECT) != (a.expect == CORRECT)
    ]
    assert not wrong, "\n".join(wrong)
    # an answer that never returns is stopped by the check's time limit (cut short for it: harness.LOOP_SECONDS)
    unstopped = [f"{a.exercise} [{a.name}]: {v['key'] or v['message']}" for a, v in judged(module).verdicts
                 if a.loops and v["key"] != "check.too_slow"]
    assert not unstopped, "\n".join(unstopped)
    # an answer pinned to a sentence gets that sentence, not another one (nor the raw error it once got)
    unexplained = [f"{a.exercise} [{a.name}]: expected {a.key}, got {v['key'] or 'no key'}: {v['message']}"
                   for a, v in judged(module).verdicts if a.key and v["key"] != a.key]
    assert not unexplained, "\n".join(unexplained)


@pytest.mark.parametrize("module", BANKS)
def test_with_every_right_answer_the_rest_of_the_notebook_works(module):
    lab, answers = load_bank(module)
    proofs = judged(module).proofs
    # every right answer has a proof round here, except the ones the learner's walk runs the notebook with
    assert sum(len(group) for group, _, _ in proofs) == sum(a.expect == CORRECT for a in answers) - len(walked(answers))
    for group, errors, verdicts in proofs:
        assert not errors, f"{lab} with {[a.name for a in group]}: " + "\n".join(errors)
        for answer in group:
            assert verdicts[answer.exercise]["status"] == CORRECT, (answer.name, verdicts[answer.exercise])
