"""Chapter 04: moving whole batches — a recursive to_device, a device-aware loader wrapper, asynchronous copies."""

from __future__ import annotations

from collections import namedtuple

import torch
from torch.utils.data import DataLoader, TensorDataset

from .. import messages
from ..checks import NOT_ATTEMPTED, Blank, Exercise, Verdict, correct, incorrect
from ..devices import same_device

# Where the checks move batches: the meta device exists on every machine, and a move there is a real
# device move (a tensor left behind stays on the CPU), so no GPU is needed to judge the learner's code.
TARGET = torch.device("meta")

Pair = namedtuple("Pair", ["inputs", "tag"])


def is_namedtuple(obj: object) -> bool:
    """True for an instance of a class made by collections.namedtuple (or typing.NamedTuple)."""
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def describe(obj: object) -> str:
    """A short picture of a batch for messages: tensors shown as `tensor`, other leaves as their repr."""
    if isinstance(obj, torch.Tensor):
        return "tensor"
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{key!r}: {describe(value)}" for key, value in obj.items()) + "}"
    if is_namedtuple(obj):
        fields = ", ".join(f"{name}={describe(value)}" for name, value in zip(obj._fields, obj))
        return f"{type(obj).__name__}({fields})"
    if isinstance(obj, tuple):
        return "(" + ", ".join(describe(item) for item in obj) + ("," if len(obj) == 1 else "") + ")"
    if isinstance(obj, list):
        return "[" + ", ".join(describe(item) for item in obj) + "]"
    return repr(obj)


def asynchronous_copy(source: torch.Tensor, device: torch.device | str) -> bool | None:
    """Does `source.to(device, non_blocking=True)` return before the copy has read `source`? None: not covered."""
    device = torch.device(device)
    if source.device.type == "cpu" and device.type == "cpu":
        return False  # .to() returns the very same tensor: there is no copy at all
    if source.device.type == "cpu" and device.type == "cuda":
        return bool(source.is_pinned())  # from pageable memory the driver stages the data before returning
    return None  # other directions and devices (MPS, GPU to CPU) are not what this chapter teaches


def _type_name(obj: object) -> str:
    return type(obj).__name__


