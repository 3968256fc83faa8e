"""Chapter 01's exercises: each gives not attempted / incorrect / correct on constructed answers,
and check(), hint() and solution() print what a learner reads."""

import copy
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.torch_version import TorchVersion

import devicelab

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from build_notebooks import parse, split_solution  # noqa: E402

from devicelab.chapters.basics import EXERCISES, QUESTIONS, MoveEverything, PredictThenRun, lab_target, truth
from devicelab.checks import CORRECT, INCORRECT, NOT_ATTEMPTED
from devicelab.messages import CATALOGUE, set_language, text

CPU = torch.device("cpu")
# meta stands in for the GPU: a second device that needs no hardware.
META = torch.device("meta")
SOURCE = Path(__file__).resolve().parents[2] / "solutions" / "source" / "01-devices.md"
RIGHT = {"answer_1": "cpu", "answer_2": "cpu", "answer_3": "target", "answer_4": "target",
         "answer_5": True, "answer_6": True}


def verdict_of(exercise, **values):
    verdict = exercise.evaluate(**values)
    return verdict.status, verdict.key


def verdict_of_namespace(exercise, namespace):
    verdict = exercise.evaluate(namespace)
    return verdict.status, verdict.key


@pytest.fixture
def default_device_restored():
    old = torch.get_default_device()
    try:
        yield
    finally:
        torch.set_default_device(None if old.type == "cpu" else old)  # "cpu" would leave a mode pushed


# --- exercise 1: predict, then run ---------------------------------------------------------------


def test_ex1_the_truth_is_computed_by_running_each_snippet_on_meta():
    assert [truth(q, META) for q in QUESTIONS] == ["cpu", "cpu", "target", "target", True, True]


def test_ex1_the_truth_follows_the_default_device_when_someone_changed_it():
    old = torch.get_default_device()
    try:
        torch.set_default_device(META)
        assert truth(QUESTIONS[0], META) == "target"  # torch.zeros(3) is created on meta now
    finally:
        torch.set_default_device(None if old.type == "cpu" else old)  # "cpu" would leave a mode pushed


def test_ex1_every_snippet_appears_in_the_lab_as_shown_and_as_run():
    source = SOURCE.read_text(encoding="utf-8")
    for question in QUESTIONS:
        assert source.count(f"```python\n{question.code}\n```") == 2  # English and Chinese markdown
        assert f"{question.code}\nprint(" in source  # the cell that runs them


def test_ex1_not_attempted_while_any_answer_is_blank_or_missing():
    ex = PredictThenRun()
    assert verdict_of(ex) == (NOT_ATTEMPTED, "ch01.ex1.todo")
    assert verdict_of(ex, **{**RIGHT, "answer_4": devicelab.____}) == (NOT_ATTEMPTED, "ch01.ex1.todo")
    partial = {k: v for k, v in RIGHT.items() if k != "answer_6"}
    assert verdict_of(ex, **partial) == (NOT_ATTEMPTED, "ch01.ex1.todo")


def test_ex1_believing_that_a_discarded_tensor_to_moves_the_tensor_is_incorrect():
    verdict = PredictThenRun().evaluate(**{**RIGHT, "answer_2": "target"})
    assert (verdict.status, verdict.key) == (INCORRECT, "ch01.ex1.wrong")
    assert verdict.params == {"n": 1, "total": 6, "which": "2", "target": META}


def test_ex1_several_wrong_predictions_are_all_named_without_the_answers():
    answers = {**RIGHT, "answer_1": "target", "answer_4": "cpu", "answer_5": False, "answer_6": False}
    verdict = PredictThenRun().evaluate(**answers)
    assert (verdict.key, verdict.params["n"], verdict.params["which"]) == ("ch01.ex1.wrong", 4, "1, 4, 5, 6")
    assert "cpu" not in verdict.message().split("target` = meta")[1]  # the right answers are not given


def test_ex1_an_answer_that_is_not_cpu_or_target_is_incorrect():
    verdict = PredictThenRun().evaluate(**{**RIGHT, "answer_3": "gpu"})
    assert (verdict.key, verdict.params) == ("ch01.ex1.bad_where", {"name": "answer_3", "got": "'gpu'"})


def test_ex1_a_quoted_true_is_incorrect():
    verdict = PredictThenRun().evaluate(**{**RIGHT, "answer_5": "True"})
    assert (verdict.key, verdict.params) == ("ch01.ex1.bad_yes_no", {"name": "answer_5", "got": "'True'"})


def test_ex1_the_targets_own_name_counts_as_target():
    answers = {**RIGHT, "answer_3": "meta", "answer_4": META, "answer_1": " CPU "}
    assert verdict_of(PredictThenRun(), **answers) == (CORRECT, "ch01.ex1.ok")


