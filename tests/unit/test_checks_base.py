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


class QuotesTheError(Exercise):
    """A judge that quotes the answer's error, as every chapter's judge does (`error=short_error(...)`)."""

    name = "exQ"
    reads = ("answer",)
    not_attempted_key = "check.crashed"

    def judge(self, answer):
        from devicelab.checks import incorrect, short_error

        try:
            answer()
        except Exception as error:  # noqa: BLE001
            return incorrect("check.crashed", error=short_error(error))
        return correct("check.crashed", error="fine")


def test_cuda_asked_for_on_a_machine_without_it_gets_a_sentence_not_the_driver_message():
    """Every wording PyTorch uses for "no CUDA here" becomes one sentence, in both languages, when the lab is not
    on CUDA; the chapter 07 error that also names `torch.cuda.is_available()` keeps its own explanation."""
    wordings = ["Torch not compiled with CUDA enabled", "Found no NVIDIA driver on your system. Please check that "
                "you have an NVIDIA GPU and installed a driver", "No CUDA GPUs are available"]
    if not torch.cuda.is_available():  # what a forked process (the answer banks' harness) hears instead
        wordings.append("Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must "
                        "use the 'spawn' start method")
    for wording in wordings:
        def answer(wording=wording):
            raise RuntimeError(wording)

        verdict = QuotesTheError(torch.device("cpu")).evaluate(answer=answer)
        assert (verdict.status, verdict.key) == (INCORRECT, "check.no_cuda"), wording
        for lang in ("en", "zh"):
            set_language(lang)
            assert "NVIDIA" not in verdict.message() and "cpu" in verdict.message()
        set_language("en")
    picking = QuotesTheError(torch.device("cpu"))
    picking.picks_device = True
    assert picking.evaluate(answer=answer).key == "check.no_cuda_pick"

    def deserialize():
        raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                           "False. If you are running on a CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.")

    assert QuotesTheError(torch.device("cpu")).evaluate(answer=deserialize).key == "check.crashed"
    # On a CUDA lab the error would be something else entirely: it is quoted as it is.
    assert QuotesTheError(torch.device("cuda")).evaluate(answer=answer).key == "check.crashed"


def test_a_raw_cuda_call_without_a_gpu_is_explained_by_the_real_check():
    if torch.cuda.is_available():
        return  # on a GPU `.cuda()` works: nothing to explain
    ex2 = exercises_for("01-devices", torch.device("cpu"))[1]

    def to_device(model, inputs, labels, device):
        return model.cuda(), inputs.cuda(), labels.cuda()

    assert ex2.evaluate(to_device=to_device).key == "check.no_cuda"
