"""Chapter 05's exercises: each gives not attempted / incorrect / correct on constructed answers,
and check(), hint() and solution() print what a learner reads."""

import re
from pathlib import Path

import pytest
import torch
from torch import nn

import devicelab
from devicelab.chapters.inside import (
    CLASSIFIER_SOLUTION,
    EXERCISES,
    FEATURES,
    STANDARDIZE_SOLUTION,
    START_STATE_SOLUTION,
    Classifier,
    MixingSpy,
    StandardizeModule,
    StartState,
    modules_called,
    probe_on_meta,
)
from devicelab.checks import CORRECT, INCORRECT, NOT_ATTEMPTED
from devicelab.messages import CATALOGUE, set_language, text

ROOT = Path(__file__).resolve().parents[2]
CPU = torch.device("cpu")
META = torch.device("meta")


def verdict_of(exercise, **values):
    verdict = exercise.evaluate(**values)
    return verdict.status, verdict.key


def solved(*replacements: tuple[str, str], target: str = "") -> dict:
    """The three solutions run in one namespace; `replacements` are applied to the solution named `target`."""
    namespace = {"torch": torch, "nn": nn, "FEATURES": FEATURES}
    for name, code in (("Standardize", STANDARDIZE_SOLUTION), ("start_state", START_STATE_SOLUTION),
                       ("SequenceClassifier", CLASSIFIER_SOLUTION)):
        if name == target:
            for old, new in replacements:
                assert old in code, old
                code = code.replace(old, new)
        exec(code, namespace)
    return namespace


# --- exercise 1: Standardize ---------------------------------------------------------------------


def test_ex1_not_attempted_when_missing_or_blank():
    assert verdict_of(StandardizeModule(CPU)) == (NOT_ATTEMPTED, "ch05.ex1.todo")
    assert verdict_of(StandardizeModule(CPU), Standardize=devicelab.____) == (NOT_ATTEMPTED, "ch05.ex1.todo")


def test_ex1_the_solution_is_correct():
    assert verdict_of(StandardizeModule(CPU), Standardize=solved()["Standardize"]) == (CORRECT, "ch05.ex1.ok")


@pytest.mark.parametrize(("replacements", "key"), [
    ([('self.register_buffer("mean", mean)', "self.mean = mean"),
      ('self.register_buffer("std", std)', "self.std = std")], "ch05.ex1.left_on_cpu"),
    ([('self.register_buffer("mean", mean)', "self.mean = nn.Parameter(mean)")], "ch05.ex1.parameter"),
    ([('self.register_buffer("std", std)', 'self.register_buffer("std", std, persistent=False)')],
     "ch05.ex1.not_saved"),
    ([("return (x - self.mean) / self.std", "return (x - self.mean) * self.std")], "ch05.ex1.values"),
    ([("return (x - self.mean) / self.std", "return ((x - self.mean) / self.std).cpu()")],
     "ch05.ex1.output_on_cpu"),
    ([("return (x - self.mean) / self.std", "raise ValueError('no')")], "ch05.ex1.meta_raised"),
    ([("super().__init__()", "super().__init__()\n        raise ValueError('no')")], "ch05.ex1.raised"),
], ids=["plain attributes", "a parameter", "not persistent", "wrong formula", "output to cpu", "forward raises",
        "init raises"])
def test_ex1_wrong_answers_are_incorrect(replacements, key):
    answer = solved(*replacements, target="Standardize")["Standardize"]
    assert verdict_of(StandardizeModule(CPU), Standardize=answer) == (INCORRECT, key)


def test_ex1_a_function_is_not_a_module():
    assert verdict_of(StandardizeModule(CPU), Standardize=lambda m, s: None) == (INCORRECT, "ch05.ex1.not_module")


def test_ex1_buffers_of_other_names_are_accepted():
    answer = solved(('"mean", mean', '"center", mean'), ("self.mean", "self.center"), target="Standardize")
    assert verdict_of(StandardizeModule(CPU), Standardize=answer["Standardize"])[0] == CORRECT


# --- exercise 2: start_state -----------------------------------------------------------------------


def test_ex2_not_attempted_when_missing_blank_or_a_stub():
    assert verdict_of(StartState(CPU)) == (NOT_ATTEMPTED, "ch05.ex2.todo")
    assert verdict_of(StartState(CPU), start_state=devicelab.____) == (NOT_ATTEMPTED, "ch05.ex2.todo")
    assert verdict_of(StartState(CPU), start_state=lambda x, h: devicelab.____) == (NOT_ATTEMPTED, "ch05.ex2.todo")


