"""Chapter 04's exercises: each gives not attempted / incorrect / correct on constructed answers,
and check(), hint() and solution() print what a learner reads."""

import functools
import re
from pathlib import Path

import pytest
import torch
from torch.utils._pytree import tree_map
from torch.utils.data import DataLoader, TensorDataset

import devicelab
from devicelab.chapters.batches import (
    DEVICE_LOADER_SOLUTION,
    DIFFERENCES,
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
    """The blog post's helper: every tuple becomes a list, and non-tensors raise."""
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


def test_ex1_the_blog_posts_helper_is_incorrect_because_a_tuple_came_back_as_a_list():
    verdict = ToDevice().evaluate(to_device=seed_to_device)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch04.ex1.container")
    assert verdict.params == {"case": "(tensor, tensor)", "path": "batch", "want": "tuple", "got": "list"}
    assert "`batch` was a tuple and came back as a list" in verdict.message()


def test_ex1_a_namedtuple_turned_into_a_plain_tuple_is_incorrect():
    verdict = ToDevice().evaluate(to_device=tuples_become_tuples_but_namedtuples_lose_their_type)
    assert (verdict.key, verdict.params["want"], verdict.params["got"]) == ("ch04.ex1.namedtuple", "Pair", "tuple")
    assert "`batch.inputs` would no longer work" in verdict.message()


def test_ex1_a_namedtuple_rebuilt_without_unpacking_is_explained_in_a_sentence_not_a_type_error():
    verdict = ToDevice().evaluate(to_device=namedtuple_rebuilt_without_unpacking)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch04.ex1.namedtuple_raised")
    assert verdict.params["case"] == "Pair(inputs=tensor, tag='train')"
    assert (verdict.params["path"], verdict.params["fields"]) == ("batch", "inputs, tag")
    for lang in ("en", "zh"):
        set_language(lang)
        assert "TypeError" not in verdict.message() and "*" not in verdict.message()
    set_language("en")


def walks_into_strings(batch, device):
    """Treats every sequence as a container, strings too: a one-character string is its own only item."""
    from collections.abc import Mapping, Sequence

    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, Mapping):
        return {key: walks_into_strings(value, device) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*[walks_into_strings(item, device) for item in batch])
    if isinstance(batch, Sequence):
        return type(batch)([walks_into_strings(item, device) for item in batch])
    return batch


def test_ex1_a_walk_into_strings_is_named_instead_of_a_recursion_error():
    verdict = ToDevice().evaluate(to_device=walks_into_strings)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch04.ex1.string_recursion")
    assert (verdict.params["path"], verdict.params["string"]) == ("batch.tag", "'train'")


def test_ex1_moves_that_block_are_incorrect_where_the_exercise_asks_for_non_blocking_copies():
    def blocking(batch, device):
        return tree_map(lambda x: x.to(device) if isinstance(x, torch.Tensor) else x, batch)

    def some_blocking(batch, device):  # the plain tensor of the last batch is moved without non_blocking
        return batch.to(device) if isinstance(batch, torch.Tensor) else with_pytree(batch, device)

    def with_copy(batch, device):
        def move(x):
            return torch.empty_like(x, device=device).copy_(x, non_blocking=True)
        return tree_map(lambda x: move(x) if isinstance(x, torch.Tensor) else x, batch)

    for answer in (blocking, some_blocking):
        assert verdict_of(ToDevice(CPU), to_device=answer) == (INCORRECT, "ch04.ex1.blocking")
    assert verdict_of(ToDevice(CPU), to_device=with_copy) == (CORRECT, "ch04.ex1.ok")
    for lang in ("en", "zh"):  # the sentence says what is missing, not the keyword that supplies it
        assert "non_blocking" not in text("ch04.ex1.blocking", lang)


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


def makes_new_zero_tensors(batch, device):
    return tree_map(lambda x: torch.zeros_like(x, device=device) if isinstance(x, torch.Tensor) else x, batch)


