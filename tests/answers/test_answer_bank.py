"""Every bank answer gets the verdict it deserves in the real notebook, and every right answer lets the proof pass."""

import pytest
from harness import CORRECT, banks, load_bank, rounds, run_with, verdicts

BANKS = banks()


@pytest.mark.parametrize("module", BANKS)
def test_bank_is_big_enough(module):
    lab, answers = load_bank(module)
    for exercise in sorted({a.exercise for a in answers}):
        mine = [a for a in answers if a.exercise == exercise]
        assert sum(a.expect == CORRECT for a in mine) >= 2, f"{lab} {exercise}: fewer than 2 right answers"
        assert sum(a.expect != CORRECT for a in mine) >= 5, f"{lab} {exercise}: fewer than 5 wrong answers"


@pytest.mark.parametrize("module", BANKS)
def test_every_answer_gets_the_verdict_it_deserves(module):
    lab, answers = load_bank(module)
    wrong = [
        f"{a.exercise} [{a.name}]: expected {a.expect}, got {v['status']}: {v['message']}"
        for a, v in verdicts(lab, answers)
        if (v["status"] == CORRECT) != (a.expect == CORRECT)
    ]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("module", BANKS)
def test_with_every_right_answer_the_rest_of_the_notebook_works(module):
    lab, answers = load_bank(module)
    for group in rounds(answers):
        errors, judged = run_with(lab, group)
        assert not errors, f"{lab} with {[a.name for a in group]}: " + "\n".join(errors)
        for answer in group:
            assert judged[answer.exercise]["status"] == CORRECT, (answer.name, judged[answer.exercise])
