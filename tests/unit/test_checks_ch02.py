"""Chapter 02's exercises: each gives not attempted / incorrect / correct on constructed answers,
and check(), hint() and solution() print what a learner reads."""

import textwrap

import pytest
import torch
from torch import nn, optim

import devicelab
from devicelab.chapters.dataparallel import (
    EXERCISES,
    MoveWrapAssign,
    OptimizerOverFinalModel,
    TrainStep,
    WeightedLossOnDevice,
)
from devicelab.checks import CORRECT, INCORRECT, NOT_ATTEMPTED
from devicelab.messages import CATALOGUE, set_language, text

CPU = torch.device("cpu")
# meta stands in for the GPU: a second device that needs no hardware.
META = torch.device("meta")
CLASS_WEIGHTS = torch.tensor([1.0, 2.0, 5.0])


def small_model() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))


def verdict_of(exercise, **values):
    verdict = exercise.evaluate(**values)
    return verdict.status, verdict.key


# --- exercise 1: move, wrap, assign back --------------------------------------------------------


def test_ex1_not_attempted_when_model_ft_is_missing_or_blank():
    ex = MoveWrapAssign()
    assert verdict_of(ex, device=CPU) == (NOT_ATTEMPTED, "ch02.ex1.todo")
    assert verdict_of(ex, model_ft=devicelab.____, device=CPU) == (NOT_ATTEMPTED, "ch02.ex1.todo")


def test_ex1_wrapping_without_assigning_back_is_incorrect():
    model_ft = small_model()
    net = nn.DataParallel(model_ft)  # the seed's mistake: the loop still trains model_ft
    assert isinstance(net, nn.DataParallel)
    assert verdict_of(MoveWrapAssign(), model_ft=model_ft, device=CPU) == (INCORRECT, "ch02.ex1.not_wrapped")


def test_ex1_a_model_left_on_the_cpu_is_incorrect_and_counted():
    verdict = MoveWrapAssign().evaluate(model_ft=nn.DataParallel(small_model()), device=META)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch02.ex1.not_moved")
    # conv weight and bias, batch-norm weight and bias, running mean, running var, batches tracked
    assert verdict.params == {"n": 7, "total": 7, "found": CPU, "device": META}


def test_ex1_a_buffer_left_behind_is_incorrect():
    model = small_model().to(META)
    model[1].register_buffer("scale", torch.ones(4))  # added after the move: still on the CPU
    verdict = MoveWrapAssign().evaluate(model_ft=nn.DataParallel(model), device=META)
    assert (verdict.key, verdict.params["n"], verdict.params["total"]) == ("ch02.ex1.not_moved", 1, 8)


def test_ex1_wrapped_twice_is_incorrect():
    twice = nn.DataParallel(nn.DataParallel(small_model()))
    assert verdict_of(MoveWrapAssign(), model_ft=twice, device=CPU) == (INCORRECT, "ch02.ex1.wrapped_twice")


def test_ex1_something_that_is_not_a_model_is_incorrect():
    verdict = MoveWrapAssign().evaluate(model_ft="resnet18", device=CPU)
    assert (verdict.key, verdict.params) == ("ch02.ex1.not_module", {"got": "str"})


def test_ex1_moved_wrapped_and_assigned_is_correct():
    model_ft = small_model().to(META)
    model_ft = nn.DataParallel(model_ft)
    assert verdict_of(MoveWrapAssign(), model_ft=model_ft, device=META) == (CORRECT, "ch02.ex1.ok")


def test_ex1_moving_right_after_wrapping_is_also_correct():
    model_ft = nn.DataParallel(small_model()).to(META)
    assert verdict_of(MoveWrapAssign(), model_ft=model_ft, device=META) == (CORRECT, "ch02.ex1.ok")


# --- exercise 2: class-weighted loss on the device ----------------------------------------------


