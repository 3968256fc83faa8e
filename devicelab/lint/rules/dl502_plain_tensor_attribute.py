"""DL502: a tensor kept as a plain attribute in `__init__` and used in forward (chapter 05): `Module.to()` moves
only parameters and buffers.

Flagged when `__init__` assigns `self.name` a CPU tensor the flow knows (a factory, or an argument that every
call building the class passes as a CPU tensor) and forward (or a method it calls) reads it. Not flagged: a
registered buffer or parameter, an attribute forward moves itself (`self.t.to(x.device)`), a class with its own
`to`/`cuda`/`_apply`, a tensor made with `device=`, a 0-dim tensor."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..flow import Walker
from ..tree import keyword, self_attribute
from ..values import Value
from .base import Check

if TYPE_CHECKING:
    from ..analysis import Analysis


class PlainTensorAttribute(Check):
    """model.to() does not move a plain tensor attribute."""

    code = "DL502"

    def __init__(self, analysis: Analysis) -> None:
        super().__init__(analysis)
        self._inits: dict[str, list[str]] | None = None  # a class -> its local subclasses that use its __init__

    def file(self) -> None:
        own, _ = self.a.forward_reach()
        for cls, fns in own.items():
            self.check_plain_attributes(cls, fns)

    def check_plain_attributes(self, cls: str, fns: list[ast.FunctionDef]) -> None:
        info = self.a.classes[cls]
        init = info.methods.get("__init__")
        if init is None or not init.args.args or any(m in info.methods for m in ("_apply", "to", "cuda")):
            return
        self_name = init.args.args[0].arg
        used: set[str] = set()
        moved: set[str] = set()
        for fn in fns:
            fn_self = fn.args.args[0].arg if fn.args.args else "self"
            for node in self.a.walk(fn):
                attr = self_attribute(node, fn_self)
                if attr and isinstance(node.ctx, ast.Load):
                    used.add(attr)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                        "to", "cuda", "type_as"):
                    attr = self_attribute(node.func.value, fn_self)
                    if attr:
                        moved.add(attr)
        registered = self._registered_names(cls)
        env = self.a.scope(init)

        def check(walker: Walker, stmt: ast.stmt) -> None:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                attr = self_attribute(target, self_name)
                if attr and attr in used and attr not in moved and attr not in registered:
                    if self._is_tensor_attribute(cls, stmt.value, walker.env):
                        self.a.add(self.code, target, name=attr)

        Walker(self.a, env, report=False, before=check).block(init.body)

    def _registered_names(self, cls: str) -> set[str]:
        names: set[str] = set()
        for node in self.a.walk(self.a.classes[cls].node):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                    "register_buffer", "register_parameter") and node.args and isinstance(
                    node.args[0], ast.Constant):
                names.add(str(node.args[0].value))
        return names

    def _is_tensor_attribute(self, cls: str, expr: ast.expr, env: dict[str, Value | None]) -> bool:
        if isinstance(expr, ast.Call) and keyword(expr, "device") is not None:
            return False
        if isinstance(expr, ast.Name) and isinstance(env.get(expr.id), Value) and env[expr.id].kind == "param":
            return self.argument_is_tensor(cls, env[expr.id].name)
        value = self.a.value(expr, env)
        return value is not None and value.kind == "tensor" and not value.scalar and not value.device and value.known

    def argument_is_tensor(self, cls: str, param: str, depth: int = 0) -> bool:
        """Whether every call that builds `cls` in this file passes a tensor for `param` (and there is one)."""
        if depth > 4:
            return False
        sites = [site for name in self._subclasses_using_init(cls) for site in self.a.call_sites.get(name, [])]
        found = self.a.method(cls, "__init__")
        if not sites or found is None:
            return False
        params = [a.arg for a in found[1].args.args[1:]]
        on_cpu = False
        for site in sites:
            value = None
            for key, val in site:
                if key == param or (isinstance(key, int) and key < len(params) and params[key] == param):
                    value = val
            if value is None:
                return False
            if value.kind == "param" and value.items:
                owner = value.items[0]
                if not (isinstance(owner, str) and self.argument_is_tensor(owner, value.name, depth + 1)):
                    return False
                on_cpu = True
            elif value.kind != "tensor" or value.scalar:
                return False
            on_cpu = on_cpu or (not value.device and value.known)
        return on_cpu

    def _subclasses_using_init(self, cls: str) -> list[str]:
        """cls, and its local subclasses that inherit its __init__."""
        if self._inits is None:
            self._inits = {}
            for name, info in self.a.classes.items():
                found = self.a.method(name, "__init__") if "__init__" not in info.methods else None
                if found:
                    self._inits.setdefault(found[0], []).append(name)
        return [cls, *(name for name in self._inits.get(cls, ()) if name != cls)]
