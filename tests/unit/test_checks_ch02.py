"""Chapter 02's exercises: each gives not attempted / incorrect / correct on constructed answers,
and check(), hint() and solution() print what a learner reads.

The lab's device here is the CPU, as on CI. Mistakes a CPU cannot see (a model or weights left on the
CPU) are caught because the checks call the learner's functions once more with `meta`, a second device.
"""

import textwrap

import pytest
import torch
from torch import nn, optim

import devicelab
from devicelab.chapters.dataparallel import (
    EXERCISES,
    MakeCriterion,
    OptimizerOverFinalModel,
    PrepareModel,
    TrainStep,
)
from devicelab.checks import CORRECT, INCORRECT, NOT_ATTEMPTED
from devicelab.messages import CATALOGUE, set_language, text

CPU = torch.device("cpu")
META = torch.device("meta")  # a second device that needs no hardware


def small_model() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))


def verdict_of(exercise, **values):
    verdict = exercise.evaluate(**values)
    return verdict.status, verdict.key


# --- exercise 1: prepare(model, device) moves, wraps, returns the wrapper -----------------------


def prepare_right(model, device):
    model = model.to(device)
    return nn.DataParallel(model)


def prepare_wrap_then_move(model, device):
    return nn.DataParallel(model).to(device)


def prepare_in_place(model, device):
    model.to(device)  # Module.to() moves in place: not keeping its result is fine
    return nn.DataParallel(model)


def prepare_returns_unwrapped(model, device):
    model = model.to(device)
    net = nn.DataParallel(model)  # the blog post's mistake: the wrapper goes to another variable
    assert net.module is model
    return model


def prepare_never_moves(model, device):
    return nn.DataParallel(model)


def prepare_moves_to_the_cpu(model, device):
    return nn.DataParallel(model.to("cpu"))


def prepare_wraps_twice(model, device):
    return nn.DataParallel(nn.DataParallel(model.to(device)))


def prepare_wraps_another_model(model, device):
    return nn.DataParallel(small_model().to(device))


def prepare_wraps_the_function(model, device):
    return nn.DataParallel(small_model)  # the factory itself, without parentheses


def prepare_with_cuda(model, device):
    return nn.DataParallel(model).cuda()


def prepare_returns_nothing(model, device):
    nn.DataParallel(model.to(device))


def prepare_stub(model, device):
    return devicelab.____


def test_ex1_not_attempted_when_prepare_is_missing_blank_or_returns_the_blank():
    ex = PrepareModel(CPU)
    assert verdict_of(ex) == (NOT_ATTEMPTED, "ch02.ex1.todo")
    assert verdict_of(ex, prepare=devicelab.____) == (NOT_ATTEMPTED, "ch02.ex1.todo")
    assert verdict_of(ex, prepare=prepare_stub) == (NOT_ATTEMPTED, "ch02.ex1.todo")


@pytest.mark.parametrize("prepare", [prepare_right, prepare_wrap_then_move, prepare_in_place])
def test_ex1_moved_wrapped_and_returned_is_correct(prepare):
    assert verdict_of(PrepareModel(CPU), prepare=prepare) == (CORRECT, "ch02.ex1.ok")


@pytest.mark.parametrize(
    ("prepare", "key"),
    [
        (prepare_returns_unwrapped, "ch02.ex1.not_wrapped"),
        (prepare_never_moves, "ch02.ex1.probe_not_moved"),
        (prepare_moves_to_the_cpu, "ch02.ex1.probe_not_moved"),
        (prepare_wraps_twice, "ch02.ex1.wrapped_twice"),
        (prepare_wraps_another_model, "ch02.ex1.other_model"),
        (prepare_wraps_the_function, "ch02.ex1.other_model"),
        (prepare_with_cuda, "check.no_cuda"),  # on a machine without CUDA, as CI is
        (prepare_returns_nothing, "ch02.ex1.returned_none"),
    ],
)
def test_ex1_wrong_answers_are_incorrect(prepare, key):
    assert verdict_of(PrepareModel(CPU), prepare=prepare) == (INCORRECT, key)


