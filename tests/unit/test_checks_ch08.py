"""Chapter 08's exercises: each gives not attempted / incorrect / correct on constructed answers,
and check(), hint() and solution() print what a learner reads."""

import contextlib

import pytest
import torch
from torch import nn

import devicelab
from devicelab.chapters.amp import (
    AMP_STEP_SOLUTION,
    AUTOCAST_FOR_SOLUTION,
    EXERCISES,
    PREPARE_SOLUTION,
    AmpStep,
    AutocastFor,
    Prepare,
)
from devicelab.checks import CORRECT, INCORRECT, NOT_ATTEMPTED
from devicelab.messages import CATALOGUE, set_language, text

CPU = torch.device("cpu")


def verdict_of(exercise, **values):
    verdict = exercise.evaluate(**values)
    return verdict.status, verdict.key


def function(code: str, name: str):
    """The function `name` defined by `code`, run with torch and nn in scope."""
    namespace = {"torch": torch, "nn": nn, "contextlib": contextlib}
    exec(code, namespace)
    return namespace[name]


def amp_step(*replacements: tuple[str, str]):
    """The solution's amp_step with some lines replaced."""
    code = AMP_STEP_SOLUTION
    for old, new in replacements:
        assert old in code, old
        code = code.replace(old, new)
    return function(code, "amp_step")


UNSCALE = "    scaler.unscale_(optimizer)  # the true gradients, so that max_norm means what it says\n"
CLIP = "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
STEP = "    scaler.step(optimizer)  # skipped when a gradient holds inf or NaN\n"
UPDATE = "    scaler.update()  # lowers the scale after a skipped step, raises it after enough clean ones\n"
ZERO = "    optimizer.zero_grad(set_to_none=True)"


# --- exercise 1: autocast_for ----------------------------------------------------------------------------


def test_ex1_not_attempted_when_missing_blank_or_a_stub():
    assert verdict_of(AutocastFor(CPU)) == (NOT_ATTEMPTED, "ch08.ex1.todo")
    assert verdict_of(AutocastFor(CPU), autocast_for=devicelab.____) == (NOT_ATTEMPTED, "ch08.ex1.todo")
    assert verdict_of(AutocastFor(CPU), autocast_for=lambda d: devicelab.____) == (NOT_ATTEMPTED, "ch08.ex1.todo")


@pytest.mark.parametrize("code", [
    AUTOCAST_FOR_SOLUTION,
    "def autocast_for(device):\n    return torch.amp.autocast(device.type)",
    "def autocast_for(device):\n    return torch.autocast(device.type, dtype=torch.bfloat16)",
    "def autocast_for(device):\n    return torch.autocast(device_type=device.type, dtype=torch.float16)",
    "def autocast_for(device):\n    return torch.autocast(torch.device(device).type, enabled=True)",
], ids=["solution", "torch.amp.autocast", "bfloat16", "float16", "enabled=True"])
def test_ex1_right_answers_are_correct(code):
    assert verdict_of(AutocastFor(CPU), autocast_for=function(code, "autocast_for")) == (CORRECT, "ch08.ex1.ok")


@pytest.mark.parametrize(("code", "key"), [
    ("def autocast_for(device):\n    return torch.autocast('cuda')", "ch08.ex1.device_type"),
    ("def autocast_for(device):\n    return torch.autocast('cpu')", "ch08.ex1.device_type"),
    ("def autocast_for(device):\n    return torch.autocast(str(device))", "ch08.ex1.device_type"),
    ("def autocast_for(device):\n    return torch.autocast(device)", "ch08.ex1.raised"),
    ("def autocast_for(device):\n    return torch.cuda.amp.autocast() if device.type == 'cuda' "
     "else torch.autocast(device.type)", "ch08.ex1.deprecated"),
    ("def autocast_for(device):\n    return torch.cpu.amp.autocast()", "ch08.ex1.deprecated"),
    ("def autocast_for(device):\n    return torch.autocast(device.type, dtype=torch.float32)", "ch08.ex1.precision"),
    ("def autocast_for(device):\n    return torch.autocast(device.type, enabled=torch.cuda.is_available())",
     "ch08.ex1.disabled"),
    ("def autocast_for(device):\n    return contextlib.nullcontext()", "ch08.ex1.not_autocast"),
], ids=["hard-coded cuda", "hard-coded cpu", "str(device)", "a torch.device", "torch.cuda.amp",
        "torch.cpu.amp", "float32", "off without CUDA", "nullcontext"])
