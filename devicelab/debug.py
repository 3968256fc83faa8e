"""Find the tensor on the wrong device: `audit` lists where everything lives, `locate` names the module.

    report = audit(model, batch=batch, optimizer=optimizer, criterion=criterion)
    print(report)            # a table: name | kind | device | shape | dtype, odd rows marked ✗, then a verdict
    report                   # in a notebook: a tree of modules, each tensor coloured by device, odd ones marked
    report = locate(model, inputs)
    print(report)            # "encoder.layers.3.norm: weight on cpu, input on cuda:0", then PyTorch's message

`audit` reads devices, shapes and dtypes; it moves, copies and reads no values. `locate` runs one forward
pass (see `_debug_locate` for how) and never raises the model's error: the report carries it.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping

import torch
from torch import nn

from . import messages
from ._debug_html import audit_html
from ._debug_locate import LocateReport, locate
from ._debug_walk import module_tensors, walk_tensors

__all__ = ["AuditReport", "Entry", "LocateReport", "audit", "locate"]

KINDS = ("parameter", "buffer", "attribute", "optimizer", "criterion", "batch")
# Enough rows to see the shape of a model; every odd row is shown on top of these.
TABLE_ROWS = 30
VERDICT_NAMES = 5


@dataclasses.dataclass(frozen=True)
class Entry:
    """One tensor the audit found: its qualified name, what holds it, and where it lives."""

    name: str
    kind: str
    device: torch.device
    shape: tuple[int, ...]
    dtype: torch.dtype
    odd: bool


@dataclasses.dataclass
class AuditReport:
    """Where every tensor of a training step lives, and which ones are not on `expected`."""

    expected: torch.device
    entries: list[Entry]

    @property
    def odd(self) -> list[Entry]:
        """The entries not on `expected` (0-dim CPU tensors excepted: PyTorch accepts them beside any device)."""
        return [entry for entry in self.entries if entry.odd]

    @property
    def ok(self) -> bool:
        """True when every tensor found is where it should be."""
        return not self.odd

    @property
    def devices(self) -> dict[torch.device, int]:
        """How many tensors the audit found on each device."""
        return dict(Counter(entry.device for entry in self.entries))

    def __getitem__(self, name: str) -> Entry:
        """The entry called `name` (KeyError if the audit found no such tensor)."""
        for entry in self.entries:
            if entry.name == name:
                return entry
        raise KeyError(name)

    @property
    def verdict(self) -> str:
        """One line in the chosen language: everything in place, or how many tensors are not and which."""
        odd = self.odd
        if not self.entries:
            return messages.text("debug.audit.empty")
        if not odd:
            return messages.text("debug.audit.all_ok", count=len(self.entries), device=self.expected)
        names = [entry.name for entry in odd[:VERDICT_NAMES]]
        listed = messages.text("debug.list_separator").join(names)
        if len(odd) > VERDICT_NAMES:
            listed += messages.text("debug.audit.and_more", count=len(odd) - VERDICT_NAMES)
        key = "debug.audit.one_odd" if len(odd) == 1 else "debug.audit.odd"
        return messages.text(key, count=len(odd), device=self.expected, names=listed)

    def table(self, rows: int = TABLE_ROWS) -> str:
        """The table of entries: every odd row, and up to `rows` others in model order."""
        shown: list[Entry] = []
        others = 0
        for entry in self.entries:
            if entry.odd or others < rows:
                shown.append(entry)
                others += not entry.odd
        header = [messages.text(f"debug.column.{column}") for column in ("name", "kind", "device", "shape", "dtype")]
        lines = [header] + [
            [
                entry.name,
                messages.text(f"debug.kind.{entry.kind}"),
                str(entry.device),
                _shape_text(entry.shape),
                str(entry.dtype).removeprefix("torch."),
            ]
            for entry in shown
        ]
        marks = ["  "] + ["✗ " if entry.odd else "  " for entry in shown]
        widths = [max(_width(line[column]) for line in lines) for column in range(5)]
        text = [
            (mark + " | ".join(_pad(cell, width) for cell, width in zip(line, widths))).rstrip()
            for mark, line in zip(marks, lines)
        ]
        text.insert(1, "  " + "-+-".join("-" * width for width in widths))
        left_out = len(self.entries) - len(shown)
        if left_out:
            text.append(messages.text("debug.audit.left_out", count=left_out))
        return "\n".join(text)

    def __str__(self) -> str:
        return self.table() + "\n" + self.verdict

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        """In Jupyter and Colab: the tensors as a tree of modules, coloured by device, the odd ones marked."""
        return audit_html(self)


def _shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(size) for size in shape) + ")" if len(shape) != 1 else f"({shape[0]},)"


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


def _shape(tensor: torch.Tensor) -> tuple[int, ...]:
    return () if _lazy(tensor) else tuple(tensor.shape)


def _model_tensors(model: nn.Module, seen: set[int]) -> Iterator[tuple[str, str, torch.Tensor]]:
    registered = {id(module) for module in model.modules()}
    listed: set[int] = set()
    # registered tensors are listed under their registered names, never as an attribute that also holds them
    seen.update(id(tensor) for tensor in (*model.parameters(), *model.buffers()))
    for qualified, module in model.named_modules():
        yield from module_tensors(module, qualified, seen, registered, listed)


def _optimizer_tensors(
    optimizer: torch.optim.Optimizer, names: dict[int, str], seen: set[int]
) -> Iterator[tuple[str, str, torch.Tensor]]:
    index_of: dict[int, int] = {}
    index = 0
    for group_index, group in enumerate(optimizer.param_groups):
        for param in group["params"]:
            index_of.setdefault(id(param), index)
            if id(param) not in names and id(param) not in seen:
                seen.add(id(param))
                yield f"optimizer.params[{index}]", "optimizer", param
            index += 1
        for key, value in group.items():
            if key != "params":
                for name, found in walk_tensors(value, f"optimizer.param_groups[{group_index}][{key!r}]", seen):
                    yield name, "optimizer", found
    for param, state in optimizer.state.items():
        label = names.get(id(param)) or str(index_of.get(id(param), "?"))
        for key, value in state.items() if isinstance(state, Mapping) else ():
            for name, found in walk_tensors(value, f"optimizer.state[{label}].{key}", seen):
                yield name, "optimizer", found


def _criterion_tensors(criterion: object, seen: set[int]) -> Iterator[tuple[str, str, torch.Tensor]]:
    if isinstance(criterion, nn.Module):
        registered = {id(module) for module in criterion.modules()}
        for qualified, module in criterion.named_modules(prefix="criterion"):
            for name, _, tensor in module_tensors(module, qualified, seen, registered):
                yield name, "criterion", tensor
        return
    # functools.partial(F.cross_entropy, weight=...) keeps its tensors in args and keywords
    for part in ("args", "keywords"):
        for name, found in walk_tensors(getattr(criterion, part, None), f"criterion.{part}", seen):
            yield name, "criterion", found


def _batch_tensors(batch: object, seen: set[int]) -> Iterator[tuple[str, str, torch.Tensor]]:
    for name, found in walk_tensors(batch, "batch", seen):
        yield name, "batch", found


def _infer_expected(model: nn.Module) -> torch.device:
    sizes: Counter[torch.device] = Counter()
    for tensor in model.parameters():
        sizes[tensor.device] += 0 if _lazy(tensor) else tensor.numel()
    if not sizes:
        for tensor in model.buffers():
            sizes[tensor.device] += 0 if _lazy(tensor) else tensor.numel()
    if not sizes:
        return torch.device("cpu")
    # the largest share of elements; on a tie, a device other than the CPU (the one the model was moved to)
    return max(sizes, key=lambda device: (sizes[device], device.type != "cpu"))


def _resolve_expected(expected: str | torch.device, found: list[torch.Tensor]) -> torch.device:
    device = torch.device(expected)
    if device.index is not None or device.type in ("cpu", "meta"):
        return device
    # "cuda" means one of the CUDA devices: the one most of the model is on, else the first
    indices = Counter(tensor.device.index for tensor in found if tensor.device.type == device.type)
    index = indices.most_common(1)[0][0] if indices else 0
    return torch.device(device.type, index if index is not None else 0)


def _lazy(tensor: torch.Tensor) -> bool:
    # a lazy module's parameter before its first forward pass: it has a device but no shape yet
    return isinstance(tensor, nn.parameter.UninitializedTensorMixin)


def _odd(tensor: torch.Tensor, expected: torch.device) -> bool:
    if tensor.device == expected:
        return False
    # PyTorch accepts a 0-dim CPU tensor beside tensors of any device (it is read as a number): Adam's `step`
    return _lazy(tensor) or not (tensor.device.type == "cpu" and tensor.dim() == 0)


def audit(
    model: nn.Module,
    batch: object = None,
    optimizer: torch.optim.Optimizer | None = None,
    criterion: object = None,
    expected: str | torch.device | None = None,
) -> AuditReport:
    """A report of where every parameter, buffer, tensor attribute, optimizer state and batch leaf lives.

    Tensors are named by their path: `encoder.layers.3.norm.weight`, `blocks.0.cache[1]` (a plain attribute,
    also inside lists, tuples and dicts, and the tensors of layers kept in a plain list),
    `optimizer.state[fc.weight].exp_avg`, `criterion.weight`, `batch['labels']`, `batch.tokens`. Each tensor
    is listed once, under its registered name first. `expected` is the device everything should be on;
    by default the one holding most of the model's parameter elements (on a tie, the one that is not the
    CPU). A 0-dim CPU tensor (Adam's `step`) is never odd: PyTorch reads it as a number beside any device.
    """
    seen: set[int] = set()
    found = list(_model_tensors(model, seen))
    names = {id(tensor): name for name, kind, tensor in found if kind == "parameter"}
    if optimizer is not None:
        found += _optimizer_tensors(optimizer, names, seen)
    if criterion is not None:
        found += _criterion_tensors(criterion, seen)
    if batch is not None:
        found += _batch_tensors(batch, seen)
    if expected is None:
        device = _infer_expected(model)
    else:
        device = _resolve_expected(expected, [tensor for _, _, tensor in found])
    entries = [
        Entry(name, kind, tensor.device, _shape(tensor), tensor.dtype, _odd(tensor, device))
        for name, kind, tensor in found
    ]
    return AuditReport(expected=device, entries=entries)


messages.add(
    {
        "debug.column.name": {"en": "name", "zh": "名称"},
        "debug.column.kind": {"en": "kind", "zh": "类别"},
        "debug.column.device": {"en": "device", "zh": "设备"},
        "debug.column.shape": {"en": "shape", "zh": "形状"},
        "debug.column.dtype": {"en": "dtype", "zh": "dtype"},
        "debug.kind.parameter": {"en": "parameter", "zh": "参数"},
        "debug.kind.buffer": {"en": "buffer", "zh": "缓冲区"},
        "debug.kind.attribute": {"en": "attribute", "zh": "普通属性"},
        "debug.kind.optimizer": {"en": "optimizer", "zh": "优化器"},
        "debug.kind.criterion": {"en": "criterion", "zh": "损失函数"},
        "debug.kind.batch": {"en": "batch", "zh": "批次"},
        "debug.list_separator": {"en": ", ", "zh": "、"},
        "debug.audit.empty": {
            "en": "No tensors found: nothing to check.",
            "zh": "没有找到任何张量，无从检查。",
        },
        "debug.audit.all_ok": {
            "en": "All {count} tensors are on {device}.",
            "zh": "全部 {count} 个张量都在 {device} 上。",
        },
        "debug.audit.one_odd": {
            "en": "{count} tensor is not on {device}: {names}",
            "zh": "有 {count} 个张量不在 {device} 上：{names}",
        },
        "debug.audit.odd": {
            "en": "{count} tensors are not on {device}: {names}",
            "zh": "有 {count} 个张量不在 {device} 上：{names}",
        },
        "debug.audit.and_more": {"en": " and {count} more", "zh": "，以及另外 {count} 个"},
        "debug.audit.left_out": {
            "en": "  … and {count} more tensors in place, not shown (report.entries lists them all)",
            "zh": "  …… 另有 {count} 个位置正确的张量未列出（report.entries 中有完整列表）",
        },
    }
)
