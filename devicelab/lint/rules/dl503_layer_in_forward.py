"""DL503: a layer with parameters or buffers built inside forward (chapter 05).

Not flagged: a layer without parameters (`nn.ReLU()`, `nn.Dropout()`, a norm with `affine=False`), a layer
built once lazily on the input's device (`self.head = nn.Linear(...).to(x.device)`, or built, moved with
`.to(...)` and returned by a method whose result is cached: `functools.cache`/`lru_cache`/`cached_property`, or a
decorator of the file that keeps the result on the object with `setattr`), a layer built in a method forward does
not call."""

from __future__ import annotations

import ast

from ..tree import keyword
from ..vocabulary import PARAMETER_LAYERS
from .base import Check


class LayerInForward(Check):
    """Its weights are born on the CPU at every call and never trained."""

    code = "DL503"

    def file(self) -> None:
        own, _ = self.a.forward_reach()
        for fns in own.values():
            self.check_layers_in_forward(fns)

    def check_layers_in_forward(self, fns: list[ast.FunctionDef]) -> None:
        for fn in fns:
            for node in self.a.walk(fn):
                if not isinstance(node, ast.Call):
                    continue
                name = self.a.resolve(node.func) or ""
                short = name.rsplit(".", 1)[-1]
                label = None
                if name.startswith("torch.nn.") and short in PARAMETER_LAYERS and self._layer_has_state(short, node):
                    label = "nn." + short
                elif isinstance(node.func, ast.Name) and node.func.id in self.a.classes and self.a.is_module_class(
                        node.func.id) and self.a.class_has_parameters(node.func.id):
                    label = node.func.id
                if label and not self._lazily_built_on_the_device(fn, node):
                    self.a.add(self.code, node, call=label)

    def _lazily_built_on_the_device(self, fn: ast.AST, call: ast.Call) -> bool:
        """`self.head = nn.Linear(n, k).to(x.device)` in forward: built once, where the input is; or built and
        moved in a method whose result is cached (`@functools.cache`, a decorator that setattr's it)."""
        parent = self.a._parent(fn, call)
        if not (isinstance(parent, ast.Attribute) and parent.attr in ("to", "cuda")):
            return self._cached(fn) and self._moved_later(fn, call)
        moved = self.a._parent(fn, parent)
        statement = self.a._parent(fn, moved) if isinstance(moved, ast.Call) else None
        if self._cached(fn) and isinstance(statement, (ast.Return, ast.Assign)):
            return True
        return isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
            for t in statement.targets)

    def _moved_later(self, fn: ast.AST, call: ast.Call) -> bool:
        """`layer = MLP(...)` then `layer.to(x)` / `layer.cuda()` in the same method."""
        statement = self.a._parent(fn, call)
        if not (isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            return False
        name = statement.targets[0].id
        return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "to", "cuda") and isinstance(node.func.value, ast.Name) and node.func.value.id == name
                   for node in self.a.walk(fn))

    def _cached(self, fn: ast.AST) -> bool:
        """A method whose result is kept: `functools.cache`, `lru_cache`, `cached_property`, or a decorator of
        this file whose wrapper stores the result on the object (`setattr(self, key, result)`)."""
        for decorator in getattr(fn, "decorator_list", ()):
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = self.a.resolve(target) or ""
            if name in ("functools.cache", "functools.lru_cache", "functools.cached_property"):
                return True
            local = self.a.functions.get(target.id) if isinstance(target, ast.Name) else None
            if local is not None and any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
                    node.func.id == "setattr") for node in self.a.walk(local)):
                return True
        return False

    @staticmethod
    def _layer_has_state(short: str, call: ast.Call) -> bool:
        def false(name: str) -> bool:
            value = keyword(call, name)
            return isinstance(value, ast.Constant) and value.value is False

        def true(name: str) -> bool:
            value = keyword(call, name)
            return isinstance(value, ast.Constant) and value.value is True

        if short in ("LayerNorm", "RMSNorm"):
            return not false("elementwise_affine")
        if short == "GroupNorm":
            return not false("affine")
        if short.startswith("InstanceNorm"):
            return true("affine") or true("track_running_stats")
        if short.startswith("BatchNorm") or short == "SyncBatchNorm":
            return not (false("affine") and false("track_running_stats"))
        return True
