"""Chapter 07's exercises: each gives not attempted / incorrect / correct on constructed answers,
and check(), hint() and solution() print what a learner reads."""

import re
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

import devicelab
from devicelab.chapters.checkpoints import (
    EXERCISES,
    LOAD_WEIGHTS_SOLUTION,
    RESUME_SOLUTION,
    UNWRAP_SOLUTION,
    LoadWeights,
    MetaActsAsAGpu,
    Net,
    Resume,
    Unwrap,
    gpu_checkpoint,
)
from devicelab.checks import CORRECT, INCORRECT, NOT_ATTEMPTED
from devicelab.messages import CATALOGUE, set_language, text

ROOT = Path(__file__).resolve().parents[2]
CPU = torch.device("cpu")


def verdict_of(exercise, **values):
    verdict = exercise.evaluate(**values)
    return verdict.status, verdict.key


def solved(code: str, *replacements: tuple[str, str]) -> dict:
    for old, new in replacements:
        assert old in code, old
        code = code.replace(old, new)
    namespace = {"torch": torch, "nn": nn, "Net": Net}
    exec(code, namespace)
    return namespace


# --- exercise 1: load_weights ----------------------------------------------------------------------


def test_ex1_not_attempted_when_missing_blank_or_a_stub():
    assert verdict_of(LoadWeights(CPU)) == (NOT_ATTEMPTED, "ch07.ex1.todo")
    assert verdict_of(LoadWeights(CPU), load_weights=devicelab.____) == (NOT_ATTEMPTED, "ch07.ex1.todo")
    assert verdict_of(LoadWeights(CPU), load_weights=lambda p, d: devicelab.____) == (NOT_ATTEMPTED, "ch07.ex1.todo")


@pytest.mark.parametrize("answer", [
    solved(LOAD_WEIGHTS_SOLUTION)["load_weights"],
    lambda path, device: torch.load(path, map_location=torch.device(device)),
    lambda path, device: torch.load(path, map_location=lambda storage, location: storage, weights_only=True)
    if torch.device(device).type == "cpu" else torch.load(path, map_location=device, weights_only=True),
], ids=["solution", "default weights_only", "function for the cpu"])
def test_ex1_right_answers_are_correct(answer):
    assert verdict_of(LoadWeights(CPU), load_weights=answer) == (CORRECT, "ch07.ex1.ok")


@pytest.mark.parametrize(("answer", "key"), [
    (lambda path, device: torch.load(path), "ch07.ex1.raised"),
    (lambda path, device: torch.load(path, map_location="cpu"), "ch07.ex1.device"),
    (lambda path, device: torch.load(path, map_location={"cuda:0": "cpu"}), "ch07.ex1.device"),
    (lambda path, device: torch.load(path, map_location=device, weights_only=False), "ch07.ex1.ran_code"),
    (lambda path, device: list(torch.load(path, map_location=device).values()), "ch07.ex1.not_state_dict"),
    (lambda path, device: {k: torch.zeros_like(v) for k, v in torch.load(path, map_location=device).items()},
     "ch07.ex1.values"),
], ids=["no map_location", "always cpu", "dict to cpu", "weights_only False", "a list", "zeros"])
def test_ex1_wrong_answers_are_incorrect(answer, key):
    assert verdict_of(LoadWeights(CPU), load_weights=answer) == (INCORRECT, key)


def test_ex1_not_a_function():
    assert verdict_of(LoadWeights(CPU), load_weights="weights.pt") == (INCORRECT, "ch07.ex1.not_function")


# --- exercise 2: unwrap -----------------------------------------------------------------------------


def test_ex2_not_attempted_when_missing_or_blank():
    assert verdict_of(Unwrap(CPU)) == (NOT_ATTEMPTED, "ch07.ex2.todo")
    assert verdict_of(Unwrap(CPU), unwrap=devicelab.____) == (NOT_ATTEMPTED, "ch07.ex2.todo")


def in_place(state):
    consume_prefix_in_state_dict_if_present(state, "module.")
    return state


@pytest.mark.parametrize("answer", [
    solved(UNWRAP_SOLUTION)["unwrap"],
    in_place,
    lambda s: {(k[len("module."):] if k.startswith("module.") else k): v for k, v in s.items()},
], ids=["solution", "consume_prefix, returned", "startswith"])
def test_ex2_right_answers_are_correct(answer):
    assert verdict_of(Unwrap(CPU), unwrap=answer) == (CORRECT, "ch07.ex2.ok")