def makes_new_empty_tensors(batch, device):
    return tree_map(lambda x: torch.empty_like(x, device=device) if isinstance(x, torch.Tensor) else x, batch)


def casts_to_float(batch, device):
    return tree_map(lambda x: x.to(device).float() if isinstance(x, torch.Tensor) else x, batch)


def with_pytree(batch, device):
    return tree_map(lambda x: x.to(device, non_blocking=True) if isinstance(x, torch.Tensor) else x, batch)


@functools.singledispatch
def with_singledispatch(batch, device):
    return batch


@with_singledispatch.register
def _(batch: torch.Tensor, device):
    return batch.to(device=device, non_blocking=True)


@with_singledispatch.register
def _(batch: dict, device):
    return {key: with_singledispatch(value, device) for key, value in batch.items()}


@with_singledispatch.register
def _(batch: list, device):
    return [with_singledispatch(item, device) for item in batch]


@with_singledispatch.register
def _(batch: tuple, device):
    items = [with_singledispatch(item, device) for item in batch]
    return type(batch)(*items) if hasattr(batch, "_fields") else tuple(items)


def loops_forever(batch, device):
    while True:
        pass


def recurses_forever(batch, device):
    return recurses_forever(batch, device)


@pytest.mark.parametrize("answer", [makes_new_zero_tensors, makes_new_empty_tensors])
def test_ex1_new_tensors_of_the_right_shape_without_the_values_are_incorrect(answer):
    verdict = ToDevice(CPU).evaluate(to_device=answer)
    assert (verdict.status, verdict.key, verdict.params["path"]) == (INCORRECT, "ch04.ex1.values", "batch[0]")


def test_ex1_a_cast_to_float_is_incorrect_because_the_labels_change_dtype():
    verdict = ToDevice(CPU).evaluate(to_device=casts_to_float)
    assert (verdict.key, verdict.params["path"]) == ("ch04.ex1.changed", "batch[1]")


@pytest.mark.parametrize("answer", [with_pytree, with_singledispatch], ids=["tree_map", "singledispatch"])
def test_ex1_right_answers_written_differently_are_correct(answer):
    assert verdict_of(ToDevice(CPU), to_device=answer) == (CORRECT, "ch04.ex1.ok")


def test_ex1_an_endless_loop_is_stopped_and_incorrect(monkeypatch):
    monkeypatch.setattr(ToDevice, "seconds", 0.5)
    assert verdict_of(ToDevice(CPU), to_device=loops_forever) == (INCORRECT, "check.too_slow")


def test_ex1_endless_recursion_is_reported_as_an_error():
    verdict = ToDevice(CPU).evaluate(to_device=recurses_forever)
    assert verdict.key == "ch04.ex1.recursion"


def test_ex1_the_value_probe_uses_the_labs_device_not_a_notebook_variable():
    seen = []

    def records(batch, device):
        seen.append(torch.device(device))
        return with_pytree(batch, device)

    assert verdict_of(ToDevice(CPU), to_device=records) == (CORRECT, "ch04.ex1.ok")
    assert set(seen) == {META, CPU}


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


def test_compare_checks_values_only_when_asked():
    assert compare(torch.zeros(2), torch.ones(2), "batch", CPU) is None
    assert compare(torch.zeros(2), torch.ones(2), "batch", CPU, values=True) == ("values", {"path": "batch"})
    assert compare(torch.zeros(2), torch.zeros(2), "batch", CPU, values=True) is None


def test_describe_draws_a_batch_with_tensors_as_tensor():
    batch = {"x": (torch.zeros(1),), "p": Pair(torch.zeros(1), None), "n": [1, "a"]}
    assert describe(batch) == "{'x': (tensor,), 'p': Pair(inputs=tensor, tag=None), 'n': [1, 'a']}"


# --- exercise 2: DeviceLoader ---------------------------------------------------------------------


