"""Chapter 05: tensors born inside the model — buffers, tensors made in forward, hidden states, layers in __init__."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from .. import messages
from ..checks import NOT_ATTEMPTED, Blank, Exercise, Verdict, correct, incorrect
from ..checks import short_error as _short
from ..errors import match_kind

# The device that stands in for a GPU: `meta` exists on every machine, `model.to("meta")` really moves
# parameters and buffers there, and a tensor made on the CPU stays on the CPU. Meta tensors hold no values,
# so the checks also run the learner's code on the lab's own device and compare values there.
TARGET = torch.device("meta")
SECONDS = 20.0  # the checks need about a second; more means the learner's code loops
FEATURES, HIDDEN, CLASSES, STEPS = 3, 8, 2, 5
# Ops that may take a CPU tensor beside a tensor on another device on a GPU too: copies, and indexing
# (PyTorch moves CPU indices itself).
MIXING_ALLOWED = ("aten._to_copy", "aten.copy_", "aten.index.Tensor", "aten.index_put_", "aten.lift_fresh")



class MixingSpy(TorchDispatchMode):
    """Records every operation that receives a non-scalar CPU tensor beside a tensor on another device.

    0-dim CPU tensors are left out: PyTorch treats them as scalars on every device (DESIGN §8).
    """

    def __init__(self) -> None:
        super().__init__()
        self.mixed: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204 - torch's protocol
        kwargs = kwargs or {}
        name = str(func.overloadpacket) if not str(func).startswith("aten.") else str(func)
        tensors = [t for t in _flat(args) + _flat(list(kwargs.values())) if isinstance(t, torch.Tensor)]
        devices = {t.device.type for t in tensors}
        cpu_non_scalar = any(t.device.type == "cpu" and t.dim() > 0 for t in tensors)
        if len(devices) > 1 and cpu_non_scalar and not str(func).startswith(MIXING_ALLOWED):
            self.mixed.append(name)
        return func(*args, **kwargs)


def _flat(items: object) -> list[object]:
    if isinstance(items, (list, tuple)):
        return [leaf for item in items for leaf in _flat(item)]
    return [items]


@contextmanager
def modules_called() -> Iterator[list[nn.Module]]:
    """Every nn.Module whose forward runs inside the block (a global forward hook, removed afterwards)."""
    called: list[nn.Module] = []
    handle = nn.modules.module.register_module_forward_hook(lambda module, args, output: called.append(module))
    try:
        yield called
    finally:
        handle.remove()


def probe_on_meta(run: Callable[[], object]) -> tuple[str | None, dict[str, object]]:
    """Run `run` (which works on meta tensors); say what stayed on the CPU: a message key and its values, or None."""
    spy = MixingSpy()
    try:
        with spy:
            result = run()
    except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
        message = str(error)
        if "copy out of meta tensor" in message:
            return "output_on_cpu", {}
        if match_kind("rnn_hidden_device", message) is not None:
            return "hidden_cpu", {"error": message[:200]}
        if "is not on the expected device" in message or "same device" in message:
            return "left_on_cpu", {"error": message[:200]}
        return "meta_raised", {"error": _short(error)}
    if spy.mixed:
        return "left_on_cpu", {"error": f"{spy.mixed[0]} got a CPU tensor beside meta tensors"}
    outputs = [t for t in _flat(result if isinstance(result, (list, tuple)) else [result])
               if isinstance(t, torch.Tensor)]
    if any(t.device.type != TARGET.type for t in outputs):
        return "output_on_cpu", {}
    return None, {}


def stray_tensors(module: nn.Module, limit: int = 1000, off: torch.device | None = None) -> list[str]:
    """Tensors a module (or a submodule) holds outside its parameters and buffers: `.to()` never moves them
    (with `off`: only those that are not on that device)."""
    moved = {id(t) for t in module.parameters()} | {id(t) for t in module.buffers()}
    found: list[str] = []
    for prefix, sub in module.named_modules():
        stack = [(f"{prefix}.{k}" if prefix else k, v) for k, v in vars(sub).items()
                 if k not in ("_parameters", "_buffers", "_modules")]
        while stack and len(found) < limit:
            name, value = stack.pop()
            if isinstance(value, torch.Tensor):
                if id(value) not in moved and (off is None or value.device != off):
                    found.append(name)
            elif isinstance(value, (list, tuple)):
                stack += [(f"{name}[{i}]", v) for i, v in enumerate(value[:limit])]
            elif isinstance(value, dict):
                stack += [(f"{name}[{k!r}]", v) for k, v in list(value.items())[:limit]]
    return sorted(found)


def restored(build: Callable[[torch.Tensor, torch.Tensor], nn.Module], mean: torch.Tensor, std: torch.Tensor,
             x: torch.Tensor) -> list[str]:
    """Which statistics a checkpoint fails to bring back: a module built with other ones, given the first one's
    state_dict, must compute the same output (the proof does exactly that)."""
    missing = []
    torch.manual_seed(0)
    saved = build(mean.clone(), std.clone()).eval()
    want = saved(x)
    for what, other in (("mean", (torch.zeros_like(mean), std.clone())), ("std", (mean.clone(), torch.ones_like(std)))):
        torch.manual_seed(1)
        fresh = build(*other).eval()
        fresh.load_state_dict(saved.state_dict())
        if not torch.allclose(fresh(x), want):
            missing.append(what)
    return missing


# --- exercise 1: Standardize ----------------------------------------------------------------------------


def _stats() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.tensor([1.0, -2.0, 0.5]), torch.tensor([2.0, 0.5, 4.0])


class StandardizeModule(Exercise):
    """Exercise 1: mean and std kept as buffers — moved by .to(), saved in the state_dict, never trained."""

    name = "ex1"
    reads = ("Standardize",)
    hints = ("ch05.ex1.hint1", "ch05.ex1.hint2", "ch05.ex1.hint3")
    solution_key = "ch05.ex1.solution"
    not_attempted_key = "ch05.ex1.todo"
    seconds = SECONDS

    def judge(self, Standardize: object) -> Verdict:  # noqa: N803 - the notebook's name for it
        if not (isinstance(Standardize, type) and issubclass(Standardize, nn.Module)):
            return incorrect("ch05.ex1.not_module")
        mean, std = _stats()
        try:
            module = Standardize(mean.clone(), std.clone())
        except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
            return incorrect("ch05.ex1.raised", error=_short(error))
        trained = [name for name, p in module.named_parameters() if p.requires_grad]
        if trained:
            return incorrect("ch05.ex1.parameter", names=", ".join(trained))
        # Towards meta: every tensor the module holds must move with it.
        try:
            on_meta = Standardize(mean.clone(), std.clone()).to(TARGET)
            on_meta = on_meta if isinstance(on_meta, nn.Module) else None
        except Exception as error:  # noqa: BLE001
            return incorrect("ch05.ex1.raised", error=_short(error))
        strays = stray_tensors(on_meta) if on_meta is not None else []
        if strays:  # whatever forward does towards meta, these stay where they were made
            return incorrect("ch05.ex1.left_on_cpu", error=f"self.{strays[0]} is a plain tensor attribute")
        key, params = probe_on_meta(lambda: on_meta(torch.zeros(4, FEATURES, device=TARGET)))
        if key is not None:
            return incorrect(f"ch05.ex1.{key}", **params)
        state = module.state_dict()
        try:
            lost = restored(Standardize, mean, std, torch.arange(12, dtype=torch.float32).reshape(4, FEATURES))
        except Exception as error:  # noqa: BLE001
            return incorrect("ch05.ex1.raised", error=_short(error))
        if lost:
            return incorrect("ch05.ex1.not_saved", what=lost[0], keys=", ".join(state) or "—")
        # On the lab's device: the values.
        try:
            here = Standardize(mean.clone(), std.clone()).to(self.device)
            x = torch.arange(12, dtype=torch.float32).reshape(4, FEATURES).to(self.device)
            got = here(x)
        except Exception as error:  # noqa: BLE001
            return incorrect("ch05.ex1.raised", error=_short(error))
        if isinstance(got, Blank):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        want = (x.cpu() - mean) / std
        if not isinstance(got, torch.Tensor) or got.shape != want.shape or not torch.allclose(got.cpu(), want):
            return incorrect("ch05.ex1.values")
        return correct("ch05.ex1.ok")


# --- exercise 2: start_state ----------------------------------------------------------------------------


class StartState(Exercise):
    """Exercise 2: start_state(x, hidden_size) — zeros of shape (1, batch, hidden_size) where x is."""

    name = "ex2"
    reads = ("start_state",)
    hints = ("ch05.ex2.hint1", "ch05.ex2.hint2", "ch05.ex2.hint3")
    solution_key = "ch05.ex2.solution"
    not_attempted_key = "ch05.ex2.todo"
    seconds = SECONDS

    def judge(self, start_state: object) -> Verdict:
        if not callable(start_state):
            return incorrect("ch05.ex2.not_function")
        for device in (TARGET, self.device):
            for batch, hidden, dtype in ((4, HIDDEN, torch.float32), (3, 5, torch.float64)):
                x = torch.ones(batch, STEPS, FEATURES, device=device, dtype=dtype)
                try:
                    h0 = start_state(x, hidden)
                except Exception as error:  # noqa: BLE001
                    return incorrect("ch05.ex2.raised", error=_short(error))
                if isinstance(h0, Blank):
                    return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
                if not isinstance(h0, torch.Tensor):
                    return incorrect("ch05.ex2.not_tensor", got=type(h0).__name__)
                if h0.device != x.device:
                    return incorrect("ch05.ex2.device", found=h0.device, want=x.device)
                if tuple(h0.shape) != (1, batch, hidden):
                    return incorrect("ch05.ex2.shape", got=tuple(h0.shape), want=(1, batch, hidden))
                if h0.dtype != x.dtype:
                    return incorrect("ch05.ex2.dtype", got=h0.dtype, want=x.dtype)
                if device.type != "meta" and not bool((h0 == 0).all()):
                    return incorrect("ch05.ex2.values")
                if h0.requires_grad:
                    return incorrect("ch05.ex2.values")
        # It must also be what a GRU accepts on meta, the stand-in for a GPU.
        gru = nn.GRU(FEATURES, HIDDEN, batch_first=True).to(TARGET)
        x = torch.ones(4, STEPS, FEATURES, device=TARGET)
        key, params = probe_on_meta(lambda: gru(x, start_state(x, HIDDEN)))
        if key is not None:
            return incorrect(f"ch05.ex2.{key}", **params)
        return correct("ch05.ex2.ok")


# --- exercise 3: SequenceClassifier -----------------------------------------------------------------------


class Classifier(Exercise):
    """Exercise 3: the whole model — every tensor born where the input is, every layer built in __init__."""

    name = "ex3"
    reads = ("SequenceClassifier",)
    hints = ("ch05.ex3.hint1", "ch05.ex3.hint2", "ch05.ex3.hint3")
    solution_key = "ch05.ex3.solution"
    not_attempted_key = "ch05.ex3.todo"
    seconds = SECONDS

    def judge(self, SequenceClassifier: object) -> Verdict:  # noqa: N803 - the notebook's name for it
        if not (isinstance(SequenceClassifier, type) and issubclass(SequenceClassifier, nn.Module)):
            return incorrect("ch05.ex3.not_module")
        mean, std = _stats()

        def build() -> nn.Module:
            torch.manual_seed(0)
            return SequenceClassifier(mean.clone(), std.clone())

        x = torch.randn(4, STEPS, FEATURES, generator=torch.Generator().manual_seed(1))
        try:
            model = build().to(self.device)
            model.eval()
            # What the model is before forward ever runs: what .to() moves and an optimizer built now trains.
            own = {id(m) for m in model.modules()}
            weights = {id(p) for p in model.parameters()}
            inputs = x.to(self.device)
            with modules_called() as called:
                first = model(inputs)
            second = model(inputs)
        except Exception as error:  # noqa: BLE001
            return incorrect("ch05.ex3.raised", error=_short(error))
        if isinstance(first, Blank):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        if not isinstance(first, torch.Tensor) or tuple(first.shape) != (4, CLASSES):
            got = tuple(first.shape) if isinstance(first, torch.Tensor) else type(first).__name__
            return incorrect("ch05.ex3.shape", got=got, want=(4, CLASSES))
        strangers = sorted({type(m).__name__ for m in called if id(m) not in own})
        strangers += sorted({type(m).__name__ for m in model.modules() if id(m) not in own} - set(strangers))
        if strangers or {id(p) for p in model.parameters()} != weights:
            return incorrect("ch05.ex3.layer_in_forward", names=", ".join(strangers) or "nn.Parameter")
        if not isinstance(second, torch.Tensor) or not torch.equal(first, second):
            return incorrect("ch05.ex3.not_repeatable")
        # A checkpoint must bring the statistics back: the proof loads one into a model built with others.
        try:
            lost = restored(lambda m, s: SequenceClassifier(m, s), mean, std, x)
        except Exception as error:  # noqa: BLE001
            return incorrect("ch05.ex3.raised", error=_short(error))
        if lost:
            return incorrect("ch05.ex3.not_saved", what=lost[0])
        try:
            on_meta = build().to(TARGET)
        except Exception as error:  # noqa: BLE001
            return incorrect("ch05.ex3.raised", error=_short(error))
        strays = stray_tensors(on_meta)
        if strays:  # whatever forward does towards meta, these stay where they were made
            return incorrect("ch05.ex3.left_on_cpu", error=f"self.{strays[0]} is a plain tensor attribute")
        key, params = probe_on_meta(lambda: on_meta(torch.zeros(4, STEPS, FEATURES, device=TARGET)))
        if key is not None:
            return incorrect(f"ch05.ex3.{key}", **params)
        return correct("ch05.ex3.ok")


EXERCISES = [StandardizeModule, StartState, Classifier]

STANDARDIZE_SOLUTION = '''\
class Standardize(nn.Module):
    """(x - mean) / std, with mean and std as buffers: moved by .to(), saved in the state_dict, not trained."""

    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)

    def forward(self, x):
        return (x - self.mean) / self.std'''

START_STATE_SOLUTION = '''\
def start_state(x, hidden_size):
    """A GRU's initial hidden state: zeros of shape (1, batch, hidden_size), on x's device, with x's dtype."""
    return x.new_zeros(1, x.shape[0], hidden_size)'''

CLASSIFIER_SOLUTION = '''\
class SequenceClassifier(nn.Module):
    def __init__(self, mean, std, hidden_size=16, classes=2):
        super().__init__()
        self.standardize = Standardize(mean, std)
        self.gru = nn.GRU(FEATURES + 1, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, classes)  # built once, here: moved by .to(), trained

    def forward(self, x):
        x = self.standardize(x)
        batch, steps, _ = x.shape
        time = torch.arange(steps, device=x.device, dtype=x.dtype) / steps  # born where x is
        x = torch.cat([x, time.expand(batch, steps).unsqueeze(-1)], dim=-1)
        _, last = self.gru(x, start_state(x, self.gru.hidden_size))
        return self.head(last[-1])'''


def _both(code: str) -> dict[str, str]:
    escaped = code.replace("{", "{{").replace("}", "}}")
    return {"en": escaped, "zh": escaped}


_PROBE = {
    "left_on_cpu": {
        "en": "with the model moved to `meta` (the stand-in for a GPU that every machine has), a tensor stayed on "
        "the CPU: {error}. Something inside the module is not moved by `.to()`, or is created without a device.",
        "zh": "把模型移到 `meta`（每台机器都有的设备，在这里代替 GPU）之后，有一个张量留在了 CPU 上：{error}。"
        "模块里有东西不会随 `.to()` 移动，或者创建时没有指定设备。",
    },
    "hidden_cpu": {
        "en": "with the model on `meta` (standing in for a GPU), the GRU got a hidden state on the CPU: {error}. "
        "Create the hidden state where the input is.",
        "zh": "模型在 `meta` 上（代替 GPU）时，GRU 收到的隐藏状态在 CPU 上：{error}。"
        "请在输入所在的设备上创建隐藏状态。",
    },
    "output_on_cpu": {
        "en": "with the model and the input on `meta` (standing in for a GPU), forward sends a tensor to the CPU "
        "(`.cpu()`, `.to(\"cpu\")`, `.item()`, `.tolist()`…): keep it where the input is.",
        "zh": "模型和输入都在 `meta` 上（代替 GPU）时，forward 把某个张量送回了 CPU"
        "（`.cpu()`、`.to(\"cpu\")`、`.item()`、`.tolist()`……）：请让它留在输入所在的设备上。",
    },
    "meta_raised": {
        "en": "with the model and the input on `meta` (standing in for a GPU), your code raised: {error}",
        "zh": "模型和输入都在 `meta` 上（代替 GPU）时，你的代码报错：{error}",
    },
}


def _probe_messages(exercise: str) -> dict[str, dict[str, str]]:
    return {f"ch05.{exercise}.{key}": entry for key, entry in _PROBE.items()}


for _exercise in ("ex1", "ex2", "ex3"):
    messages.add(_probe_messages(_exercise))

messages.add(
    {
        # exercise 1
        "ch05.ex1.todo": {
            "en": "replace `Standardize = ____` with your module.",
            "zh": "请把 `Standardize = ____` 换成你写的模块。",
        },
        "ch05.ex1.not_module": {
            "en": "`Standardize` should be an `nn.Module` class, used as `Standardize(mean, std)`.",
            "zh": "`Standardize` 应该是一个 `nn.Module` 子类，用法是 `Standardize(mean, std)`。",
        },
        "ch05.ex1.raised": {
            "en": "building or running `Standardize(mean, std)` raised an error: {error}",
            "zh": "构造或运行 `Standardize(mean, std)` 时报错：{error}",
        },
        "ch05.ex1.parameter": {
            "en": "registered as trainable parameters, so that the optimizer would change them at every step: "
            "{names}. The statistics are fixed numbers the module holds, not weights to learn.",
            "zh": "这些张量被注册成了可训练的参数，优化器每一步都会改动它们：{names}。"
            "统计量是模块持有的固定数值，不是要学习的权重。",
        },
        "ch05.ex1.not_saved": {
            "en": "the `{what}` tensor is not in `state_dict()` (keys: {keys}): a checkpoint would not bring it back, "
            "and a model loaded from it would standardize with other numbers.",
            "zh": "`state_dict()` 里没有 `{what}` 张量（现有的键：{keys}）：检查点不会保存它，"
            "从检查点加载的模型会用别的数值做标准化。",
        },
        "ch05.ex1.values": {
            "en": "the output is not `(x - mean) / std`.",
            "zh": "输出不等于 `(x - mean) / std`。",
        },
        "ch05.ex1.ok": {
            "en": "The buffers `mean` and `std` moved with the module, are saved in its state_dict, and no optimizer "
            "will touch them.",
            "zh": "mean 和 std 会随模块移动，保存在它的 state_dict 里，优化器也不会动它们。",
        },
        "ch05.ex1.hint1": {
            "en": "`model.to(device)` moves parameters and buffers, nothing else. A plain tensor attribute "
            "(`self.mean = mean`) stays where it was made.",
            "zh": "`model.to(device)` 只移动参数和缓冲区（buffer）。普通的张量属性（`self.mean = mean`）"
            "创建在哪里，就一直留在哪里。",
        },
        "ch05.ex1.hint2": {
            "en": "`nn.Parameter` would move too, but it would be trained. A buffer moves, is saved, and is not "
            "trained: `self.register_buffer(name, tensor)`.",
            "zh": "`nn.Parameter` 也会移动，但它会被训练。缓冲区会移动、会被保存、不会被训练："
            "`self.register_buffer(name, tensor)`。",
        },
        "ch05.ex1.hint3": {
            "en": "In `__init__`, after `super().__init__()`: `self.register_buffer(\"mean\", ____)` and the "
            "same for `std` (keep the default `persistent=True`: a checkpoint then brings the statistics "
            "back). `forward` returns `(x - self.mean) / self.std`.",
            "zh": "在 `__init__` 里、`super().__init__()` 之后：`self.register_buffer(\"mean\", ____)`，`std` "
            "也一样（保留默认的 `persistent=True`，检查点才能把这些统计量带回来）。`forward` 返回 `(x - "
            "self.mean) / self.std`。",
        },
        "ch05.ex1.solution": _both(STANDARDIZE_SOLUTION),
        # exercise 2
        "ch05.ex2.todo": {
            "en": "fill in `start_state` (it still returns `____`).",
            "zh": "请补全 `start_state`（它现在还返回 `____`）。",
        },
        "ch05.ex2.not_function": {
            "en": "`start_state` should be a function `start_state(x, hidden_size)`.",
            "zh": "`start_state` 应该是一个函数：`start_state(x, hidden_size)`。",
        },
        "ch05.ex2.raised": {
            "en": "`start_state(x, hidden_size)` raised an error: {error}",
            "zh": "`start_state(x, hidden_size)` 报错：{error}",
        },
        "ch05.ex2.not_tensor": {
            "en": "`start_state` returned a {got}, not a tensor.",
            "zh": "`start_state` 返回的是 {got}，而不是张量。",
        },
        "ch05.ex2.device": {
            "en": "for an input on {want}, the state was made on {found}. Build it from the input, not from a "
            "fixed or global device: inside `DataParallel`, each GPU's copy of the model gets its own input.",
            "zh": "输入在 {want} 上，状态却创建在 {found} 上。请根据输入来创建它，不要用固定的或全局的设备："
            "在 `DataParallel` 里，每块 GPU 上的模型副本拿到的都是各自的输入。",
        },
        "ch05.ex2.shape": {
            "en": "the state has shape {got}; a one-layer GRU wants (layers, batch, hidden) = {want}.",
            "zh": "状态的形状是 {got}；单层 GRU 需要（层数, 批大小, 隐藏维度）= {want}。",
        },
        "ch05.ex2.dtype": {
            "en": "the state is {got} but the input is {want}: the GRU needs both of the same dtype.",
            "zh": "状态的 dtype 是 {got}，输入却是 {want}：GRU 要求两者的 dtype 相同。",
        },
        "ch05.ex2.values": {
            "en": "the initial state should be zeros, and not need gradients.",
            "zh": "初始状态应当是全零，并且不需要梯度。",
        },
        "ch05.ex2.ok": {
            "en": "The state is born on the input's device, with its dtype, whatever that device is.",
            "zh": "状态在输入所在的设备上创建、dtype 与输入一致，无论那是哪个设备。",
        },
        "ch05.ex2.hint1": {
            "en": "`torch.zeros(...)` without `device=` makes a CPU tensor, wherever the model is.",
            "zh": "不带 `device=` 的 `torch.zeros(...)` 创建的是 CPU 张量，不管模型在哪里。",
        },
        "ch05.ex2.hint2": {
            "en": "Take the device from the input: `torch.zeros(..., device=x.device)`.",
            "zh": "从输入取设备：`torch.zeros(..., device=x.device)`。",
        },
        "ch05.ex2.hint3": {
            "en": "`return x.new_zeros(1, ____, hidden_size)`: `new_zeros` takes both the device and the dtype "
            "from `x`; the blank is the batch size.",
            "zh": "`return x.new_zeros(1, ____, hidden_size)`：`new_zeros` 会从 `x` 同时拿到设备和 "
            "dtype；空白处填批大小。",
        },
        "ch05.ex2.solution": _both(START_STATE_SOLUTION),
        # exercise 3
        "ch05.ex3.todo": {
            "en": "replace `SequenceClassifier = ____` with your fixed model.",
            "zh": "请把 `SequenceClassifier = ____` 换成你修好的模型。",
        },
        "ch05.ex3.not_module": {
            "en": "`SequenceClassifier` should be an `nn.Module` class, used as `SequenceClassifier(mean, std)`.",
            "zh": "`SequenceClassifier` 应该是一个 `nn.Module` 子类，用法是 `SequenceClassifier(mean, std)`。",
        },
        "ch05.ex3.raised": {
            "en": "building or running `SequenceClassifier(mean, std)` raised an error: {error}",
            "zh": "构造或运行 `SequenceClassifier(mean, std)` 时报错：{error}",
        },
        "ch05.ex3.shape": {
            "en": "for a batch of 4 sequences the model returned {got}; it should return scores of shape {want}.",
            "zh": "对一个含 4 条序列的批次，模型返回的是 {got}；应当返回形状为 {want} 的分数。",
        },
        "ch05.ex3.layer_in_forward": {
            "en": "forward runs a layer that is not part of the model ({names}): a layer built inside forward is "
            "born on the CPU with new random weights at every call, `.to()` never moves it and the optimizer "
            "never trains it. Build it in `__init__`.",
            "zh": "forward 里运行了一个不属于模型的层（{names}）：在 forward 里构造的层，每次调用都在 CPU 上"
            "以新的随机权重重新创建，`.to()` 不会移动它，优化器也不会训练它。请在 `__init__` 里构造它。",
        },
        "ch05.ex3.not_repeatable": {
            "en": "the same input gave two different outputs (in eval mode): something in forward is new at every "
            "call — random weights or random values.",
            "zh": "同一个输入（在 eval 模式下）得到了两个不同的输出：forward 里有东西每次调用都是新的，"
            "比如随机权重或随机数值。",
        },
        "ch05.ex3.not_saved": {
            "en": "the `{what}` statistics are not in the model's `state_dict()`: use your `Standardize` "
            "(exercise 1) so that a checkpoint brings them back.",
            "zh": "模型的 `state_dict()` 里没有 `{what}` 统计量：请使用你的 `Standardize`（练习 1），"
            "让检查点能把它们带回来。",
        },
        "ch05.ex3.ok": {
            "en": "Every tensor is born on the input's device and every layer is part of the model: it runs, "
            "unchanged, on the CPU, on your GPU and on `meta` (the check's stand-in for your GPU).",
            "zh": "每个张量都在输入所在的设备上创建，每一层都属于模型：它不加改动就能在 CPU、你的 GPU "
            "和 `meta`（检查用来代替 GPU 的设备）上运行。",
        },
        "ch05.ex3.hint1": {
            "en": "Look for every tensor and every layer forward creates: `torch.arange`, the hidden state, "
            "`nn.Linear(...)`.",
            "zh": "找出 forward 创建的每个张量和每一层：`torch.arange`、隐藏状态、`nn.Linear(...)`。",
        },
        "ch05.ex3.hint2": {
            "en": "Give every tensor made in forward the input's device: `torch.arange(steps, device=x.device)`; "
            "use `start_state` for the hidden state.",
            "zh": "让 forward 里创建的每个张量都用输入的设备：`torch.arange(steps, device=x.device)`；"
            "隐藏状态用 `start_state` 创建。",
        },
        "ch05.ex3.hint3": {
            "en": "In `__init__`: `self.head = nn.Linear(____, classes)`. In `forward`: `torch.arange(steps, "
            "device=____, dtype=x.dtype)`, `self.gru(x, start_state(x, ____))`, and `return "
            "self.head(last[-1])`.",
            "zh": "在 `__init__` 里：`self.head = nn.Linear(____, classes)`。在 `forward` "
            "里：`torch.arange(steps, device=____, dtype=x.dtype)`、`self.gru(x, start_state(x, ____))`，最后 "
            "`return self.head(last[-1])`。",
        },
        "ch05.ex3.solution": _both(CLASSIFIER_SOLUTION),
    }
)