@pytest.mark.parametrize("answer", [
    lambda x, h: x.new_zeros(1, x.shape[0], h),
    lambda x, h: torch.zeros(1, x.shape[0], h, device=x.device, dtype=x.dtype),
    lambda x, h: torch.zeros_like(x[:, 0, :1]).expand(-1, h).unsqueeze(0).contiguous() * 0,
], ids=["new_zeros", "zeros with device and dtype", "zeros_like"])
def test_ex2_right_answers_are_correct(answer):
    assert verdict_of(StartState(CPU), start_state=answer) == (CORRECT, "ch05.ex2.ok")


@pytest.mark.parametrize(("answer", "key"), [
    (lambda x, h: torch.zeros(1, x.shape[0], h), "ch05.ex2.device"),
    (lambda x, h: torch.zeros(1, x.shape[0], h, device="cpu"), "ch05.ex2.device"),
    (lambda x, h: x.new_zeros(x.shape[0], h), "ch05.ex2.shape"),
    (lambda x, h: x.new_ones(1, x.shape[0], h), "ch05.ex2.values"),
    (lambda x, h: x.new_zeros(1, x.shape[0], h, dtype=torch.float64), "ch05.ex2.dtype"),
    (lambda x, h: [0.0] * h, "ch05.ex2.not_tensor"),
    (lambda x, h: x.new_zeros(1, x.shape[0], h).requires_grad_(), "ch05.ex2.values"),
    (lambda x: x.new_zeros(1, x.shape[0], 8), "ch05.ex2.raised"),
], ids=["no device", "cpu", "2-d", "ones", "float64", "a list", "requires grad", "one argument"])
def test_ex2_wrong_answers_are_incorrect(answer, key):
    assert verdict_of(StartState(CPU), start_state=answer) == (INCORRECT, key)


def test_ex2_a_global_device_is_caught_by_meta():
    device = torch.device("cpu")  # what a notebook's `device` is on this machine
    verdict = StartState(CPU).evaluate(start_state=lambda x, h: torch.zeros(1, x.shape[0], h, device=device))
    assert (verdict.status, verdict.key) == (INCORRECT, "ch05.ex2.device")
    assert "meta" in verdict.message()


# --- exercise 3: SequenceClassifier ----------------------------------------------------------------


def test_ex3_not_attempted_when_missing_or_blank():
    assert verdict_of(Classifier(CPU)) == (NOT_ATTEMPTED, "ch05.ex3.todo")
    assert verdict_of(Classifier(CPU), SequenceClassifier=devicelab.____) == (NOT_ATTEMPTED, "ch05.ex3.todo")


def test_ex3_the_solution_is_correct():
    answer = solved()["SequenceClassifier"]
    assert verdict_of(Classifier(CPU), SequenceClassifier=answer) == (CORRECT, "ch05.ex3.ok")


def test_ex3_no_hidden_state_and_a_time_buffer_are_correct_too():
    answer = solved(
        ("_, last = self.gru(x, start_state(x, self.gru.hidden_size))", "_, last = self.gru(x)"),
        ("time = torch.arange(steps, device=x.device, dtype=x.dtype) / steps",
         "time = (torch.arange(steps) / steps).to(x.device)"),
        target="SequenceClassifier",
    )["SequenceClassifier"]
    assert verdict_of(Classifier(CPU), SequenceClassifier=answer) == (CORRECT, "ch05.ex3.ok")


@pytest.mark.parametrize(("replacements", "key"), [
    ([(", device=x.device", "")], "ch05.ex3.left_on_cpu"),
    ([("start_state(x, self.gru.hidden_size)", "torch.zeros(1, batch, self.gru.hidden_size)")],
     "ch05.ex3.hidden_cpu"),
    ([("self.head = nn.Linear(hidden_size, classes)", "self.classes = classes"),
      ("return self.head(last[-1])", "return nn.Linear(self.gru.hidden_size, self.classes)(last[-1])")],
     "ch05.ex3.layer_in_forward"),
    ([("return self.head(last[-1])", "return self.head(last[-1]) + 0.01 * torch.randn(batch, 2, device=x.device)")],
     "ch05.ex3.not_repeatable"),
    ([("return self.head(last[-1])", "return self.head(last[-1]).cpu()")], "ch05.ex3.output_on_cpu"),
    ([("return self.head(last[-1])", "return self.head(last)")], "ch05.ex3.shape"),
    ([("self.standardize = Standardize(mean, std)", "self.mean, self.std = mean, std"),
      ("x = self.standardize(x)", "x = (x - self.mean.to(x.device)) / self.std.to(x.device)")],
     "ch05.ex3.not_saved"),
    ([("super().__init__()", "super().__init__()\n        raise ValueError('no')")], "ch05.ex3.raised"),
], ids=["arange on cpu", "hidden on cpu", "layer in forward", "random", "output to cpu", "shape",
        "statistics moved in forward", "init raises"])
