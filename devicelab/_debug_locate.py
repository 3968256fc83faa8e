"""`locate`: one forward pass with hooks, naming the first module whose inputs and own tensors disagree.

Each module gets a forward pre-hook that compares the devices of its inputs with those of its own tensors
(parameters, buffers, plain tensor attributes). Tensors made inside `forward` are watched by a
TorchFunctionMode rather than a TorchDispatchMode: it sees the call the learner wrote (`torch.zeros`,
`x.cpu()`) by its Python name, before any decomposition, and it does not see the temporary tensors that
kernels make for themselves, which a dispatch mode would have to tell apart from the learner's.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode, resolve_name

from . import messages
from ._debug_walk import module_tensors, walk_tensors

_TORCH_DIR = os.path.dirname(torch.__file__)
_THIS_FILE = __file__
# Lines of PyTorch's message that str(report) shows.
ERROR_LINES = 4


def _scalar_on_cpu(tensor: torch.Tensor) -> bool:
    # PyTorch accepts a 0-dim CPU tensor beside tensors of any device: it is read as a number
    if isinstance(tensor, nn.parameter.UninitializedTensorMixin):  # a lazy parameter has no shape yet
        return False
    return tensor.device.type == "cpu" and tensor.dim() == 0


@dataclasses.dataclass
class _Created:
    module: str
    where: str
    func: str
    device: torch.device
    input_device: torch.device
    line: int | None
    at: str | None


@dataclasses.dataclass
class LocateReport:
    """What one forward pass showed: the first module whose inputs and own tensors disagree, and why."""

    model_name: str
    module: str | None = None
    tensor: str | None = None
    devices: tuple[torch.device, torch.device] | None = None
    argument: str | None = None
    error: Exception | None = None
    output: Any = None
    created_by: str | None = None
    created_in: str | None = None
    created_at: str | None = None
    created_device: torch.device | None = None
    _created: _Created | None = dataclasses.field(default=None, repr=False)
    _own_tensors: bool = dataclasses.field(default=True, repr=False)
    _had_inputs: bool = dataclasses.field(default=True, repr=False)

    @property
    def ok(self) -> bool:
        """True when the forward pass ran and no device disagreement was seen."""
        return self.error is None and self.module is None and self._created is None

    @property
    def created(self) -> str | None:
        """Where a tensor was made inside forward on another device than the inputs, in the chosen language."""
        made = self._created
        if made is None:
            return None
        values = {"where": made.where, "func": made.func, "device": made.device, "input_device": made.input_device}
        if made.line is None:
            return messages.text("debug.locate.created", **values)
        return messages.text("debug.locate.created_line", line=made.line, **values)

    def _module_label(self) -> str:
        return self.module or self.model_name

    def __str__(self) -> str:
        lines = []
        if self.module is not None and self.devices is not None:
            device, other = self.devices
            if not self._own_tensors:
                key = "debug.locate.inputs"
            elif self._had_inputs:
                key = "debug.locate.tensor"
            else:
                key = "debug.locate.own"
            lines.append(
                messages.text(
                    key,
                    module=self._module_label(),
                    tensor=self.tensor,
                    argument=self.argument,
                    device=device,
                    input_device=other,
                )
            )
        if self._created is not None:
            lines.append(self.created)
        if not lines:
            lines.append(messages.text("debug.locate.ok" if self.error is None else "debug.locate.none_found"))
        if self.error is not None:
            message = "\n".join(str(self.error).strip().splitlines()[:ERROR_LINES])
            lines.append(messages.text("debug.locate.pytorch", kind=type(self.error).__name__, message=message))
        elif not self.ok:
            seen = [
                *(self.devices or ()),
                *((self._created.device, self._created.input_device) if self._created else ()),
            ]
            on_meta = any(device.type == "meta" for device in seen)
            lines.append(messages.text("debug.locate.no_error_meta" if on_meta else "debug.locate.no_error"))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        """In Jupyter and Colab: the path to the module it names, that module marked, the two devices."""
        from ._debug_html import locate_html

        return locate_html(self)


def _signature(module: nn.Module) -> inspect.Signature | None:
    try:
        return inspect.signature(module.forward)
    except (TypeError, ValueError):
        return None


def _inputs(module: nn.Module, args: tuple, kwargs: dict) -> Iterator[tuple[str, torch.Tensor]]:
    """The module's input tensors, named after forward's parameters (`input`, `hx[0]`) where they can be."""
    signature = _signature(module)
    named: dict[str, object] | None = None
    if signature is not None:
        try:
            named = dict(signature.bind(*args, **kwargs).arguments)
        except TypeError:
            named = None
    if named is None:
        named = {f"args[{index}]": value for index, value in enumerate(args)} | dict(kwargs)
    seen: set[int] = set()
    for name, value in named.items():
        for found_name, tensor in walk_tensors(value, name, seen):
            # a PackedSequence keeps its batch sizes on the CPU by design
            if not found_name.endswith(".batch_sizes") and not _scalar_on_cpu(tensor):
                yield found_name, tensor


def _caller() -> tuple[str | None, int | None]:
    """The file and line that made the call the watch is handling (the first frame outside this file)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == _THIS_FILE:
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else (None, None)