class MovesOnlyTheInputs:
    def __init__(self, loader, device):
        self.loader, self.device = loader, device

    def __iter__(self):
        for inputs, labels in self.loader:
            yield [inputs.to(self.device), labels]

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


class CachesTheFirstPass:
    def __init__(self, loader, device):
        self.loader, self.device, self.batches = loader, device, None

    def __iter__(self):
        if self.batches is None:
            self.batches = [reference_to_device(batch, self.device) for batch in self.loader]
        return iter(self.batches)

    def __len__(self):
        return len(self.loader)


class ForgetsLen:
    def __init__(self, loader, device):
        self.loader, self.device = loader, device

    def __iter__(self):
        for batch in self.loader:
            yield reference_to_device(batch, self.device)


class Solution(ForgetsLen):
    def __len__(self):
        return len(self.loader)


class WrongLen(ForgetsLen):
    def __len__(self):
        return len(self.loader.dataset)


class WrapsAnotherLoader(Solution):
    def __init__(self, loader, device):
        super().__init__(DataLoader(TensorDataset(torch.randn(12, 3), torch.arange(12)), batch_size=6), device)


class YieldsTheBlank(Solution):
    def __iter__(self):
        for _ in self.loader:
            yield devicelab.____


class DropsTheLastBatch(Solution):
    def __iter__(self):
        batches = list(self.loader)[:-1]
        for batch in batches:
            yield reference_to_device(batch, self.device)


class NeverStops(Solution):
    def __iter__(self):
        while True:
            for batch in self.loader:
                yield reference_to_device(batch, self.device)


class UsesTheBlogPostsHelper(Solution):
    def __iter__(self):
        for batch in self.loader:
            yield seed_to_device(batch, self.device)


class UsesTheGlobalDevice(Solution):
    def __iter__(self):
        for batch in self.loader:
            yield reference_to_device(batch, CPU)


class HandsOutZeros(Solution):
    def __iter__(self):
        for batch in self.loader:
            yield makes_new_zero_tensors(batch, self.device)


class SwapsTheFirstTwoBatches(Solution):
    def __iter__(self):
        batches = list(self.loader)
        for batch in [batches[1], batches[0], *batches[2:]]:
            yield reference_to_device(batch, self.device)


class YieldsDicts(Solution):
    def __iter__(self):
        for inputs, labels in self.loader:
            yield {"inputs": inputs.to(self.device), "labels": labels.to(self.device)}


class TakesOneArgument:
    def __init__(self, loader):
        self.loader = loader


class AnIterator(Solution):
    def __iter__(self):
        self.batches = iter(self.loader)
        return self

    def __next__(self):
        return with_pytree(next(self.batches), self.device)


class AMap(Solution):
    def __iter__(self):
        return map(functools.partial(with_singledispatch, device=self.device), self.loader)


class ForgetsLenAndLoopsInLen(Solution):
    def __len__(self):
        while True:
            pass


def test_ex2_not_attempted_when_device_loader_is_missing_or_blank():
    ex = LoaderWrapper(CPU)
    assert verdict_of(ex) == (NOT_ATTEMPTED, "ch04.ex2.todo")
    assert verdict_of(ex, DeviceLoader=devicelab.____) == (NOT_ATTEMPTED, "ch04.ex2.todo")


def test_ex2_the_solution_is_correct_and_reads_only_device_loader():
    assert LoaderWrapper.reads == ("DeviceLoader",)
    assert verdict_of(LoaderWrapper(CPU), DeviceLoader=solved(TO_DEVICE_SOLUTION + "\n" + DEVICE_LOADER_SOLUTION)[
        "DeviceLoader"]) == (CORRECT, "ch04.ex2.ok")


@pytest.mark.parametrize("answer", [Solution, AnIterator, AMap], ids=["generator", "iterator", "map"])
def test_ex2_right_answers_written_differently_are_correct(answer):
    assert verdict_of(LoaderWrapper(CPU), DeviceLoader=answer) == (CORRECT, "ch04.ex2.ok")