def test_ex1_judges_with_the_labs_target_not_the_notebooks_variable():
    # A notebook whose `target` was rebound to the CPU: the check still asks about meta (the lab's target).
    notebook = {**RIGHT, "target": CPU, "device": CPU}
    assert verdict_of_namespace(PredictThenRun(CPU), notebook) == (CORRECT, "ch01.ex1.ok")
    everything_cpu = {**notebook, "answer_3": "cpu", "answer_4": "cpu"}
    assert verdict_of_namespace(PredictThenRun(CPU), everything_cpu) == (INCORRECT, "ch01.ex1.wrong")


def test_ex1_on_an_accelerator_the_target_is_the_labs_device():
    assert lab_target(torch.device("cuda")) == torch.device("cuda")
    assert lab_target(torch.device("mps")) == torch.device("mps")
    assert lab_target(CPU) == META


def test_ex1_a_rebound_notebook_device_is_incorrect_even_with_right_answers():
    verdict = PredictThenRun(CPU).evaluate({**RIGHT, "device": META})
    assert (verdict.status, verdict.key) == (INCORRECT, "ch01.device_rebound")
    verdict = PredictThenRun(CPU).evaluate({**RIGHT, "device": "cuda"})
    assert (verdict.status, verdict.key) == (INCORRECT, "ch01.device_rebound")
    assert verdict_of_namespace(PredictThenRun(CPU), {**RIGHT, "device": "cpu"}) == (CORRECT, "ch01.ex1.ok")


def test_ex1_a_changed_default_device_is_incorrect_even_with_right_answers(default_device_restored):
    torch.set_default_device(META)
    answers = {**RIGHT, "answer_1": "target"}  # what torch.zeros(3) would now give
    assert verdict_of(PredictThenRun(), **answers) == (INCORRECT, "ch01.ex1.wrong")  # asked about the CPU default
    assert verdict_of(PredictThenRun(), **RIGHT) == (INCORRECT, "ch01.default_device")


def test_ex1_the_right_predictions_are_correct():
    verdict = PredictThenRun().evaluate(**RIGHT)
    assert (verdict.status, verdict.key, verdict.params) == (CORRECT, "ch01.ex1.ok", {"total": 6, "target": META})


# --- exercise 2: keep what .to() returns ---------------------------------------------------------


def fixed(model, inputs, labels, device):
    model.to(device)
    inputs = inputs.to(device)
    labels = labels.to(device)
    return model, inputs, labels


def fixed_by_assigning_everything(model, inputs, labels, device):
    return model.to(device), inputs.to(device), labels.to(device)


def the_seeds_lines(model, inputs, labels, device):
    model.to(device)
    inputs.to(device)  # the moved copy is thrown away
    labels.to(device)
    return model, inputs, labels


def forgets_the_labels(model, inputs, labels, device):
    model.to(device)
    inputs = inputs.to(device)
    labels.to(device)
    return model, inputs, labels


def forgets_the_model(model, inputs, labels, device):
    return model, inputs.to(device), labels.to(device)


def returns_only_the_batch(model, inputs, labels, device):
    return inputs.to(device), labels.to(device)


def returns_in_another_order(model, inputs, labels, device):
    return inputs.to(device), model.to(device), labels.to(device)


def converts_the_inputs(model, inputs, labels, device):
    return model.to(device), inputs.to(device, torch.float64), labels.to(device)


def swaps_the_inputs_for_new_ones(model, inputs, labels, device):
    return model.to(device), torch.zeros_like(inputs, device=device), labels.to(device)


def moves_to_a_fixed_device(model, inputs, labels, device):
    return model.to("cuda"), inputs.to("cuda"), labels.to("cuda")


def still_a_stub(model, inputs, labels, device):
    the_seeds_lines(model, inputs, labels, device)
    return devicelab.____


def test_ex2_not_attempted_when_missing_blank_or_still_returning_the_blank():
    ex = MoveEverything()
    assert verdict_of(ex) == (NOT_ATTEMPTED, "ch01.ex2.todo")
    assert verdict_of(ex, to_device=devicelab.____) == (NOT_ATTEMPTED, "ch01.ex2.todo")
    assert verdict_of(ex, to_device=still_a_stub) == (NOT_ATTEMPTED, "ch01.ex2.todo")


def test_ex2_the_seeds_lines_are_incorrect_the_inputs_stay_on_the_cpu():
    assert MoveEverything.host == CPU  # where a DataLoader hands out batches
    verdict = MoveEverything().evaluate(to_device=the_seeds_lines)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch01.ex2.left_behind")
    assert verdict.params == {"what": "inputs", "found": CPU, "device": META}


