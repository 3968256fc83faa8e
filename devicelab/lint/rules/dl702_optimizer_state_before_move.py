"""DL702: `optimizer.load_state_dict(...)` before `model.to(device)` (chapter 07).

Flagged when the optimizer was built from a model of this scope (a name, or `self.model` within one method) that
is still unmoved at the load and is moved to a device afterwards. Not flagged: a model moved before the load, a
model rebound between the load and the move, an optimizer whose model the linter cannot name (`optim.SGD(params)`),
a model and an optimizer kept on `self` by different methods (each method is read on its own)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..tree import held_name
from .base import Check

if TYPE_CHECKING:
    from ..flow import Walker


class OptimizerStateBeforeMove(Check):
    """The optimizer's state is cast to the parameters' device at load time, and stays there."""

    code = "DL702"
    methods = frozenset({"load_state_dict"})

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "load_state_dict"):
            return
        held = held_name(call.func.value)
        owner = walker.env.get(held) if held is not None else None
        if owner is not None and owner.kind == "optimizer" and owner.name:
            model = walker.env.get(owner.name)
            if model is not None and model.kind == "module" and not model.device:
                walker.state(self).setdefault(owner.name, []).append((call, held))

    def moved(self, walker: Walker, name: str, call: ast.Call) -> None:
        for load, optimizer in walker.state(self).pop(name, []):
            self.a.add(self.code, load, optimizer=optimizer, model=name)

    def bound(self, walker: Walker, name: str) -> None:
        walker.state(self).pop(name, None)
