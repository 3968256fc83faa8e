"""DL506: an optimizer's state made on the CPU for a parameter that lives on the model's device (chapter 05):

    class Adafactor(torch.optim.Optimizer):
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    state = self.state[p]
                    state["exp_avg_sq_row"] = torch.zeros(p.shape[:-1])   # DL506: on the CPU
                    ...
                    state["exp_avg_sq_row"].mul_(beta).add_(p.grad ...)    # meets the CUDA gradient

An optimizer never chooses a device: each state tensor belongs to a parameter and is updated with its gradient,
so it has to live where that parameter does. Flagged at a factory without `device=` (`torch.zeros/ones/full/
empty/rand...`, `torch.tensor([...])`) whose result is stored in the state of a parameter, `self.state[p][key] =`
or through a name bound to `self.state[p]`, inside a class built on `torch.optim.Optimizer` (or a local class that
is). The fix: `device=p.device` (or `torch.zeros_like(p)`).

Not flagged: `*_like` and `p.new_*` forms, `device=` given, a result moved before it is stored
(`.to(p.device)`), a 0-dim `torch.tensor(number)` (a step counter: PyTorch's own optimizers keep `step` on the
CPU), state stored anywhere else (`self.` attributes, `param_groups` entries), classes not built on an optimizer."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..tree import has_double_star, keyword
from ..vocabulary import FACTORIES, LEGACY_TYPES, TENSOR_METHODS
from .base import Check

if TYPE_CHECKING:
    from ..flow import Walker


class OptimizerStateCpu(Check):
    """An optimizer's state lives where its parameter does."""

    code = "DL506"

    def statement(self, walker: Walker, stmt: ast.stmt) -> None:
        fn = walker.function
        if fn is None or not isinstance(stmt, ast.Assign) or not self._optimizer_method(fn):
            return
        state = walker.state(self)
        self_name = fn.args.args[0].arg if fn.args.args else "self"
        owners: dict[str, str] = state.setdefault("owners", {})  # a name bound to self.state[p] -> p
        parameter = self._state_of(stmt.value, self_name)
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                if parameter is not None:
                    owners[target.id] = parameter
                else:
                    owners.pop(target.id, None)
        for target in stmt.targets:
            if not isinstance(target, ast.Subscript):
                continue
            owner = self._state_of(target.value, self_name) if not isinstance(target.value, ast.Name) else (
                owners.get(target.value.id))
            if owner is None:
                continue
            factory = self._bare_factory(stmt.value)
            if factory is not None:
                short = (self.a.resolve(factory.func) or "").rsplit(".", 1)[-1]
                fix = {"kind": "device", "input": owner} if short in FACTORIES and short != "from_numpy" else None
                self.a.add(self.code, factory, fix, call=f"torch.{short}", param=owner)

    def _optimizer_method(self, fn: ast.AST) -> bool:
        owner = self.a.owner_of.get(id(fn))
        if owner is None:
            return False
        cache = self.__dict__.setdefault("_optimizers", {})
        if owner not in cache:
            cache[owner] = self._is_optimizer(owner, frozenset())
        return cache[owner]

    def _is_optimizer(self, cls: str, seen: frozenset[str]) -> bool:
        info = self.a.classes.get(cls)
        if info is None or cls in seen:
            return False
        for base in info.bases:
            if base.startswith("torch.optim.") and base.rsplit(".", 1)[-1] == "Optimizer":
                return True
            if base in self.a.classes and self._is_optimizer(base, seen | {cls}):
                return True
        return False

    @staticmethod
    def _state_of(node: ast.expr, self_name: str) -> str | None:
        """`p` for `self.state[p]` (p a plain name)."""
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and (
                node.value.attr == "state") and isinstance(node.value.value, ast.Name) and (
                node.value.value.id == self_name) and isinstance(node.slice, ast.Name):
            return node.slice.id
        return None

    def _bare_factory(self, node: ast.expr) -> ast.Call | None:
        """The factory call without device= that an expression's value comes from (through tensor methods that
        keep the device: `torch.zeros(n).float()`), unless a move follows it."""
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                node.func.attr in TENSOR_METHODS) and node.func.attr not in ("type_as",):
            node = node.func.value
        if not isinstance(node, ast.Call):
            return None
        name = self.a.resolve(node.func) or ""
        short = name.rsplit(".", 1)[-1]
        if not (name.startswith("torch.") and name.count(".") == 1 and (short in FACTORIES or short in LEGACY_TYPES)):
            return None
        if keyword(node, "device") is not None or keyword(node, "out") is not None or has_double_star(node):
            return None
        if short in ("tensor", "as_tensor") and not (node.args and isinstance(node.args[0], (
                ast.List, ast.Tuple, ast.ListComp))):
            return None  # torch.tensor(0.0): a 0-dim number, as PyTorch's own step counters
        return node