def test_ex2_a_discarded_labels_move_is_incorrect():
    verdict = MoveEverything().evaluate(to_device=forgets_the_labels)
    assert (verdict.key, verdict.params) == ("ch01.ex2.left_behind", {"what": "labels", "found": CPU, "device": META})


def test_ex2_a_model_left_on_the_cpu_is_incorrect_and_counted():
    verdict = MoveEverything().evaluate(to_device=forgets_the_model)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch01.ex2.model")
    # two linear layers (weight, bias each), batch norm (weight, bias, running mean, var, batches tracked)
    assert verdict.params == {"n": 9, "total": 9, "found": CPU, "device": META}


def moves_to(where):
    """A to_device that moves to a notebook variable (`device` or `target`) instead of its argument."""

    def to_device(model, inputs, labels, device):
        return model.to(where), inputs.to(where), labels.to(where)

    return to_device


def returns_a_moved_copy_of_the_model(model, inputs, labels, device):
    return copy.deepcopy(model).to(device), inputs.to(device), labels.to(device)


def casts_the_labels_to_float(model, inputs, labels, device):
    return model.to(device), inputs.to(device), labels.to(device).float()


def turns_the_model_to_double(model, inputs, labels, device):
    return model.to(device).double(), inputs.to(device), labels.to(device)


def zeroes_the_weights(model, inputs, labels, device):
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    return model.to(device), inputs.to(device), labels.to(device)


def loops_forever(model, inputs, labels, device):
    while True:
        pass


def returns_none(model, inputs, labels, device):
    model.to(device)


@pytest.mark.parametrize(
    ("to_device", "key"),
    [
        (returns_only_the_batch, "ch01.ex2.not_three"),
        (returns_none, "ch01.ex2.not_three"),
        (returns_in_another_order, "ch01.ex2.order"),
        (converts_the_inputs, "ch01.ex2.changed"),
        (casts_the_labels_to_float, "ch01.ex2.changed"),
        (returns_a_moved_copy_of_the_model, "ch01.ex2.copy"),
        (turns_the_model_to_double, "ch01.ex2.model_changed"),
        (zeroes_the_weights, "ch01.ex2.model_changed"),
        (moves_to_a_fixed_device, "check.no_cuda"),
    ],
)
def test_ex2_other_wrong_fixes_are_incorrect(to_device, key):
    if to_device is moves_to_a_fixed_device and torch.cuda.is_available():
        pytest.skip("on a CUDA machine moving to 'cuda' works")
    assert verdict_of(MoveEverything(), to_device=to_device) == (INCORRECT, key)


@pytest.mark.parametrize("where", [CPU, META, "cpu", "meta"], ids=str)
def test_ex2_moving_to_a_notebook_variable_instead_of_the_argument_is_incorrect(where):
    # On a CPU machine the notebook's `device` is the CPU and its `target` is meta: each fails one probe.
    verdict = MoveEverything(CPU).evaluate(to_device=moves_to(where))
    assert (verdict.status, verdict.key) == (INCORRECT, "ch01.ex2.model")


def test_ex2_probes_meta_on_every_machine_and_the_labs_device_too():
    assert MoveEverything(CPU).probes() == [META, CPU]
    assert MoveEverything(torch.device("cuda")).probes() == [torch.device("cuda"), META]
    assert MoveEverything(torch.device("mps")).probes() == [torch.device("mps"), META]


def test_ex2_new_values_are_incorrect_where_the_probe_holds_values():
    # meta holds no values, but the CPU probe (or the GPU's) does.
    verdict = MoveEverything(CPU).evaluate(to_device=swaps_the_inputs_for_new_ones)
    assert (verdict.key, verdict.params) == ("ch01.ex2.changed", {"what": "inputs"})


def test_ex2_an_endless_function_is_stopped_and_incorrect(monkeypatch):
    monkeypatch.setattr(MoveEverything, "seconds", 0.5)
    verdict = MoveEverything().evaluate(to_device=loops_forever)
    assert (verdict.status, verdict.key) == (INCORRECT, "check.too_slow")


def test_ex2_something_that_is_not_a_function_is_incorrect():
    assert verdict_of(MoveEverything(), to_device="to") == (INCORRECT, "ch01.ex2.not_function")


def test_ex2_a_rebound_notebook_device_is_incorrect_even_with_a_right_function():
    verdict = MoveEverything(CPU).evaluate({"to_device": fixed, "device": META})
    assert (verdict.status, verdict.key) == (INCORRECT, "ch01.device_rebound")


def assigns_the_model_back(model, inputs, labels, device):
    model = model.to(device)
    inputs = inputs.to(device=device, non_blocking=True)
    labels = labels.to(device=device, non_blocking=True)
    return model, inputs, labels


