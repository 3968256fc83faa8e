"""DL505: one branch of an `if` makes on the CPU (a factory without `device=`) the tensor that the other path
takes from the function's inputs, so that after the `if` it lives where the caller's tensors do on one path and on
the CPU on the other (chapter 05):

    if N >= k:
        out = x[:, :k]
    else:
        out = torch.full((B, k), fill)   # DL505: on the CPU, whatever the device of x
    return out

On a GPU the function then hands back (or computes with) a CPU tensor on that path only, and the mismatch shows
up later, in the caller. Flagged at the factory, when the flow shows, for a name after an `if`, a CPU tensor from a
factory made inside one branch and, from another path, a tensor of the function's inputs (a parameter used as a
tensor, or read from one: see DL504). The fix: make it where the other one is (`device=x.device`).

Not flagged: a factory given `device=`, a 0-dim `torch.tensor(number)`, a placeholder assigned before the `if`
(a branch that runs replaces it), a name moved after the `if` (`t = t.to(x.device)`, `.cuda()`, `.type_as(x)`),
inputs whose place is known (every call in the file passes CPU tensors, or a test such as `x.is_cuda` says
where), factories in a model's forward (DL501's), under `with torch.device(...)` or `torch.set_default_device`,
and functions that do CPU-side data work (as for DL504)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..values import Value
from ..vocabulary import FACTORIES
from .base import Check
from .dl501_factory_in_forward import moved_name
from .dl504_factory_meets_device import CPU_SIDE

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..flow import Walker


class BranchCpuTensor(Check):
    """A tensor whose device depends on the branch taken."""

    code = "DL505"

    def __init__(self, analysis: Analysis) -> None:
        super().__init__(analysis)
        self.candidates: dict[int, tuple[ast.Call, str, str, ast.AST, int]] = {}

    def joined(self, walker: Walker, name: str, values: list[Value | None], bodies: list[list[ast.stmt]]) -> None:
        fn = walker.function
        if fn is None or self.a.default_device or CPU_SIDE.search(getattr(fn, "name", "")) or self.a.in_dataset(fn):
            return
        spans = [(body[0].lineno, body[-1].end_lineno or body[-1].lineno) for body in bodies if body]
        born = [v for v in values if v is not None and v.kind == "tensor" and v.origin is not None
                and not v.device and not v.scalar and any(start <= v.origin.lineno <= end for start, end in spans)]
        inputs = [v for v in values if v is not None and v.kind == "tensor" and not v.known and v.name]
        if born and inputs:
            end = max(end for _, end in spans)
            self.candidates.setdefault(id(born[0].origin), (born[0].origin, name, inputs[0].name, fn, end))

    def file(self) -> None:
        own, helpers = self.a.forward_reach()
        in_forward = {id(fn) for fns in own.values() for fn in fns} | {id(fn) for fn in helpers}
        for factory, name, other, fn, end in self.candidates.values():
            if id(fn) in in_forward or self._moved_after(fn, name, end) or self._under_device_context(factory):
                continue
            short = (self.a.resolve(factory.func) or "").rsplit(".", 1)[-1]
            fix = {"kind": "device", "input": other} if short in FACTORIES and short != "from_numpy" else None
            label = f"torch.{short}" if short else ast.unparse(factory.func)
            self.a.add(self.code, factory, fix, call=label, name=name, other=other)

    def _moved_after(self, fn: ast.AST, name: str, line: int) -> bool:
        return any(isinstance(node, ast.Call) and node.lineno > line and moved_name(node) == name
                   for node in self.a.walk(fn))

    def _under_device_context(self, node: ast.AST) -> bool:
        parent = self.a.parent(node)
        while parent is not None:
            if isinstance(parent, (ast.With, ast.AsyncWith)) and any(
                    isinstance(item.context_expr, ast.Call) and self.a.resolve(item.context_expr.func) == "torch.device"
                    for item in parent.items):
                return True
            parent = self.a.parent(parent)
        return False