def test_ex2_moving_only_the_first_element_is_incorrect():
    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=MovesOnlyTheInputs)
    assert verdict.key == "ch04.ex2.left_behind"
    assert verdict.params == {"n": 1, "case": "[tensor, tensor]", "path": "batch[1]", "found": CPU, "device": META}


def test_ex2_a_generator_function_loses_len_and_is_incorrect():
    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=a_generator_function)
    assert verdict.key == "ch04.ex2.no_len"
    assert verdict.params["error"] == "TypeError: object of type 'generator' has no len()"


def test_ex2_a_class_without_len_is_incorrect():
    assert verdict_of(LoaderWrapper(CPU), DeviceLoader=ForgetsLen) == (INCORRECT, "ch04.ex2.no_len")


def test_ex2_a_wrong_len_is_incorrect():
    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=WrongLen)
    assert (verdict.key, verdict.params) == ("ch04.ex2.wrong_len", {"got": 10, "want": 3})


def test_ex2_a_wrapper_that_reads_the_loader_once_is_incorrect():
    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=OneEpochOnly)
    assert (verdict.key, verdict.params) == ("ch04.ex2.cached", {"got": 0})


def test_ex2_a_wrapper_that_caches_the_first_pass_is_incorrect():
    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=CachesTheFirstPass)
    assert (verdict.key, verdict.params) == ("ch04.ex2.cached", {"got": 0})
    assert "a new pass over the loader" in verdict.message()


def test_ex2_a_wrapper_around_another_loader_is_incorrect():
    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=WrapsAnotherLoader)
    assert verdict.key == "ch04.ex2.changed"
    assert verdict.params == {"n": 1, "case": "[tensor, tensor]", "path": "batch[0]"}


def test_ex2_a_dropped_batch_is_incorrect():
    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=DropsTheLastBatch)
    assert (verdict.key, verdict.params) == ("ch04.ex2.count", {"got": 2, "want": 3})


def test_ex2_an_endless_pass_is_cut_short_and_incorrect():
    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=NeverStops)
    assert (verdict.key, verdict.params) == ("ch04.ex2.too_many", {"want": 3})


def test_ex2_a_wrapper_using_the_blog_posts_helper_fails_on_the_names_of_dict_batches():
    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=UsesTheBlogPostsHelper)
    assert verdict.key == "ch04.ex2.raised"
    assert verdict.params["error"] == "AttributeError: 'str' object has no attribute 'to'"


def test_ex2_a_wrapper_that_moves_to_another_device_than_its_argument_is_incorrect():
    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=UsesTheGlobalDevice)
    assert (verdict.key, verdict.params["found"], verdict.params["device"]) == ("ch04.ex2.left_behind", CPU, META)


@pytest.mark.parametrize("answer", [HandsOutZeros, SwapsTheFirstTwoBatches])
def test_ex2_batches_with_other_values_are_incorrect(answer):
    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=answer)
    assert (verdict.key, verdict.params["n"]) == ("ch04.ex2.values", 1)


def test_ex2_batches_of_another_shape_are_incorrect():
    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=YieldsDicts)
    assert verdict.key == "ch04.ex2.container"
    assert verdict.params == {"n": 1, "case": "[tensor, tensor]", "path": "batch", "want": "list", "got": "dict"}


def test_ex2_a_wrapper_that_hands_out_the_blank_asks_for_exercise_1():
    assert verdict_of(LoaderWrapper(CPU), DeviceLoader=YieldsTheBlank) == (INCORRECT, "ch04.ex2.blank_batches")


def test_ex2_a_wrapper_whose_constructor_fails_is_incorrect_and_shows_the_error():
    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=TakesOneArgument)
    assert verdict.key == "ch04.ex2.raised" and verdict.params["error"].startswith("TypeError:")


def test_ex2_a_len_that_never_returns_is_stopped(monkeypatch):
    monkeypatch.setattr(LoaderWrapper, "seconds", 0.5)
    assert verdict_of(LoaderWrapper(CPU), DeviceLoader=ForgetsLenAndLoopsInLen) == (INCORRECT, "check.too_slow")


