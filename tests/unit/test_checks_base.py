"""What every check shares: it never raises, it stops a learner's endless loop, it judges for the lab's device."""

import itertools

import torch

from devicelab.chapters import MODULES, exercises_for
from devicelab.checks import (
    CORRECT,
    INCORRECT,
    NOT_ATTEMPTED,
    Exercise,
    TimeLimit,
    ____,
    bounded,
    correct,
    time_limit,
)
from devicelab.messages import set_language


class CallsTheAnswer(Exercise):
    name = "exT"
    reads = ("answer",)
    not_attempted_key = "check.crashed"
    seconds = 0.5

    def judge(self, answer):
        answer()
        return correct("check.crashed", error="fine")


def test_a_judge_that_meets_a_raising_answer_says_incorrect_instead_of_raising():
    set_language("en")

    def broken():
        raise AttributeError("'function' object has no attribute 'parameters'")

    verdict = CallsTheAnswer().evaluate(answer=broken)
    assert verdict.status == INCORRECT
    assert "AttributeError" in verdict.message() and "parameters" in verdict.message()


def test_an_endless_answer_is_stopped_and_judged_incorrect():
    def forever():
        while True:
            pass

    verdict = CallsTheAnswer().evaluate(answer=forever)
    assert verdict.status == INCORRECT and verdict.key == "check.too_slow"


def test_a_learner_catching_exception_cannot_swallow_the_time_limit():
    def stubborn():
        while True:
            try:
                while True:
                    pass
            except Exception:  # noqa: BLE001 - what a learner might write
                pass

    assert CallsTheAnswer().evaluate(answer=stubborn).key == "check.too_slow"


def test_the_time_limit_is_lifted_after_the_check():
    import signal

    CallsTheAnswer().evaluate(answer=lambda: None)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    try:
        with time_limit(0.05):
            for _ in itertools.count():
                pass
    except TimeLimit:
        pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_blank_or_missing_values_are_not_attempted():
    assert CallsTheAnswer().evaluate(answer=____).status == NOT_ATTEMPTED
    assert CallsTheAnswer().evaluate({}).status == NOT_ATTEMPTED


def test_a_right_answer_is_still_correct():
    assert CallsTheAnswer().evaluate(answer=lambda: None).status == CORRECT


def test_bounded_takes_a_few_items_of_an_endless_iterable():
    assert bounded(itertools.count(), 3) == [0, 1, 2]
    assert bounded([1, 2], 5) == [1, 2]


def test_every_exercise_judges_for_the_device_the_lab_gives_it():
    for lab in MODULES:
        for exercise in exercises_for(lab, torch.device("meta")):
            assert exercise.device == torch.device("meta")
        for exercise in exercises_for(lab):
            assert exercise.device == torch.device("cpu")


def test_bounded_starts_one_pass_only_over_an_object_that_is_its_own_iterator():
    class Passes:
        def __init__(self):
            self.started, self.left = 0, 0

        def __iter__(self):
            self.started += 1
            self.left = 3
            return self

        def __next__(self):
            if not self.left:
                raise StopIteration
            self.left -= 1
            return self.left

    passes = Passes()
    assert bounded(passes, 10) == [2, 1, 0] and passes.started == 1