def test_ex1_wrong_answers_are_incorrect(code, key):
    assert verdict_of(AutocastFor(CPU), autocast_for=function(code, "autocast_for")) == (INCORRECT, key)


def test_ex1_not_a_function():
    assert verdict_of(AutocastFor(CPU), autocast_for="cpu") == (INCORRECT, "ch08.ex1.not_function")


# --- exercise 2: prepare ----------------------------------------------------------------------------------


def test_ex2_not_attempted_when_missing_blank_or_the_stub():
    assert verdict_of(Prepare(CPU)) == (NOT_ATTEMPTED, "ch08.ex2.todo")
    assert verdict_of(Prepare(CPU), prepare=devicelab.____) == (NOT_ATTEMPTED, "ch08.ex2.todo")
    stub = lambda images, labels, device: (devicelab.____, devicelab.____)  # noqa: E731 - the student cell
    assert verdict_of(Prepare(CPU), prepare=stub) == (NOT_ATTEMPTED, "ch08.ex2.todo")


@pytest.mark.parametrize("answer", [
    function(PREPARE_SOLUTION, "prepare"),
    lambda i, y, d: ((i / 255).to(d), y.to(device=d, dtype=torch.int64)),
    lambda i, y, d: (i.to(d, torch.float32).div(255), y.to(d, torch.long)),
    lambda i, y, d: [torch.as_tensor(i, dtype=torch.float32, device=d) / 255.0, torch.as_tensor(y, device=d).long()],
], ids=["solution", "divide then move", "to(device, dtype)", "as_tensor, a list"])
def test_ex2_right_answers_are_correct(answer):
    assert verdict_of(Prepare(CPU), prepare=answer) == (CORRECT, "ch08.ex2.ok")


@pytest.mark.parametrize(("answer", "key"), [
    (lambda i, y, d: (i.to(d).half() / 255, y.to(d).long()), "ch08.ex2.hand_cast"),
    (lambda i, y, d: (i.to(d).bfloat16() / 255, y.to(d).long()), "ch08.ex2.hand_cast"),
    (lambda i, y, d: (i.to(d).double() / 255, y.to(d).long()), "ch08.ex2.double"),
    (lambda i, y, d: (i.to(d), y.to(d).long()), "ch08.ex2.images_dtype"),
    (lambda i, y, d: (i.to(d).float(), y.to(d).long()), "ch08.ex2.scale"),
    (lambda i, y, d: (i.to(d).float() / 255, y.to(d)), "ch08.ex2.labels_dtype"),
    (lambda i, y, d: (i.to(d).float() / 255, y.to(d).float()), "ch08.ex2.labels_dtype"),
    (lambda i, y, d: (i.float() / 255, y.long()), "ch08.ex2.device_images"),
    (lambda i, y, d: (i.to(d).float() / 255, y.long()), "ch08.ex2.device_labels"),
    (lambda i, y, d: (i.to(d).float().flatten(1) / 255, y.to(d).long()), "ch08.ex2.shape"),
    (lambda i, y, d: i.to(d).float() / 255, "ch08.ex2.not_pair"),
    (lambda i, y, d: (i.to(d).float() / 255, (1 - y).to(d).long()), "ch08.ex2.label_values"),
    (lambda i, y, d: (i.to(d).float() / 255, y.to(d).long(), y.zero_())[:2], "ch08.ex2.changed_input"),
    (lambda i, y: (i.float() / 255, y.long()), "ch08.ex2.raised"),
], ids=["half", "bfloat16", "float64", "uint8", "not scaled", "labels int32", "labels float", "not moved",
        "labels not moved", "flattened", "one tensor", "labels changed", "data set changed", "two arguments"])
def test_ex2_wrong_answers_are_incorrect(answer, key):
    assert verdict_of(Prepare(CPU), prepare=answer) == (INCORRECT, key)


def test_ex2_a_global_device_is_caught_by_meta():
    device = torch.device("cpu")  # what a notebook's `device` is on this machine
    verdict = Prepare(CPU).evaluate(prepare=lambda i, y, d: (i.to(device).float() / 255, y.to(device).long()))
    assert (verdict.status, verdict.key) == (INCORRECT, "ch08.ex2.device_images")
    assert "meta" in verdict.message()


# --- exercise 3: amp_step ---------------------------------------------------------------------------------