def test_ex1_a_model_left_on_the_cpu_is_counted():
    verdict = PrepareModel(CPU).evaluate(prepare=prepare_never_moves)
    # conv weight and bias, batch-norm weight and bias, running mean, running var, batches tracked
    assert verdict.params == {"n": 7, "total": 7, "found": CPU, "device": META}


def test_ex1_on_the_lab_device_a_model_left_behind_is_reported_without_the_probe():
    verdict = PrepareModel(META).evaluate(prepare=prepare_never_moves)
    assert (verdict.key, verdict.params["device"]) == ("ch02.ex1.not_moved", META)


def test_ex1_moving_to_a_notebook_global_instead_of_the_argument_is_incorrect():
    namespace = {"nn": nn, "device": CPU}
    exec("def prepare(model, target):\n    return nn.DataParallel(model.to(device))\n", namespace)
    assert verdict_of(PrepareModel(CPU), prepare=namespace["prepare"]) == (INCORRECT, "ch02.ex1.probe_not_moved")


def test_ex1_something_that_is_not_a_function_is_incorrect():
    assert verdict_of(PrepareModel(CPU), prepare="resnet18") == (INCORRECT, "ch02.ex1.not_function")
    assert verdict_of(PrepareModel(CPU), prepare=lambda model, device: "DataParallel(model)") == (
        INCORRECT,
        "ch02.ex1.not_module",
    )
    assert verdict_of(PrepareModel(CPU), prepare=nn.DataParallel(small_model()))[0] == INCORRECT


def test_ex1_the_check_does_not_change_the_notebooks_random_numbers():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    PrepareModel(CPU).evaluate(prepare=prepare_right)
    assert torch.equal(torch.rand(3), expected)


# --- exercise 2: make_criterion(class_weights, device) ------------------------------------------


def criterion_right(class_weights, device):
    return nn.CrossEntropyLoss(weight=class_weights).to(device)


def criterion_moves_the_weights(class_weights, device):
    return nn.CrossEntropyLoss(weight=class_weights.to(device))


def criterion_normalised(class_weights, device):
    return nn.CrossEntropyLoss(weight=class_weights / class_weights.sum()).to(device)  # same loss


def criterion_functional(class_weights, device):
    weights = class_weights.to(device)
    return lambda logits, labels: nn.functional.cross_entropy(logits, labels, weight=weights)


def criterion_not_moved(class_weights, device):
    return nn.CrossEntropyLoss(weight=class_weights)


def criterion_discards_the_move(class_weights, device):
    criterion = nn.CrossEntropyLoss(weight=class_weights)
    class_weights.to(device)  # a moved copy, thrown away
    return criterion


def criterion_unweighted(class_weights, device):
    return nn.CrossEntropyLoss().to(device)


def criterion_reversed(class_weights, device):
    return nn.CrossEntropyLoss(weight=class_weights.flip(0)).to(device)


def criterion_summed(class_weights, device):
    return nn.CrossEntropyLoss(weight=class_weights, reduction="sum").to(device)


def criterion_other_loss(class_weights, device):
    return nn.NLLLoss(weight=class_weights).to(device)


def criterion_the_class(class_weights, device):
    return nn.CrossEntropyLoss


def criterion_stub(class_weights, device):
    return devicelab.____


def test_ex2_not_attempted_when_make_criterion_is_missing_blank_or_returns_the_blank():
    ex = MakeCriterion(CPU)
    assert verdict_of(ex) == (NOT_ATTEMPTED, "ch02.ex2.todo")
    assert verdict_of(ex, make_criterion=devicelab.____) == (NOT_ATTEMPTED, "ch02.ex2.todo")
    assert verdict_of(ex, make_criterion=criterion_stub) == (NOT_ATTEMPTED, "ch02.ex2.todo")


@pytest.mark.parametrize(
    "make_criterion", [criterion_right, criterion_moves_the_weights, criterion_normalised, criterion_functional]
)
def test_ex2_a_weighted_cross_entropy_on_the_device_is_correct(make_criterion):
    assert verdict_of(MakeCriterion(CPU), make_criterion=make_criterion) == (CORRECT, "ch02.ex2.ok")