def test_ex2_something_that_is_not_callable_is_incorrect():
    assert verdict_of(LoaderWrapper(CPU), DeviceLoader=[1, 2]) == (INCORRECT, "ch04.ex2.not_callable")


def test_ex2_dict_batches_keep_their_namedtuple_and_names():
    class LosesTheNamedtuple(Solution):
        def __iter__(self):
            for batch in self.loader:
                moved = reference_to_device(batch, self.device)
                if isinstance(moved, dict):
                    moved["features"] = tuple(moved["features"])
                yield moved

    verdict = LoaderWrapper(CPU).evaluate(DeviceLoader=LosesTheNamedtuple)
    assert (verdict.key, verdict.params["path"], verdict.params["want"]) == (
        "ch04.ex2.namedtuple", "batch['features']", "Pair")


# --- exercise 3: is the copy asynchronous? -------------------------------------------------------


def test_ex3_not_attempted_when_the_answer_is_missing_or_blank():
    ex = AsyncCopyQuestion(CPU)
    assert verdict_of(ex, pageable=torch.zeros(2)) == (NOT_ATTEMPTED, "ch04.ex3.todo")
    assert verdict_of(ex, copy_is_async=devicelab.____, pageable=torch.zeros(2)) == (NOT_ATTEMPTED, "ch04.ex3.todo")


@pytest.mark.parametrize("answer", ["False", 0, None, "no", [False]])
def test_ex3_an_answer_that_is_not_a_bool_is_incorrect(answer):
    verdict = AsyncCopyQuestion(CPU).evaluate(copy_is_async=answer, pageable=torch.zeros(2))
    assert (verdict.key, verdict.params) == ("ch04.ex3.not_bool", {"got": repr(answer)})


def test_ex3_on_the_cpu_there_is_no_copy_so_false_is_right_and_true_is_wrong():
    ex, pageable = AsyncCopyQuestion(CPU), torch.zeros(2)
    assert verdict_of(ex, copy_is_async=False, pageable=pageable) == (CORRECT, "ch04.ex3.ok_no_copy")
    assert verdict_of(ex, copy_is_async=True, pageable=pageable) == (INCORRECT, "ch04.ex3.wrong")


def test_ex3_reads_the_labs_device_and_no_notebook_variable():
    assert AsyncCopyQuestion.reads == ("copy_is_async", "pageable")
    # a notebook that rebinds `device` to "mps" does not turn a wrong answer into an accepted one
    notebook = {"copy_is_async": True, "pageable": torch.zeros(2), "device": torch.device("mps")}
    assert AsyncCopyQuestion(CPU).evaluate(notebook).key == "ch04.ex3.wrong"


def test_ex3_to_a_cuda_gpu_from_pageable_memory_false_is_right():
    ex, pageable = AsyncCopyQuestion(CUDA), torch.zeros(2)
    assert not pageable.is_pinned()
    assert verdict_of(ex, copy_is_async=False, pageable=pageable) == (CORRECT, "ch04.ex3.ok_staged")
    assert verdict_of(ex, copy_is_async=True, pageable=pageable) == (INCORRECT, "ch04.ex3.wrong")


def test_ex3_a_pageable_that_is_no_longer_an_ordinary_cpu_tensor_is_incorrect(monkeypatch):
    ex = AsyncCopyQuestion(CUDA)
    assert verdict_of(ex, copy_is_async=True, pageable=torch.zeros(2, device=META)) == (
        INCORRECT, "ch04.ex3.not_ordinary")
    # A pinned tensor needs a GPU; here is_pinned() is made to answer True.
    monkeypatch.setattr(torch.Tensor, "is_pinned", lambda self: True)
    assert verdict_of(ex, copy_is_async=True, pageable=torch.zeros(2)) == (INCORRECT, "ch04.ex3.not_ordinary")