def test_ex2_not_attempted_when_criterion_is_missing_or_blank():
    ex = WeightedLossOnDevice()
    assert verdict_of(ex, class_weights=CLASS_WEIGHTS, device=CPU) == (NOT_ATTEMPTED, "ch02.ex2.todo")
    blank = verdict_of(ex, criterion=devicelab.____, class_weights=CLASS_WEIGHTS, device=CPU)
    assert blank == (NOT_ATTEMPTED, "ch02.ex2.todo")


def test_ex2_weights_left_on_the_cpu_are_incorrect():
    criterion = nn.CrossEntropyLoss(weight=CLASS_WEIGHTS)  # never moved to the device
    verdict = WeightedLossOnDevice().evaluate(criterion=criterion, class_weights=CLASS_WEIGHTS, device=META)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch02.ex2.weight_device")
    assert verdict.params == {"found": CPU, "device": META}


def test_ex2_a_loss_without_weights_is_incorrect():
    verdict = verdict_of(
        WeightedLossOnDevice(), criterion=nn.CrossEntropyLoss(), class_weights=CLASS_WEIGHTS, device=CPU
    )
    assert verdict == (INCORRECT, "ch02.ex2.no_weight")


@pytest.mark.parametrize("weight", [torch.ones(3), torch.tensor([1.0, 2.0, 5.0, 1.0]), CLASS_WEIGHTS.flip(0)])
def test_ex2_other_weight_values_are_incorrect(weight):
    criterion = nn.CrossEntropyLoss(weight=weight)
    verdict = verdict_of(WeightedLossOnDevice(), criterion=criterion, class_weights=CLASS_WEIGHTS, device=CPU)
    assert verdict == (INCORRECT, "ch02.ex2.weight_values")


def test_ex2_another_loss_is_incorrect():
    verdict = WeightedLossOnDevice().evaluate(
        criterion=nn.NLLLoss(weight=CLASS_WEIGHTS), class_weights=CLASS_WEIGHTS, device=CPU
    )
    assert (verdict.key, verdict.params) == ("ch02.ex2.not_ce", {"got": "NLLLoss"})


def test_ex2_a_weighted_loss_on_the_device_is_correct():
    criterion = nn.CrossEntropyLoss(weight=CLASS_WEIGHTS).to(CPU)
    verdict = verdict_of(WeightedLossOnDevice(), criterion=criterion, class_weights=CLASS_WEIGHTS, device=CPU)
    assert verdict == (CORRECT, "ch02.ex2.ok")


def test_ex2_integer_class_weights_given_as_floats_are_correct():
    criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 5.0]))
    verdict = verdict_of(
        WeightedLossOnDevice(), criterion=criterion, class_weights=torch.tensor([1, 2, 5]), device=CPU
    )
    assert verdict == (CORRECT, "ch02.ex2.ok")


# --- exercise 3: the optimizer holds the parameters of the trained model ------------------------


def test_ex3_not_attempted_when_optimizer_ft_is_missing_or_blank():
    ex = OptimizerOverFinalModel()
    assert verdict_of(ex, model_ft=small_model()) == (NOT_ATTEMPTED, "ch02.ex3.todo")
    assert verdict_of(ex, optimizer_ft=devicelab.____, model_ft=small_model()) == (
        NOT_ATTEMPTED,
        "ch02.ex3.todo",
    )


def test_ex3_an_optimizer_over_another_model_is_incorrect():
    other = small_model()
    verdict = OptimizerOverFinalModel().evaluate(
        optimizer_ft=optim.SGD(other.parameters(), lr=0.05), model_ft=small_model()
    )
    assert (verdict.status, verdict.key, verdict.params) == (INCORRECT, "ch02.ex3.other_model", {"held": 4})


def test_ex3_an_optimizer_missing_some_parameters_is_incorrect():
    model_ft = small_model()
    verdict = OptimizerOverFinalModel().evaluate(
        optimizer_ft=optim.SGD(model_ft[0].parameters(), lr=0.05), model_ft=model_ft
    )
    assert (verdict.key, verdict.params) == ("ch02.ex3.some_missing", {"n": 2, "total": 4})