@pytest.mark.parametrize(
    ("make_criterion", "key"),
    [
        (criterion_not_moved, "ch02.ex2.probe_device"),
        (criterion_discards_the_move, "ch02.ex2.discarded"),
        (criterion_unweighted, "ch02.ex2.no_weight"),
        (criterion_reversed, "ch02.ex2.weight_values"),
        (criterion_summed, "ch02.ex2.weight_values"),
        (criterion_other_loss, "ch02.ex2.weight_values"),
        (criterion_the_class, "ch02.ex2.raised"),
    ],
)
def test_ex2_wrong_answers_are_incorrect(make_criterion, key):
    assert verdict_of(MakeCriterion(CPU), make_criterion=make_criterion) == (INCORRECT, key)


def test_ex2_on_the_lab_device_weights_left_on_the_cpu_raise_a_device_error():
    verdict = MakeCriterion(META).evaluate(make_criterion=criterion_not_moved)
    assert (verdict.status, verdict.key, verdict.params["device"]) == (INCORRECT, "ch02.ex2.weight_device", META)


def test_ex2_using_the_notebooks_weights_instead_of_the_argument_is_incorrect():
    namespace = {"nn": nn, "torch": torch, "class_weights": torch.tensor([1.0, 2.0, 5.0, 1.0])}
    exec("def make_criterion(w, device):\n    return nn.CrossEntropyLoss(weight=class_weights).to(device)\n",
         namespace)
    assert verdict_of(MakeCriterion(CPU), make_criterion=namespace["make_criterion"]) == (
        INCORRECT,
        "ch02.ex2.weight_values",
    )


def test_ex2_something_that_is_not_a_function_is_incorrect():
    assert verdict_of(MakeCriterion(CPU), make_criterion=3) == (INCORRECT, "ch02.ex2.not_function")


# --- exercise 3: SGD(lr=0.05, momentum=0.9) over the parameters of the trained model ------------


def asked(params):
    return optim.SGD(params, lr=0.05, momentum=0.9)


class LazySGD(optim.SGD):
    """An optimizer that says it is the asked SGD and never changes anything."""

    def step(self, closure=None):
        return None


def test_ex3_not_attempted_when_optimizer_ft_is_missing_or_blank():
    ex = OptimizerOverFinalModel(CPU)
    assert verdict_of(ex, model_ft=small_model()) == (NOT_ATTEMPTED, "ch02.ex3.todo")
    assert verdict_of(ex, optimizer_ft=devicelab.____, model_ft=small_model()) == (NOT_ATTEMPTED, "ch02.ex3.todo")


def test_ex3_an_optimizer_over_another_model_is_incorrect():
    verdict = OptimizerOverFinalModel(CPU).evaluate(optimizer_ft=asked(small_model().parameters()),
                                                    model_ft=small_model())
    assert (verdict.status, verdict.key, verdict.params) == (INCORRECT, "ch02.ex3.other_model", {"held": 4})


def test_ex3_an_optimizer_missing_some_parameters_is_incorrect():
    model_ft = small_model()
    verdict = OptimizerOverFinalModel(CPU).evaluate(optimizer_ft=asked(model_ft[0].parameters()), model_ft=model_ft)
    assert (verdict.key, verdict.params) == ("ch02.ex3.some_missing", {"n": 2, "total": 4})


def test_ex3_an_optimizer_with_extra_tensors_is_incorrect():
    model_ft = small_model()
    optimizer_ft = asked([*model_ft.parameters(), nn.Parameter(torch.zeros(3))])
    verdict = OptimizerOverFinalModel(CPU).evaluate(optimizer_ft=optimizer_ft, model_ft=model_ft)
    assert (verdict.key, verdict.params) == ("ch02.ex3.extra", {"n": 1})


