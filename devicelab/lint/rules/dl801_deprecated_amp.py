"""DL801: the deprecated `torch.cuda.amp.*` / `torch.cpu.amp.*` spellings, as calls or decorators (chapter 08).

The fix rewrites `torch.cuda.amp.X(keywords only)` spelled in full; positional arguments are left for a person
(the two spellings order them differently)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..tree import FUNCTIONS, has_double_star
from ..vocabulary import DEPRECATED_AMP
from .base import Check

if TYPE_CHECKING:
    from ..flow import Walker


class DeprecatedAmp(Check):
    """FutureWarning since PyTorch 2.4."""

    code = "DL801"
    calls = frozenset(DEPRECATED_AMP)

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        if name in DEPRECATED_AMP:
            self.report(call, name)

    def file(self) -> None:
        for node in self.a.nodes_of(*FUNCTIONS, ast.ClassDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = self.a.resolve(target)
                if name in DEPRECATED_AMP:
                    self.report(decorator, name)

    def report(self, node: ast.expr, name: str) -> None:
        """DL801, with the fix when the call spells torch.cuda.amp.X(keywords only) in full."""
        new, device_type = DEPRECATED_AMP[name]
        fix = None
        func = node.func if isinstance(node, ast.Call) else None
        if device_type and isinstance(node, ast.Call) and not node.args and not has_double_star(node) and (
                isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute)
                and func.value.attr == "amp" and isinstance(func.value.value, ast.Attribute)):
            fix = {"kind": "amp", "device_type": device_type}
        self.a.add(self.code, node, fix, call=name, new=new)