def _leaves(value: object) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)


class _Watch(TorchFunctionMode):
    """Notes the first tensor that a call inside forward makes on a device none of its tensor arguments is on."""

    def __init__(self, locator: _Locator) -> None:
        super().__init__()
        self.locator = locator

    def __torch_function__(self, func: Callable, types: tuple, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        watching = self.locator.created is None and bool(self.locator.stack)
        if watching and func in _TRANSFERS:
            # noted before the call: on `meta` the copy itself fails ("Cannot copy out of meta tensor")
            try:
                target = _transfer_target(func, args, kwargs)
                if target is not None:
                    self.locator.check_made(func, args, kwargs, [target])
            except Exception:  # the watch must never break the learner's forward pass
                pass
        result = func(*args, **kwargs)
        if watching and self.locator.created is None:
            try:
                made = [tensor.device for tensor in _leaves(result) if not _scalar_on_cpu(tensor)]
                self.locator.check_made(func, args, kwargs, made)
            except Exception:  # the watch must never break the learner's forward pass
                pass
        return result


_TRANSFERS = (torch.Tensor.to, torch.Tensor.cpu, torch.Tensor.cuda)


def _transfer_target(func: Callable, args: tuple, kwargs: dict) -> torch.device | None:
    """The device that `tensor.to(...)`, `.cpu()` or `.cuda()` sends a tensor to, if the call names one."""
    if func is torch.Tensor.cpu:
        return torch.device("cpu")
    if func is torch.Tensor.cuda:
        device = kwargs.get("device", args[1] if len(args) > 1 else None)
        if isinstance(device, int):
            return torch.device("cuda", device)
        return torch.device(device) if device is not None else torch.device("cuda")
    for value in (*args[1:], kwargs.get("device"), kwargs.get("other")):
        if isinstance(value, torch.Tensor):
            return value.device
        if isinstance(value, torch.device):
            return value
        if isinstance(value, str):
            try:
                return torch.device(value)
            except RuntimeError:
                continue
    return None


class _Locator:
    def __init__(self, model: Any) -> None:
        self.model = model
        self.model_name = (
            type(model).__name__
            if isinstance(model, nn.Module)
            else getattr(model, "__qualname__", type(model).__name__)
        )
        self.stack: list[tuple[str, nn.Module, torch.device | None]] = []
        self.finding: dict[str, Any] | None = None
        self.inputs_finding: dict[str, Any] | None = None
        self.created: _Created | None = None
        modules = model.modules() if isinstance(model, nn.Module) else ()
        self.registered = frozenset(id(module) for module in modules)

    def pre_hook(self, name: str) -> Callable:
        def hook(module: nn.Module, args: tuple, kwargs: dict) -> None:
            reference = self.stack[-1][2] if self.stack else None
            try:
                reference = self.compare(name, module, args, kwargs) or reference
            except Exception:  # a hook must never break the learner's forward pass
                pass
            self.stack.append((name, module, reference))

        return hook

    def post_hook(self, module: nn.Module, args: tuple, kwargs: dict, output: Any) -> None:
        if self.stack and self.stack[-1][1] is module:
            self.stack.pop()

    def compare(self, name: str, module: nn.Module, args: tuple, kwargs: dict) -> torch.device | None:
        inputs = list(_inputs(module, args, kwargs))
        own = [
            (tensor_name, tensor)
            for tensor_name, _, tensor in module_tensors(module, "", set(), self.registered)
            if not _scalar_on_cpu(tensor)
        ]
        if inputs:
            # the input to compare with: one on a device the module's own tensors use, if any is
            # (forward(lengths, x) may take its lengths on the CPU on purpose), else the first
            own_devices = {tensor.device for _, tensor in own}
            argument, first = next(((n, t) for n, t in inputs if t.device in own_devices), inputs[0])
            reference = first.device
        elif own:
            argument, reference = None, own[0][1].device
        else:
            return None
        if self.finding is None:
            for tensor_name, tensor in own:
                if tensor.device != reference:
                    self.finding = {
                        "module": name,
                        "tensor": tensor_name,
                        "devices": (tensor.device, reference),
                        "argument": argument,
                        "_had_inputs": bool(inputs),
                    }
                    break
        if self.inputs_finding is None:
            for input_name, tensor in inputs:
                if tensor.device != reference:
                    self.inputs_finding = {
                        "module": name,
                        "tensor": None,
                        "devices": (tensor.device, reference),
                        "argument": input_name,
                        "_own_tensors": False,
                    }
                    break
        return reference

    def check_made(self, func: Callable, args: tuple, kwargs: dict, devices: list[torch.device]) -> None:
        reference = self.stack[-1][2]
        if reference is None or isinstance(func, types.FunctionType):
            # a function written in Python (F.*) follows its arguments' devices; the calls inside it
            # are hidden from the watch anyway
            return
        from_devices = {tensor.device for tensor in _leaves((args, kwargs))}
        made = [
            device
            for device in devices
            if not _same(device, reference) and not any(_same(device, known) for known in from_devices)
        ]
        if not made:
            return
        filename, line = _caller()
        if filename is None or filename.startswith(_TORCH_DIR):
            # PyTorch's own code places its tensors on purpose (pack_padded_sequence's lengths on the CPU)
            return
        name, module, _ = self.stack[-1]
        if not isinstance(module, nn.Module):
            where = getattr(module, "__qualname__", self.model_name)
        else:
            where = f"{type(module).__name__}.forward" + (f" ({name})" if name else "")
        try:
            func_name = resolve_name(func) or getattr(func, "__name__", repr(func))
        except Exception:
            func_name = getattr(func, "__name__", repr(func))
        self.created = _Created(
            module=name,
            where=where,
            func=func_name,
            device=made[0],
            input_device=reference,
            line=line,
            at=f"{filename}:{line}" if filename else None,
        )


def _same(device: torch.device, reference: torch.device) -> bool:
    # `.to("cuda")` names no index: it means the current device, taken here as the reference's
    return device == reference or (device.index is None and device.type == reference.type)


def locate(model: Callable[..., Any], *args: Any, **kwargs: Any) -> LocateReport:
    """Run one forward pass with hooks; name the first module whose inputs and own tensors disagree.

    `model(*args, **kwargs)` runs once. In execution order, the first module whose own tensors (parameters,
    buffers, plain tensor attributes) are on another device than its input is reported; inputs that
    disagree among themselves are reported only when the pass fails (some ops want a CPU tensor beside
    accelerator ones). A tensor made by the learner's code inside forward (`torch.zeros(...)` without
    `device=`, `.cpu()`, `.to("cpu")`) on another device than the inputs is reported as `created`. The
    model's exception is returned in `error`, never raised; every hook and the watch are removed.
    """
    locator = _Locator(model)
    handles = []
    output = None
    error: Exception | None = None
    try:
        if isinstance(model, nn.Module):
            for name, module in model.named_modules():
                handles.append(module.register_forward_pre_hook(locator.pre_hook(name), with_kwargs=True))
                handles.append(module.register_forward_hook(locator.post_hook, with_kwargs=True, always_call=True))
        else:
            # a plain function: tensors it makes are compared with its first input tensor
            first = next(iter(_leaves((args, kwargs))), None)
            locator.stack.append(("", model, first.device if first is not None else None))
        with _Watch(locator):
            output = model(*args, **kwargs)
    except Exception as raised:  # the report carries the model's error; locate itself never raises it
        error = raised
        output = None
    finally:
        for handle in handles:
            handle.remove()
    report = LocateReport(model_name=locator.model_name, error=error, output=output)
    finding = locator.finding
    # Inputs that disagree among themselves are named only when the pass failed: some ops want a CPU
    # tensor beside accelerator ones (pack_padded_sequence's lengths).
    if finding is None and error is not None:
        finding = locator.inputs_finding
    if finding is not None:
        for key, value in finding.items():
            setattr(report, key, value)
    made = locator.created
    if made is not None:
        report._created = made
        report.created_by = made.func
        report.created_in = made.module
        report.created_at = made.at
        report.created_device = made.device
    return report


messages.add(
    {
        "debug.locate.tensor": {
            "en": "{module}: {tensor} on {device}, input on {input_device}",
            "zh": "{module}：{tensor} 在 {device} 上，输入在 {input_device} 上",
        },
        "debug.locate.own": {
            "en": "{module}: {tensor} on {device}, the module's other tensors on {input_device}",
            "zh": "{module}：{tensor} 在 {device} 上，该模块的其他张量在 {input_device} 上",
        },
        "debug.locate.inputs": {
            "en": "{module}: input {argument} on {device}, other inputs on {input_device}",
            "zh": "{module}：输入 {argument} 在 {device} 上，其他输入在 {input_device} 上",
        },
        "debug.locate.created": {
            "en": "inside {where}: {func} → {device} while inputs are on {input_device}",
            "zh": "在 {where} 中：{func} → {device}，而输入在 {input_device} 上",
        },
        "debug.locate.created_line": {
            "en": "inside {where}, line {line}: {func} → {device} while inputs are on {input_device}",
            "zh": "在 {where} 第 {line} 行：{func} → {device}，而输入在 {input_device} 上",
        },
        "debug.locate.ok": {
            "en": "the forward pass ran: no device disagreement found",
            "zh": "前向传播顺利完成：没有发现设备不一致",
        },
        "debug.locate.none_found": {
            "en": "no device disagreement found (no module's inputs and own tensors disagree, and no tensor was "
            "made inside forward on another device), but the forward pass failed:",
            "zh": "没有发现设备不一致（没有哪个模块的输入与自身张量不在同一设备上，forward 中也没有在别的设备上"
            "创建张量），但前向传播失败了：",
        },
        "debug.locate.pytorch": {
            "en": "PyTorch's message: {kind}: {message}",
            "zh": "PyTorch 的报错：{kind}: {message}",
        },
        "debug.locate.no_error": {
            "en": "(PyTorch raised no error on this run.)",
            "zh": "（这次运行 PyTorch 没有报错。）",
        },
        "debug.locate.no_error_meta": {
            "en": "(PyTorch raised no error on this run: some kernels do not compare devices, e.g. conv and "
            "embedding on `meta`.)",
            "zh": "（这次运行 PyTorch 没有报错：有些算子不比较设备，例如 `meta` 上的卷积和嵌入。）",
        },
    }
)
