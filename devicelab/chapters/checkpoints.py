"""Chapter 07: saving and loading across devices — map_location, weights_only, the `module.` prefix, resuming."""

from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
from collections.abc import Callable, Iterator

import torch
import torch.serialization as serialization
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from .. import messages
from ..checks import NOT_ATTEMPTED, Blank, Exercise, Verdict, correct, incorrect
from ..checks import short_error as _short
from ..spies import MoveRecorder

# The device that stands in for a GPU: `meta` exists on every machine, and `map_location="meta"` really
# puts every tensor there; a loader that ignores its `device` argument leaves them elsewhere.
TARGET = torch.device("meta")
SECONDS = 20.0
_RAN: list[str] = []  # what a pickled payload records when a loader runs it


def record(what: str) -> str:
    """Called by the check's booby-trapped checkpoint when a loader unpickles it: proof that code ran."""
    _RAN.append(what)
    return what


class _Payload:
    """Unpickling this calls `record`: what any pickle can do with any function, `os.system` included."""

    def __reduce__(self) -> tuple[Callable[[str], str], tuple[str]]:
        return record, ("the checkpoint ran code",)


@contextlib.contextmanager
def saved_as_if_on(location: str) -> Iterator[None]:
    """torch.save writes `location` (e.g. "cuda:0") as every storage's device, as a save on that GPU does."""
    original = serialization.location_tag
    serialization.location_tag = lambda storage: location
    try:
        yield
    finally:
        serialization.location_tag = original


def gpu_checkpoint(obj: object, path: str, location: str = "cuda:0") -> str:
    """Save `obj` to `path` with its storages tagged `location`, as torch.save does on that GPU."""
    with saved_as_if_on(location):
        torch.save(obj, path)
    return path


class MetaActsAsAGpu(TorchDispatchMode):
    """Copies from `meta` to another device succeed (with zeros), as copies from a GPU to the CPU do.

    Meta tensors hold no data, so `cpu_param.copy_(meta_tensor)` normally fails; a GPU tensor copies fine.
    Inside this mode a learner's code that loads GPU tensors into a CPU model, then moves it, is judged as a
    GPU would run it.
    """

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204 - torch's protocol
        kwargs = kwargs or {}
        if func is torch.ops.aten.copy_.default and args[1].device.type == "meta" and args[0].device.type != "meta":
            return args[0]
        if func is torch.ops.aten._to_copy.default and args[0].device.type == "meta":
            target = kwargs.get("device") or args[0].device
            if torch.device(target).type != "meta":
                dtype = kwargs.get("dtype") or args[0].dtype
                return torch.zeros(args[0].shape, dtype=dtype, device=target)
        return func(*args, **kwargs)



@contextlib.contextmanager
def keeps_parameter_objects():
    """`Module.to()` keeps each Parameter object while it runs, as it does towards a GPU.

    Towards `meta` PyTorch swaps in new Parameter objects (a GPU keeps them and replaces their data), so an
    optimizer built before the move would look built on "other parameters" there only. Swapping the tensors'
    contents instead (`torch.__future__.set_swap_module_params_on_conversion`) keeps the objects on `meta` too.
    """
    before = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        yield
    finally:
        torch.__future__.set_swap_module_params_on_conversion(before)


def _tensors(obj: object) -> list[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, dict):
        return [t for value in obj.values() for t in _tensors(value)]
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in _tensors(item)]
    return []