def compare(given: object, got: object, path: str, device: torch.device) -> tuple[str, dict[str, object]] | None:
    """The first way `got` is not `given` moved to `device` (a message key and its values), or None."""
    if isinstance(given, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return "not_tensor", {"path": path, "got": _type_name(got)}
        if not same_device(got.device, device):
            return "left_behind", {"path": path, "found": got.device, "device": device}
        if got.shape != given.shape or got.dtype != given.dtype:
            return "changed", {"path": path}
        return None
    if isinstance(given, dict):
        if not isinstance(got, dict):
            return "container", {"path": path, "want": _type_name(given), "got": _type_name(got)}
        missing = [key for key in given if key not in got]
        if missing:
            return "keys", {"path": path, "missing": ", ".join(repr(key) for key in missing)}
        for key in given:
            found = compare(given[key], got[key], f"{path}[{key!r}]", device)
            if found:
                return found
        return None
    if is_namedtuple(given):
        if type(got) is not type(given):
            return "namedtuple", {"path": path, "want": _type_name(given), "got": _type_name(got),
                                  "field": given._fields[0]}
        items = [(f"{path}.{name}", a, b) for name, a, b in zip(given._fields, given, got)]
    elif isinstance(given, (list, tuple)):
        if type(got) is not type(given):
            return "container", {"path": path, "want": _type_name(given), "got": _type_name(got)}
        if len(got) != len(given):
            return "length", {"path": path, "want": len(given), "got": len(got)}
        items = [(f"{path}[{i}]", a, b) for i, (a, b) in enumerate(zip(given, got))]
    else:
        if got is given:
            return None
        try:
            same = type(got) is type(given) and bool(got == given)
        except Exception:  # noqa: BLE001 - an odd object that cannot be compared is not the same
            same = False
        return None if same else ("non_tensor", {"path": path, "want": repr(given), "got": describe(got)})
    for where, a, b in items:
        found = compare(a, b, where, device)
        if found:
            return found
    return None


def _ex1_batches() -> list[object]:
    # Fresh batches, simplest first: the seed's helper already fails the first one.
    x, y = torch.randn(4, 3), torch.arange(4)
    return [
        (x, y),
        Pair(x, "train"),
        {"inputs": x, "size": 4, "name": "b0", "mask": None},
        [x, 4, "b0"],
        {"text": (x, [y, {"ids": y}]), "extra": {"pair": Pair(y, None), "names": ("a", "b")}},
        x,
    ]


class ToDevice(Exercise):
    """Exercise 1: a recursive to_device that keeps every container's type and leaves non-tensors alone."""

    name = "ex1"
    reads = ("to_device",)
    hints = ("ch04.ex1.hint1", "ch04.ex1.hint2", "ch04.ex1.hint3")
    solution_key = "ch04.ex1.solution"
    not_attempted_key = "ch04.ex1.todo"

    def judge(self, to_device: object) -> Verdict:
        if not callable(to_device):
            return incorrect("ch04.ex1.not_function")
        # The reference is a second, identical set of batches: a function that changes its input in place
        # cannot change what it is compared with.
        for batch, reference in zip(_ex1_batches(), _ex1_batches()):
            case = describe(batch)
            try:
                moved = to_device(batch, TARGET)
            except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
                return incorrect("ch04.ex1.raised", case=case, error=f"{type(error).__name__}: {error}")
            if isinstance(moved, Blank):
                return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
            found = compare(reference, moved, "batch", TARGET)
            if found:
                key, params = found
                return incorrect(f"ch04.ex1.{key}", case=case, **params)
        return correct("ch04.ex1.ok", device=TARGET)


def _ex2_loader() -> DataLoader:
    # (inputs, labels) batches of 4, 4 and 2 samples; the DataLoader hands them out as [inputs, labels].
    dataset = TensorDataset(torch.randn(10, 3), torch.arange(10))
    return DataLoader(dataset, batch_size=4)


class LoaderWrapper(Exercise):
    """Exercise 2: DeviceLoader(loader, device) hands out every batch moved, pass after pass, and keeps len()."""

    name = "ex2"
    reads = ("DeviceLoader",)
    hints = ("ch04.ex2.hint1", "ch04.ex2.hint2", "ch04.ex2.hint3")
    solution_key = "ch04.ex2.solution"
    not_attempted_key = "ch04.ex2.todo"
    parts = ("inputs", "labels")

    def judge(self, DeviceLoader: object) -> Verdict:  # noqa: N803 - the notebook's name for it
        if not callable(DeviceLoader):
            return incorrect("ch04.ex2.not_callable")
        loader = _ex2_loader()
        expected = list(loader)
        try:
            wrapped = DeviceLoader(loader, TARGET)
            first_pass = list(wrapped)
        except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
            return incorrect("ch04.ex2.raised", error=f"{type(error).__name__}: {error}")
        for n, (batch, want) in enumerate(zip(first_pass, expected), start=1):
            verdict = self._judge_batch(n, batch, want)
            if verdict is not None:
                return verdict
        if len(first_pass) != len(expected):
            return incorrect("ch04.ex2.count", got=len(first_pass), want=len(expected))
        try:
            length = len(wrapped)
        except Exception as error:  # noqa: BLE001 - a generator has no len(); report whatever happened
            return incorrect("ch04.ex2.no_len", error=f"{type(error).__name__}: {error}")
        if length != len(expected):
            return incorrect("ch04.ex2.wrong_len", got=length, want=len(expected))
        try:
            second_pass = sum(1 for _ in wrapped)
        except Exception as error:  # noqa: BLE001
            return incorrect("ch04.ex2.raised", error=f"{type(error).__name__}: {error}")
        if second_pass != len(expected):
            return incorrect("ch04.ex2.one_epoch", got=second_pass, want=len(expected))
        return correct("ch04.ex2.ok", device=TARGET)

    def _judge_batch(self, n: int, batch: object, want: list[torch.Tensor]) -> Verdict | None:
        if isinstance(batch, Blank) or (isinstance(batch, (list, tuple)) and any(isinstance(b, Blank) for b in batch)):
            return incorrect("ch04.ex2.blank_batches")
        if not isinstance(batch, (list, tuple)) or len(batch) != 2 or not all(
            isinstance(part, torch.Tensor) for part in batch
        ):
            return incorrect("ch04.ex2.not_pair", n=n, got=describe(batch))
        if [tuple(part.shape) for part in batch] != [tuple(part.shape) for part in want]:
            return incorrect(
                "ch04.ex2.other_batches",
                n=n,
                got=[tuple(p.shape) for p in batch],
                want=[tuple(p.shape) for p in want],
            )
        for i, part in enumerate(batch):
            if not same_device(part.device, TARGET):
                return incorrect("ch04.ex2.left_behind", n=n, i=i, what=self.parts[i], found=part.device,
                                 device=TARGET)
        return None


class AsyncCopyQuestion(Exercise):
    """Exercise 3: true or false — does `pageable.to(device, non_blocking=True)` let the CPU run ahead?"""

    name = "ex3"
    reads = ("copy_is_async", "pageable", "device")
    hints = ("ch04.ex3.hint1", "ch04.ex3.hint2")
    solution_key = "ch04.ex3.solution"
    not_attempted_key = "ch04.ex3.todo"

    def judge(self, copy_is_async: object, pageable: object, device: torch.device) -> Verdict:
        if not isinstance(copy_is_async, bool):
            return incorrect("ch04.ex3.not_bool", got=repr(copy_is_async))
        if not isinstance(pageable, torch.Tensor):
            return incorrect("ch04.ex3.no_tensor")
        truth = asynchronous_copy(pageable, device)
        if truth is None:
            return correct("ch04.ex3.other_device", device=device)
        if copy_is_async != truth:
            return incorrect("ch04.ex3.wrong", device=device)
        if truth:
            return correct("ch04.ex3.ok_async")
        if torch.device(device).type == "cpu":
            return correct("ch04.ex3.ok_no_copy")
        return correct("ch04.ex3.ok_staged")


EXERCISES = [ToDevice, LoaderWrapper, AsyncCopyQuestion]

TO_DEVICE_SOLUTION = '''\
def to_device(batch, device):
    """Move every tensor in a (nested) batch to `device`; keep tuples, lists, namedtuples and dicts as they are."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # a namedtuple
        return type(batch)(*(to_device(item, device) for item in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(item, device) for item in batch)
    return batch  # numbers, strings, None: nothing to move'''

DEVICE_LOADER_SOLUTION = '''\
class DeviceLoader:
    """Wrap a DataLoader: every batch comes out already on `device`."""

    def __init__(self, loader, device):
        self.loader = loader
        self.device = device

    def __iter__(self):
        for batch in self.loader:
            yield to_device(batch, self.device)

    def __len__(self):
        return len(self.loader)'''


def _both(code: str) -> dict[str, str]:
    # Catalogue entries are format strings: a dict comprehension's braces must be doubled.
    escaped = code.replace("{", "{{").replace("}", "}}")
    return {"en": escaped, "zh": escaped}


messages.add(
    {
        # exercise 1
        "ch04.ex1.todo": {
            "en": "fill in `to_device` (it still returns `____`).",
            "zh": "补全 `to_device`（它现在还返回 `____`）。",
        },
        "ch04.ex1.not_function": {
            "en": "`to_device` should be a function `to_device(batch, device)`.",
            "zh": "`to_device` 应该是一个函数 `to_device(batch, device)`。",
        },
        "ch04.ex1.raised": {
            "en": "`to_device` raised an error on the batch {case}: {error}",
            "zh": "`to_device` 在批次 {case} 上抛出了错误：{error}",
        },
        "ch04.ex1.container": {
            "en": "on the batch {case}, `{path}` was a {want} and came back as a {got}.",
            "zh": "在批次 {case} 上，`{path}` 原本是 {want}，返回时变成了 {got}。",
        },
        "ch04.ex1.namedtuple": {
            "en": "on the batch {case}, `{path}` was the namedtuple {want} and came back as a {got}: "
            "`{path}.{field}` would no longer work.",
            "zh": "在批次 {case} 上，`{path}` 原本是命名元组 {want}，返回时变成了 {got}："
            "`{path}.{field}` 就不能再用了。",
        },
        "ch04.ex1.length": {
            "en": "on the batch {case}, `{path}` held {want} items and came back with {got}.",
            "zh": "在批次 {case} 上，`{path}` 原本有 {want} 个元素，返回时只剩 {got} 个。",
        },
        "ch04.ex1.keys": {
            "en": "on the batch {case}, the keys {missing} of `{path}` are missing from the result: "
            "what is not a tensor must come back too.",
            "zh": "在批次 {case} 上，结果里缺少 `{path}` 的键 {missing}：不是张量的东西也要原样返回。",
        },
        "ch04.ex1.non_tensor": {
            "en": "on the batch {case}, `{path}` was {want} and came back as {got}: what is not a tensor "
            "should be left as it is.",
            "zh": "在批次 {case} 上，`{path}` 原本是 {want}，返回时变成了 {got}：不是张量的东西应当保持原样。",
        },
        "ch04.ex1.not_tensor": {
            "en": "on the batch {case}, `{path}` was a tensor and came back as a {got}.",
            "zh": "在批次 {case} 上，`{path}` 原本是张量，返回时变成了 {got}。",
        },
        "ch04.ex1.changed": {
            "en": "on the batch {case}, the tensor `{path}` came back with another shape or dtype: "
            "move it, do not change it.",
            "zh": "在批次 {case} 上，张量 `{path}` 返回时形状或数据类型变了：只移动它，不要改变它。",
        },
        "ch04.ex1.left_behind": {
            "en": "on the batch {case}, the tensor `{path}` is still on {found}, not on {device}. "
            "(The check moves batches to the `meta` device, which every machine has.)",
            "zh": "在批次 {case} 上，张量 `{path}` 仍在 {found} 上，而不在 {device} 上。"
            "（检查会把批次移到 `meta` 设备，每台机器都有这个设备。）",
        },
        "ch04.ex1.ok": {
            "en": "every tensor moved to {device}; tuples, lists, namedtuples and dicts kept their types; "
            "numbers, strings and None came back unchanged.",
            "zh": "每个张量都移到了 {device}；元组、列表、命名元组和字典都保持了原来的类型；"
            "数字、字符串和 None 原样返回。",
        },
        "ch04.ex1.hint1": {
            "en": "Handle one kind of thing at a time: a tensor (move it); a dict, a namedtuple, a tuple or a "
            "list (rebuild the same type from its moved items, calling `to_device` on each); anything else "
            "(return it as it is).",
            "zh": "一次处理一种东西：张量（移动它）；字典、命名元组、元组或列表（对每个元素调用 `to_device`，"
            "再用移动后的元素重建同一类型）；其他任何东西（原样返回）。",
        },
        "ch04.ex1.hint2": {
            "en": "`type(batch)(items)` rebuilds a list or a tuple of the same type; a namedtuple takes its "
            "items one by one: `type(batch)(*items)`.",
            "zh": "`type(batch)(items)` 能重建同一类型的列表或元组；命名元组要把元素逐个传入：`type(batch)(*items)`。",
        },
        "ch04.ex1.hint3": {
            "en": "A namedtuple is also a tuple: test for it first, for example with "
            "`isinstance(batch, tuple) and hasattr(batch, \"_fields\")`.",
            "zh": "命名元组也是元组：要先判断它，比如用 `isinstance(batch, tuple) and hasattr(batch, \"_fields\")`。",
        },
        "ch04.ex1.solution": _both(TO_DEVICE_SOLUTION),
        # exercise 2
        "ch04.ex2.todo": {
            "en": "replace `DeviceLoader = ____` with your wrapper.",
            "zh": "把 `DeviceLoader = ____` 换成你写的包装器。",
        },
        "ch04.ex2.not_callable": {
            "en": "`DeviceLoader` should be a class (or a function) used as `DeviceLoader(loader, device)`.",
            "zh": "`DeviceLoader` 应该是一个类（或函数），用法是 `DeviceLoader(loader, device)`。",
        },
        "ch04.ex2.raised": {
            "en": "wrapping a DataLoader and iterating over it raised an error: {error}",
            "zh": "包装一个 DataLoader 并遍历它时抛出了错误：{error}",
        },
        "ch04.ex2.blank_batches": {
            "en": "the wrapper hands out `____`: finish `to_device` (exercise 1) first.",
            "zh": "包装器给出的是 `____`：请先完成 `to_device`（练习 1）。",
        },
        "ch04.ex2.not_pair": {
            "en": "batch {n} came out as {got}, but the wrapped loader gives [inputs, labels] pairs: hand out "
            "each batch the loader gives, moved.",
            "zh": "第 {n} 个批次给出的是 {got}，但被包装的 loader 给出的是 [inputs, labels] 对："
            "把 loader 给出的每个批次移动后交出去。",
        },
        "ch04.ex2.other_batches": {
            "en": "batch {n} has the shapes {got}, but the wrapped loader's batch {n} has {want}: wrap the "
            "loader given to `DeviceLoader`, not another one.",
            "zh": "第 {n} 个批次的形状是 {got}，而被包装的 loader 的第 {n} 个批次是 {want}："
            "要包装传给 `DeviceLoader` 的那个 loader，而不是别的。",
        },
        "ch04.ex2.left_behind": {
            "en": "in batch {n}, the {what} (element {i}) are still on {found}, not on {device}. "
            "(The check passes the `meta` device to `DeviceLoader`.)",
            "zh": "在第 {n} 个批次中，{what}（第 {i} 个元素）仍在 {found} 上，而不在 {device} 上。"
            "（检查传给 `DeviceLoader` 的是 `meta` 设备。）",
        },
        "ch04.ex2.count": {
            "en": "a pass over the wrapper gave {got} batches, but the loader has {want}.",
            "zh": "遍历一遍包装器得到 {got} 个批次，但 loader 有 {want} 个。",
        },
        "ch04.ex2.no_len": {
            "en": "`len(DeviceLoader(loader, device))` fails ({error}); training loops use it, for example to "
            "average the loss over an epoch.",
            "zh": "`len(DeviceLoader(loader, device))` 出错了（{error}）；训练循环会用到它，比如求一个轮次的平均损失。",
        },
        "ch04.ex2.wrong_len": {
            "en": "`len()` of the wrapper is {got}, but the loader has {want} batches.",
            "zh": "包装器的 `len()` 是 {got}，但 loader 有 {want} 个批次。",
        },
        "ch04.ex2.one_epoch": {
            "en": "the second pass over the same wrapper gave {got} batches instead of {want}: every pass "
            "(every epoch) must start a new pass over the loader.",
            "zh": "第二次遍历同一个包装器只得到 {got} 个批次，而不是 {want} 个："
            "每次遍历（每个轮次）都必须重新遍历 loader。",
        },
        "ch04.ex2.ok": {
            "en": "every batch comes out on {device}, pass after pass, and `len()` is the loader's.",
            "zh": "每个批次都以 {device} 上的形式交出，每一轮都是如此，而且 `len()` 与 loader 相同。",
        },
        "ch04.ex2.hint1": {
            "en": "Write a class with `__init__(self, loader, device)`, `__iter__` and `__len__`; the seed's "
            "`DeviceDataLoader` has this shape.",
            "zh": "写一个带有 `__init__(self, loader, device)`、`__iter__` 和 `__len__` 的类；"
            "原文的 `DeviceDataLoader` 就是这个结构。",
        },
        "ch04.ex2.hint2": {
            "en": "`__iter__` can be a generator: `for batch in self.loader: yield to_device(batch, self.device)`. "
            "Each call starts a new pass over the loader.",
            "zh": "`__iter__` 可以写成生成器：`for batch in self.loader: yield to_device(batch, self.device)`。"
            "每次调用都会重新遍历 loader。",
        },
        "ch04.ex2.hint3": {
            "en": "`__len__` returns `len(self.loader)`. A bare generator function cannot have a length.",
            "zh": "`__len__` 返回 `len(self.loader)`。单纯的生成器函数是没有长度的。",
        },
        "ch04.ex2.solution": _both(DEVICE_LOADER_SOLUTION),
        # exercise 3
        "ch04.ex3.todo": {
            "en": "replace `copy_is_async = ____` with True or False.",
            "zh": "把 `copy_is_async = ____` 换成 True 或 False。",
        },
        "ch04.ex3.not_bool": {
            "en": "answer with True or False (got {got}).",
            "zh": "请用 True 或 False 回答（现在是 {got}）。",
        },
        "ch04.ex3.no_tensor": {
            "en": "`pageable` is no longer the tensor of the cell above: run that cell again.",
            "zh": "`pageable` 已经不是上面那个单元里的张量了：请重新运行那个单元。",
        },
        "ch04.ex3.wrong": {
            "en": "that is not what happens on this machine. Look at `pageable.device`, at "
            "`pageable.is_pinned()`, and at the device it is copied to ({device}).",
            "zh": "这台机器上并不是这样。看看 `pageable.device`、`pageable.is_pinned()`，"
            "以及它被复制到的设备（{device}）。",
        },
        "ch04.ex3.ok_no_copy": {
            "en": "on the CPU, `pageable.to(device, non_blocking=True)` returns the very same tensor: nothing "
            "is copied, so nothing runs in the background. (On a GPU the answer is the same, for another reason: "
            "`pageable` is not pinned.)",
            "zh": "在 CPU 上，`pageable.to(device, non_blocking=True)` 返回的就是同一个张量：什么都没有复制，"
            "也就没有任何东西在后台运行。（在 GPU 上答案相同，但原因不同：`pageable` 不是锁页内存。）",
        },
        "ch04.ex3.ok_staged": {
            "en": "`pageable` is not pinned: the driver first copies it into pinned memory of its own, and the "
            "call returns only after your tensor has been read. `non_blocking=True` does not let the CPU run "
            "ahead of this copy.",
            "zh": "`pageable` 不是锁页内存：驱动要先把它复制到自己的锁页内存里，等你的张量被读完，这个调用才返回。"
            "`non_blocking=True` 并不能让 CPU 抢在这次复制前面继续运行。",
        },
        "ch04.ex3.ok_async": {
            "en": "`pageable` is pinned here: the call only queues the copy and returns, and the CPU goes on "
            "while the GPU copies.",
            "zh": "这里的 `pageable` 是锁页内存：调用只是把复制排进队列就返回了，GPU 复制的同时 CPU 继续往下运行。",
        },
        "ch04.ex3.other_device": {
            "en": "this question is about copies to a CUDA GPU; on {device} either answer is accepted here.",
            "zh": "这道题讲的是复制到 CUDA GPU 的情形；在 {device} 上，两种回答这里都算对。",
        },
        "ch04.ex3.hint1": {
            "en": "Where does `pageable` live, and is its memory pinned? `pageable.is_pinned()` tells.",
            "zh": "`pageable` 在哪个设备上？它的内存是锁页内存吗？`pageable.is_pinned()` 会告诉你。",
        },
        "ch04.ex3.hint2": {
            "en": "A copy to a CUDA GPU runs while the CPU goes on only from pinned (page-locked) memory. From "
            "ordinary, pageable memory the driver first copies the data into a pinned buffer of its own, and "
            "the call waits for that.",
            "zh": "只有从锁页（pinned）内存复制到 CUDA GPU 时，复制才会在 CPU 继续运行的同时进行。"
            "从普通的可分页内存复制时，驱动要先把数据复制到自己的锁页缓冲区，调用会等这一步完成。",
        },
        "ch04.ex3.solution": _both("copy_is_async = False"),
    }
)