@pytest.mark.parametrize(
    ("make", "key"),
    [
        (lambda p: optim.SGD(p, lr=0.1, momentum=0.9), "ch02.ex3.lr"),
        (lambda p: optim.SGD(p, lr=0.05), "ch02.ex3.momentum"),
        (lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True), "ch02.ex3.extra_settings"),
        (lambda p: optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=1e-4), "ch02.ex3.extra_settings"),
        (lambda p: optim.Adam(p, lr=0.05), "ch02.ex3.not_sgd"),
        (lambda p: LazySGD(p, lr=0.05, momentum=0.9), "ch02.ex3.step_differs"),
    ],
)
def test_ex3_other_settings_or_a_step_that_does_not_update_are_incorrect(make, key):
    model_ft = small_model()
    assert verdict_of(OptimizerOverFinalModel(CPU), optimizer_ft=make(model_ft.parameters()), model_ft=model_ft) == (
        INCORRECT,
        key,
    )


def test_ex3_something_that_is_not_an_optimizer_is_incorrect():
    verdict = OptimizerOverFinalModel(CPU).evaluate(optimizer_ft=optim.SGD, model_ft=small_model())
    assert (verdict.key, verdict.params) == ("ch02.ex3.not_optimizer", {"got": "type"})


def test_ex3_without_a_model_it_asks_for_exercise_1_first():
    verdict = verdict_of(OptimizerOverFinalModel(CPU), optimizer_ft=asked(small_model().parameters()),
                         model_ft="not yet")
    assert verdict == (INCORRECT, "ch02.ex3.no_model")


@pytest.mark.parametrize(
    "make",
    [
        asked,
        lambda p: optim.SGD(p, 0.05, 0.9),
        lambda p: optim.SGD([{"params": list(p)}], lr=0.05, momentum=0.9, dampening=0.0, foreach=False),
    ],
)
def test_ex3_the_asked_sgd_over_the_wrapped_model_is_correct(make):
    model_ft = nn.DataParallel(small_model())
    verdict = OptimizerOverFinalModel(CPU).evaluate(optimizer_ft=make(model_ft.parameters()), model_ft=model_ft)
    assert (verdict.status, verdict.key, verdict.params) == (CORRECT, "ch02.ex3.ok", {"total": 4})


def test_ex3_an_optimizer_built_before_wrapping_is_correct():
    model = small_model()
    optimizer_ft = asked(model.parameters())
    model_ft = nn.DataParallel(model)  # the wrapper holds the very same Parameter objects
    assert verdict_of(OptimizerOverFinalModel(CPU), optimizer_ft=optimizer_ft, model_ft=model_ft)[0] == CORRECT


def test_ex3_frozen_parameters_need_not_be_in_the_optimizer():
    model_ft = small_model()
    model_ft[1].requires_grad_(False)
    verdict = verdict_of(OptimizerOverFinalModel(CPU), optimizer_ft=asked(model_ft[0].parameters()),
                         model_ft=model_ft)
    assert verdict[0] == CORRECT


def test_ex3_the_check_leaves_the_model_and_the_optimizer_as_they_were():
    model_ft = small_model()
    optimizer_ft = asked(model_ft.parameters())
    model_ft(torch.randn(2, 3, 5, 5)).sum().backward()
    optimizer_ft.step()  # the optimizer already has momentum buffers
    params = [p.detach().clone() for p in model_ft.parameters()]
    grads = [p.grad.clone() for p in model_ft.parameters()]
    buffers = [optimizer_ft.state[p]["momentum_buffer"].clone() for p in model_ft.parameters()]
    assert verdict_of(OptimizerOverFinalModel(CPU), optimizer_ft=optimizer_ft, model_ft=model_ft)[0] == CORRECT
    for p, before, grad, buffer in zip(model_ft.parameters(), params, grads, buffers):
        assert torch.equal(p, before) and torch.equal(p.grad, grad)
        assert torch.equal(optimizer_ft.state[p]["momentum_buffer"], buffer)


# --- exercise 4: the training step moves the batch ----------------------------------------------


def correct_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def zero_grad_after_the_step(model, criterion, optimizer, inputs, labels, device):
    loss = criterion(model(inputs.to(device)), labels.to(device))
    loss.backward()
    optimizer.step()
    model.zero_grad(set_to_none=False)
    return loss.item()


