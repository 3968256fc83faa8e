"""Chapter 04: moving whole batches — a recursive to_device, a device-aware loader wrapper, asynchronous copies."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Iterator

import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset

from .. import messages
from ..checks import NOT_ATTEMPTED, Blank, Exercise, Verdict, bounded, correct, incorrect
from ..devices import same_device
from ..spies import MoveRecorder

# Where the checks move batches: the meta device exists on every machine, and a move there is a real
# device move (a tensor left behind stays on the CPU), so no GPU is needed to see a tensor left behind.
# Meta tensors hold no values, so each check also runs the learner's code towards the lab's own device
# and compares the values there.
TARGET = torch.device("meta")
SECONDS = 10.0  # the checks below need well under a second; more means the learner's code loops

Pair = namedtuple("Pair", ["inputs", "tag"])

# The ways a moved batch can differ from the batch it came from (message keys ch04.ex1.* and ch04.ex2.*).
DIFFERENCES = ("container", "namedtuple", "length", "keys", "non_tensor", "not_tensor", "changed", "values",
               "left_behind")


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
    text = repr(obj)
    return text if len(text) <= 60 else text[:57] + "..."


def asynchronous_copy(source: torch.Tensor, device: torch.device | str) -> bool | None:
    """Does `source.to(device, non_blocking=True)` return before the copy has read `source`? None: not covered."""
    device = torch.device(device)
    if source.device.type == "cpu" and device.type == "cpu":
        return False  # .to() returns the very same tensor: there is no copy at all
    if source.device.type == "cpu" and device.type == "cuda":
        # From pageable memory the call returns only once the source has been read (NVIDIA documents that
        # the driver stages pageable memory through pinned memory of its own); from pinned memory at once.
        return bool(source.is_pinned())
    return None  # other directions and devices (MPS, GPU to CPU) are not what this chapter teaches


def _type_name(obj: object) -> str:
    return type(obj).__name__


def _same_values(given: torch.Tensor, got: torch.Tensor) -> bool:
    try:
        return bool(torch.equal(got.detach().to("cpu"), given.detach().to("cpu")))
    except Exception:  # noqa: BLE001 - a tensor whose values cannot be read back is not the same tensor
        return False


def compare(
    given: object, got: object, path: str, device: torch.device, values: bool = False
) -> tuple[str, dict[str, object]] | None:
    """The first way `got` is not `given` moved to `device` (a message key and its values), or None.

    With `values`, tensors must also hold the same values (meta tensors hold none: compare them without).
    """
    if isinstance(given, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return "not_tensor", {"path": path, "got": _type_name(got)}
        if not same_device(got.device, device):
            return "left_behind", {"path": path, "found": got.device, "device": device}
        if got.shape != given.shape or got.dtype != given.dtype:
            return "changed", {"path": path}
        if values and not _same_values(given, got):
            return "values", {"path": path}
        return None
    if isinstance(given, dict):
        if not isinstance(got, dict):
            return "container", {"path": path, "want": _type_name(given), "got": _type_name(got)}
        missing = [key for key in given if key not in got]
        if missing:
            return "keys", {"path": path, "missing": ", ".join(repr(key) for key in missing)}
        for key in given:
            found = compare(given[key], got[key], f"{path}[{key!r}]", device, values)
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
        return None if same else ("non_tensor", {"path": path, "want": describe(given), "got": describe(got)})
    for where, a, b in items:
        found = compare(a, b, where, device, values)
        if found:
            return found
    return None


def _ex1_batches() -> list[object]:
    # Fresh batches, simplest first: the blog post's helper already fails the first one. Values are fixed
    # (not random) so that a tensor replaced by another one cannot match by chance.
    x, y = torch.arange(12, dtype=torch.float32).reshape(4, 3) + 0.5, torch.arange(4)
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
    seconds = SECONDS

    def judge(self, to_device: object) -> Verdict:
        if not callable(to_device):
            return incorrect("ch04.ex1.not_function")
        # Towards meta: every tensor must move. Towards the lab's device: every value must arrive.
        blocking = False
        for device, values in ((TARGET, False), (self.device, True)):
            # The reference is a second, identical set of batches: a function that changes its input in
            # place cannot change what it is compared with.
            for batch, reference in zip(_ex1_batches(), _ex1_batches()):
                case = describe(batch)
                moves = MoveRecorder()
                try:
                    with moves:
                        moved = to_device(batch, device)
                except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
                    return _why_it_raised(to_device, reference, device, case, error)
                if isinstance(moved, Blank):
                    return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
                found = compare(reference, moved, "batch", device, values)
                if found:
                    key, params = found
                    return incorrect(f"ch04.ex1.{key}", case=case, **params)
                # Section 7 asks for copies that do not block: each move towards meta is a real copy.
                blocking |= any(not move.non_blocking for move in moves.towards(TARGET))
                blocking |= device == TARGET and not moves.towards(TARGET)
        if blocking:
            return incorrect("ch04.ex1.blocking")
        return correct("ch04.ex1.ok")


def _leaves(batch: object, path: str = "batch") -> Iterator[tuple[str, object]]:
    """Every (path, value) of a batch that is not a container, containers walked as `compare` walks them."""
    if isinstance(batch, dict):
        for key, value in batch.items():
            yield from _leaves(value, f"{path}[{key!r}]")
    elif is_namedtuple(batch):
        for name, value in zip(batch._fields, batch):
            yield from _leaves(value, f"{path}.{name}")
    elif isinstance(batch, (list, tuple)):
        for index, value in enumerate(batch):
            yield from _leaves(value, f"{path}[{index}]")
    else:
        yield path, batch


def _namedtuples(batch: object, path: str = "batch") -> Iterator[tuple[str, object]]:
    """Every (path, namedtuple) of a batch, outermost first."""
    if is_namedtuple(batch):
        yield path, batch
    if isinstance(batch, dict):
        for key, value in batch.items():
            yield from _namedtuples(value, f"{path}[{key!r}]")
    elif isinstance(batch, (list, tuple)):
        names = batch._fields if is_namedtuple(batch) else [f"[{i}]" for i in range(len(batch))]
        for name, value in zip(names, batch):
            yield from _namedtuples(value, f"{path}.{name}" if is_namedtuple(batch) else f"{path}{name}")


def _plain(batch: object) -> object:
    """The batch with every namedtuple replaced by a plain tuple of the same items."""
    if isinstance(batch, dict):
        return {key: _plain(value) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        items = [_plain(item) for item in batch]
        return tuple(items) if isinstance(batch, tuple) else items
    return batch


def _raises(to_device: Callable[..., object], batch: object, device: torch.device, kind: type) -> bool:
    try:
        to_device(batch, device)
    except kind:
        return True
    except Exception:  # noqa: BLE001 - another error is not the one asked about
        return False
    return False


def _why_it_raised(to_device: Callable[..., object], batch: object, device: torch.device, case: str,
                   error: Exception) -> Verdict:
    """What `to_device` got wrong when it raised on `batch`, in a sentence where the error alone does not say it.

    A RecursionError whose walk went into a string (a string's items are strings again); an error that only a
    namedtuple brings on (the same batch with plain tuples moves); otherwise the error itself.
    """
    if isinstance(error, RecursionError):
        if not _raises(to_device, None, device, RecursionError):
            for path, leaf in _leaves(batch):
                if isinstance(leaf, str) and _raises(to_device, leaf, device, RecursionError):
                    return incorrect("ch04.ex1.string_recursion", case=case, path=path, string=repr(leaf))
        return incorrect("ch04.ex1.recursion", case=case)
    found = next(_namedtuples(batch), None)
    if found is not None and not _raises(to_device, _plain(batch), device, Exception):
        path, namedtuple_ = found
        return incorrect("ch04.ex1.namedtuple_raised", case=case, path=path, name=type(namedtuple_).__name__,
                         fields=", ".join(namedtuple_._fields), n=len(namedtuple_._fields))
    return incorrect("ch04.ex1.raised", case=case, error=f"{type(error).__name__}: {error}"[:300])


class _Readings(Dataset):
    """Six samples shaped like the lab's: a dict with a namedtuple of tensors, a label and a name."""

    def __len__(self) -> int:
        return 6

    def __getitem__(self, i: int) -> dict[str, object]:
        inputs = torch.arange(3, dtype=torch.float32) + 10 * i
        return {"features": Pair(inputs, torch.tensor(float(i % 2))), "label": torch.tensor(i), "name": f"s{i}"}


class _CountingLoader(DataLoader):
    """A DataLoader that counts the passes started over it: a wrapper must start one per pass of its own."""

    passes = 0

    def __iter__(self) -> Iterator[object]:
        self.passes += 1
        return super().__iter__()


def _ex2_loaders() -> list[Callable[[], _CountingLoader]]:
    # (inputs, labels) batches of 4, 4 and 2 samples, which the DataLoader hands out as [inputs, labels];
    # then dict batches with a namedtuple and a list of names, like the proof's.
    def pairs() -> _CountingLoader:
        dataset = TensorDataset(torch.arange(30, dtype=torch.float32).reshape(10, 3), torch.arange(10))
        return _CountingLoader(dataset, batch_size=4)

    def readings() -> _CountingLoader:
        return _CountingLoader(_Readings(), batch_size=4)

    return [pairs, readings]


class LoaderWrapper(Exercise):
    """Exercise 2: DeviceLoader(loader, device) hands out every batch moved, a new pass each time, and keeps len()."""

    name = "ex2"
    reads = ("DeviceLoader",)
    hints = ("ch04.ex2.hint1", "ch04.ex2.hint2", "ch04.ex2.hint3")
    solution_key = "ch04.ex2.solution"
    not_attempted_key = "ch04.ex2.todo"
    seconds = SECONDS

    def judge(self, DeviceLoader: object) -> Verdict:  # noqa: N803 - the notebook's name for it
        if not callable(DeviceLoader):
            return incorrect("ch04.ex2.not_callable")
        for make in _ex2_loaders():
            verdict = self._judge_loader(DeviceLoader, make)
            if verdict is not None:
                return verdict
        return correct("ch04.ex2.ok")

    def _judge_loader(
        self, DeviceLoader: Callable[..., object], make: Callable[[], _CountingLoader]  # noqa: N803
    ) -> Verdict | None:
        expected = list(make())
        want = len(expected)
        loader = make()
        try:
            wrapped = DeviceLoader(loader, TARGET)
            passes = loader.passes
            first = bounded(wrapped, want + 1)
        except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
            return incorrect("ch04.ex2.raised", error=f"{type(error).__name__}: {error}"[:300])
        verdict = self._judge_pass(first, expected, TARGET, values=False)
        if verdict is not None:
            return verdict
        if loader.passes - passes != 1:
            return incorrect("ch04.ex2.cached", got=loader.passes - passes)
        try:
            length = len(wrapped)  # type: ignore[arg-type]
        except Exception as error:  # noqa: BLE001 - a generator has no len(); report whatever happened
            return incorrect("ch04.ex2.no_len", error=f"{type(error).__name__}: {error}"[:300])
        if length != want:
            return incorrect("ch04.ex2.wrong_len", got=length, want=want)
        try:
            passes = loader.passes
            second = bounded(wrapped, want + 1)
        except Exception as error:  # noqa: BLE001
            return incorrect("ch04.ex2.raised", error=f"{type(error).__name__}: {error}"[:300])
        if len(second) != want:
            return incorrect("ch04.ex2.one_epoch", got=len(second), want=want)
        if loader.passes - passes != 1:
            return incorrect("ch04.ex2.cached", got=loader.passes - passes)
        verdict = self._judge_pass(second, expected, TARGET, values=False)
        if verdict is not None:
            return verdict
        # Meta tensors hold no values: a last pass towards the lab's own device compares them.
        try:
            here = bounded(DeviceLoader(loader, self.device), want + 1)
        except Exception as error:  # noqa: BLE001
            return incorrect("ch04.ex2.raised", error=f"{type(error).__name__}: {error}"[:300])
        return self._judge_pass(here, expected, self.device, values=True)

    def _judge_pass(
        self, got: list[object], expected: list[object], device: torch.device, values: bool
    ) -> Verdict | None:
        for n, (batch, want) in enumerate(zip(got, expected), start=1):
            if _holds_blank(batch):
                return incorrect("ch04.ex2.blank_batches")
            found = compare(want, batch, "batch", device, values)
            if found:
                key, params = found
                return incorrect(f"ch04.ex2.{key}", n=n, case=describe(want), **params)
        if len(got) > len(expected):
            return incorrect("ch04.ex2.too_many", want=len(expected))
        if len(got) < len(expected):
            return incorrect("ch04.ex2.count", got=len(got), want=len(expected))
        return None


def _holds_blank(batch: object) -> bool:
    if isinstance(batch, Blank):
        return True
    if isinstance(batch, dict):
        return any(_holds_blank(value) for value in batch.values())
    if isinstance(batch, (list, tuple)):
        return any(_holds_blank(item) for item in batch)
    return False


def _is_bool(value: object) -> bool:
    # True and False, and numpy's bool (what `numpy.bool_(False)` or a numpy comparison gives)
    kind = type(value)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool"))


class AsyncCopyQuestion(Exercise):
    """Exercise 3: true or false — does `pageable.to(device, non_blocking=True)` let the CPU run ahead?"""

    name = "ex3"
    reads = ("copy_is_async", "pageable")
    hints = ("ch04.ex3.hint1", "ch04.ex3.hint2", "ch04.ex3.hint3")
    solution_key = "ch04.ex3.solution"
    not_attempted_key = "ch04.ex3.todo"
    seconds = SECONDS

    def judge(self, copy_is_async: object, pageable: object) -> Verdict:
        if not _is_bool(copy_is_async):
            return incorrect("ch04.ex3.not_bool", got=repr(copy_is_async)[:60])
        if not isinstance(pageable, torch.Tensor):
            return incorrect("ch04.ex3.no_tensor")
        if pageable.device.type != "cpu" or pageable.is_pinned():
            # The question is about an ordinary CPU tensor, the one the cell makes.
            return incorrect("ch04.ex3.not_ordinary")
        device = self.device  # the lab's device: a notebook variable could have been rebound
        truth = asynchronous_copy(pageable, device)
        if truth is None:
            return correct("ch04.ex3.other_device", device=device)
        if bool(copy_is_async) != truth:
            return incorrect("ch04.ex3.wrong", device=device)
        if device.type == "cpu":
            return correct("ch04.ex3.ok_no_copy")
        return correct("ch04.ex3.ok_staged")


EXERCISES = [ToDevice, LoaderWrapper, AsyncCopyQuestion]

TO_DEVICE_SOLUTION = '''\
def to_device(batch, device):
    """Move each tensor of a nested batch to `device`; keep container types."""
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


# What a moved batch got wrong, said once for exercise 1 ("on the batch ...") and reused for exercise 2
# ("in batch n ..."): the English entries start with EN_CASE, the Chinese ones with ZH_CASE.
EN_CASE, ZH_CASE = "on the batch {case}, ", "在批次 {case} 上，"
DIFFERENCE_MESSAGES = {
    "container": {
        "en": EN_CASE + "`{path}` was a {want} and came back as a {got}.",
        "zh": ZH_CASE + "`{path}` 原本是 {want}，返回的却是 {got}。",
    },
    "namedtuple": {
        "en": EN_CASE + "`{path}` was the namedtuple {want} and came back as a {got}: `{path}.{field}` would "
        "no longer work.",
        "zh": ZH_CASE + "`{path}` 原本是命名元组 {want}，返回的却是 {got}：`{path}.{field}` 就用不了了。",
    },
    "length": {
        "en": EN_CASE + "`{path}` held {want} items and came back with {got}.",
        "zh": ZH_CASE + "`{path}` 原本有 {want} 个元素，返回时变成了 {got} 个。",
    },
    "keys": {
        "en": EN_CASE + "the keys {missing} of `{path}` are missing from the result: what is not a tensor must "
        "come back too.",
        "zh": ZH_CASE + "结果里少了 `{path}` 的键 {missing}：不是张量的值也要原样返回。",
    },
    "non_tensor": {
        "en": EN_CASE + "`{path}` was {want} and came back as {got}: what is not a tensor should be left as it is.",
        "zh": ZH_CASE + "`{path}` 原本是 {want}，返回的却是 {got}：不是张量的值应当保持原样。",
    },
    "not_tensor": {
        "en": EN_CASE + "`{path}` was a tensor and came back as a {got}.",
        "zh": ZH_CASE + "`{path}` 原本是张量，返回的却是 {got}。",
    },
    "changed": {
        "en": EN_CASE + "the tensor `{path}` came back with another shape or dtype: move it, do not change it.",
        "zh": ZH_CASE + "张量 `{path}` 返回时形状或 dtype 变了：只移动它，不要改动它。",
    },
    "values": {
        "en": EN_CASE + "the tensor `{path}` arrived with other values than it had: move the tensor itself, "
        "do not make a new one.",
        "zh": ZH_CASE + "张量 `{path}` 移过去之后数值变了：要移动张量本身，而不是新建一个张量。",
    },
    "left_behind": {
        "en": EN_CASE + "the tensor `{path}` is still on {found}, not on {device}. (The check asks for "
        "`meta`, a stand-in for your GPU that every machine has, and for this lab's device.)",
        "zh": ZH_CASE + "张量 `{path}` 仍在 {found} 上，而不在 {device} 上。"
        "（检查既会要求移到 `meta`——每台机器都有的设备，在这里代替你的 GPU——"
        "也会要求移到本实验所用的设备。）",
    },
}


def _difference_messages(exercise: str, en_case: str, zh_case: str) -> dict[str, dict[str, str]]:
    entries = {}
    for key, entry in DIFFERENCE_MESSAGES.items():
        entries[f"ch04.{exercise}.{key}"] = {
            "en": en_case + entry["en"][len(EN_CASE):],
            "zh": zh_case + entry["zh"][len(ZH_CASE):],
        }
    return entries


messages.add(_difference_messages("ex1", EN_CASE, ZH_CASE))
messages.add(_difference_messages("ex2", "in batch {n} ({case}), ", "在第 {n} 个批次（{case}）中，"))

messages.add(
    {
        # exercise 1
        "ch04.ex1.todo": {
            "en": "fill in `to_device` (it still returns `____`).",
            "zh": "请补全 `to_device`（它现在还返回 `____`）。",
        },
        "ch04.ex1.not_function": {
            "en": "`to_device` should be a function `to_device(batch, device)`.",
            "zh": "`to_device` 应该是一个函数：`to_device(batch, device)`。",
        },
        "ch04.ex1.raised": {
            "en": "`to_device` raised an error on the batch {case}: {error}",
            "zh": "`to_device` 处理批次 {case} 时报错：{error}",
        },
        "ch04.ex1.namedtuple_raised": {
            "en": "on the batch {case}, `to_device` raised an error on the namedtuple `{path}` (a {name}), yet it "
            "moves the same batch when plain tuples stand in for the namedtuples: a namedtuple is not built like a "
            "tuple or a list, from one iterable; its constructor takes its {n} fields ({fields}) one by one.",
            "zh": "在批次 {case} 上，`to_device` 处理命名元组 `{path}`（一个 {name}）时报错，"
            "可是把其中的命名元组换成普通元组，同一个批次它却能移动：命名元组不像元组或列表那样"
            "由一个可迭代对象构造；它的构造函数要逐个接收它的 {n} 个字段（{fields}）。",
        },
        "ch04.ex1.string_recursion": {
            "en": "on the batch {case}, `to_device` called itself without end (RecursionError) on the string "
            "{string} at `{path}`: the items of a string are strings too, one character long, and each of them is "
            "again a string of one character, so a walk into every sequence never reaches the bottom of a string.",
            "zh": "在批次 {case} 上，`to_device` 处理 `{path}` 处的字符串 {string} 时"
            "无休止地调用自己（RecursionError）："
            "字符串的元素也是字符串，长度为 1，而每个元素本身又是一个长度为 1 的字符串，"
            "所以凡是序列都往里走的遍历，永远走不到字符串的底。",
        },
        "ch04.ex1.recursion": {
            "en": "on the batch {case}, `to_device` called itself without end (RecursionError): some kind of value "
            "never reaches a branch that returns without calling `to_device` again.",
            "zh": "在批次 {case} 上，`to_device` 无休止地调用自己（RecursionError）：有某种值始终走不到"
            "一个不再调用 `to_device` 就返回的分支。",
        },
        "ch04.ex1.blocking": {
            "en": "every tensor arrives, but each copy makes the CPU wait until it is done: this exercise asks for "
            "copies that do not block, so that a batch in pinned memory can travel while the CPU goes on "
            "(section 7).",
            "zh": "每个张量都到了，但每次复制都让 CPU 等到复制完成：本练习要求复制不阻塞，"
            "这样锁页内存里的批次在传输时，CPU 可以接着往下执行（见第 7 节）。",
        },
        "ch04.ex1.ok": {
            "en": "Every tensor moved, with its values; tuples, lists, namedtuples and dicts kept their types; "
            "numbers, strings and None came back unchanged.",
            "zh": "每个张量都连同数值一起移了过去；元组、列表、命名元组和字典都保持了原来的类型；"
            "数字、字符串和 None 原样返回。",
        },
        "ch04.ex1.hint1": {
            "en": "Handle one kind of thing at a time: a tensor (move it); a dict, a namedtuple, a tuple or a "
            "list (rebuild the same type from its moved items, calling `to_device` on each); anything else "
            "(return it as it is).",
            "zh": "按类型逐一处理：张量，移动它；字典、命名元组、元组或列表，对每个元素调用 `to_device`，"
            "再用移动后的元素重建同一类型；其他任何东西，原样返回。",
        },
        "ch04.ex1.hint2": {
            "en": "`type(batch)(items)` rebuilds a list or a tuple of the same type; a namedtuple takes its "
            "items one by one: `type(batch)(*items)`.",
            "zh": "`type(batch)(items)` 可以重建同一类型的列表或元组；命名元组的构造函数要逐个接收字段："
            "`type(batch)(*items)`。",
        },
        "ch04.ex1.hint3": {
            "en": "A skeleton to complete: `if isinstance(batch, torch.Tensor): return batch.to(____)`; `if "
            "isinstance(batch, dict): return {{key: ____ for key, value in batch.items()}}`; a namedtuple "
            "(`isinstance(batch, tuple) and hasattr(batch, \"_fields\")`) before a plain tuple or list; "
            "`return batch` for anything else.",
            "zh": "照这个骨架补全：`if isinstance(batch, torch.Tensor): return batch.to(____)`；`if "
            "isinstance(batch, dict): return {{key: ____ for key, value in "
            "batch.items()}}`；namedtuple（`isinstance(batch, tuple) and hasattr(batch, "
            "\"_fields\")`）要在普通 tuple 和 list 之前判断；其余情况 `return batch`。",
        },
        "ch04.ex1.solution": _both(TO_DEVICE_SOLUTION),
        # exercise 2
        "ch04.ex2.todo": {
            "en": "replace `DeviceLoader = ____` with your wrapper.",
            "zh": "请把 `DeviceLoader = ____` 换成你写的包装器。",
        },
        "ch04.ex2.not_callable": {
            "en": "`DeviceLoader` should be a class used as `DeviceLoader(loader, device)`.",
            "zh": "`DeviceLoader` 应该是一个类，用法是 `DeviceLoader(loader, device)`。",
        },
        "ch04.ex2.raised": {
            "en": "wrapping a DataLoader and going through it raised an error: {error}. (The check wraps loaders "
            "of [inputs, labels] lists and of dicts that hold a namedtuple and a list of names, like the lab's.)",
            "zh": "包装一个 DataLoader 并遍历它时报错：{error}。（检查包装的 loader 有两种："
            "一种给出 [inputs, labels] 列表，另一种和本实验一样，给出装着命名元组和名字列表的字典。）",
        },
        "ch04.ex2.blank_batches": {
            "en": "the wrapper hands out `____`: finish `to_device` (exercise 1) first.",
            "zh": "包装器给出的是 `____`：请先完成 `to_device`（练习 1）。",
        },
        "ch04.ex2.count": {
            "en": "a pass over the wrapper gave {got} batches, but the loader has {want}.",
            "zh": "遍历一遍包装器只得到 {got} 个批次，而 loader 有 {want} 个。",
        },
        "ch04.ex2.too_many": {
            "en": "a pass over the wrapper gave more than {want} batches, but the loader has {want}: a pass over "
            "the wrapper should end when the loader's pass ends.",
            "zh": "遍历一遍包装器得到的批次多于 {want} 个，而 loader 只有 {want} 个：loader 遍历完，"
            "包装器的这一遍也应当结束。",
        },
        "ch04.ex2.cached": {
            "en": "one pass over the wrapper started {got} passes over the loader instead of one. Each epoch must "
            "hand out the batches of a new pass over the loader: that is where a DataLoader reshuffles and "
            "reads the data again.",
            "zh": "遍历一遍包装器时，loader 被从头遍历了 {got} 次，而不是 1 次。"
            "每个轮次都必须交出 loader 新一遍遍历的批次："
            "DataLoader 正是在新的一遍里重新打乱顺序、重新读取数据的。",
        },
        "ch04.ex2.no_len": {
            "en": "`len(DeviceLoader(loader, device))` fails ({error}); training loops use it, for example to "
            "average the loss over an epoch.",
            "zh": "`len(DeviceLoader(loader, device))` 出错了（{error}）；训练循环会用到它，"
            "比如计算一个轮次的平均损失。",
        },
        "ch04.ex2.wrong_len": {
            "en": "`len()` of the wrapper is {got}, but the loader has {want} batches.",
            "zh": "包装器的 `len()` 是 {got}，而 loader 有 {want} 个批次。",
        },
        "ch04.ex2.one_epoch": {
            "en": "the second pass over the same wrapper gave {got} batches instead of {want}: every pass "
            "(every epoch) must start a new pass over the loader.",
            "zh": "第二次遍历同一个包装器得到 {got} 个批次，而不是 {want} 个：每次遍历"
            "（每个轮次）都必须重新遍历一遍 loader。",
        },
        "ch04.ex2.ok": {
            "en": "Every batch comes out moved, whole and with its values, pass after pass, and `len()` is the "
            "loader's.",
            "zh": "每个批次都完整地、连同数值一起被移了过去，每个轮次都是如此，而且 `len()` 与 loader 一致。",
        },
        "ch04.ex2.hint1": {
            "en": "Write a class with `__init__(self, loader, device)`, `__iter__` and `__len__`; the blog post's "
            "`DeviceDataLoader` has this shape.",
            "zh": "写一个类，包含 `__init__(self, loader, device)`、`__iter__` 和 `__len__`；那篇博客里的 "
            "`DeviceDataLoader` 就是这种结构。",
        },
        "ch04.ex2.hint2": {
            "en": "`__iter__` can be a generator (a method with `yield`): each call starts a new pass over the "
            "loader. `__len__` gives the number of batches; a bare generator function has no length and is "
            "used up after one pass.",
            "zh": "`__iter__` 可以写成生成器（带 `yield` 的方法）：每调用一次，就重新遍历一遍 "
            "loader。`__len__` 给出批次数；单纯的生成器函数没有长度，而且遍历一遍就用完了。",
        },
        "ch04.ex2.hint3": {
            "en": "`def __iter__(self):` with `for batch in self.loader: yield to_device(____, ____)`, and "
            "`def __len__(self): return len(____)`.",
            "zh": "`def __iter__(self):` 里写 `for batch in self.loader: yield to_device(____, ____)`，再加上 "
            "`def __len__(self): return len(____)`。",
        },
        "ch04.ex2.solution": _both(DEVICE_LOADER_SOLUTION),
        # exercise 3
        "ch04.ex3.todo": {
            "en": "replace `copy_is_async = ____` with True or False.",
            "zh": "请把 `copy_is_async = ____` 换成 True 或 False。",
        },
        "ch04.ex3.not_bool": {
            "en": "answer with True or False (got {got}).",
            "zh": "请用 True 或 False 回答（现在是 {got}）。",
        },
        "ch04.ex3.no_tensor": {
            "en": "`pageable` is no longer the tensor of the cell above: run that cell again.",
            "zh": "`pageable` 已经不是上面那个单元里的张量了：请重新运行那个单元。",
        },
        "ch04.ex3.not_ordinary": {
            "en": "the question is about an ordinary CPU tensor, and `pageable` is no longer one: run the cell as "
            "it was given, with only `____` replaced.",
            "zh": "这道题问的是一个普通的 CPU 张量，而 `pageable` 已经不是了：请按原样运行那个单元，只替换 `____`。",
        },
        "ch04.ex3.wrong": {
            "en": "that is not what happens on this machine. Look at `pageable.device`, at "
            "`pageable.is_pinned()`, and at the device it is copied to ({device}).",
            "zh": "这台机器上并不是这样。看看 `pageable.device`、`pageable.is_pinned()`，以及它被复制到的设备"
            "（{device}）。",
        },
        "ch04.ex3.ok_no_copy": {
            "en": "On the CPU, `pageable.to(device, non_blocking=True)` returns the very same tensor: nothing "
            "is copied, so nothing runs in the background. (On a CUDA GPU the answer is the same, for another "
            "reason: `pageable` is not pinned.)",
            "zh": "设备是 CPU 时，`pageable.to(device, non_blocking=True)` 返回的就是同一个张量：什么都没有复制，"
            "也就没有任何东西在后台运行。（换成 CUDA GPU，答案不变，但原因不同：`pageable` 不在锁页内存中。）",
        },
        "ch04.ex3.ok_staged": {
            "en": "`pageable` is not pinned, so the call returns only after your tensor has been read (NVIDIA "
            "documents that the driver first stages pageable memory in pinned memory of its own). "
            "`non_blocking=True` does not let the CPU go on before that.",
            "zh": "`pageable` 不在锁页内存中，所以要等你的张量被读完，这个调用才返回（NVIDIA 的文档说明，"
            "驱动会先把可分页内存暂存到它自己的锁页内存里）。`non_blocking=True` 并不能让 CPU 在此之前继续往下执行。",
        },
        "ch04.ex3.other_device": {
            "en": "This question is about copies to a CUDA GPU; on {device} either answer is accepted here.",
            "zh": "这道题讲的是复制到 CUDA GPU 的情形；在 {device} 上，两种回答都算对。",
        },
        "ch04.ex3.hint1": {
            "en": "Where does `pageable` live, and is its memory pinned? `pageable.is_pinned()` tells. And where "
            "is it copied to?",
            "zh": "`pageable` 在哪个设备上？它在锁页内存中吗？`pageable.is_pinned()` 会告诉你。它又被复制到了哪里？",
        },
        "ch04.ex3.hint2": {
            "en": "A copy to a CUDA GPU runs while the CPU goes on only from pinned (page-locked) memory; from "
            "ordinary, pageable memory the call returns only after your tensor has been read. On the CPU, "
            "`.to(\"cpu\")` copies nothing at all.",
            "zh": "只有从锁页（pinned）内存复制到 CUDA GPU 时，复制才会在 CPU 继续执行的同时进行；"
            "从普通的可分页内存复制时，"
            "要等你的张量被读完，调用才返回。设备是 CPU 时，`.to(\"cpu\")` 根本不复制。",
        },
        "ch04.ex3.hint3": {
            "en": "`copy_is_async = ____`: `True` only when the tensor is pinned and the copy goes to a CUDA "
            "GPU. What did `pageable.is_pinned()` say, and where is the copy going on this machine?",
            "zh": "`copy_is_async = ____`：只有张量在锁页内存里、而且复制目标是 CUDA GPU 时才是 "
            "`True`。`pageable.is_pinned()` 说了什么？在这台机器上，复制又是去往哪里？",
        },
        "ch04.ex3.solution": _both("copy_is_async = False"),
    }
)