def test_ex3_a_numpy_bool_is_an_answer_too():
    numpy = pytest.importorskip("numpy")
    assert verdict_of(AsyncCopyQuestion(CPU), copy_is_async=numpy.bool_(False), pageable=torch.zeros(2)) == (
        CORRECT, "ch04.ex3.ok_no_copy")


def test_ex3_on_mps_either_answer_is_accepted_with_a_note():
    for answer in (True, False):
        verdict = AsyncCopyQuestion(torch.device("mps")).evaluate(copy_is_async=answer, pageable=torch.zeros(2))
        assert (verdict.status, verdict.key) == (CORRECT, "ch04.ex3.other_device")


def test_ex3_a_pageable_that_is_no_longer_a_tensor_asks_to_rerun_the_cell():
    assert verdict_of(AsyncCopyQuestion(CPU), copy_is_async=False, pageable=None) == (INCORRECT, "ch04.ex3.no_tensor")


def test_asynchronous_copy_covers_only_host_to_cuda_and_cpu_to_cpu(monkeypatch):
    assert asynchronous_copy(torch.zeros(1), "cpu") is False
    assert asynchronous_copy(torch.zeros(1), "cuda") is False
    assert asynchronous_copy(torch.zeros(1, device=META), "cuda") is None
    assert asynchronous_copy(torch.zeros(1), "mps") is None
    monkeypatch.setattr(torch.Tensor, "is_pinned", lambda self: True)
    assert asynchronous_copy(torch.zeros(1), "cuda") is True


# --- every exercise: catalogue keys, solutions ---------------------------------------------------


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda cls: cls.name)
def test_every_message_an_exercise_names_is_in_the_catalogue(exercise):
    keys = [exercise.not_attempted_key, exercise.solution_key, *exercise.hints]
    assert all(key in CATALOGUE for key in keys)
    assert len(exercise.hints) >= 2


def test_every_verdict_key_used_by_the_checks_is_in_the_catalogue():
    source = (ROOT / "devicelab" / "chapters" / "batches.py").read_text(encoding="utf-8")
    used = set(re.findall(r'"(ch04\.ex\d\.\w+)"', source))
    used |= {f"ch04.ex{n}.{key}" for n in (1, 2) for key in DIFFERENCES}
    assert used <= set(CATALOGUE)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda cls: cls.name)
def test_every_printed_solution_is_the_code_of_the_solved_notebook(exercise):
    source = (ROOT / "solutions" / "source" / "04-batches.md").read_text(encoding="utf-8")
    for line in text(exercise.solution_key).splitlines():
        assert line in source, line


def test_the_printed_solutions_pass_their_checks_in_notebook_order():
    namespace = {"torch": torch, "pageable": torch.randn(8)}
    for exercise in EXERCISES:
        exec(text(exercise.solution_key), namespace)
    for exercise in EXERCISES:
        assert exercise(CPU).evaluate(namespace).status == CORRECT, exercise.name


# --- check(), hint(), solution() -----------------------------------------------------------------


def test_check_prints_a_wrong_answer_and_does_not_raise(capsys):
    ToDevice().check(to_device=seed_to_device)
    assert capsys.readouterr().out == (
        "❌ ex1: Not yet: on the batch (tensor, tensor), `batch` was a tuple and came back as a list.\n"
    )


def test_check_prints_in_the_chosen_language(capsys):
    set_language("zh")
    LoaderWrapper().check(DeviceLoader=MovesOnlyTheInputs)
    printed = capsys.readouterr().out
    assert printed.startswith("❌ ex2: 还不对：在第 1 个批次（[tensor, tensor]）中，张量 `batch[1]` 仍在 cpu 上")


def test_check_without_arguments_reads_the_notebook_globals(capsys):
    notebook = {"ex1": ToDevice(), "torch": torch}
    exec(TO_DEVICE_SOLUTION + "\nex1.check()\n", notebook)
    assert capsys.readouterr().out.startswith("✅ ex1: Correct!")