def forgets_labels(model, criterion, optimizer, inputs, labels, device):
    inputs = inputs.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def discards_the_moved_labels(model, criterion, optimizer, inputs, labels, device):
    inputs = inputs.to(device)
    labels.to(device)  # returns a moved copy, which is thrown away
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def discards_the_moved_inputs(model, criterion, optimizer, inputs, labels, device):
    inputs.to(device)
    labels = labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def forgets_the_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    return loss.item()


def forgets_zero_grad(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def steps_twice(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    optimizer.step()
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
    # Why TrainStep.host stays the CPU and the probe puts the model on meta: a meta tensor holds no
    # values, so moving a batch from meta to the CPU raises.
    with pytest.raises(NotImplementedError):
        torch.zeros(2, device=META).to(CPU)


@pytest.mark.parametrize(
    ("step", "key"),
    [
        (forgets_labels, "ch02.ex4.probe_labels"),
        (discards_the_moved_labels, "ch02.ex4.probe_labels"),
        (discards_the_moved_inputs, "ch02.ex4.probe_inputs"),
        (forgets_the_step, "ch02.ex4.no_update"),
        (forgets_zero_grad, "ch02.ex4.no_zero_grad"),
        (steps_twice, "ch02.ex4.step_differs"),
        (returns_the_tensor, "ch02.ex4.result"),
        (never_calls_the_model, "ch02.ex4.not_called"),
        (reshapes_wrongly, "ch02.ex4.raised"),
        (raises_not_implemented, "ch02.ex4.raised"),
    ],
)
def test_ex4_wrong_steps_are_incorrect(step, key):
    assert TrainStep.host == CPU  # where a DataLoader hands out batches
    assert verdict_of(TrainStep(CPU), train_step=step) == (INCORRECT, key)


def test_ex4_a_step_that_raises_shows_the_error():
    verdict = TrainStep(CPU).evaluate(train_step=reshapes_wrongly)
    assert verdict.params["error"].startswith("RuntimeError: shape '[7, -1]' is invalid")


def test_ex4_something_that_is_not_a_function_is_incorrect():
    assert verdict_of(TrainStep(CPU), train_step=0.5) == (INCORRECT, "ch02.ex4.not_function")


def test_ex4_not_attempted_when_train_step_is_missing_blank_or_a_stub():
    ex = TrainStep(CPU)
    assert verdict_of(ex) == (NOT_ATTEMPTED, "ch02.ex4.todo")
    assert verdict_of(ex, train_step=devicelab.____) == (NOT_ATTEMPTED, "ch02.ex4.todo")
    assert verdict_of(ex, train_step=still_a_stub) == (NOT_ATTEMPTED, "ch02.ex4.todo")


@pytest.mark.parametrize("step", [correct_step, zero_grad_after_the_step])
def test_ex4_a_step_that_moves_the_batch_and_updates_once_is_correct(step):
    assert verdict_of(TrainStep(CPU), train_step=step) == (CORRECT, "ch02.ex4.ok")


# --- every exercise: catalogue keys, solutions ---------------------------------------------------


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda cls: cls.name)
def test_every_message_an_exercise_names_is_in_the_catalogue(exercise):
    keys = [exercise.not_attempted_key, exercise.solution_key, *exercise.hints]
    assert all(key in CATALOGUE for key in keys)


def test_every_ch02_message_formats_in_both_languages():
    for key, entry in CATALOGUE.items():
        if key.startswith("ch02."):
            assert set(entry) == {"en", "zh"}, key
            assert entry["en"].count("{") == entry["zh"].count("{"), key


def test_the_printed_solutions_pass_their_checks_in_notebook_order():
    namespace = {"nn": nn, "optim": optim, "torch": torch, "device": CPU}
    exec(text("ch02.ex1.solution"), namespace)
    namespace["model_ft"] = namespace["prepare"](small_model(), CPU)
    exec(text("ch02.ex2.solution"), namespace)
    exec(text("ch02.ex3.solution"), namespace)
    body = textwrap.indent(text("ch02.ex4.solution"), "    ")
    exec(f"def train_step(model, criterion, optimizer, inputs, labels, device):\n{body}\n", namespace)
    for exercise in EXERCISES:
        assert exercise(CPU).evaluate(namespace).status == CORRECT, exercise.name


# --- check(), hint(), solution() -----------------------------------------------------------------


def test_check_prints_a_wrong_answer_and_does_not_raise(capsys):
    TrainStep(CPU).check(train_step=reshapes_wrongly)
    out = capsys.readouterr().out
    assert out.startswith("❌ ex4: Not yet: `train_step` raised an error on a test batch: RuntimeError:")


def test_check_prints_a_right_answer(capsys):
    PrepareModel(CPU).check(prepare=prepare_right)
    assert capsys.readouterr().out == (
        "✅ ex1: Correct! `prepare` moves the model to the device it is given and returns it wrapped in "
        "DataParallel.\n"
    )


def test_check_prints_in_the_chosen_language(capsys):
    set_language("zh")
    PrepareModel(CPU).check(prepare=prepare_returns_unwrapped)
    assert capsys.readouterr().out.startswith("❌ ex1: 还不对：`prepare` 返回的模型没有用 DataParallel 包装。")


def test_check_without_arguments_reads_the_notebook_globals(capsys):
    notebook = {"ex1": PrepareModel(CPU), "nn": nn}
    exec("def prepare(model, device):\n    return nn.DataParallel(model.to(device))\nex1.check()\n", notebook)
    assert capsys.readouterr().out.startswith("✅ ex1: Correct!")


def test_a_check_run_before_the_function_exists_says_not_attempted(capsys):
    exec("ex1.check()\n", {"ex1": PrepareModel(CPU)})
    assert capsys.readouterr().out == "📝 ex1: Not attempted yet: fill in `prepare` (it still returns `____`).\n"


def test_explicit_arguments_win_over_the_notebook_globals(capsys):
    notebook = {"ex1": PrepareModel(CPU), "prepare": "not a function", "good": prepare_right}
    exec("ex1.check(prepare=good)\n", notebook)
    assert capsys.readouterr().out.startswith("✅")


def test_a_hint_level_can_be_asked_for_and_is_clamped(capsys):
    ex = OptimizerOverFinalModel(CPU)
    ex.hint(2)
    ex.hint(0)
    ex.hint(99)
    ex.hint()
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "Hint 2/3",
        "Hint 1/3",
        "Hint 3/3",
        "That was the last hint. `ex3.solution()` shows one answer.",
    ]