def loops_over_the_tensors(model, inputs, labels, device):
    model.to(device)
    inputs, labels = [t.to(device) for t in (inputs, labels)]
    return [model, inputs, labels]


def yields_the_three(model, inputs, labels, device):
    yield model.to(device)
    yield inputs.to(device)
    yield labels.to(device)


@pytest.mark.parametrize(
    "to_device", [fixed, fixed_by_assigning_everything, assigns_the_model_back, loops_over_the_tensors,
                  yields_the_three]
)
def test_ex2_keeping_what_to_returns_is_correct(to_device):
    verdict = MoveEverything().evaluate(to_device=to_device)
    assert (verdict.status, verdict.key) == (CORRECT, "ch01.ex2.ok")


# --- every exercise: catalogue keys, solutions ---------------------------------------------------


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda cls: cls.name)
def test_every_message_an_exercise_names_is_in_the_catalogue(exercise):
    keys = [exercise.not_attempted_key, exercise.solution_key, *exercise.hints]
    assert all(key in CATALOGUE for key in keys)
    assert len(exercise.hints) >= 2


def test_the_printed_solutions_pass_their_checks():
    namespace = {"torch": torch, "nn": nn, "target": META}
    exec(text("ch01.ex1.solution"), namespace)
    body = textwrap.indent(text("ch01.ex2.solution"), "    ")
    exec(f"def to_device(model, inputs, labels, device):\n{body}\n", namespace)
    for exercise in EXERCISES:
        assert exercise().evaluate(namespace).status == CORRECT, exercise.name


def test_the_labs_solution_cells_pass_their_checks():
    # The solution cells of the lab source (English code cells), run as the notebook runs them.
    answers = [solution for kind, body in parse(SOURCE) if kind == "code" and "### BEGIN SOLUTION" in body
               for solution, _ in [split_solution(body, SOURCE)]]
    assert len(answers) == 2
    namespace = {"torch": torch, "nn": nn, "target": META}
    for answer in answers:
        exec(answer, namespace)
    for exercise in EXERCISES:
        assert exercise().evaluate(namespace).status == CORRECT, exercise.name


def test_the_student_cells_are_not_attempted():
    # The student version of the same cells, with the lab's `____`.
    namespace = {"torch": torch, "nn": nn, "target": META, "____": devicelab.____}
    for kind, body in parse(SOURCE):
        if kind == "code" and "### BEGIN SOLUTION" in body:
            exec(split_solution(body, SOURCE)[1], namespace)
    for exercise in EXERCISES:
        assert exercise().evaluate(namespace).status == NOT_ATTEMPTED, exercise.name


def test_version_checks_compare_numbers_not_strings():
    # The claims tests pick the wording by version: "2.14.1" >= "2.8" is False as strings.
    assert TorchVersion("2.14.1") >= (2, 8) and not TorchVersion("2.7.1") >= (2, 8)
    assert not "2.14.1" >= "2.8"


# --- check(), hint(), solution() -----------------------------------------------------------------


def test_check_prints_a_wrong_answer_and_does_not_raise(capsys):
    MoveEverything().check(to_device=the_seeds_lines)
    expected = "❌ ex2: Not yet: called with device=meta, `to_device` returns the `inputs` on cpu."
    assert capsys.readouterr().out == f"{expected} {devicelab.messages.text('check.meta_note')}\n"  # meta explained


def test_check_without_arguments_reads_the_notebook_globals(capsys):
    notebook = {"ex1": PredictThenRun(CPU), "torch": torch, **RIGHT}
    exec("device = torch.device('cpu')\ntarget = torch.device('cpu')  # rebound: not read\nex1.check()\n", notebook)
    assert capsys.readouterr().out == (
        "✅ ex1: Correct! All 6 predictions match what PyTorch does with `target` = meta. "
        + devicelab.messages.text("check.meta_note") + "\n"
    )


def test_check_prints_in_the_chosen_language(capsys):
    set_language("zh")
    PredictThenRun().check(**{**RIGHT, "answer_2": "target"})
    assert capsys.readouterr().out.startswith("❌ ex1: 还不对：`target` = meta 时，6 道题里有 1 道的预测和 PyTorch")


def test_module_to_meta_swaps_in_new_parameters_which_ex2_allows_for():
    # ex2 asks that the returned model keeps its Parameter objects, except towards meta, where
    # Module.to() itself swaps them (CPU and GPU tensors are compatible; meta ones are not).
    model = nn.Linear(2, 2)
    weight = model.weight
    model.to(META)
    assert model.weight is not weight and weight.device == CPU
    assert not torch._has_compatible_shallow_copy_type(torch.empty(0), torch.empty(0, device=META))
    model = nn.Linear(2, 2)
    weight = model.weight
    model.to(CPU).double()
    assert model.weight is weight