@pytest.mark.parametrize(("answer", "key"), [
    (lambda s: {k.replace("module.", ""): v for k, v in s.items()}, "ch07.ex2.keys"),
    (lambda s: {k[7:]: v for k, v in s.items()}, "ch07.ex2.keys"),
    (lambda s: {k.split(".", 1)[1]: v for k, v in s.items()}, "ch07.ex2.keys"),
    (lambda s: consume_prefix_in_state_dict_if_present(s, "module."), "ch07.ex2.none"),
    (lambda s: [(k.removeprefix("module."), v) for k, v in s.items()], "ch07.ex2.not_dict"),
    (lambda s: {k.removeprefix("module."): v.zero_() for k, v in s.items()}, "ch07.ex2.values"),
    (lambda s: {k[7:] if k.startswith("module.body") else k: v for k, v in s.items()}, "ch07.ex2.keys"),
    (lambda s: {k.lstrip("module."): v for k, v in s.items()}, "ch07.ex2.keys"),
], ids=["replace", "slice always", "split", "consume_prefix returns None", "a list", "zeroes the values",
        "only some wrapped keys", "lstrip"])
def test_ex2_wrong_answers_are_incorrect(answer, key):
    assert verdict_of(Unwrap(CPU), unwrap=answer) == (INCORRECT, key)


def test_ex2_copies_of_the_values_in_another_key_order_are_correct():
    # load_state_dict reads keys by name and copies the values: neither the order nor the objects matter.
    def answer(state):
        return {k.removeprefix("module."): state[k].clone() for k in sorted(state)}

    assert verdict_of(Unwrap(CPU), unwrap=answer) == (CORRECT, "ch07.ex2.ok")


# --- exercise 3: resume -----------------------------------------------------------------------------


def test_ex3_not_attempted_when_missing_or_blank():
    assert verdict_of(Resume(CPU)) == (NOT_ATTEMPTED, "ch07.ex3.todo")
    assert verdict_of(Resume(CPU), resume=devicelab.____) == (NOT_ATTEMPTED, "ch07.ex3.todo")


MOVE_BUILD_LOAD = '''    model = Net().to(device)  # 1. move the model
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)  # 2. build the optimizer on its parameters
    model.load_state_dict(checkpoint["model"])  # 3. load both states
    optimizer.load_state_dict(checkpoint["optimizer"])  # its state follows each parameter's device'''


@pytest.mark.parametrize("replacements", [
    (),
    ((MOVE_BUILD_LOAD, '''    model = Net()
    model.load_state_dict(checkpoint["model"])
    model = model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    optimizer.load_state_dict(checkpoint["optimizer"])'''),),
    (('map_location=device', 'map_location="cpu"'),),
    ((MOVE_BUILD_LOAD, '''    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.to(device)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])'''),),
], ids=["solution", "weights loaded before the move", "loaded on the cpu", "optimizer built before the move"])
def test_ex3_right_answers_are_correct(replacements):
    answer = solved(RESUME_SOLUTION, *replacements)["resume"]
    assert verdict_of(Resume(CPU), resume=answer) == (CORRECT, "ch07.ex3.ok")


@pytest.mark.parametrize(("replacements", "key"), [
    ((MOVE_BUILD_LOAD, '''    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.to(device)'''), "ch07.ex3.state_device"),  # the lesson a GPU shows: the state stayed behind
    ((MOVE_BUILD_LOAD, '''    model = Net().to(device)
    optimizer = torch.optim.Adam(Net().parameters(), lr=0.01)
    model.load_state_dict(checkpoint["model"])'''), "ch07.ex3.other_parameters"),
    (('    optimizer.load_state_dict(checkpoint["optimizer"])  # its state follows each parameter\'s device\n', ''),
     "ch07.ex3.no_state"),
    (('    model.load_state_dict(checkpoint["model"])  # 3. load both states\n', ''), "ch07.ex3.weights"),
    (('return model, optimizer, checkpoint["epoch"]', 'return model, optimizer'), "ch07.ex3.not_triple"),
    (('return model, optimizer, checkpoint["epoch"]', 'return model, optimizer, 0'), "ch07.ex3.epoch"),
    ((', map_location=device', ''), "ch07.ex3.raised"),
    (("model = Net().to(device)", "model = Net()"), "ch07.ex3.model_device"),
], ids=["moved last", "optimizer on another model", "no optimizer state", "no weights", "two values",
        "epoch 0", "no map_location", "never moved"])
