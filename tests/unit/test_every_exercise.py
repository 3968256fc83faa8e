"""What every exercise of every chapter shares: hints in levels, a solution, 'not attempted' before the work."""

import pytest

from devicelab.chapters import MODULES, exercises_for
from devicelab.messages import CATALOGUE, set_language, text

EXERCISES = [(lab, ex) for lab in MODULES for ex in exercises_for(lab)]
IDS = [f"{lab}-{ex.name}" for lab, ex in EXERCISES]


@pytest.fixture(autouse=True)
def english():
    set_language("en")
    yield
    set_language("en")


@pytest.mark.parametrize(("lab", "exercise"), EXERCISES, ids=IDS)
def test_hints_come_one_level_at_a_time_then_say_there_are_no_more(capsys, lab, exercise):
    total = len(exercise.hints)
    assert total >= 2, "an exercise needs more than one level of hint"
    for _ in range(total + 1):
        exercise.hint()
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"Hint {i}/{total}: {text(key)}" for i, key in enumerate(exercise.hints, 1)] + [
        f"That was the last hint. `{exercise.name}.solution()` shows one answer."
    ]


@pytest.mark.parametrize(("lab", "exercise"), EXERCISES, ids=IDS)
def test_solution_prints_a_header_and_the_same_code_in_both_languages(capsys, lab, exercise):
    exercise.solution()
    assert capsys.readouterr().out == f"One solution:\n{text(exercise.solution_key)}\n"
    entry = CATALOGUE[exercise.solution_key]
    assert entry["en"] == entry["zh"], "solution code must be identical in both languages"


@pytest.mark.parametrize(("lab", "exercise"), EXERCISES, ids=IDS)
def test_a_check_run_before_the_variables_exist_says_not_attempted(capsys, lab, exercise):
    exec(f"{exercise.name}.check()\n", {exercise.name: exercise})  # a notebook where nothing else was run
    expected = f"📝 {exercise.name}: Not attempted yet: {text(exercise.not_attempted_key)}\n"
    assert capsys.readouterr().out == expected