class Net(nn.Module):
    """The small model the checks save and load (the lab's own model has the same shape)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.body(x)))


def _reference_state() -> dict[str, torch.Tensor]:
    torch.manual_seed(3)
    return Net().state_dict()


# --- exercise 1: load_weights ------------------------------------------------------------------------


class LoadWeights(Exercise):
    """Exercise 1: load_weights(path, device) — every tensor on `device`, whatever GPU saved it, and no code run."""

    name = "ex1"
    reads = ("load_weights",)
    hints = ("ch07.ex1.hint1", "ch07.ex1.hint2", "ch07.ex1.hint3")
    solution_key = "ch07.ex1.solution"
    not_attempted_key = "ch07.ex1.todo"
    seconds = SECONDS

    def judge(self, load_weights: object) -> Verdict:
        if not callable(load_weights):
            return incorrect("ch07.ex1.not_function")
        want = _reference_state()
        with tempfile.TemporaryDirectory() as folder:
            gpu = gpu_checkpoint(want, os.path.join(folder, "gpu.pt"))
            cpu = os.path.join(folder, "cpu.pt")
            torch.save(want, cpu)
            for device in (TARGET, self.device):
                for path, saved_on in ((gpu, "cuda:0"), (cpu, "cpu")):
                    moves = MoveRecorder()
                    try:
                        with moves:
                            got = load_weights(path, device)
                    except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
                        return incorrect("ch07.ex1.raised", saved_on=saved_on, device=device, error=_short(error))
                    if isinstance(got, Blank):
                        return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
                    if not isinstance(got, dict) or list(got) != list(want):
                        return incorrect("ch07.ex1.not_state_dict", got=type(got).__name__)
                    misplaced = [key for key, t in got.items() if not isinstance(t, torch.Tensor) or t.device != device]
                    if misplaced:
                        found = got[misplaced[0]]
                        where = found.device if isinstance(found, torch.Tensor) else type(found).__name__
                        if moves.towards(device):  # copies were made, then thrown away: `value.to(device)` alone
                            return incorrect("ch07.ex1.discarded", found=where, device=device)
                        return incorrect("ch07.ex1.device", name=misplaced[0], found=where, device=device,
                                         saved_on=saved_on)
                    if device.type != "meta" and not all(torch.equal(got[k].cpu(), want[k]) for k in want):
                        return incorrect("ch07.ex1.values")
            # A pickle can run code: a loader of weights must refuse a file that tries.
            trap = os.path.join(folder, "trap.pt")
            torch.save({"body.weight": want["body.weight"], "extra": _Payload()}, trap)
            _RAN.clear()
            try:
                load_weights(trap, self.device)
            except Exception:  # noqa: BLE001, S110 - refusing the file is the right answer
                pass
            if _RAN:
                _RAN.clear()
                return incorrect("ch07.ex1.ran_code")
        return correct("ch07.ex1.ok")


# --- exercise 2: unwrap --------------------------------------------------------------------------------


def _wrapped_state() -> dict[str, torch.Tensor]:
    values = torch.arange(6, dtype=torch.float32)
    return {
        "module.body.weight": values[:2],
        "module.body.bias": values[2:3],
        "module.submodule.weight": values[3:5],
        "module.head.module.bias": values[5:],
        "module.embed.weight": values[:1],
    }


class Unwrap(Exercise):
    """Exercise 2: unwrap(state_dict) — drop the leading `module.` of a DataParallel/DDP state dict, nothing else."""

    name = "ex2"
    reads = ("unwrap",)
    hints = ("ch07.ex2.hint1", "ch07.ex2.hint2", "ch07.ex2.hint3")
    solution_key = "ch07.ex2.solution"
    not_attempted_key = "ch07.ex2.todo"
    seconds = SECONDS

    def judge(self, unwrap: object) -> Verdict:
        if not callable(unwrap):
            return incorrect("ch07.ex2.not_function")
        wrapped = _wrapped_state()
        plain = {key.removeprefix("module."): value for key, value in wrapped.items()}
        # Mixed too: one rule for every key, whatever the other keys look like.
        mixed = {key if number % 2 else key.removeprefix("module."): value
                 for number, (key, value) in enumerate(wrapped.items())}
        for given, want in ((wrapped, plain), (dict(plain), plain), (mixed, plain)):
            keep = dict(given)
            originals = {key.removeprefix("module."): value.clone() for key, value in given.items()}
            try:
                got = unwrap(given)
            except Exception as error:  # noqa: BLE001
                return incorrect("ch07.ex2.raised", error=_short(error))
            if isinstance(got, Blank):
                return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
            if got is None:
                return incorrect("ch07.ex2.none")
            if not isinstance(got, dict):
                return incorrect("ch07.ex2.not_dict", got=type(got).__name__)
            if set(got) != set(want):  # the order of the keys does not matter to load_state_dict
                wrong = next((k for k in got if k not in want), None) or next(k for k in want if k not in got)
                return incorrect("ch07.ex2.keys", name=wrong, given=", ".join(keep))
            for key, value in originals.items():  # the same values (a copy loads just as well)
                new = got[key]
                if not (isinstance(new, torch.Tensor) and new.dtype == value.dtype and new.shape == value.shape
                        and new.device == value.device and torch.equal(new, value)):
                    return incorrect("ch07.ex2.values")
        return correct("ch07.ex2.ok")


# --- exercise 3: resume --------------------------------------------------------------------------------


def _training_checkpoint(path: str) -> tuple[dict[str, torch.Tensor], dict[str, object]]:
    torch.manual_seed(4)
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(3):
        optimizer.zero_grad()
        model(torch.ones(2, 4)).sum().backward()
        optimizer.step()
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3}
    gpu_checkpoint(checkpoint, path)
    return model.state_dict(), optimizer.state_dict()


class Resume(Exercise):
    """Exercise 3: resume(path, device) — model moved, optimizer built on its parameters, both states loaded."""

    name = "ex3"
    reads = ("resume",)
    hints = ("ch07.ex3.hint1", "ch07.ex3.hint2", "ch07.ex3.hint3")
    solution_key = "ch07.ex3.solution"
    not_attempted_key = "ch07.ex3.todo"
    seconds = SECONDS

    def judge(self, resume: object) -> Verdict:
        if not callable(resume):
            return incorrect("ch07.ex3.not_function")
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "checkpoint.pt")
            weights, optimizer_state = _training_checkpoint(path)
            for device in (TARGET, self.device):
                try:
                    with MetaActsAsAGpu() if device.type == "meta" else contextlib.nullcontext(), \
                            keeps_parameter_objects(), warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # loading into meta parameters warns that it is a no-op
                        got = resume(path, device)
                except Exception as error:  # noqa: BLE001
                    return incorrect("ch07.ex3.raised", device=device, error=_short(error))
                if isinstance(got, Blank):
                    return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
                if not (isinstance(got, tuple) and len(got) == 3):
                    return incorrect("ch07.ex3.not_triple")
                model, optimizer, epoch = got
                if not isinstance(model, nn.Module) or not isinstance(optimizer, torch.optim.Optimizer):
                    return incorrect("ch07.ex3.not_triple")
                if epoch != 3:
                    return incorrect("ch07.ex3.epoch", got=repr(epoch)[:40])
                params = list(model.parameters())
                in_optimizer = [p for group in optimizer.param_groups for p in group["params"]]
                if len(in_optimizer) != len(params) or any(a is not b for a, b in zip(in_optimizer, params)):
                    return incorrect("ch07.ex3.other_parameters")
                misplaced = [p for p in params if p.device != device]
                if misplaced:
                    return incorrect("ch07.ex3.model_device", found=misplaced[0].device, device=device)
                state = [(key, t) for p in params for key, t in optimizer.state.get(p, {}).items()
                         if isinstance(t, torch.Tensor) and key != "step"]
                if len(state) != 2 * len(params):
                    return incorrect("ch07.ex3.no_state")
                left = [(key, t) for key, t in state if t.device != device]
                if left:
                    return incorrect("ch07.ex3.state_device", name=left[0][0], found=left[0][1].device, device=device)
                if device.type != "meta":
                    current = model.state_dict()
                    if not all(torch.equal(current[k].cpu(), weights[k]) for k in weights):
                        return incorrect("ch07.ex3.weights")
                    saved = optimizer_state["state"][0]["exp_avg"]  # type: ignore[index]
                    if not torch.equal(optimizer.state[params[0]]["exp_avg"].cpu(), saved):
                        return incorrect("ch07.ex3.no_state")
        return correct("ch07.ex3.ok")


EXERCISES = [LoadWeights, Unwrap, Resume]

LOAD_WEIGHTS_SOLUTION = '''\
def load_weights(path, device):
    """A state_dict from `path`, every tensor on `device`, whatever device saved it; no code from the file runs."""
    return torch.load(path, map_location=device, weights_only=True)'''

UNWRAP_SOLUTION = '''\
def unwrap(state_dict):
    """The state_dict of a DataParallel/DDP model, with the leading "module." of its keys removed."""
    return {key.removeprefix("module."): value for key, value in state_dict.items()}'''

RESUME_SOLUTION = '''\
def resume(path, device):
    """Model, optimizer and epoch from a checkpoint, in the order that puts everything on `device`."""
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = Net().to(device)  # 1. move the model
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)  # 2. build the optimizer on its parameters
    model.load_state_dict(checkpoint["model"])  # 3. load both states
    optimizer.load_state_dict(checkpoint["optimizer"])  # its state follows each parameter's device
    return model, optimizer, checkpoint["epoch"]'''


def _both(code: str) -> dict[str, str]:
    escaped = code.replace("{", "{{").replace("}", "}}")
    return {"en": escaped, "zh": escaped}


messages.add(
    {
        # exercise 1
        "ch07.ex1.todo": {"en": "fill in `load_weights` (it still returns `____`).",
                          "zh": "请补全 `load_weights`（它现在还返回 `____`）。"},
        "ch07.ex1.not_function": {"en": "`load_weights` should be a function `load_weights(path, device)`.",
                                  "zh": "`load_weights` 应该是一个函数：`load_weights(path, device)`。"},
        "ch07.ex1.raised": {
            "en": "loading a checkpoint saved on {saved_on} to {device} raised an error: {error}",
            "zh": "把保存自 {saved_on} 的检查点加载到 {device} 时报错：{error}",
        },
        "ch07.ex1.not_state_dict": {
            "en": "`load_weights` returned a {got} that is not the saved state_dict (a dict of the same keys).",
            "zh": "`load_weights` 返回的 {got} 不是保存的 state_dict（键相同的字典）。",
        },
        "ch07.ex1.device": {
            "en": "a checkpoint saved on {saved_on}, loaded for {device}, gave `{name}` on {found}. (The check asks "
            "for `meta`, a stand-in for your GPU that every machine has, and for this lab's device.)",
            "zh": "保存自 {saved_on} 的检查点按 {device} 加载后，`{name}` 却在 {found} 上。"
            "（检查既会要求加载到 `meta`——每台机器都有的设备，在这里代替你的 GPU——"
            "也会要求加载到本实验所用的设备。）",
        },
        "ch07.ex1.discarded": {
            "en": "the tensors were copied to {device}, but the state_dict `load_weights` returns still holds the "
            "originals, on {found}: `Tensor.to()` returns a new tensor and leaves the one it is called on where it "
            "was, so a copy that is not kept is lost.",
            "zh": "张量被复制到了 {device} 上，但 `load_weights` 返回的 state_dict 里"
            "仍是原来那些、在 {found} 上的张量："
            "`Tensor.to()` 返回一个新张量，调用它的那个张量留在原处，所以没有保存下来的副本就丢掉了。",
        },
        "ch07.ex1.values": {"en": "the loaded tensors do not hold the saved values.",
                            "zh": "加载出来的张量与保存的数值不一致。"},
        "ch07.ex1.ran_code": {
            "en": "your loader ran code hidden in a checkpoint (the check's file records it when unpickled). "
            "A pickle can run any function; load weights with `weights_only=True`.",
            "zh": "你的加载函数执行了藏在检查点里的代码（检查用的文件在反序列化时会记下这一点）。"
            "pickle 可以调用任何函数；加载权重请用 `weights_only=True`。",
        },
        "ch07.ex1.ok": {
            "en": "Every tensor lands on the device you ask for, whatever GPU saved it, and the file cannot run code.",
            "zh": "无论检查点保存自哪块 GPU，每个张量都落到你指定的设备上，而且文件无法执行代码。",
        },
        "ch07.ex1.hint1": {
            "en": "torch.load puts each tensor back on the device it was saved from, unless told otherwise.",
            "zh": "除非另有指定，torch.load 会把每个张量放回它保存时所在的设备。",
        },
        "ch07.ex1.hint2": {
            "en": "Moving the tensors after loading comes too late: on a machine without a GPU, a tensor saved on a "
            "GPU cannot even be created. Decide where the tensors go while the file is read, not afterwards.",
            "zh": "加载之后再移动张量就太晚了：在没有 GPU 的机器上，保存自 GPU 的张量连创建都创建不出来。"
            "要在读取文件的同时就决定张量放到哪里，而不是读完之后再挪。",
        },
        "ch07.ex1.hint3": {
            "en": "`return torch.load(path, map_location=____, weights_only=True)`. `weights_only=True` is the "
            "default since PyTorch 2.6; older versions default to False, which runs whatever the pickle asks.",
            "zh": "`return torch.load(path, map_location=____, weights_only=True)`。从 PyTorch 2.6 起 "
            "`weights_only=True` 是默认值；更早的版本默认为 False，会执行 pickle 要求执行的任何代码。",
        },
        "ch07.ex1.solution": _both(LOAD_WEIGHTS_SOLUTION),
        # exercise 2
        "ch07.ex2.todo": {"en": "fill in `unwrap` (it still returns `____`).",
                          "zh": "请补全 `unwrap`（它现在还返回 `____`）。"},
        "ch07.ex2.not_function": {"en": "`unwrap` should be a function `unwrap(state_dict)`.",
                                  "zh": "`unwrap` 应该是一个函数：`unwrap(state_dict)`。"},
        "ch07.ex2.raised": {"en": "`unwrap` raised an error: {error}", "zh": "`unwrap` 报错：{error}"},
        "ch07.ex2.none": {
            "en": "`unwrap` returned None. (PyTorch's `consume_prefix_in_state_dict_if_present` changes the dict in "
            "place and returns None: return the dict itself.)",
            "zh": "`unwrap` 返回了 None。（PyTorch 的 `consume_prefix_in_state_dict_if_present` 是原地修改字典、"
            "返回 None 的：请返回字典本身。）",
        },
        "ch07.ex2.not_dict": {"en": "`unwrap` returned a {got}, not a dict.",
                              "zh": "`unwrap` 返回的是 {got}，而不是字典。"},
        "ch07.ex2.keys": {
            "en": "for the keys {given}, the result has a wrong key: `{name}`. Remove `module.` only at the start of "
            "a key, and leave keys that do not start with it alone.",
            "zh": "对于键 {given}，结果里有一个不对的键：`{name}`。只去掉键开头的 `module.`，"
            "不以它开头的键保持不变。",
        },
        "ch07.ex2.values": {"en": "the values changed: keep the same tensors, only rename the keys.",
                            "zh": "值变了：保留原来的张量，只改键名。"},
        "ch07.ex2.ok": {"en": "The leading `module.` is gone, and nothing else changed.",
                        "zh": "开头的 `module.` 去掉了，其他什么都没变。"},
        "ch07.ex2.hint1": {
            "en": "Build a new dict with the same values and renamed keys.",
            "zh": "构造一个新字典：值不变，只改键名。",
        },
        "ch07.ex2.hint2": {
            "en": "`key.replace(\"module.\", \"\")` also changes `submodule.weight`: remove the prefix only, "
            "with `str.removeprefix` (Python 3.9+).",
            "zh": "`key.replace(\"module.\", \"\")` 连 `submodule.weight` 也会改掉：只去掉前缀，用 "
            "`str.removeprefix`（Python 3.9+）。",
        },
        "ch07.ex2.hint3": {
            "en": "`return {{____: value for key, value in state_dict.items()}}`.",
            "zh": "`return {{____: value for key, value in state_dict.items()}}`。",
        },
        "ch07.ex2.solution": _both(UNWRAP_SOLUTION),
        # exercise 3
        "ch07.ex3.todo": {"en": "fill in `resume` (it still returns `____`).",
                          "zh": "请补全 `resume`（它现在还返回 `____`）。"},
        "ch07.ex3.not_function": {"en": "`resume` should be a function `resume(path, device)`.",
                                  "zh": "`resume` 应该是一个函数：`resume(path, device)`。"},
        "ch07.ex3.raised": {"en": "`resume(path, {device})` raised an error: {error}",
                            "zh": "`resume(path, {device})` 报错：{error}"},
        "ch07.ex3.not_triple": {"en": "`resume` should return `(model, optimizer, epoch)`.",
                                "zh": "`resume` 应当返回 `(model, optimizer, epoch)`。"},
        "ch07.ex3.epoch": {"en": "the epoch returned is {got}, not the one saved (3).",
                           "zh": "返回的轮次是 {got}，而不是保存的那个（3）。"},
        "ch07.ex3.other_parameters": {
            "en": "the optimizer does not hold the returned model's parameters, so it would update other tensors: "
            "build it from the model you return, `torch.optim.Adam(model.parameters(), lr=0.01)`.",
            "zh": "优化器持有的不是返回的这个模型的参数，所以它更新的会是别的张量：请用你返回的那个模型来构造它，"
            "`torch.optim.Adam(model.parameters(), lr=0.01)`。",
        },
        "ch07.ex3.model_device": {"en": "a parameter of the model is on {found}, not on {device}.",
                                  "zh": "模型有一个参数在 {found} 上，而不在 {device} 上。"},
        "ch07.ex3.no_state": {
            "en": "the optimizer's saved state (Adam's running averages) was not loaded.",
            "zh": "优化器保存的状态（Adam 的滑动平均）没有加载进来。",
        },
        "ch07.ex3.state_device": {
            "en": "the optimizer's `{name}` is on {found}, not on {device}: `optimizer.load_state_dict` puts the state "
            "where each parameter is at the moment of loading. Move the model first.",
            "zh": "优化器的 `{name}` 在 {found} 上，而不在 {device} 上：`optimizer.load_state_dict` "
            "会把状态放到加载那一刻每个参数所在的设备上。请先移动模型。",
        },
        "ch07.ex3.weights": {"en": "the model's weights are not the saved ones.",
                             "zh": "模型的权重不是保存的那些。"},
        "ch07.ex3.ok": {
            "en": "Model, parameters and optimizer state all on the device, and training can go on where it stopped.",
            "zh": "模型、参数和优化器状态都在目标设备上，训练可以从中断的地方继续。",
        },
        "ch07.ex3.hint1": {
            "en": "Load the file with `map_location=device`, like exercise 1.",
            "zh": "像练习 1 那样，用 `map_location=device` 加载文件。",
        },
        "ch07.ex3.hint2": {
            "en": "`optimizer.load_state_dict` moves the saved state to the device of each parameter, as it is "
            "then. Move the model before you load the optimizer's state.",
            "zh": "`optimizer.load_state_dict` 会把保存的状态移到每个参数当时所在的设备上。"
            "请在加载优化器状态之前移动模型。",
        },
        "ch07.ex3.hint3": {
            "en": "`checkpoint = torch.load(path, map_location=device, weights_only=True)`; `model = "
            "Net().to(____)`; `optimizer = torch.optim.Adam(____, lr=0.01)`; then "
            "`model.load_state_dict(checkpoint[\"model\"])` and `optimizer.load_state_dict(____)`; `return "
            "model, optimizer, checkpoint[\"epoch\"]`.",
            "zh": "`checkpoint = torch.load(path, map_location=device, weights_only=True)`；`model = "
            "Net().to(____)`；`optimizer = torch.optim.Adam(____, lr=0.01)`；然后 "
            "`model.load_state_dict(checkpoint[\"model\"])` 和 `optimizer.load_state_dict(____)`；`return "
            "model, optimizer, checkpoint[\"epoch\"]`。",
        },
        "ch07.ex3.solution": _both(RESUME_SOLUTION),
    }
)