def test_ex3_wrong_answers_are_incorrect(replacements, key):
    answer = solved(RESUME_SOLUTION, replacements)["resume"]
    assert verdict_of(Resume(CPU), resume=answer) == (INCORRECT, key)


def test_ex3_state_left_on_the_cpu_is_named():
    # What a GPU run gives when the state is loaded before the move (the parameters stay the same objects there).
    def resume(path, device):
        model = Net().to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        for p in model.parameters():
            optimizer.state[p] = {"step": torch.tensor(3.0), "exp_avg": torch.zeros(p.shape),
                                  "exp_avg_sq": torch.zeros(p.shape)}
        return model, optimizer, 3

    assert verdict_of(Resume(CPU), resume=resume) == (INCORRECT, "ch07.ex3.state_device")


def test_the_meta_run_keeps_parameter_objects_as_a_gpu_does_and_restores_the_setting():
    from devicelab.chapters.checkpoints import keeps_parameter_objects

    model = Net()
    before = list(model.parameters())
    with keeps_parameter_objects():
        model.to("meta")
    assert all(a is b for a, b in zip(before, model.parameters())) and before[0].device.type == "meta"
    assert torch.__future__.get_swap_module_params_on_conversion() is False


def test_meta_acts_as_a_gpu_for_copies_to_the_cpu():
    cpu = torch.zeros(3)
    with MetaActsAsAGpu():
        cpu.copy_(torch.ones(3, device="meta"))
        moved = torch.ones(2, device="meta").to("cpu")
    assert moved.device.type == "cpu" and moved.shape == (2,)


def test_gpu_checkpoint_restores_torch_save(tmp_path):
    import torch.serialization as serialization

    original = serialization.location_tag
    gpu_checkpoint({"x": torch.ones(1)}, str(tmp_path / "a.pt"))
    assert serialization.location_tag is original


# --- every exercise: catalogue keys, solutions --------------------------------------------------------


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda cls: cls.name)
def test_every_message_an_exercise_names_is_in_the_catalogue(exercise):
    assert all(key in CATALOGUE for key in [exercise.not_attempted_key, exercise.solution_key, *exercise.hints])


def test_every_verdict_key_used_by_the_checks_is_in_the_catalogue():
    source = (ROOT / "devicelab" / "chapters" / "checkpoints.py").read_text(encoding="utf-8")
    used = set(re.findall(r'"(ch07\.ex\d\.\w+)"', source))
    assert used <= set(CATALOGUE)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda cls: cls.name)
def test_every_printed_solution_is_the_code_of_the_solved_notebook(exercise):
    source = (ROOT / "solutions" / "source" / "07-checkpoints.md").read_text(encoding="utf-8")
    for line in text(exercise.solution_key).splitlines():
        assert line in source, line


def test_the_printed_solutions_pass_their_checks_in_notebook_order():
    namespace = {"torch": torch, "nn": nn, "Net": Net}
    for exercise in EXERCISES:
        exec(text(exercise.solution_key), namespace)
    for exercise in EXERCISES:
        assert exercise(CPU).evaluate(namespace).status == CORRECT, exercise.name


def test_check_prints_a_wrong_answer_in_the_chosen_language(capsys):
    set_language("zh")
    Unwrap(CPU).check(unwrap=lambda s: {k.replace("module.", ""): v for k, v in s.items()})
    assert capsys.readouterr().out.startswith("❌ ex2: 还不对：对于键 module.body.weight")


def test_ex1_moves_whose_results_are_thrown_away_are_named_as_such():
    answer = solved('''
def load_weights(path, device):
    state = torch.load(path, map_location="cpu", weights_only=True)
    for value in state.values():
        value.to(device)  # a moved copy, thrown away
    return state
''')["load_weights"]
    verdict = LoadWeights(CPU).evaluate(load_weights=answer)
    assert (verdict.key, verdict.params) == ("ch07.ex1.discarded", {"found": CPU, "device": torch.device("meta")})
    # Loading to the CPU and moving nothing is another mistake, told as before.
    to_the_cpu = solved('def load_weights(path, device):\n    return torch.load(path, map_location="cpu")\n')
    assert LoadWeights(CPU).evaluate(load_weights=to_the_cpu["load_weights"]).key == "ch07.ex1.device"