def test_ex3_wrong_answers_are_incorrect(replacements, key):
    answer = solved(*replacements, target="SequenceClassifier")["SequenceClassifier"]
    assert verdict_of(Classifier(CPU), SequenceClassifier=answer) == (INCORRECT, key)


def test_ex3_the_first_draft_is_incorrect():
    source = (ROOT / "solutions" / "source" / "05-inside.md").read_text(encoding="utf-8")
    draft = source[source.index("class PlainStandardize"):source.index("draft = FirstDraft")]
    namespace = {"torch": torch, "nn": nn, "FEATURES": FEATURES}
    exec(draft, namespace)
    verdict = Classifier(CPU).evaluate(SequenceClassifier=namespace["FirstDraft"])
    assert verdict.status == INCORRECT


def test_ex3_a_matmul_with_a_cpu_tensor_is_caught_although_meta_does_not_raise():
    # aten.mm with one meta and one CPU tensor runs on meta without an error: the spy still sees it.
    answer = solved(("return self.head(last[-1])", "return self.head(last[-1] @ torch.eye(16))"),
                    target="SequenceClassifier")["SequenceClassifier"]
    assert verdict_of(Classifier(CPU), SequenceClassifier=answer) == (INCORRECT, "ch05.ex3.left_on_cpu")


# --- the probes -------------------------------------------------------------------------------------


def test_the_spy_ignores_0_dim_cpu_tensors_and_copies():
    x = torch.ones(2, 3, device=META)
    with MixingSpy() as spy:
        x * torch.tensor(2.0)
        torch.ones(3).to(x.device) + x
    assert spy.mixed == []


def test_probe_reports_a_cpu_output():
    assert probe_on_meta(lambda: torch.ones(2))[0] == "output_on_cpu"


def test_modules_called_sees_a_layer_built_in_forward_and_removes_its_hook():
    with modules_called() as called:
        nn.Linear(2, 2)(torch.ones(1, 2))
    assert [type(m).__name__ for m in called] == ["Linear"]
    nn.Linear(2, 2)(torch.ones(1, 2))
    assert len(called) == 1


# --- every exercise: catalogue keys, solutions --------------------------------------------------------


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda cls: cls.name)
def test_every_message_an_exercise_names_is_in_the_catalogue(exercise):
    keys = [exercise.not_attempted_key, exercise.solution_key, *exercise.hints]
    assert all(key in CATALOGUE for key in keys)


def test_every_verdict_key_used_by_the_checks_is_in_the_catalogue():
    source = (ROOT / "devicelab" / "chapters" / "inside.py").read_text(encoding="utf-8")
    used = set(re.findall(r'"(ch05\.ex\d\.\w+)"', source))
    used |= {f"ch05.ex{n}.{key}" for n in (1, 2, 3)
             for key in ("left_on_cpu", "hidden_cpu", "output_on_cpu", "meta_raised")}
    assert used <= set(CATALOGUE)
    for key in used:
        assert CATALOGUE[key]["zh"] and CATALOGUE[key]["en"]


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda cls: cls.name)
def test_every_printed_solution_is_the_code_of_the_solved_notebook(exercise):
    source = (ROOT / "solutions" / "source" / "05-inside.md").read_text(encoding="utf-8")
    for line in text(exercise.solution_key).splitlines():
        assert line in source, line


def test_the_printed_solutions_pass_their_checks_in_notebook_order():
    namespace = {"torch": torch, "nn": nn, "FEATURES": FEATURES}
    for exercise in EXERCISES:
        exec(text(exercise.solution_key), namespace)
    for exercise in EXERCISES:
        assert exercise(CPU).evaluate(namespace).status == CORRECT, exercise.name


def test_check_prints_a_wrong_answer_in_the_chosen_language(capsys):
    set_language("zh")
    StartState(CPU).check(start_state=lambda x, h: torch.zeros(1, x.shape[0], h))
    assert capsys.readouterr().out.startswith("❌ ex2: 还不对：输入在 meta 上，状态却创建在 cpu 上")


def test_check_without_arguments_reads_the_notebook_globals(capsys):
    notebook = {"ex2": StartState(CPU), "torch": torch}
    exec(START_STATE_SOLUTION + "\nex2.check()\n", notebook)
    assert capsys.readouterr().out.startswith("✅ ex2: Correct!")