def test_hints_print_in_the_chosen_language(capsys):
    set_language("zh")
    TrainStep(CPU).hint()
    assert capsys.readouterr().out == f"提示 1/3： {text('ch02.ex4.hint1', 'zh')}\n"


def test_ex4_a_step_that_runs_the_notebooks_model_is_told_so_not_shown_a_conv2d_error():
    notebook_model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten())  # like `model_ft`: wants images

    def uses_the_notebooks_model(model, criterion, optimizer, inputs, labels, device):
        inputs, labels = inputs.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = criterion(notebook_model(inputs), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    verdict = TrainStep(CPU).evaluate(train_step=uses_the_notebooks_model)
    assert (verdict.key, verdict.params) == ("ch02.ex4.other_model", {"got": "Sequential"})
    for lang in ("en", "zh"):
        set_language(lang)
        assert "conv2d" not in verdict.message()
    set_language("en")


def test_ex4_a_step_taken_by_the_notebooks_optimizer_is_told_so():
    elsewhere = nn.Linear(2, 2)
    notebook_optimizer = optim.SGD(elsewhere.parameters(), lr=0.1)

    def steps_the_notebooks_optimizer(model, criterion, optimizer, inputs, labels, device):
        inputs, labels = inputs.to(device), labels.to(device)
        notebook_optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        notebook_optimizer.step()
        return loss.item()

    assert verdict_of(TrainStep(CPU), train_step=steps_the_notebooks_optimizer) == (
        INCORRECT, "ch02.ex4.other_optimizer")
