"""Claims tests for chapter 4 (moving whole batches): each test proves one statement the chapter makes.

Every test fails if its statement is false on the installed torch. CPU tests move batches to the ``meta``
device, a real device on every machine (a tensor that was not moved stays on the CPU). Tests marked ``gpu``
run on a CUDA GPU only; the asynchronous-copy tests keep the GPU busy with ``torch.cuda._sleep`` so that
"the call returned before the copy read its source" is observable, not a matter of timing luck.
"""

import os
import re
from collections import namedtuple
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.torch_version import TorchVersion
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.data import DataLoader, TensorDataset

from devicelab.chapters.batches import TO_DEVICE_SOLUTION
from devicelab.errors import match_kind

ROOT = Path(__file__).resolve().parents[2]
META = torch.device("meta")
CUDA_ONLY = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
Features = namedtuple("Features", ["dense", "flags"])
NO_ACCELERATOR_WARNING = (
    "'pin_memory' argument is set as true but no accelerator is found, then device pinned memory won't be used."
)
SLEEP_CYCLES = 1_000_000_000  # about half a second of GPU time: far longer than the CPU needs below
# PyTorch 2.8 reworded the generated device check. A real version type: as strings, "2.14.1" < "2.8".
NEW_WORDING = TorchVersion(torch.__version__) >= (2, 8)


def blog_to_device(data, device):
    """The blog post's helper, as published (the copy we read had lost its '=' signs)."""
    if isinstance(data, (list, tuple)):
        return [blog_to_device(x, device) for x in data]
    elif isinstance(data, dict):
        return {k: blog_to_device(v, device) for k, v in data.items()}
    else:
        return data.to(device, non_blocking=True)


def reference_to_device():
    """The course's to_device: the code the page, the solution and `ex1.solution()` show."""
    namespace = {"torch": torch}
    exec(TO_DEVICE_SOLUTION, namespace)
    return namespace["to_device"]


def has_accelerator() -> bool:
    acc = getattr(torch, "accelerator", None)
    if acc is not None and hasattr(acc, "is_available"):
        return acc.is_available()
    mps = getattr(torch.backends, "mps", None)
    return torch.cuda.is_available() or bool(mps is not None and mps.is_available())


def dict_samples(n: int = 4) -> list[dict]:
    return [
        {"features": Features(torch.randn(8), torch.ones(4)), "label": torch.tensor(i % 3), "name": f"reading-{i}"}
        for i in range(n)
    ]


def leaves(batch):
    """Every tensor in a nested batch."""
    if isinstance(batch, torch.Tensor):
        return [batch]
    if isinstance(batch, dict):
        return [t for value in batch.values() for t in leaves(value)]
    if isinstance(batch, (list, tuple)):
        return [t for item in batch for t in leaves(item)]
    return []


# --------------------------------------------------------------------------------------------- CPU


def test_the_blog_posts_to_device_turns_a_tuple_into_a_list():
    """The blog post's recursive to_device returns a list for a tuple.

    zh: 那篇博客的递归 to_device 把元组变成了列表。
    """
    moved = blog_to_device((torch.zeros(2), torch.ones(2)), META)
    assert type(moved) is list
    assert all(t.device == META for t in moved)


def test_the_blog_posts_to_device_turns_a_namedtuple_into_a_list_so_its_fields_are_lost():
    """The blog post's to_device returns a plain list for a namedtuple: `.dense` no longer works.

    zh: 那篇博客的 to_device 把命名元组变成了普通列表：`.dense` 不能再用了。
    """
    moved = blog_to_device({"features": Features(torch.zeros(2), torch.ones(2))}, META)
    assert type(moved["features"]) is list
    with pytest.raises(AttributeError, match="'list' object has no attribute 'dense'"):
        _ = moved["features"].dense


@pytest.mark.parametrize(("leaf", "name"), [("reading-0", "str"), (4, "int"), (None, "NoneType")])
def test_the_blog_posts_to_device_raises_on_anything_that_is_not_a_tensor(leaf, name):
    """The blog post's to_device raises AttributeError: '<type>' object has no attribute 'to' on non-tensors.

    zh: 那篇博客的 to_device 遇到非张量时抛出 AttributeError: '<type>' object has no attribute 'to'。
    """
    with pytest.raises(AttributeError, match=re.escape(f"'{name}' object has no attribute 'to'")):
        blog_to_device({"inputs": torch.zeros(2), "other": leaf}, META)