def test_ex3_not_attempted_when_missing_blank_or_the_stub():
    assert verdict_of(AmpStep(CPU)) == (NOT_ATTEMPTED, "ch08.ex3.todo")
    assert verdict_of(AmpStep(CPU), amp_step=devicelab.____) == (NOT_ATTEMPTED, "ch08.ex3.todo")
    assert verdict_of(AmpStep(CPU), amp_step=lambda m, o, s, loss, n: devicelab.____) == (
        NOT_ATTEMPTED, "ch08.ex3.todo")


@pytest.mark.parametrize("answer", [
    amp_step(),
    amp_step((ZERO, "    pass"), ("    scaler.scale(loss).backward()",
                                  "    optimizer.zero_grad()\n    scaler.scale(loss).backward()")),
    amp_step((ZERO, "    optimizer.zero_grad()")),
    amp_step((CLIP, "    nn.utils.clip_grad_norm_(list(model.parameters()), max_norm=max_norm)\n")),
], ids=["solution", "zero_grad first", "zero_grad to zeros", "clip keyword"])
def test_ex3_right_answers_are_correct(answer):
    assert verdict_of(AmpStep(CPU), amp_step=answer) == (CORRECT, "ch08.ex3.ok")


@pytest.mark.parametrize(("answer", "key"), [
    (amp_step((UNSCALE, "")), "ch08.ex3.clip_before_unscale"),
    (amp_step((CLIP, "")), "ch08.ex3.not_clipped"),
    (amp_step((CLIP, ""), (UPDATE, UPDATE + CLIP)), "ch08.ex3.not_clipped"),
    (amp_step((STEP, "    optimizer.step()\n")), "ch08.ex3.inf_not_skipped"),
    (amp_step((UNSCALE, ""), (STEP, "    optimizer.step()\n")), "ch08.ex3.order"),
    (amp_step((UNSCALE, ""), (CLIP, ""), (STEP, "    optimizer.step()\n"), (UPDATE, "")), "ch08.ex3.scaled_step"),
    (amp_step((UPDATE, "")), "ch08.ex3.no_update"),
    (amp_step((ZERO, "    pass")), "ch08.ex3.accumulates"),
    (amp_step(("scaler.scale(loss).backward()", "loss.backward()")), "ch08.ex3.not_scaled"),
    (amp_step((STEP, ""), (UPDATE, UPDATE + STEP)), "ch08.ex3.wrong_change"),
    (amp_step((UNSCALE, UNSCALE + UNSCALE)), "ch08.ex3.order"),
    (amp_step((STEP, ""), (UPDATE, "")), "ch08.ex3.no_change"),
], ids=["no unscale_", "no clipping", "clip after step", "optimizer.step", "update without inf checks", "scaled step",
        "no update",
        "no zero_grad", "backward unscaled", "update before step", "unscale_ twice", "no step"])
def test_ex3_wrong_answers_are_incorrect(answer, key):
    assert verdict_of(AmpStep(CPU), amp_step=answer) == (INCORRECT, key)


def test_ex3_an_endless_loop_is_stopped():
    exercise = AmpStep(CPU)
    exercise.seconds = 1.0

    def forever(model, optimizer, scaler, loss, max_norm):
        while True:
            pass

    assert verdict_of(exercise, amp_step=forever) == (INCORRECT, "check.too_slow")


# --- every exercise -----------------------------------------------------------------------------------


def test_every_message_key_exists_in_both_languages():
    for cls in EXERCISES:
        exercise = cls(CPU)
        for key in (*exercise.hints, exercise.solution_key, exercise.not_attempted_key):
            assert set(CATALOGUE[key]) == {"en", "zh"}, key
    chapter = [key for key in CATALOGUE if key.startswith("ch08.")]
    assert len(chapter) > 40 and all(set(CATALOGUE[key]) == {"en", "zh"} for key in chapter)


def test_check_prints_the_verdict_in_chinese(capsys):
    set_language("zh")
    try:
        AutocastFor(CPU).check(autocast_for=function(AUTOCAST_FOR_SOLUTION, "autocast_for"))
    finally:
        set_language("en")
    out = capsys.readouterr().out
    assert out.startswith("✅ ex1:") and "自动类型转换" in out


def test_hints_do_not_give_the_answer_before_the_last():
    for cls in EXERCISES:
        exercise = cls(CPU)
        solution = text(exercise.solution_key)
        for key in exercise.hints[:-1]:
            assert text(key) not in solution