def test_ex3_an_optimizer_with_extra_tensors_is_incorrect():
    model_ft = small_model()
    extra = nn.Parameter(torch.zeros(3))
    optimizer_ft = optim.SGD([*model_ft.parameters(), extra], lr=0.05)
    verdict = OptimizerOverFinalModel().evaluate(optimizer_ft=optimizer_ft, model_ft=model_ft)
    assert (verdict.key, verdict.params) == ("ch02.ex3.extra", {"n": 1})


def test_ex3_something_that_is_not_an_optimizer_is_incorrect():
    verdict = OptimizerOverFinalModel().evaluate(optimizer_ft=optim.SGD, model_ft=small_model())
    assert (verdict.key, verdict.params) == ("ch02.ex3.not_optimizer", {"got": "type"})


def test_ex3_without_a_model_it_asks_for_exercise_1_first():
    verdict = verdict_of(
        OptimizerOverFinalModel(),
        optimizer_ft=optim.SGD(small_model().parameters(), lr=0.1),
        model_ft="not yet",
    )
    assert verdict == (INCORRECT, "ch02.ex3.no_model")


def test_ex3_an_optimizer_over_the_wrapped_model_is_correct():
    model_ft = nn.DataParallel(small_model())
    optimizer_ft = optim.SGD(model_ft.parameters(), lr=0.05, momentum=0.9)
    verdict = OptimizerOverFinalModel().evaluate(optimizer_ft=optimizer_ft, model_ft=model_ft)
    assert (verdict.status, verdict.key, verdict.params) == (CORRECT, "ch02.ex3.ok", {"total": 4})


def test_ex3_an_optimizer_built_before_wrapping_is_correct():
    model = small_model()
    optimizer_ft = optim.SGD(model.parameters(), lr=0.05)
    model_ft = nn.DataParallel(model)  # the wrapper holds the very same Parameter objects
    assert verdict_of(OptimizerOverFinalModel(), optimizer_ft=optimizer_ft, model_ft=model_ft)[0] == CORRECT


def test_ex3_frozen_parameters_need_not_be_in_the_optimizer():
    model_ft = small_model()
    model_ft[1].requires_grad_(False)
    optimizer_ft = optim.SGD(model_ft[0].parameters(), lr=0.05)
    assert verdict_of(OptimizerOverFinalModel(), optimizer_ft=optimizer_ft, model_ft=model_ft)[0] == CORRECT


# --- exercise 4: the training step moves the batch ----------------------------------------------


def correct_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


# The wrong steps below run with the model on meta: meta tensors hold no values, so they return the loss
# tensor instead of loss.item(). Their verdict is decided before the return value is looked at.


def forgets_labels(model, criterion, optimizer, inputs, labels, device):
    inputs = inputs.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss


def forgets_inputs(model, criterion, optimizer, inputs, labels, device):
    labels = labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss


def discards_the_moved_labels(model, criterion, optimizer, inputs, labels, device):
    inputs = inputs.to(device)
    labels.to(device)  # returns a moved copy, which is thrown away
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss


def forgets_the_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    return loss.item()