def test_default_collate_hands_out_a_list_for_tuple_samples():
    """A DataLoader with the default collate hands out [inputs, labels] for a data set of (inputs, labels).

    zh: 数据集返回 (inputs, labels) 时，使用默认整理函数的 DataLoader 给出的是 [inputs, labels]。
    """
    dataset = TensorDataset(torch.randn(4, 3), torch.arange(4))
    assert type(dataset[0]) is tuple
    batch = next(iter(DataLoader(dataset, batch_size=2)))
    assert type(batch) is list and len(batch) == 2


def test_default_collate_keeps_dicts_and_namedtuples_and_gathers_names_into_a_list():
    """The default collate keeps dicts and namedtuples, stacks tensors and gathers strings into a list.

    zh: 默认整理函数保留字典和命名元组，把张量堆叠起来，把字符串收集成列表。
    """
    batch = next(iter(DataLoader(dict_samples(4), batch_size=4)))
    assert type(batch) is dict
    assert type(batch["features"]) is Features and batch["features"].dense.shape == (4, 8)
    assert batch["name"] == ["reading-0", "reading-1", "reading-2", "reading-3"]


def test_a_shuffling_dataloader_draws_a_new_order_on_every_pass():
    """A DataLoader with shuffle=True hands out the samples in a new order on each pass (each iter()).

    zh: shuffle=True 的 DataLoader 每遍历一次（每次 iter()）都以新的顺序给出样本。
    """
    loader = DataLoader(TensorDataset(torch.arange(64)), batch_size=64, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    first, second = (next(iter(loader))[0] for _ in range(2))
    assert sorted(first.tolist()) == sorted(second.tolist()) == list(range(64))
    assert not torch.equal(first, second)


def test_moving_only_the_top_level_of_a_batch_leaves_the_nested_tensors_behind():
    """A top-level move moves the label but leaves the tensors inside the namedtuple on the CPU.

    zh: 只移动最外层会移动 label，却把命名元组里的张量留在 CPU 上。
    """
    batch = next(iter(DataLoader(dict_samples(4), batch_size=4)))
    half = {key: value.to(META) if torch.is_tensor(value) else value for key, value in batch.items()}
    assert half["label"].device == META
    assert half["features"].dense.device.type == "cpu" and half["features"].flags.device.type == "cpu"


class RecordOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((func, args))
        return func(*args, **(kwargs or {}))


def test_linear_on_a_2d_input_calls_addmm_with_the_input_as_mat1():
    """nn.Linear on a 2-D input calls addmm (bias + input x weight^T), and the input is its argument mat1.

    zh: nn.Linear 处理二维输入时调用 addmm（偏置 + 输入 × 权重ᵀ），输入就是它的参数 mat1。
    """
    layer, x = nn.Linear(8, 3), torch.randn(4, 8)
    with RecordOps() as recorder:
        layer(x)
    addmm = [args for func, args in recorder.calls if func is torch.ops.aten.addmm.default]
    assert len(addmm) == 1
    schema = torch.ops.aten.addmm.default._schema
    assert [a.name for a in schema.arguments[:3]] == ["self", "mat1", "mat2"]
    bias, mat1, mat2 = addmm[0][:3]
    assert mat1.data_ptr() == x.data_ptr()  # mat1 is the layer's input
    assert bias.data_ptr() == layer.bias.data_ptr() and mat2.data_ptr() == layer.weight.data_ptr()  # weight^T


def test_addmm_with_a_cpu_input_and_device_weights_raises_the_same_device_check_naming_mat1():
    """The CUDA addmm kernel given a CPU mat1 raises '... but got mat1 is on cpu ... wrapper_CUDA_addmm' (2.8+).

    zh: CUDA 的 addmm 内核收到 CPU 上的 mat1 时抛出 '... but got mat1 is on cpu ... wrapper_CUDA_addmm'（2.8 起）。
    """
    bias, weight_t = torch.randn(3, device=META), torch.randn(8, 3, device=META)
    with pytest.raises(RuntimeError) as caught:
        torch.ops.aten.addmm.default.redispatch(CUDA_ONLY, bias, torch.randn(4, 8), weight_t)
    message = str(caught.value)
    # The version guard the GPU tests use agrees with the wording this torch prints.
    assert NEW_WORDING == ("but got mat1 is on cpu" in message)
    found = match_kind("same_device", message)
    assert found is not None and found.fields["arg"] == "mat1" and found.fields["found"] == "cpu"
    if NEW_WORDING:  # meta stands where a GPU prints cuda:0
        assert message == (
            "Expected all tensors to be on the same device, but got mat1 is on cpu, different from other tensors "
            "on meta (when checking argument in method wrapper_CUDA_addmm)"
        )


def test_a_cpu_layer_fed_a_device_input_also_names_mat1_although_the_input_is_where_it_should_be():
    """A layer left on the CPU fed a GPU input names mat1 too: the argument named is not always the one to move.

    zh: 留在 CPU 上的层收到 GPU 上的输入时同样点名 mat1：被点名的参数不一定就是该移动的那个。
    """
    bias, weight_t = torch.randn(3), torch.randn(8, 3)  # the layer stayed on the CPU
    with pytest.raises(RuntimeError) as caught:
        torch.ops.aten.addmm.default.redispatch(CUDA_ONLY, bias, torch.randn(4, 8, device=META), weight_t)
    message = str(caught.value)
    found = match_kind("same_device", message)
    assert found is not None and found.fields["arg"] == "mat1"
    if NEW_WORDING:
        assert message == (
            "Expected all tensors to be on the same device, but got mat1 is on meta, different from other tensors "
            "on cpu (when checking argument in method wrapper_CUDA_addmm)"
        )


def test_the_version_guard_compares_versions_not_strings():
    """PyTorch versions compare as numbers: 2.14.1 is at least 2.8, though the string "2.14.1" < "2.8".

    zh: PyTorch 版本按数值比较：2.14.1 不低于 2.8，尽管作为字符串 "2.14.1" < "2.8"。
    """
    assert TorchVersion("2.14.1") >= (2, 8) and not TorchVersion("2.7.1") >= (2, 8)
    assert "2.14.1" < "2.8"  # why a string comparison skipped the exact-wording check on new versions
    assert NEW_WORDING == (TorchVersion(torch.__version__) >= "2.8")


def test_the_courses_to_device_keeps_tuples_lists_namedtuples_and_dicts():
    """The course's to_device keeps a tuple a tuple, a list a list, a namedtuple its type, a dict its keys.

    zh: 本课程的 to_device 让元组仍是元组、列表仍是列表，命名元组保持原类型，字典保留原有的键。
    """
    to_device = reference_to_device()
    x, y = torch.randn(4, 3), torch.arange(4)
    pair = to_device((x, y), META)
    assert type(pair) is tuple and all(t.device == META for t in pair)
    items = to_device([x, y], META)
    assert type(items) is list and all(t.device == META for t in items)
    features = to_device(Features(x, y), META)
    assert type(features) is Features and features.dense.device == META and features.flags.device == META
    batch = to_device({"inputs": x, "label": y}, META)
    assert type(batch) is dict and list(batch) == ["inputs", "label"]


def test_the_courses_to_device_leaves_what_is_not_a_tensor_as_it_is():
    """The course's to_device returns numbers, strings and None unchanged (the same objects).

    zh: 本课程的 to_device 原样返回数字、字符串和 None（还是同一个对象）。
    """
    to_device = reference_to_device()
    name, size, nothing = "reading-0", 4, None
    moved = to_device({"name": name, "size": size, "mask": nothing, "names": ["a", "b"]}, META)
    assert moved["name"] is name and moved["size"] is size and moved["mask"] is None
    assert moved["names"] == ["a", "b"]


def test_the_courses_to_device_moves_every_tensor_of_a_nested_batch():
    """The course's to_device moves every tensor of a nested batch, however deep, and keeps the shapes.

    zh: 本课程的 to_device 移动嵌套批次中的每个张量，无论嵌套多深，形状都不变。
    """
    to_device = reference_to_device()
    batch = next(iter(DataLoader(dict_samples(4), batch_size=4)))
    nested = {"batch": batch, "extra": (torch.zeros(2), [torch.ones(1), {"deep": torch.arange(3)}])}
    moved = to_device(nested, META)
    assert all(t.device == META for t in leaves(moved))
    assert [t.shape for t in leaves(moved)] == [t.shape for t in leaves(nested)]
    assert type(moved["batch"]["features"]) is Features and moved["batch"]["name"] == batch["name"]
    assert type(moved["extra"]) is tuple and type(moved["extra"][1]) is list


def test_the_page_and_the_lab_show_the_tested_to_device():
    """The to_device on both pages and in the lab's solution is the code these tests run.

    zh: 中英文页面和实验参考答案里的 to_device，就是这些测试运行的代码。
    """
    for where in ("docs/en/04-batches.md", "docs/zh/04-batches.md", "solutions/source/04-batches.md"):
        text = (ROOT / where).read_text(encoding="utf-8")
        for line in TO_DEVICE_SOLUTION.splitlines():
            code = line.split("  #")[0].strip()  # comments may be translated
            if where.startswith("docs/zh/"):  # and so may the docstring, as the zh lab prints it
                from devicelab.messages import code_in_language

                code = code_in_language(code, "zh")
            assert code in text, (where, line)


def test_an_ordinary_cpu_tensor_is_not_pinned():
    """Tensors made the ordinary way live in pageable memory: is_pinned() is False.

    zh: 用普通方式创建的张量位于可分页内存中：is_pinned() 为 False。
    """
    assert torch.randn(1024, 1024).is_pinned() is False
    assert torch.zeros(3).is_pinned() is False


def test_to_cpu_with_non_blocking_on_a_cpu_tensor_returns_the_same_tensor():
    """tensor.to('cpu', non_blocking=True) on a CPU tensor returns the tensor itself: nothing is copied.

    zh: 对 CPU 张量调用 tensor.to('cpu', non_blocking=True) 返回张量本身，不做任何复制。
    """
    tensor = torch.randn(4)
    assert tensor.to("cpu", non_blocking=True) is tensor
    assert tensor.to(torch.device("cpu"), non_blocking=True) is tensor


@pytest.mark.skipif(has_accelerator(), reason="the claim is about a machine without an accelerator")
def test_pin_memory_without_a_gpu_raises():
    """Without a GPU, tensor.pin_memory() raises (CUDA builds: 'Found no NVIDIA driver on your system').

    zh: 没有 GPU 时，tensor.pin_memory() 抛出异常（CUDA 版：'Found no NVIDIA driver on your system'）。
    """
    with pytest.raises(RuntimeError) as caught:
        torch.zeros(3).pin_memory()
    if torch.version.cuda and not os.path.exists("/proc/driver/nvidia"):  # a CUDA build, no driver
        assert str(caught.value).startswith(
            "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
            "driver from http://www.nvidia.com/Download/index.aspx"
        )


@pytest.mark.skipif(has_accelerator(), reason="the claim is about a machine without an accelerator")
def test_dataloader_pin_memory_without_an_accelerator_warns_and_pins_nothing():
    """Without an accelerator, DataLoader(pin_memory=True) warns and hands out unpinned tensors.

    zh: 没有加速器时，DataLoader(pin_memory=True) 发出警告，给出的张量也没有锁页。
    """
    loader = DataLoader(dict_samples(4), batch_size=2, pin_memory=True)
    with pytest.warns(UserWarning, match=re.escape(NO_ACCELERATOR_WARNING)):
        batch = next(iter(loader))
    assert not any(t.is_pinned() for t in leaves(batch))


# --------------------------------------------------------------------------------------------- GPU


def keep_the_gpu_busy():
    """Queue a long kernel on the current stream: a copy queued after it cannot start before it ends."""
    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep is None:
        pytest.skip("this torch has no torch.cuda._sleep")
    torch.cuda.synchronize()
    sleep(SLEEP_CYCLES)


@pytest.mark.gpu
def test_non_blocking_copy_from_pageable_memory_gives_the_right_values(cuda):
    """tensor.to('cuda', non_blocking=True) from a non-pinned CPU tensor still gives the right values.

    zh: 从未锁页的 CPU 张量调用 tensor.to('cuda', non_blocking=True)，得到的值仍然正确。
    """
    source = torch.randn(1 << 20)
    assert not source.is_pinned()
    copied = source.to(cuda, non_blocking=True)
    assert copied.device.type == "cuda"
    assert torch.equal(copied.cpu(), source)


@pytest.mark.gpu
def test_from_pageable_memory_the_call_returns_only_after_the_source_was_read(cuda):
    """From pageable memory, .to(non_blocking=True) returns only after the source was read: the CPU cannot run ahead.

    zh: 从可分页内存复制时，.to(non_blocking=True) 要等源数据读完才返回：CPU 无法抢先往下执行。
    """
    source = torch.full((1 << 20,), 1.0)
    keep_the_gpu_busy()
    copied = source.to(cuda, non_blocking=True)
    source.fill_(2.0)  # as soon as the call returns, the CPU changes its tensor
    torch.cuda.synchronize()
    assert torch.equal(copied.cpu(), torch.full((1 << 20,), 1.0))  # the GPU got the values of the call


@pytest.mark.gpu
def test_from_pageable_memory_the_call_also_waits_for_the_work_queued_before_it(cuda):
    """From pageable memory, .to(non_blocking=True) of 4 MB returns only after the work queued before it has run.

    zh: 从可分页内存复制 4 MB 时，.to(non_blocking=True) 要等排在它前面的工作执行完才返回。
    """
    source = torch.full((1 << 20,), 1.0)  # 4 MB: small copies may be handled differently by the driver
    keep_the_gpu_busy()
    copied = source.to(cuda, non_blocking=True)
    assert torch.cuda.current_stream().query()  # the long kernel queued before the copy has finished
    assert torch.equal(copied.cpu(), source)


@pytest.mark.gpu
def test_from_pinned_memory_the_call_returns_before_the_copy_and_later_work_sees_the_copy(cuda):
    """From pinned memory, .to(non_blocking=True) returns before the copy ran; a change made right after may arrive.

    zh: 从锁页内存复制时，.to(non_blocking=True) 在复制执行前就返回；紧接着对源张量的修改可能被复制过去。
    """
    pinned = torch.full((1 << 20,), 1.0).pin_memory()
    keep_the_gpu_busy()
    copied = pinned.to(cuda, non_blocking=True)
    assert not torch.cuda.current_stream().query()  # returned at once: the GPU is still busy
    doubled = copied * 2  # queued on the GPU after the copy
    pinned.fill_(3.0)  # the GPU is kept busy, so the copy has not read its source yet: the new values arrive
    torch.cuda.synchronize()
    assert torch.equal(copied.cpu(), torch.full((1 << 20,), 3.0))
    assert torch.equal(doubled.cpu(), torch.full((1 << 20,), 6.0))


@pytest.mark.gpu
@pytest.mark.parametrize("pinned", [False, True], ids=["pageable", "pinned"])
def test_without_non_blocking_the_call_returns_once_the_copy_is_done(cuda, pinned):
    """.to('cuda') without non_blocking returns only when the copy is done, from pageable and pinned memory.

    zh: 不加 non_blocking 的 .to('cuda') 要等复制完成才返回，无论源在可分页内存还是锁页内存。
    """
    source = torch.full((1 << 20,), 1.0)
    source = source.pin_memory() if pinned else source
    keep_the_gpu_busy()
    copied = source.to(cuda)
    assert torch.cuda.current_stream().query()  # everything queued before, and the copy, has finished
    source.fill_(2.0)
    assert torch.equal(copied.cpu(), torch.full((1 << 20,), 1.0))


@pytest.mark.gpu
def test_pin_memory_returns_a_pinned_copy_and_leaves_the_original_pageable(cuda):
    """tensor.pin_memory() returns a pinned copy with the same values; the original stays pageable.

    zh: tensor.pin_memory() 返回一个值相同的锁页副本；原张量仍在可分页内存中。
    """
    source = torch.randn(1000)
    pinned = source.pin_memory()
    assert pinned.is_pinned() and not source.is_pinned()
    assert pinned.data_ptr() != source.data_ptr()
    assert torch.equal(pinned, source)


@pytest.mark.gpu
def test_dataloader_pin_memory_with_a_gpu_pins_every_tensor_inside_dicts_and_namedtuples(cuda):
    """With a CUDA GPU, DataLoader(pin_memory=True) hands out batches whose tensors are all pinned, nested too.

    zh: 有 CUDA GPU 时，DataLoader(pin_memory=True) 给出的批次中所有张量都已锁页，嵌套的也不例外。
    """
    batch = next(iter(DataLoader(dict_samples(4), batch_size=4, pin_memory=True)))
    assert type(batch["features"]) is Features
    assert len(leaves(batch)) == 3 and all(t.is_pinned() for t in leaves(batch))


@pytest.mark.gpu
def test_a_cuda_model_fed_a_half_moved_nested_batch_raises_the_addmm_check_naming_mat1(cuda):
    """A CUDA model fed a batch moved only at its top level raises the same-device check of addmm naming mat1.

    zh: CUDA 上的模型收到只移动了最外层的批次时，抛出 addmm 的同设备检查，点名 mat1。
    """
    layer = nn.Linear(8, 3).to(cuda)
    batch = next(iter(DataLoader(dict_samples(4), batch_size=4)))
    half = {key: value.to(cuda) if torch.is_tensor(value) else value for key, value in batch.items()}
    with pytest.raises(RuntimeError) as caught:
        layer(half["features"].dense)
    message = str(caught.value)
    found = match_kind("same_device", message)
    assert found is not None and found.fields.get("arg") == "mat1" and "addmm" in found.fields.get("op", "")
    if NEW_WORDING:
        assert message == (
            "Expected all tensors to be on the same device, but got mat1 is on cpu, different from other "
            "tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)"
        )
    moved = reference_to_device()(batch, cuda)  # moved whole, the same batch runs
    assert layer(moved["features"].dense).is_cuda
