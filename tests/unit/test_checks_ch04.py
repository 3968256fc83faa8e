"""Chapter 04's exercises: each gives not attempted / incorrect / correct on constructed answers,
and check(), hint() and solution() print what a learner reads."""

import re
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import devicelab
from devicelab.chapters.batches import (
    DEVICE_LOADER_SOLUTION,
    EXERCISES,
    TARGET,
    TO_DEVICE_SOLUTION,
    AsyncCopyQuestion,
    LoaderWrapper,
    Pair,
    ToDevice,
    asynchronous_copy,
    compare,
    describe,
)
from devicelab.checks import CORRECT, INCORRECT, NOT_ATTEMPTED
from devicelab.messages import CATALOGUE, set_language, text

ROOT = Path(__file__).resolve().parents[2]
CPU = torch.device("cpu")
META = torch.device("meta")
# A torch.device is only a name: building one needs no GPU, and the checks below never allocate on it.
CUDA = torch.device("cuda")


def verdict_of(exercise, **values):
    verdict = exercise.evaluate(**values)
    return verdict.status, verdict.key


def solved(code: str = TO_DEVICE_SOLUTION) -> dict:
    namespace = {"torch": torch}
    exec(code, namespace)
    return namespace


def reference_to_device(batch, device):
    return solved()["to_device"](batch, device)


# --- exercise 1: to_device ----------------------------------------------------------------------


def seed_to_device(data, device):
    if isinstance(data, (list, tuple)):
        return [seed_to_device(x, device) for x in data]
    elif isinstance(data, dict):
        return {k: seed_to_device(v, device) for k, v in data.items()}
    else:
        return data.to(device, non_blocking=True)