def returns_the_tensor(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss


def reshapes_wrongly(model, criterion, optimizer, inputs, labels, device):
    return criterion(model(inputs.view(7, -1)), labels).item()  # 8 x 12 values do not split into 7 rows


def never_calls_the_model(model, criterion, optimizer, inputs, labels, device):
    return 0.0


def still_a_stub(model, criterion, optimizer, inputs, labels, device):
    return devicelab.____


def raises_not_implemented(model, criterion, optimizer, inputs, labels, device):
    raise NotImplementedError


def test_batches_cannot_come_from_meta_so_the_model_goes_there_instead():
    # Why the tests below keep TrainStep.host on the CPU and put the model on meta: a meta tensor holds
    # no values, so moving a batch from meta to the CPU raises (and NotImplementedError means "not
    # attempted" to a check).
    with pytest.raises(NotImplementedError):
        torch.zeros(2, device=META).to(CPU)


@pytest.mark.parametrize(
    ("step", "key"),
    [
        (forgets_labels, "ch02.ex4.labels"),
        (discards_the_moved_labels, "ch02.ex4.labels"),
        (forgets_inputs, "ch02.ex4.inputs"),
    ],
)
def test_ex4_a_batch_tensor_left_on_the_host_is_incorrect(step, key):
    assert TrainStep.host == CPU  # where a DataLoader hands out batches
    verdict = TrainStep().evaluate(train_step=step, device=META)
    assert (verdict.status, verdict.key) == (INCORRECT, key)
    assert verdict.params == {"found": CPU, "device": META}


def test_ex4_a_step_without_optimizer_step_is_incorrect():
    assert verdict_of(TrainStep(), train_step=forgets_the_step, device=CPU) == (
        INCORRECT,
        "ch02.ex4.no_update",
    )


def test_ex4_a_step_that_raises_is_incorrect_and_shows_the_error():
    verdict = TrainStep().evaluate(train_step=reshapes_wrongly, device=CPU)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch02.ex4.raised")
    assert verdict.params["error"].startswith("RuntimeError: shape '[7, -1]' is invalid")


def test_ex4_a_step_that_returns_the_loss_tensor_is_incorrect():
    verdict = TrainStep().evaluate(train_step=returns_the_tensor, device=CPU)
    assert (verdict.key, verdict.params) == ("ch02.ex4.result", {"got": "Tensor"})


def test_ex4_a_step_that_never_calls_the_model_is_incorrect():
    assert verdict_of(TrainStep(), train_step=never_calls_the_model, device=CPU) == (
        INCORRECT,
        "ch02.ex4.not_called",
    )


def test_ex4_something_that_is_not_a_function_is_incorrect():
    assert verdict_of(TrainStep(), train_step=0.5, device=CPU) == (INCORRECT, "ch02.ex4.not_function")


def test_ex4_not_attempted_when_train_step_is_missing_blank_or_not_implemented():
    ex = TrainStep()
    assert verdict_of(ex, device=CPU) == (NOT_ATTEMPTED, "ch02.ex4.todo")
    assert verdict_of(ex, train_step=devicelab.____, device=CPU) == (NOT_ATTEMPTED, "ch02.ex4.todo")
    # an error raised by the learner's code (even NotImplementedError) is reported, not hidden
    assert verdict_of(ex, train_step=raises_not_implemented, device=CPU) == (INCORRECT, "ch02.ex4.raised")


def test_ex4_a_stub_that_still_returns_the_blank_is_not_attempted():
    assert verdict_of(TrainStep(), train_step=still_a_stub, device=CPU) == (NOT_ATTEMPTED, "ch02.ex4.todo")


def test_ex4_a_step_that_moves_inputs_and_labels_and_updates_is_correct():
    assert verdict_of(TrainStep(), train_step=correct_step, device=CPU) == (CORRECT, "ch02.ex4.ok")


# --- every exercise: catalogue keys, solutions ---------------------------------------------------


def namespace_for_solutions() -> dict[str, object]:
    return {
        "nn": nn,
        "optim": optim,
        "torch": torch,
        "device": CPU,
        "model_ft": small_model(),
        "class_weights": CLASS_WEIGHTS,
    }


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda cls: cls.name)
def test_every_message_an_exercise_names_is_in_the_catalogue(exercise):
    keys = [exercise.not_attempted_key, exercise.solution_key, *exercise.hints]
    assert all(key in CATALOGUE for key in keys)
    assert exercise.hints


def test_the_printed_solutions_pass_their_checks_in_notebook_order():
    namespace = namespace_for_solutions()
    body = textwrap.indent(text("ch02.ex4.solution"), "    ")
    namespace["train_step"] = None
    for exercise in (MoveWrapAssign, WeightedLossOnDevice, OptimizerOverFinalModel):
        exec(text(exercise.solution_key), namespace)
    exec(f"def train_step(model, criterion, optimizer, inputs, labels, device):\n{body}\n", namespace)
    for exercise in EXERCISES:
        assert exercise().evaluate(namespace).status == CORRECT, exercise.name


