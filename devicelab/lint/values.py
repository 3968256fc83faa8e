"""What the linter knows about a value (a tensor and where it lives, a module and whether it moved, ...), and a
finding."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Value:
    """What the linter knows about a name: a tensor, a module, an optimizer, a loader, a tuple of those.

    Where a tensor lives: `device` (it may live on an accelerator) and `known` (whether that is known). So a
    CPU tensor is `device=False, known=True`; a tensor handed in from nobody knows where is `known=False`; a
    tensor moved with `.to(device)` is `device=True`. A module with `device=True` was moved (or may have been)."""

    kind: str  # tensor | module | optimizer | loader | tuple | param | instance | moved | batch | sequence | cpu_device
    #           | dataset (a TensorDataset: `device` when every tensor it holds is on the device)
    #           | device_tensors (what model.parameters() or .state_dict() gives for a model moved to a device)
    device: bool = False
    scalar: bool = False  # a 0-dim tensor made from a Python number
    created: bool = False  # a module built in this scope (not handed in from elsewhere)
    items: tuple = ()  # the items of a tuple
    name: str = ""  # a parameter's name; an optimizer's model; a class's name
    known: bool = True  # whether `device` is known (a parameter annotated Tensor may be anywhere)
    origin: ast.Call | None = None  # the factory call that made this CPU tensor without device=
    current: bool = False  # a module moved with a bare .cuda() / .to("cuda"): the process's current GPU

    def item(self, index: int) -> Value | None:
        """The value of one item, when this is a tuple of known length."""
        return self.items[index] if self.kind == "tuple" and index < len(self.items) else None

    @property
    def on_cpu(self) -> bool:
        """A tensor known to live on the CPU."""
        return self.kind == "tensor" and not self.device and self.known


def join(first: Value | None, second: Value | None) -> Value | None:
    """What a name holds after two paths meet (the two branches of an if): what both say, else unknown; a device
    on either path is a device after them ("cuda or cpu")."""
    if first == second:
        return first
    if first is None or second is None or first.kind != second.kind:
        return None
    if first.kind == "tuple":
        if len(first.items) != len(second.items):
            return None
        return replace(first, items=tuple(join(a, b) for a, b in zip(first.items, second.items)))
    return replace(first, device=first.device or second.device, known=first.known and second.known,
                   scalar=first.scalar and second.scalar, created=first.created and second.created,
                   origin=first.origin if first.origin is second.origin else None,
                   current=first.current and second.current, name=first.name if first.name == second.name else "")


@dataclass
class Finding:
    """One mistake found: where, which rule, and the words to fill into the rule's message."""

    code: str
    line: int
    col: int
    params: dict[str, str] = field(default_factory=dict)
    fix: dict[str, object] | None = None  # what --fix needs: kind and where