def tuples_become_tuples_but_namedtuples_lose_their_type(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {k: tuples_become_tuples_but_namedtuples_lose_their_type(v, device) for k, v in batch.items()}
    if isinstance(batch, tuple):
        return tuple(tuples_become_tuples_but_namedtuples_lose_their_type(x, device) for x in batch)
    if isinstance(batch, list):
        return [tuples_become_tuples_but_namedtuples_lose_their_type(x, device) for x in batch]
    return batch


def namedtuple_rebuilt_without_unpacking(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {k: namedtuple_rebuilt_without_unpacking(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(namedtuple_rebuilt_without_unpacking(x, device) for x in batch)
    return batch


def drops_non_tensors(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {k: drops_non_tensors(v, device) for k, v in batch.items() if not isinstance(v, (int, str, type(None)))}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(drops_non_tensors(x, device) for x in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(drops_non_tensors(x, device) for x in batch if not isinstance(x, (int, str)))
    return batch


def turns_numbers_into_tensors(batch, device):
    if isinstance(batch, (int, float)):
        return torch.tensor(batch, device=device)
    return reference_to_device(batch, device) if not isinstance(batch, dict) else {
        k: turns_numbers_into_tensors(v, device) for k, v in batch.items()
    }


def moves_only_the_top_level(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}
    return batch


def ignores_its_device_argument(batch, device):
    return reference_to_device(batch, CPU)  # a global `device` that is the CPU in the notebook


def a_stub(batch, device):
    return devicelab.____


def changes_the_input_in_place(batch, device):
    if isinstance(batch, dict):
        for key in list(batch):
            batch[key] = reference_to_device(batch[key], device)
        return batch
    return reference_to_device(batch, device)


def test_ex1_not_attempted_when_to_device_is_missing_blank_or_a_stub():
    ex = ToDevice()
    assert verdict_of(ex) == (NOT_ATTEMPTED, "ch04.ex1.todo")
    assert verdict_of(ex, to_device=devicelab.____) == (NOT_ATTEMPTED, "ch04.ex1.todo")
    assert verdict_of(ex, to_device=a_stub) == (NOT_ATTEMPTED, "ch04.ex1.todo")


def test_ex1_the_seeds_helper_is_incorrect_because_a_tuple_came_back_as_a_list():
    verdict = ToDevice().evaluate(to_device=seed_to_device)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch04.ex1.container")
    assert verdict.params == {"case": "(tensor, tensor)", "path": "batch", "want": "tuple", "got": "list"}
    assert "`batch` was a tuple and came back as a list" in verdict.message()


def test_ex1_a_namedtuple_turned_into_a_plain_tuple_is_incorrect():
    verdict = ToDevice().evaluate(to_device=tuples_become_tuples_but_namedtuples_lose_their_type)
    assert (verdict.key, verdict.params["want"], verdict.params["got"]) == ("ch04.ex1.namedtuple", "Pair", "tuple")
    assert "`batch.inputs` would no longer work" in verdict.message()


def test_ex1_a_namedtuple_rebuilt_without_unpacking_raises_and_is_reported():
    verdict = ToDevice().evaluate(to_device=namedtuple_rebuilt_without_unpacking)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch04.ex1.raised")
    assert verdict.params["case"] == "Pair(inputs=tensor, tag='train')"
    assert verdict.params["error"].startswith("TypeError:")


def test_ex1_dropping_what_is_not_a_tensor_is_incorrect():
    verdict = ToDevice().evaluate(to_device=drops_non_tensors)
    assert verdict.key == "ch04.ex1.keys"
    assert verdict.params["missing"] == "'size', 'name', 'mask'"


def test_ex1_changing_what_is_not_a_tensor_is_incorrect():
    verdict = ToDevice().evaluate(to_device=turns_numbers_into_tensors)
    assert verdict.key == "ch04.ex1.non_tensor"
    assert (verdict.params["path"], verdict.params["want"], verdict.params["got"]) == ("batch['size']", "4", "tensor")


def test_ex1_a_tensor_left_inside_a_container_is_incorrect_and_located():
    verdict = ToDevice().evaluate(to_device=moves_only_the_top_level)
    assert verdict.key == "ch04.ex1.left_behind"
    assert verdict.params == {"case": "(tensor, tensor)", "path": "batch[0]", "found": CPU, "device": META}


def test_ex1_a_function_that_ignores_its_device_argument_is_incorrect():
    verdict = ToDevice().evaluate(to_device=ignores_its_device_argument)
    assert (verdict.key, verdict.params["found"], verdict.params["device"]) == ("ch04.ex1.left_behind", CPU, META)


def test_ex1_something_that_is_not_a_function_is_incorrect():
    assert verdict_of(ToDevice(), to_device="to_device") == (INCORRECT, "ch04.ex1.not_function")


def test_ex1_the_reference_solution_is_correct_and_moves_to_meta():
    assert ToDevice.reads == ("to_device",)
    assert TARGET == META
    assert verdict_of(ToDevice(), to_device=solved()["to_device"]) == (CORRECT, "ch04.ex1.ok")


def test_ex1_changing_the_batch_in_place_is_judged_on_what_comes_back():
    assert verdict_of(ToDevice(), to_device=changes_the_input_in_place) == (CORRECT, "ch04.ex1.ok")


def test_compare_finds_a_deep_tensor_left_behind_and_names_its_path():
    given = {"text": (torch.zeros(2), [torch.ones(1), {"ids": torch.arange(2)}])}
    got = reference_to_device(given, META)
    got["text"][1][1]["ids"] = torch.arange(2)  # one tensor, three levels down, stays on the CPU
    assert compare(given, got, "batch", META) == (
        "left_behind",
        {"path": "batch['text'][1][1]['ids']", "found": CPU, "device": META},
    )


def test_compare_reports_a_changed_length_and_a_changed_shape():
    assert compare([torch.zeros(2), 3], [torch.zeros(2, device=META)], "batch", META)[0] == "length"
    assert compare(torch.zeros(2), torch.zeros(3, device=META), "batch", META) == ("changed", {"path": "batch"})


def test_describe_draws_a_batch_with_tensors_as_tensor():
    batch = {"x": (torch.zeros(1),), "p": Pair(torch.zeros(1), None), "n": [1, "a"]}
    assert describe(batch) == "{'x': (tensor,), 'p': Pair(inputs=tensor, tag=None), 'n': [1, 'a']}"


# --- exercise 2: DeviceLoader ---------------------------------------------------------------------


class MovesOnlyTheInputs:
    def __init__(self, loader, device):
        self.loader, self.device = loader, device

    def __iter__(self):
        for inputs, labels in self.loader:
            yield inputs.to(self.device), labels

    def __len__(self):
        return len(self.loader)


def a_generator_function(loader, device):
    for batch in loader:
        yield reference_to_device(batch, device)


class OneEpochOnly:
    def __init__(self, loader, device):
        self.batches = (reference_to_device(batch, device) for batch in loader)
        self.length = len(loader)

    def __iter__(self):
        return self.batches

    def __len__(self):
        return self.length


class ForgetsLen:
    def __init__(self, loader, device):
        self.loader, self.device = loader, device

    def __iter__(self):
        for batch in self.loader:
            yield reference_to_device(batch, self.device)


class WrongLen(ForgetsLen):
    def __len__(self):
        return len(self.loader.dataset)


class WrapsAnotherLoader(ForgetsLen):
    def __init__(self, loader, device):
        super().__init__(DataLoader(TensorDataset(torch.randn(12, 3), torch.arange(12)), batch_size=6), device)

    def __len__(self):
        return len(self.loader)


class YieldsTheBlank(ForgetsLen):
    def __iter__(self):
        for _ in self.loader:
            yield devicelab.____


class DropsTheLastBatch(ForgetsLen):
    def __iter__(self):
        batches = list(self.loader)[:-1]
        for batch in batches:
            yield reference_to_device(batch, self.device)

    def __len__(self):
        return len(self.loader)


class YieldsDicts(ForgetsLen):
    def __iter__(self):
        for inputs, labels in self.loader:
            yield {"inputs": inputs.to(self.device), "labels": labels.to(self.device)}


class TakesOneArgument:
    def __init__(self, loader):
        self.loader = loader


def test_ex2_not_attempted_when_device_loader_is_missing_or_blank():
    ex = LoaderWrapper()
    assert verdict_of(ex) == (NOT_ATTEMPTED, "ch04.ex2.todo")
    assert verdict_of(ex, DeviceLoader=devicelab.____) == (NOT_ATTEMPTED, "ch04.ex2.todo")


def test_ex2_moving_only_the_first_element_is_incorrect():
    verdict = LoaderWrapper().evaluate(DeviceLoader=MovesOnlyTheInputs)
    assert verdict.key == "ch04.ex2.left_behind"
    assert verdict.params == {"n": 1, "i": 1, "what": "labels", "found": CPU, "device": META}


def test_ex2_a_generator_function_loses_len_and_is_incorrect():
    verdict = LoaderWrapper().evaluate(DeviceLoader=a_generator_function)
    assert verdict.key == "ch04.ex2.no_len"
    assert verdict.params["error"] == "TypeError: object of type 'generator' has no len()"


def test_ex2_a_class_without_len_is_incorrect():
    assert verdict_of(LoaderWrapper(), DeviceLoader=ForgetsLen) == (INCORRECT, "ch04.ex2.no_len")


def test_ex2_a_wrong_len_is_incorrect():
    verdict = LoaderWrapper().evaluate(DeviceLoader=WrongLen)
    assert (verdict.key, verdict.params) == ("ch04.ex2.wrong_len", {"got": 10, "want": 3})


def test_ex2_a_wrapper_that_works_for_one_epoch_only_is_incorrect():
    verdict = LoaderWrapper().evaluate(DeviceLoader=OneEpochOnly)
    assert (verdict.key, verdict.params) == ("ch04.ex2.one_epoch", {"got": 0, "want": 3})


def test_ex2_a_wrapper_around_another_loader_is_incorrect():
    verdict = LoaderWrapper().evaluate(DeviceLoader=WrapsAnotherLoader)
    assert verdict.key == "ch04.ex2.other_batches"
    assert verdict.params == {"n": 1, "got": [(6, 3), (6,)], "want": [(4, 3), (4,)]}


def test_ex2_a_dropped_batch_is_incorrect():
    verdict = LoaderWrapper().evaluate(DeviceLoader=DropsTheLastBatch)
    assert (verdict.key, verdict.params) == ("ch04.ex2.count", {"got": 2, "want": 3})


def test_ex2_batches_of_another_shape_are_incorrect():
    verdict = LoaderWrapper().evaluate(DeviceLoader=YieldsDicts)
    assert (verdict.key, verdict.params["n"]) == ("ch04.ex2.not_pair", 1)
    assert verdict.params["got"] == "{'inputs': tensor, 'labels': tensor}"


def test_ex2_a_wrapper_that_hands_out_the_blank_asks_for_exercise_1():
    assert verdict_of(LoaderWrapper(), DeviceLoader=YieldsTheBlank) == (INCORRECT, "ch04.ex2.blank_batches")


def test_ex2_a_wrapper_whose_constructor_fails_is_incorrect_and_shows_the_error():
    verdict = LoaderWrapper().evaluate(DeviceLoader=TakesOneArgument)
    assert verdict.key == "ch04.ex2.raised" and verdict.params["error"].startswith("TypeError:")


def test_ex2_something_that_is_not_callable_is_incorrect():
    assert verdict_of(LoaderWrapper(), DeviceLoader=[1, 2]) == (INCORRECT, "ch04.ex2.not_callable")


def test_ex2_a_tuple_per_batch_is_as_good_as_the_loaders_list():
    class YieldsTuples(ForgetsLen):
        def __iter__(self):
            for inputs, labels in self.loader:
                yield inputs.to(self.device), labels.to(self.device)

        def __len__(self):
            return len(self.loader)

    assert verdict_of(LoaderWrapper(), DeviceLoader=YieldsTuples) == (CORRECT, "ch04.ex2.ok")


def test_ex2_the_reference_solution_is_correct():
    namespace = solved(TO_DEVICE_SOLUTION + "\n\n\n" + DEVICE_LOADER_SOLUTION)
    assert verdict_of(LoaderWrapper(), DeviceLoader=namespace["DeviceLoader"]) == (CORRECT, "ch04.ex2.ok")


# --- exercise 3: is the copy asynchronous? -------------------------------------------------------


def test_ex3_not_attempted_when_the_answer_is_missing_or_blank():
    ex = AsyncCopyQuestion()
    assert verdict_of(ex, pageable=torch.zeros(2), device=CPU) == (NOT_ATTEMPTED, "ch04.ex3.todo")
    assert verdict_of(ex, copy_is_async=devicelab.____, pageable=torch.zeros(2), device=CPU) == (
        NOT_ATTEMPTED,
        "ch04.ex3.todo",
    )


@pytest.mark.parametrize("answer", ["False", 0, None, "no"])
def test_ex3_an_answer_that_is_not_a_bool_is_incorrect(answer):
    verdict = AsyncCopyQuestion().evaluate(copy_is_async=answer, pageable=torch.zeros(2), device=CPU)
    assert (verdict.key, verdict.params) == ("ch04.ex3.not_bool", {"got": repr(answer)})


def test_ex3_on_the_cpu_there_is_no_copy_so_false_is_right_and_true_is_wrong():
    ex, pageable = AsyncCopyQuestion(), torch.zeros(2)
    assert verdict_of(ex, copy_is_async=False, pageable=pageable, device=CPU) == (CORRECT, "ch04.ex3.ok_no_copy")
    assert verdict_of(ex, copy_is_async=True, pageable=pageable, device=CPU) == (INCORRECT, "ch04.ex3.wrong")


def test_ex3_to_a_cuda_gpu_from_pageable_memory_false_is_right():
    ex, pageable = AsyncCopyQuestion(), torch.zeros(2)
    assert not pageable.is_pinned()
    assert verdict_of(ex, copy_is_async=False, pageable=pageable, device=CUDA) == (CORRECT, "ch04.ex3.ok_staged")
    assert verdict_of(ex, copy_is_async=True, pageable=pageable, device=CUDA) == (INCORRECT, "ch04.ex3.wrong")


def test_ex3_the_truth_follows_is_pinned_and_is_not_a_fixed_answer(monkeypatch):
    # A pinned tensor needs a GPU; here is_pinned() is made to answer True to show the check reads it.
    monkeypatch.setattr(torch.Tensor, "is_pinned", lambda self: True)
    ex, source = AsyncCopyQuestion(), torch.zeros(2)
    assert asynchronous_copy(source, CUDA) is True
    assert verdict_of(ex, copy_is_async=True, pageable=source, device=CUDA) == (CORRECT, "ch04.ex3.ok_async")
    assert verdict_of(ex, copy_is_async=False, pageable=source, device=CUDA) == (INCORRECT, "ch04.ex3.wrong")


def test_ex3_on_mps_either_answer_is_accepted_with_a_note():
    for answer in (True, False):
        verdict = AsyncCopyQuestion().evaluate(
            copy_is_async=answer, pageable=torch.zeros(2), device=torch.device("mps")
        )
        assert (verdict.status, verdict.key) == (CORRECT, "ch04.ex3.other_device")


def test_ex3_a_pageable_that_is_no_longer_a_tensor_asks_to_rerun_the_cell():
    assert verdict_of(AsyncCopyQuestion(), copy_is_async=False, pageable=None, device=CPU) == (
        INCORRECT,
        "ch04.ex3.no_tensor",
    )


def test_asynchronous_copy_covers_only_host_to_cuda_and_cpu_to_cpu():
    assert asynchronous_copy(torch.zeros(1), "cpu") is False
    assert asynchronous_copy(torch.zeros(1), "cuda") is False
    assert asynchronous_copy(torch.zeros(1, device=META), "cuda") is None
    assert asynchronous_copy(torch.zeros(1), "mps") is None


# --- every exercise: catalogue keys, solutions ---------------------------------------------------


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda cls: cls.name)
def test_every_message_an_exercise_names_is_in_the_catalogue(exercise):
    keys = [exercise.not_attempted_key, exercise.solution_key, *exercise.hints]
    assert all(key in CATALOGUE for key in keys)
    assert len(exercise.hints) >= 2


def test_every_verdict_key_used_by_the_checks_is_in_the_catalogue():
    source = (ROOT / "devicelab" / "chapters" / "batches.py").read_text(encoding="utf-8")
    used = set(re.findall(r'"(ch04\.ex\d\.\w+)"', source))
    used |= {f"ch04.ex1.{key}" for key in ("container", "namedtuple", "length", "keys", "non_tensor",
                                           "not_tensor", "changed", "left_behind")}
    assert used <= set(CATALOGUE)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda cls: cls.name)
def test_every_printed_solution_is_the_code_of_the_solved_notebook(exercise):
    source = (ROOT / "solutions" / "source" / "04-batches.md").read_text(encoding="utf-8")
    for line in text(exercise.solution_key).splitlines():
        assert line in source, line


def test_the_printed_solutions_pass_their_checks_in_notebook_order():
    namespace = {"torch": torch, "device": CPU, "pageable": torch.randn(8)}
    for exercise in EXERCISES:
        exec(text(exercise.solution_key), namespace)
    for exercise in EXERCISES:
        assert exercise().evaluate(namespace).status == CORRECT, exercise.name


# --- check(), hint(), solution() -----------------------------------------------------------------


def test_check_prints_a_wrong_answer_and_does_not_raise(capsys):
    ToDevice().check(to_device=seed_to_device)
    assert capsys.readouterr().out == (
        "❌ ex1: Not yet: on the batch (tensor, tensor), `batch` was a tuple and came back as a list.\n"
    )


def test_check_prints_in_the_chosen_language(capsys):
    set_language("zh")
    LoaderWrapper().check(DeviceLoader=MovesOnlyTheInputs)
    assert capsys.readouterr().out.startswith("❌ ex2: 还不对：在第 1 个批次中，labels（第 1 个元素）仍在 cpu 上")


def test_check_without_arguments_reads_the_notebook_globals(capsys):
    notebook = {"ex1": ToDevice(), "torch": torch}
    exec(TO_DEVICE_SOLUTION + "\nex1.check()\n", notebook)
    assert capsys.readouterr().out.startswith("✅ ex1: Correct!")
