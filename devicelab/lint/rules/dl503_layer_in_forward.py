"""DL503: a layer with parameters or buffers built inside forward (chapter 05).

Not flagged: a layer without parameters (`nn.ReLU()`, `nn.Dropout()`, a norm with `affine=False`), a layer
built once lazily on the input's device (`self.head = nn.Linear(...).to(x.device)`), a layer built in a method
forward does not call."""

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
        """`self.head = nn.Linear(n, k).to(x.device)` in forward: built once, where the input is."""
        parent = self.a._parent(fn, call)
        if not (isinstance(parent, ast.Attribute) and parent.attr in ("to", "cuda")):
            return False
        moved = self.a._parent(fn, parent)
        statement = self.a._parent(fn, moved) if isinstance(moved, ast.Call) else None
        return isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
            for t in statement.targets)

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
