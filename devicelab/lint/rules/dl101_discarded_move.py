"""DL101: `x.to(device)` / `x.cuda()` on a tensor as a statement, its result thrown away (chapter 01).

Not flagged: a module (`model.to(device)` moves in place), `.to(dtype)` alone, `.to(..., copy=...)`, a name the
flow does not know to be a tensor, and a notebook cell's last expression (displayed, not thrown away)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..tree import keyword
from ..vocabulary import DEVICE_MOVES
from .base import Check

if TYPE_CHECKING:
    from ..flow import Walker


class DiscardedMove(Check):
    """Tensor.to() moves nothing in place."""

    code = "DL101"

    def expression_statement(self, walker: Walker, node: ast.expr) -> None:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return
        method = node.func.attr
        if method not in DEVICE_MOVES or node.keywords and keyword(node, "copy") is not None:
            return
        owner = self.a.value(node.func.value, walker.env)
        if owner is None or owner.kind != "tensor":
            return
        names_device, _ = self.a.move_target(node, walker.env)
        if method == "to" and not names_device:
            return
        receiver = node.func.value
        shown = ast.unparse(receiver) if isinstance(receiver, (ast.Name, ast.Attribute)) else "x"
        self.a.add(self.code, node, method=method, name=shown)