# --- check(), hint(), solution() -----------------------------------------------------------------


def test_check_prints_a_wrong_answer_and_does_not_raise(capsys):
    TrainStep().check(train_step=reshapes_wrongly, device=CPU)
    out = capsys.readouterr().out
    assert out.startswith("❌ ex4: Not yet: `train_step` raised an error on a test batch: RuntimeError:")


def test_check_prints_a_right_answer(capsys):
    MoveWrapAssign().check(model_ft=nn.DataParallel(small_model()), device=CPU)
    assert (
        capsys.readouterr().out
        == "✅ ex1: Correct! `model_ft` is the wrapped model and all of it is on cpu.\n"
    )


def test_check_prints_in_the_chosen_language(capsys):
    set_language("zh")
    MoveWrapAssign().check(model_ft=small_model(), device=CPU)
    assert capsys.readouterr().out.startswith("❌ ex1: 还不对：`model_ft` 没有被 DataParallel 包装。")


def test_check_without_arguments_reads_the_notebook_globals(capsys):
    notebook = {"ex1": MoveWrapAssign(), "nn": nn, "torch": torch, "small_model": small_model}
    exec("device = torch.device('cpu')\nmodel_ft = nn.DataParallel(small_model())\nex1.check()\n", notebook)
    assert capsys.readouterr().out.startswith("✅ ex1: Correct!")


def test_check_without_arguments_sees_the_unassigned_wrap(capsys):
    notebook = {"ex1": MoveWrapAssign(), "nn": nn, "torch": torch, "small_model": small_model}
    cells = "device = torch.device('cpu')\nmodel_ft = small_model()\nnet = nn.DataParallel(model_ft)\n"
    exec(cells + "ex1.check()\n", notebook)
    assert capsys.readouterr().out.startswith("❌ ex1: Not yet: `model_ft` is not wrapped in DataParallel.")


def test_a_check_run_before_the_variables_exist_says_not_attempted(capsys):
    notebook = {"ex1": MoveWrapAssign()}
    exec("ex1.check()\n", notebook)  # no NameError although model_ft and device are not defined
    assert capsys.readouterr().out == "📝 ex1: Not attempted yet: replace `model_ft = ____` with your fix.\n"


def test_explicit_arguments_win_over_the_notebook_globals(capsys):
    notebook = {
        "ex1": MoveWrapAssign(),
        "model_ft": "not a model",
        "device": CPU,
        "good": nn.DataParallel(small_model()),
    }
    exec("ex1.check(model_ft=good)\n", notebook)
    assert capsys.readouterr().out.startswith("✅")


def test_a_hint_level_can_be_asked_for_and_is_clamped(capsys):
    ex = WeightedLossOnDevice()
    ex.hint(2)
    ex.hint(0)
    ex.hint(99)
    ex.hint()
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "Hint 2/2",
        "Hint 1/2",
        "Hint 2/2",
        "That was the last hint. `ex2.solution()` shows one answer.",
    ]


def test_hints_print_in_the_chosen_language(capsys):
    set_language("zh")
    TrainStep().hint()
    assert capsys.readouterr().out == f"提示 1/2： {text('ch02.ex4.hint1', 'zh')}\n"


def _forgets_labels(model, criterion, optimizer, inputs, labels, device):
    inputs = inputs.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def _discards_input_move(model, criterion, optimizer, inputs, labels, device):
    inputs.to(device)
    labels = labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def test_ex4_on_a_cpu_only_machine_forgotten_labels_are_still_caught():
    verdict = TrainStep().evaluate(train_step=_forgets_labels, device=CPU)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch02.ex4.probe_labels")


def test_ex4_on_a_cpu_only_machine_a_discarded_input_move_is_still_caught():
    verdict = TrainStep().evaluate(train_step=_discards_input_move, device=CPU)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch02.ex4.probe_inputs")
